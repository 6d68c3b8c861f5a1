package dataset

import (
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/jpeg" // the sampled frames' sizes
	"path"
	"slices"
	"strings"

	"github.com/framelake/framelake/curate"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// Datasets from videos (docs/tracks.md): a build that selects videos
// (item_type video) makes an item of each sampled frame, an image ffmpeg
// extracts at that exact frame and the media store keeps by its hash, as
// augmented frames are kept. The item carries the frame's shapes: its
// tracks' keyframes, their interpolated shapes when asked, and the video's
// annotations of that frame. Every frame of a video lands in the video's
// split (the split of its uniqueName), so no video straddles train and test.

// Sampling modes of VideoFrames.Sample.
const (
	SampleEvery     = "every"     // frames 0, N, 2N, ...
	SampleKeyframes = "keyframes" // frames where a track of the build's labels has a keyframe, or an annotation lies
	SampleAll       = "all"       // every frame
)

// VideoFrames is how a build samples its videos.
type VideoFrames struct {
	Sample string `json:"sample"`
	Every  int    `json:"every,omitempty"` // N of SampleEvery
	// Interpolated gives a frame the shapes its tracks have there between
	// keyframes (the default, true); false keeps the keyframes alone, so a
	// frame between two holds nothing of that track.
	Interpolated *bool `json:"interpolated,omitempty"`
}

// sampledJPEGQuality is ffmpeg's -q:v for extracted frames: near the
// source's quality (2 is ffmpeg's best), a 1080p frame 300-500 KB.
const sampledJPEGQuality = 2

// check validates and normalizes (Interpolated set) a sampling spec;
// field names follow the create and update functions' video_frames.
func (v *VideoFrames) check() error {
	switch v.Sample {
	case SampleEvery:
		if v.Every < 1 {
			return errs.Invalid("video_frames.every", "video_frames.every must be 1 or more with sample %q, got %d", SampleEvery, v.Every)
		}
	case SampleKeyframes, SampleAll:
		if v.Every != 0 {
			return errs.Invalid("video_frames.every", "video_frames.every applies to sample %q only, not %q", SampleEvery, v.Sample)
		}
	default:
		return errs.Invalid("video_frames.sample", "video_frames.sample must be %q, %q or %q, got %q",
			SampleEvery, SampleKeyframes, SampleAll, v.Sample)
	}
	if v.Interpolated == nil {
		yes := true
		v.Interpolated = &yes
	}
	return nil
}

func (v *VideoFrames) interpolated() bool { return v.Interpolated == nil || *v.Interpolated }

// videoShapes are a video's tracks and frame annotations of a build's
// labels and annotation sources.
type videoShapes struct {
	tracks []lake.Track
	frames map[int][]Box // annotations by frame
}

// videoShapes reads what a build takes of video f.
func (s *Service) videoShapes(ctx context.Context, b *buildState, f lake.File) (videoShapes, error) {
	out := videoShapes{frames: map[int][]Box{}}
	ops := b.recipe.Operations
	if ops != nil && len(ops) == 0 {
		return out, nil // operation_list []: no annotations
	}
	tracks, err := s.lake.Tracks(ctx, f.UniqueName, ops)
	if err != nil {
		return out, err
	}
	for _, t := range tracks {
		if slices.Contains(b.recipe.Labels, t.Label) {
			out.tracks = append(out.tracks, t)
		}
	}
	all, err := s.lake.Boxes(ctx, lake.BoxQuery{FileSeqs: []int64{f.Seq()}, Labels: b.recipe.Labels, Operations: ops,
		Types: []shape.Type{shape.Box, shape.Polygon, shape.Mask, shape.Keypoints, shape.Polyline}})
	if err != nil {
		return out, err
	}
	for _, x := range all {
		out.frames[x.Frame] = append(out.frames[x.Frame], boxOf(x))
	}
	return out, nil
}

// sampleFrames lists the frames of video f that vf samples.
func sampleFrames(f lake.File, vf *VideoFrames, vs videoShapes) []int {
	var out []int
	switch vf.Sample {
	case SampleEvery, SampleAll:
		step := max(1, vf.Every)
		for n := 0; n < f.FrameCount; n += step {
			out = append(out, n)
		}
	case SampleKeyframes:
		for _, t := range vs.tracks {
			for _, k := range t.Keyframes {
				out = append(out, k.Frame)
			}
		}
		for n := range vs.frames {
			out = append(out, n)
		}
		slices.Sort(out)
		out = slices.Compact(out)
		for len(out) > 0 && out[len(out)-1] >= f.FrameCount {
			out = out[:len(out)-1]
		}
	}
	return out
}

// checkVideo says why a video's frames cannot be sampled.
func checkVideo(f lake.File) error {
	if f.FrameRate <= 0 || f.FrameCount <= 0 {
		return errs.New(errs.FailedPrecondition, "", "video %s has no frame rate or frame count: its frames cannot be sampled",
			f.UniqueName)
	}
	return nil
}

// frameShapes are what frame n of a video shows of vs: each track's
// keyframe or (when interpolated) interpolated shape there, with its
// number, then the frame's annotations.
func frameShapes(vs videoShapes, n int, interpolated bool) []Box {
	var out []Box
	for i := range vs.tracks {
		t := &vs.tracks[i]
		if n < t.FirstFrame || n > t.LastFrame {
			continue
		}
		ts, ok := t.At(n)
		if !ok || (ts.Interpolated && !interpolated) {
			continue
		}
		b := boxOf(ts.Box)
		number := t.Number
		b.Track, b.Interpolated = &number, ts.Interpolated
		out = append(out, b)
	}
	return append(out, vs.frames[n]...)
}

// boxOf is a lake shape as a version stores it.
func boxOf(x lake.Box) Box {
	b := Box{Label: x.Label, X: x.X, Y: x.Y, W: x.W, H: x.H}
	if x.Type != shape.Box && x.Type != "" { // a box is stored as versions always stored it, without a type
		b.Geometry = x.Geometry
	}
	if a := bytes.TrimSpace(x.Attributes); len(a) > 0 && string(a) != "{}" {
		b.Attributes = x.Attributes
	}
	return b
}

// frameName is a sampled frame's uniqueName, "<video>_f000123": it names
// the video and the frame in every export's file names.
func frameName(video string, n int) string { return fmt.Sprintf("%s_f%06d", video, n) }

// videoItems extracts the sampled frames of a planned video and hands them
// to emit in batches of the build's batch size, with their shapes.
func (s *Service) videoItems(ctx context.Context, b *buildState, p planned, emit func(*batch) error) error {
	f := p.f
	vs, err := s.videoShapes(ctx, b, f)
	if err != nil {
		return err
	}
	vf := b.recipe.VideoFrames
	stem := strings.TrimSuffix(f.Name, path.Ext(f.Name))
	bt := &batch{}
	err = s.lake.SampleFrames(ctx, f, p.frames, sampledJPEGQuality, func(n int, jpeg []byte) error {
		row, blob, err := s.sampledItem(f, n, jpeg, p.split)
		if err != nil {
			return err
		}
		row.name = fmt.Sprintf("%s_f%06d.jpg", stem, n)
		row.boxes = frameShapes(vs, n, vf.interpolated())
		bt.rows, bt.blobs, bt.frames = append(bt.rows, row), append(bt.blobs, blob), bt.frames+1
		if len(bt.rows) < s.opt.Batch {
			return nil
		}
		full := bt
		bt = &batch{}
		return emit(full)
	})
	if err != nil {
		bt.discard()
		return fmt.Errorf("video %s: %w", f.UniqueName, err)
	}
	if len(bt.rows) == 0 {
		return nil
	}
	return emit(bt)
}

// sampledItem writes one extracted frame to a temp file of the media store
// and makes its row, with the frame's perceptual hashes for leakage.
func (s *Service) sampledItem(f lake.File, n int, jpeg []byte, split string) (itemRow, newBlob, error) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(jpeg))
	if err != nil {
		return itemRow{}, newBlob{}, fmt.Errorf("frame %d: %w", n, err)
	}
	q, err := curate.Score(jpeg, cfg.Width, cfg.Height)
	if err != nil {
		return itemRow{}, newBlob{}, fmt.Errorf("frame %d: %w", n, err)
	}
	pend, err := s.lake.Store().Write(bytes.NewReader(jpeg), int64(len(jpeg)))
	if err != nil {
		return itemRow{}, newBlob{}, fmt.Errorf("store: %w", err)
	}
	pend.Data = nil // the bytes are on disk; do not hold a batch of them in memory
	frame := n
	return itemRow{uniqueName: frameName(f.UniqueName, n), fileSeq: f.Seq(), split: split, blob: pend.Hash, ext: "jpg",
		width: cfg.Width, height: cfg.Height, video: f.UniqueName, videoFrame: &frame,
		hashes: &[3]uint64{q.PHash, q.CentreHashes[0], q.CentreHashes[1]}}, newBlob{pend, "jpg"}, nil
}

// videoCounts adds a build's videos, sampled frames and track shapes to st.
func videoCounts(ctx context.Context, q querier, versionSeq int64, build int, st *Stats) error {
	err := q.QueryRowContext(ctx, `SELECT count(DISTINCT video), count(*) FROM version_item
		WHERE version_seq = ? AND build = ? AND video IS NOT NULL`, versionSeq, build).Scan(&st.Videos, &st.VideoFrames)
	if err != nil || st.VideoFrames == 0 {
		return err
	}
	return q.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(json_extract(b.value, '$.interpolated') = 1), 0)
		FROM version_item vi, json_each(vi.boxes) b WHERE vi.version_seq = ? AND vi.build = ? AND vi.video IS NOT NULL
		AND json_extract(b.value, '$.track') IS NOT NULL`, versionSeq, build).Scan(&st.TrackShapes, &st.Interpolated)
}
