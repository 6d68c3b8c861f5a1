// Package propagate extends a video track from one of its keyframes,
// forward or backward, with a classical single-object tracker, as a durable
// job (issue 34, docs/tracks.md): no model, no weights, no GPU.
//
// The tracker (ncc.go) matches the box's appearance by normalised cross-
// correlation at three scales around where it last was, on frames decoded
// once by ffmpeg as luma no wider than 640 pixels. Every Every frames it
// writes a keyframe (a box; the track's later keyframes in the way are
// replaced), and it stops where its correlation falls under MinScore, the
// box leaves the frame, the track's next keyframe (drawn by someone) is
// reached, or MaxFrames are done; the result says where and why. A track
// of another shape than boxes is refused: the classical tracker follows
// boxes.
//
// A registered model package of the tracking application can follow the
// object instead (Request.Model, model.go): it is shown the video's frames
// as JPEGs one call at a time on its warm worker, with the box it gave last,
// and the job keeps its boxes exactly as it keeps the built-in tracker's.
package propagate

import (
	"context"
	"log/slog"

	"github.com/framelake/framelake/analysis"
	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/lake"
)

// JobType is the propagation job's type in the job queue.
const JobType = "propagate_track"

// Defaults and bounds of a Request.
const (
	DefaultEvery     = 10
	DefaultMinScore  = 0.6
	DefaultMaxFrames = 3000
	MaxMaxFrames     = 100000
	workWidth        = 640 // frames are tracked at most this wide
)

// BuiltIn names framelake's own tracker (ncc.go), the one that runs when a
// request names no model and no tracking model is the registry's default;
// a request may name it to pass over that default.
const BuiltIn = "built-in"

// Request asks for one track to be extended from its keyframe at From.
type Request struct {
	UniqueName string  `json:"uniqueName"`
	Operation  string  `json:"operation"`
	Number     int     `json:"number"`
	From       int     `json:"from"`
	Backward   bool    `json:"backward,omitempty"`
	Every      int     `json:"every,omitempty"`     // a keyframe every this many frames; default 10
	MinScore   float64 `json:"minScore,omitempty"`  // stop under this correlation; default 0.6
	MaxFrames  int     `json:"maxFrames,omitempty"` // at most this many frames; default 3000
	// Model is a registered tracking model to follow the object with; absent
	// (or "default"), the registry's default tracking model when one is set,
	// else BuiltIn. The queued job holds the name it resolved to.
	Model string `json:"model,omitempty"`
	// Editor is the project member a propagation of a project's track runs
	// for (the project's route sets it; nil for the lake's). Its write is
	// asked again under the project's jobs' rules for them
	// (annotate.TrackEditGuard), inside the write: a job reassigned or
	// submitted, or a frame taken out of the task, while it ran refuses it.
	Editor *annotate.Member `json:"editor,omitempty"`
}

// Result is where a propagation stopped and why.
type Result struct {
	Frames    int     `json:"frames"`    // frames tracked past From
	Keyframes int     `json:"keyframes"` // keyframes written
	StoppedAt int     `json:"stoppedAt"` // the last frame the object was followed to
	Reason    string  `json:"reason"`    // "low_score", "left_frame", "lost", "keyframe", "outside", "max_frames", "video_end"
	Score     float64 `json:"score"`     // the correlation (a model's score) at the last frame tracked
	Tracker   string  `json:"tracker"`   // the model that followed the object, or BuiltIn
}

// Options tune the service.
type Options struct {
	Logger *slog.Logger
	// Models runs registered tracking models; nil: only the built-in
	// tracker (a request naming a model is refused).
	Models *analysis.Service
	// Annotate asks a project propagation's write under the jobs' rules
	// (Request.Editor); nil: such a propagation's write is refused.
	Annotate *annotate.Service
}

// Service queues and runs propagations.
type Service struct {
	lake   *lake.Lake
	jobs   *job.Queue
	log    *slog.Logger
	models *analysis.Service
	annot  *annotate.Service
}

// New returns the service and registers its job handler on jobs.
func New(l *lake.Lake, jobs *job.Queue, opt Options) *Service {
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	s := &Service{lake: l, jobs: jobs, log: opt.Logger, models: opt.Models, annot: opt.Annotate}
	jobs.Handle(JobType, s.runJob)
	return s
}

func (r *Request) withDefaults() {
	if r.Every == 0 {
		r.Every = DefaultEvery
	}
	if r.MinScore == 0 {
		r.MinScore = DefaultMinScore
	}
	if r.MaxFrames == 0 {
		r.MaxFrames = DefaultMaxFrames
	}
}

// check validates r against the track it names, which it returns.
func (s *Service) check(ctx context.Context, r Request) (lake.File, lake.Track, error) {
	switch {
	case r.Every < 1 || r.Every > 1000:
		return lake.File{}, lake.Track{}, errs.Invalid("every", "every must be 1 to 1000 frames, got %d", r.Every)
	case r.MinScore < -1 || r.MinScore > 1:
		return lake.File{}, lake.Track{}, errs.Invalid("minScore", "minScore is a correlation in -1..1, got %v", r.MinScore)
	case r.MaxFrames < 1 || r.MaxFrames > MaxMaxFrames:
		return lake.File{}, lake.Track{}, errs.Invalid("maxFrames", "maxFrames must be 1 to %d, got %d", MaxMaxFrames, r.MaxFrames)
	}
	f, err := s.lake.File(ctx, r.UniqueName)
	if err != nil {
		return f, lake.Track{}, err
	}
	tracks, err := s.lake.Tracks(ctx, r.UniqueName, []string{r.Operation})
	if err != nil {
		return f, lake.Track{}, err
	}
	for _, t := range tracks {
		if t.Number != r.Number {
			continue
		}
		if t.Type != "box" {
			return f, t, errs.Invalid("number", "track %d is a %s track: propagation follows boxes", r.Number, t.Type)
		}
		for _, k := range t.Keyframes {
			if k.Frame == r.From {
				return f, t, nil
			}
		}
		return f, t, errs.Invalid("from", "track %d has no keyframe at frame %d to start from", r.Number, r.From)
	}
	return f, lake.Track{}, errs.NotFoundf("%s has no track %d from %q", r.UniqueName, r.Number, r.Operation)
}

// Propagate queues a propagation and returns its job id; the request is
// checked first, so a bad one is a 400 and queues nothing.
func (s *Service) Propagate(ctx context.Context, r Request) (string, error) {
	r.withDefaults()
	if _, _, err := s.check(ctx, r); err != nil {
		return "", err
	}
	if r.Model != BuiltIn {
		name, found, err := s.models.ResolveTracker(ctx, r.Model)
		if err != nil {
			return "", err
		}
		r.Model = BuiltIn
		if found {
			r.Model = name
		}
	}
	return s.jobs.Enqueue(ctx, nil, JobType, r)
}
