package propagate

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/lake"
)

// backChunk is how many frames a backward propagation decodes at once
// (forward, then tracked in reverse): about 15 MB at 640x360.
const backChunk = 64

// followed is the box on one frame, in the video's pixels, and its score.
type followed struct {
	frame int
	box   lake.Box
	score float64
}

func (s *Service) runJob(ctx context.Context, run *job.Run) error {
	var r Request
	if err := run.Decode(&r); err != nil {
		return err
	}
	f, t, err := s.check(ctx, r)
	if err != nil {
		return err
	}
	start := t.Keyframes[slices.IndexFunc(t.Keyframes, func(k lake.Box) bool { return k.Frame == r.From })]
	limit, limitReason := s.limit(f, t, r)
	run.SetTotal(int64(abs(limit - r.From)))
	var path []followed
	var res Result
	switch {
	case r.Model != "" && r.Model != BuiltIn:
		path, res, err = s.followModel(ctx, run, f, t, start, r, limit)
	case r.Backward:
		path, res, err = s.backward(ctx, run.Advance, f, start, r, limit)
	default:
		path, res, err = s.forward(ctx, run.Advance, f, start, r, limit)
	}
	if err != nil {
		return err
	}
	if res.Reason == "" {
		res.Reason = limitReason
	}
	res.Keyframes = len(keyframesOf(path, r))
	res.Tracker = or(r.Model, BuiltIn)
	if err := s.write(ctx, f, t, r, path); err != nil {
		return err
	}
	return run.SetResult(res)
}

func abs(v int) int { return max(v, -v) }

// limit is the last frame a propagation may reach and why it would stop
// there: before the track's next keyframe or outside span the other way,
// the video's end, or MaxFrames.
func (s *Service) limit(f lake.File, t lake.Track, r Request) (int, string) {
	step := 1
	if r.Backward {
		step = -1
	}
	limit, reason := r.From+step*r.MaxFrames, "max_frames"
	if end := f.FrameCount - 1; !r.Backward && limit >= end {
		limit, reason = end, "video_end"
	}
	if r.Backward && limit <= 0 {
		limit, reason = 0, "video_end"
	}
	for _, k := range t.Keyframes {
		if step*(k.Frame-r.From) > 0 && step*(k.Frame-step-limit) < 0 {
			limit, reason = k.Frame-step, "keyframe"
		}
	}
	prev := -1 // the keyframe before From
	for _, k := range t.Keyframes {
		if k.Frame < r.From {
			prev = k.Frame
		}
	}
	for _, o := range t.Outside {
		switch {
		case !r.Backward && o > r.From && o-1 < limit:
			limit, reason = o-1, "outside" // the object leaves the view at o
		case r.Backward && o > prev && o < r.From:
			limit, reason = r.From, "outside" // it was out of view just before From
		}
	}
	return limit, reason
}

func toWork(b lake.Box, scale float64) Box {
	return Box{CX: (b.X + b.W/2) * scale, CY: (b.Y + b.H/2) * scale, W: b.W * scale, H: b.H * scale}
}

func fromWork(b Box, scale float64) lake.Box {
	return lake.Box{X: (b.CX - b.W/2) / scale, Y: (b.CY - b.H/2) / scale, W: b.W / scale, H: b.H / scale}
}

// follow tracks one frame and says whether to go on.
func follow(tr *ncc, g Gray, frame int, scale float64, r Request, path *[]followed, res *Result) bool {
	b, score := tr.step(g)
	res.Score = score
	switch {
	case score < r.MinScore:
		res.Reason = "low_score"
		return false
	case b.CX < 0 || b.CY < 0 || b.CX >= float64(g.W) || b.CY >= float64(g.H):
		res.Reason = "left_frame"
		return false
	}
	*path = append(*path, followed{frame: frame, box: fromWork(b, scale), score: score})
	res.Frames++
	res.StoppedAt = frame
	return true
}

func (s *Service) forward(ctx context.Context, advance func(int64), f lake.File, start lake.Box, r Request, limit int) ([]followed, Result, error) {
	res := Result{StoppedAt: r.From}
	var tr *ncc
	var path []followed
	scale := 1.0
	err := s.lake.GrayFrames(ctx, f, r.From, limit-r.From+1, workWidth, func(frame int, pix []byte, w, h int) bool {
		g := Gray{W: w, H: h, Pix: pix}
		if tr == nil {
			scale = float64(w) / float64(f.Width)
			tr = newNCC(g, toWork(start, scale))
			return true
		}
		advance(1)
		return ctx.Err() == nil && follow(tr, g, frame, scale, r, &path, &res)
	})
	if err == nil {
		err = ctx.Err()
	}
	return path, res, err
}

func (s *Service) backward(ctx context.Context, advance func(int64), f lake.File, start lake.Box, r Request, limit int) ([]followed, Result, error) {
	res := Result{StoppedAt: r.From}
	var path []followed
	var frames [][]byte
	var w, h int
	// The keyframe's own frame first, to take the template from.
	if err := s.lake.GrayFrames(ctx, f, r.From, 1, workWidth, func(_ int, pix []byte, fw, fh int) bool {
		frames, w, h = append(frames, slices.Clone(pix)), fw, fh
		return false
	}); err != nil || len(frames) == 0 {
		return nil, res, err
	}
	scale := float64(w) / float64(f.Width)
	tr := newNCC(Gray{W: w, H: h, Pix: frames[0]}, toWork(start, scale))
	for end := r.From; end > limit; {
		first := max(limit, end-backChunk)
		frames = frames[:0]
		if err := s.lake.GrayFrames(ctx, f, first, end-first, workWidth, func(_ int, pix []byte, _, _ int) bool {
			frames = append(frames, slices.Clone(pix))
			return true
		}); err != nil {
			return path, res, err
		}
		for i := len(frames) - 1; i >= 0; i-- {
			advance(1)
			if ctx.Err() != nil {
				return path, res, ctx.Err()
			}
			if !follow(tr, Gray{W: w, H: h, Pix: frames[i]}, first+i, scale, r, &path, &res) {
				return path, res, nil
			}
		}
		end = first
	}
	return path, res, nil
}

// keyframesOf picks the frames a propagation keeps: every Every frames from
// From, and the last frame followed.
func keyframesOf(path []followed, r Request) []followed {
	var out []followed
	for i, p := range path {
		if abs(p.frame-r.From)%r.Every == 0 || i == len(path)-1 {
			out = append(out, p)
		}
	}
	return out
}

// write adds the kept frames to the track as keyframes, with the score as
// their confidence and the starting keyframe's attributes.
func (s *Service) write(ctx context.Context, f lake.File, t lake.Track, r Request, path []followed) error {
	kept := keyframesOf(path, r)
	if len(kept) == 0 {
		return nil
	}
	var attrs json.RawMessage
	for _, k := range t.Keyframes {
		if k.Frame == r.From {
			attrs = k.Attributes
		}
	}
	for _, p := range kept {
		b := p.box
		b.Frame, b.Attributes = p.frame, attrs
		c := math.Round(min(1, max(0, p.score))*1e6) / 1e6
		b.Confidence = &c
		t.Keyframes = append(t.Keyframes, b)
	}
	slices.SortFunc(t.Keyframes, func(a, b lake.Box) int { return a.Frame - b.Frame })
	_, err := s.lake.SetTrackIf(ctx, f.UniqueName, t.Source, t.Operation, t, s.writeGuard(r, t, len(kept)))
	return err
}

// writeGuard is asked inside the propagation's write, with the track as it
// is then: the rules the route checked when the job was queued must still
// hold. The track must be the one the job started from (a track edit
// writes it anew with a new id; a delete leaves none): what a person drew
// or removed meanwhile is neither overwritten nor brought back. A project's
// propagation is asked again under its jobs' rules for its editor. A
// refusal writes nothing and fails the job with the reason. after is the
// track with the propagated keyframes, kept how many they are.
func (s *Service) writeGuard(r Request, after lake.Track, kept int) lake.TrackGuard {
	return func(ctx context.Context, tx *sql.Tx, before []lake.Track) error {
		if len(before) != 1 || before[0].ID != after.ID {
			how := "deleted"
			if len(before) == 1 {
				how = "edited"
			}
			return errs.New(errs.FailedPrecondition, "number", "track %d of %s was %s while it was propagated from frame %d: "+
				"its %d propagated keyframes were not written; propagate again from the track as it is now",
				r.Number, r.UniqueName, how, r.From, kept)
		}
		if r.Editor == nil {
			return nil
		}
		if s.annot == nil {
			return errs.New(errs.Unavailable, "", "a project's propagation is checked against its jobs, which this server cannot read")
		}
		if err := s.annot.TrackEditGuard(r.Operation, r.UniqueName, []lake.Track{after}, *r.Editor)(ctx, tx, before); err != nil {
			return errs.Prefix(err, fmt.Sprintf("the %d propagated keyframes of track %d were not written", kept, r.Number))
		}
		return nil
	}
}
