package analysis

import (
	"context"
	"strings"
	"testing"

	"github.com/framelake/framelake/errs"
)

// stepPkg is a tracking package whose answer depends on the frame, to
// check what Step keeps and refuses; it asserts the body is the contract's.
func stepPkg(t testing.TB) string {
	return writePkg(t, map[string]string{
		"code/requirements.txt": "",
		"code/inference.py": `
import base64, json

def model_fn(model_dir):
    return None

def input_fn(body, content_type):
    assert content_type == "application/json", content_type
    req = json.loads(body)
    assert req["track"] == "job_1" and req["label"] == "car", req
    assert base64.b64decode(req["image"]) == b"\xff\xd8jpeg\xff\xd9", "not the frame's bytes"
    assert req["box"] == [10, 20, 30, 60], req["box"]
    assert req.get("start", False) == (req["frame"] == 0), req
    return req

def predict_fn(req, model):
    return {0: {"box": [10, 20, 30, 60]},
            1: {"box": [11.5, 20, 31.5, 60], "score": 0.75},
            2: {"box": None},
            3: {"box": [5, 5, 4, 9], "score": 0.5},
            4: {"box": [1, 2, 3, 4], "score": 2},
            5: {"box": [1, 2, 3]}}[req["frame"]]

def output_fn(pred, accept):
    return pred
`})
}

// TestTrackerSteps: a registered tracking package gets each frame as the
// contract says (docs/tracks.md, "A tracker of your own") through its real
// worker; a box and score come back as given (score 1 when none), a null
// box is lost, and an answer breaking the contract is the model's error
// naming the frame and what is wrong. ResolveTracker refuses names that are
// not tracking models, and finds no default until one is set.
func TestTrackerSteps(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := context.Background()
	e.register(t, "steps", Tracking, stepPkg(t))
	tr, err := e.svc.Tracker(ctx, "steps")
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	step := func(frame int) (TrackAnswer, error) {
		return tr.Step(ctx, TrackStep{Track: "job_1", Label: "car", Frame: frame, Image: []byte("\xff\xd8jpeg\xff\xd9"),
			Box: [4]float64{10, 20, 30, 60}, Start: frame == 0})
	}
	for frame, want := range []TrackAnswer{{Box: [4]float64{10, 20, 30, 60}, Score: 1},
		{Box: [4]float64{11.5, 20, 31.5, 60}, Score: 0.75}, {Lost: true}} {
		if a, err := step(frame); err != nil || a != want {
			t.Errorf("frame %d: %+v %v, want %+v", frame, a, err, want)
		}
	}
	for frame, msg := range map[int]string{3: "is empty", 4: "scores are 0..1", 5: "has 3 numbers"} {
		var me *ModelError
		if _, err := step(frame); !asModelError(err, &me) || me.Stage != "output" ||
			!strings.Contains(me.Msg, msg) || !strings.Contains(me.Msg, "frame "+string(rune('0'+frame))) {
			t.Errorf("frame %d: %v, want a model error saying %q", frame, err, msg)
		}
	}

	if _, found, err := e.svc.ResolveTracker(ctx, ""); found || err != nil {
		t.Errorf("no default tracking model: found %v, %v", found, err)
	}
	on := true
	if _, err := e.svc.UpdateModel(ctx, "steps", ModelUpdate{SystemDefault: &on}); err != nil {
		t.Fatal(err)
	}
	if name, found, err := e.svc.ResolveTracker(ctx, "default"); name != "steps" || !found || err != nil {
		t.Errorf("the default: %q %v %v", name, found, err)
	}
	e.register(t, "hist", Embedding, histPkg(t))
	for name, want := range map[string]string{"hist": "needs a tracking model", "nobody": "is not registered"} {
		var ee *errs.Error
		if _, _, err := e.svc.ResolveTracker(ctx, name); !asErr(err, &ee) || ee.Field != "model" || !strings.Contains(err.Error(), want) {
			t.Errorf("model %q: %v, want a 400 on model saying %q", name, err, want)
		}
	}
}
