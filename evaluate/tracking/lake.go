package tracking

import (
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// Video is one video's tracks to compare: the ground truth's and the
// tracker's, and the video's frame count and size.
type Video struct {
	Truth, Tracker []lake.Track
	Frames         int
	Width, Height  int
}

// FromTracks lays a video's tracks out frame by frame, interpolated frames
// included, for Evaluate: the similarity of two shapes is their mask IoU
// when both are polygons or masks (TrackEval's MOTS reading), else their
// boxes' IoU (MOTChallenge's).
func FromTracks(v Video) []Frame {
	frames := make([]Frame, v.Frames)
	for f := range frames {
		gt, gtIDs := shapesAt(v.Truth, f)
		tr, trIDs := shapesAt(v.Tracker, f)
		sim := make([][]float64, len(gt))
		for i, g := range gt {
			sim[i] = make([]float64, len(tr))
			for j, d := range tr {
				sim[i][j] = similarity(g, d, v.Width, v.Height)
			}
		}
		frames[f] = Frame{GT: gtIDs, Tracker: trIDs, Sim: sim}
	}
	return frames
}

func shapesAt(tracks []lake.Track, frame int) ([]lake.TrackShape, []int) {
	var shapes []lake.TrackShape
	var ids []int
	for i := range tracks {
		if s, ok := tracks[i].At(frame); ok {
			shapes = append(shapes, s)
			ids = append(ids, tracks[i].Number)
		}
	}
	return shapes, ids
}

func similarity(g, d lake.TrackShape, width, height int) float64 {
	gm, dm := maskOf(g, width, height), maskOf(d, width, height)
	if gm != nil && dm != nil {
		return shape.Prepare(*dm).IoU(shape.Prepare(*gm), false)
	}
	return shape.RectIoU(shape.Rect{X: d.X, Y: d.Y, W: d.W, H: d.H}, shape.Rect{X: g.X, Y: g.Y, W: g.W, H: g.H}, false)
}

// maskOf is a polygon's or mask's pixels, or nil for other shapes.
func maskOf(s lake.TrackShape, width, height int) *shape.RLE {
	switch s.Type {
	case shape.Polygon:
		r := shape.Rings(s.Polygon, height, width)
		return &r
	case shape.Mask:
		if r, err := s.Mask.RLE(); err == nil {
			return &r
		}
	}
	return nil
}

// ByLabel scores each label's tracks apart (a ground-truth car is never
// matched with a tracked person, as TrackEval evaluates class by class),
// over every video given; "" is every label together, class-agnostic.
func ByLabel(videos []Video) (map[string]Result, error) {
	labels := map[string]bool{"": true}
	for _, v := range videos {
		for _, t := range append(append([]lake.Track(nil), v.Truth...), v.Tracker...) {
			labels[t.Label] = true
		}
	}
	out := map[string]Result{}
	for label := range labels {
		var frames [][]Frame
		for _, v := range videos {
			w := v
			if label != "" {
				w.Truth, w.Tracker = only(v.Truth, label), only(v.Tracker, label)
			}
			frames = append(frames, FromTracks(w))
		}
		r, err := EvaluateVideos(frames)
		if err != nil {
			return nil, err
		}
		out[label] = r
	}
	return out, nil
}

func only(tracks []lake.Track, label string) []lake.Track {
	var out []lake.Track
	for _, t := range tracks {
		if t.Label == label {
			out = append(out, t)
		}
	}
	return out
}
