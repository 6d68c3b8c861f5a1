package analysis

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"

	"github.com/framelake/framelake/errs"
)

// TrackStep is one frame a tracking package is shown (docs/tracks.md, "A
// tracker of your own"): the body its input_fn receives, as JSON.
type TrackStep struct {
	Track string     `json:"track"` // the propagation's job id: per-object state on a warm worker
	Label string     `json:"label"`
	Frame int        `json:"frame"`
	Image []byte     `json:"image"` // the frame as JPEG; base64 in the JSON
	Box   [4]float64 `json:"box"`   // x1, y1, x2, y2: the keyframe's (Start) or the last the package gave
	Start bool       `json:"start,omitempty"`
}

// TrackAnswer is a tracking package's answer for one frame: Lost when it
// gave no box.
type TrackAnswer struct {
	Box   [4]float64
	Score float64
	Lost  bool
}

// Tracker is a tracking model ready to follow an object: a warm local
// worker or an endpoint. Close releases an endpoint's connections; a local
// worker stays warm in the pool.
type Tracker struct {
	Model  string
	runner Runner
	remote bool
}

// Close releases the tracker.
func (t *Tracker) Close() error {
	if t.remote {
		return t.runner.Close()
	}
	return nil
}

// ResolveTracker finds the tracking model a propagation names: "" or
// "default" the tracking application's system default, found false when
// there is none (the caller's built-in tracker runs then); a name must be a
// registered tracking model. It is what a request is checked with before a
// job is queued.
func (s *Service) ResolveTracker(ctx context.Context, name string) (model string, found bool, err error) {
	if s == nil {
		if name == "" || name == DefaultModel {
			return "", false, nil
		}
		return "", false, errs.Invalid("model", "model %q: automatic analysis is not enabled on this server", name)
	}
	if name == "" || name == DefaultModel {
		m, found, err := s.defaultOf(ctx, Tracking)
		return m.Name, found, err
	}
	m, err := s.Model(ctx, name)
	switch {
	case errs.Is(err, errs.NotFound):
		return "", false, errs.Invalid("model", "model %q is not registered: register a tracking package under that name, "+
			"or leave model out for the built-in tracker", name)
	case err != nil:
		return "", false, err
	case m.Application != Tracking:
		return "", false, errs.Invalid("model", "model %s is an %s model; propagation needs a tracking model", name, m.Application)
	}
	return m.Name, true, nil
}

// Tracker readies the registered tracking model name, on its local worker
// or its endpoint when it has one.
func (s *Service) Tracker(ctx context.Context, name string) (*Tracker, error) {
	m, _, err := s.resolveModel(ctx, Tracking, name)
	if err != nil {
		return nil, err
	}
	platform := Local
	if m.Endpoint != "" {
		platform = AWS
	}
	r, err := s.runnerFor(m, platform)
	if err != nil {
		return nil, err
	}
	return &Tracker{Model: m.Name, runner: r, remote: platform == AWS}, nil
}

// trackOutput is what a tracking package's output_fn returns.
type trackOutput struct {
	Box   *[]float64 `json:"box"`
	Score *float64   `json:"score"`
}

// Step shows the package one frame and reads its answer. An answer that
// breaks the contract is the model's error, naming what is wrong.
func (t *Tracker) Step(ctx context.Context, in TrackStep) (TrackAnswer, error) {
	body, err := json.Marshal(struct {
		TrackStep
		Image string `json:"image"`
	}{in, base64.StdEncoding.EncodeToString(in.Image)})
	if err != nil {
		return TrackAnswer{}, err
	}
	resp, err := t.runner.Invoke(ctx, Request{Body: body, ContentType: "application/json", Accept: "application/json"})
	if err != nil {
		return TrackAnswer{}, err
	}
	a, err := readTrackOutput(resp.Body)
	if err != nil {
		return a, &ModelError{Model: t.Model, Stage: "output",
			Msg: fmt.Sprintf("output_fn's answer for frame %d breaks the tracking contract: %v", in.Frame, err)}
	}
	return a, nil
}

// readTrackOutput checks {"box": [x1, y1, x2, y2] | null, "score": s}: a
// box of positive size (one leaving the frame is the propagation's to stop
// at, not an error) and a score in 0..1 (1 when none is given).
func readTrackOutput(b []byte) (TrackAnswer, error) {
	var out trackOutput
	if err := json.Unmarshal(b, &out); err != nil {
		return TrackAnswer{}, fmt.Errorf(`not {"box": [x1, y1, x2, y2] or null, "score": s}: %v`, err)
	}
	if out.Box == nil {
		return TrackAnswer{Lost: true}, nil
	}
	box := *out.Box
	if len(box) != 4 {
		return TrackAnswer{}, fmt.Errorf("box has %d numbers; give [x1, y1, x2, y2] or null", len(box))
	}
	for _, v := range box {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e6 {
			return TrackAnswer{}, fmt.Errorf("box %v holds a number that is not a pixel", box)
		}
	}
	if box[2] <= box[0] || box[3] <= box[1] {
		return TrackAnswer{}, fmt.Errorf("box %v is empty: x2 must exceed x1 and y2 exceed y1", box)
	}
	a := TrackAnswer{Box: [4]float64(box), Score: 1}
	if out.Score != nil {
		a.Score = *out.Score
	}
	if math.IsNaN(a.Score) || a.Score < 0 || a.Score > 1 {
		return TrackAnswer{}, fmt.Errorf("score is %g; scores are 0..1", a.Score)
	}
	return a, nil
}
