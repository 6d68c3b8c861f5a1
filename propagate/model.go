package propagate

import (
	"context"
	"errors"

	"github.com/framelake/framelake/analysis"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/lake"
)

// jpegQuality is ffmpeg's quality for the frames a model is shown (2 best
// .. 31): the frames route's own.
const jpegQuality = 3

var errStop = errors.New("propagate: stop")

// followModel follows the object with a registered tracking model (docs/
// tracks.md, "A tracker of your own"): the keyframe's own frame first,
// with its box and start, then each frame up to limit with the box the
// model gave last. Its boxes are kept as the built-in tracker's are.
func (s *Service) followModel(ctx context.Context, run *job.Run, f lake.File, t lake.Track, start lake.Box,
	r Request, limit int) ([]followed, Result, error) {
	res := Result{StoppedAt: r.From}
	if s.models == nil {
		return nil, res, errors.New("propagate: model " + r.Model + " asked, but this server runs no models")
	}
	tr, err := s.models.Tracker(ctx, r.Model)
	if err != nil {
		return nil, res, err
	}
	defer tr.Close()
	var path []followed
	box := [4]float64{start.X, start.Y, start.X + start.W, start.Y + start.H}
	first := true
	err = s.jpegFrames(ctx, f, r, limit, func(frame int, jpeg []byte) (bool, error) {
		a, err := tr.Step(ctx, analysis.TrackStep{Track: run.Job().ID, Label: t.Label, Frame: frame, Image: jpeg,
			Box: box, Start: first})
		if err != nil || first {
			first = false
			return err == nil, err // the start frame's answer is the model's to learn from, not kept
		}
		run.Advance(1)
		res.Score = a.Score
		cx, cy := (a.Box[0]+a.Box[2])/2, (a.Box[1]+a.Box[3])/2
		switch {
		case a.Lost:
			res.Reason = "lost"
			return false, nil
		case a.Score < r.MinScore:
			res.Reason = "low_score"
			return false, nil
		case cx < 0 || cy < 0 || cx >= float64(f.Width) || cy >= float64(f.Height):
			res.Reason = "left_frame"
			return false, nil
		}
		box = a.Box
		path = append(path, followed{frame: frame, score: a.Score,
			box: lake.Box{X: a.Box[0], Y: a.Box[1], W: a.Box[2] - a.Box[0], H: a.Box[3] - a.Box[1]}})
		res.Frames++
		res.StoppedAt = frame
		return ctx.Err() == nil, ctx.Err()
	})
	return path, res, err
}

// jpegFrames hands the frames from r.From to limit to each as JPEGs of the
// video's size, in the job's order: backward, the keyframe's frame, then
// runs of backChunk frames decoded forward and handed in reverse. each
// stops it by answering false or an error (which jpegFrames returns).
func (s *Service) jpegFrames(ctx context.Context, f lake.File, r Request, limit int,
	each func(frame int, jpeg []byte) (bool, error)) error {
	call := func(frame int, jpeg []byte) error {
		more, err := each(frame, jpeg)
		if err == nil && !more {
			err = errStop
		}
		return err
	}
	var err error
	if !r.Backward {
		err = s.lake.SampleFrames(ctx, f, span(r.From, limit), jpegQuality, call)
	} else {
		err = s.lake.SampleFrames(ctx, f, []int{r.From}, jpegQuality, call)
		for end := r.From; err == nil && end > limit; {
			first := max(limit, end-backChunk)
			var chunk [][]byte
			err = s.lake.SampleFrames(ctx, f, span(first, end-1), jpegQuality, func(_ int, jpeg []byte) error {
				chunk = append(chunk, jpeg)
				return nil
			})
			for i := len(chunk) - 1; err == nil && i >= 0; i-- {
				err = call(first+i, chunk[i])
			}
			end = first
		}
	}
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// span is the frames a..b, ascending.
func span(a, b int) []int {
	out := make([]int, 0, b-a+1)
	for n := a; n <= b; n++ {
		out = append(out, n)
	}
	return out
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
