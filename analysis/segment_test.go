package analysis

import (
	"context"
	"errors"
	"image/color"
	"strings"
	"testing"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake/shape"
)

// promptablePkg is a segmentation package of our own, as a user's SAM
// would be: it checks that it got the image's bytes and the prompt, and
// answers a fixed 2x2 mask at the click (x 2..3, y 1..2 of an 8x6 image)
// plus an empty one scored higher, in COCO's uncompressed counts. A click at
// x=7 makes it answer a mask of the wrong size.
func promptablePkg(t testing.TB) string {
	return writePkg(t, map[string]string{
		"code/requirements.txt": "",
		"code/inference.py": `
import base64, json

def model_fn(model_dir):
    return "promptable"

def input_fn(body, content_type):
    assert content_type == "application/json", content_type
    req = json.loads(body)
    assert base64.b64decode(req["image"])[:4] == b"\x89PNG", "not the file's bytes"
    return req

def predict_fn(req, model):
    p = req["points"][0]
    if p["x"] == 7:
        return {"masks": [{"size": [5, 5], "counts": [25]}], "scores": [1]}
    assert (p["x"], p["y"], p["label"]) == (2, 1, 1), p
    assert req.get("box") == [1, 0, 5, 4], req.get("box")
    return {"masks": [{"size": [6, 8], "counts": [13, 2, 4, 2, 27]}, {"size": [6, 8], "counts": [48]}],
            "scores": [0.5, 0.75]}

def output_fn(pred, accept):
    return pred
`})
}

// TestSegmentUsesRegisteredPackage: a package registered as segmentation
// is what a request naming it runs, with the image and the prompt as the
// contract says; its masks come back best first in the lake's compressed
// form, and an answer breaking the contract is the model's error.
func TestSegmentUsesRegisteredPackage(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := context.Background()
	f := e.add(t, "pics", "obj.png", rectPNG(8, 6, rect{color.RGBA{200, 0, 0, 255}, 2, 1, 2, 2}))
	e.register(t, "my-sam", Segmentation, promptablePkg(t))
	req := SegmentRequest{Model: "my-sam", UniqueName: f.UniqueName, Box: []float64{1, 0, 5, 4},
		Points: []SegmentPoint{{X: 2, Y: 1, Label: 1}}}
	res, err := e.svc.Segment(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	want := shape.RLE{Height: 6, Width: 8, Counts: []uint32{13, 2, 4, 2, 27}}.String()
	if res.Model != "my-sam" || len(res.Masks) != 2 || res.Masks[0].Score != 0.75 || res.Masks[1].Mask.Counts != want ||
		res.Masks[1].Mask.Size != [2]int{6, 8} || res.Masks[1].Score != 0.5 {
		t.Fatalf("result %+v, want the empty mask (0.75) then %q (0.5)", res, want)
	}

	req.Points = []SegmentPoint{{X: 7, Y: 1, Label: 1}}
	var me *ModelError
	if _, err := e.svc.Segment(ctx, req); !asModelError(err, &me) || me.Stage != "output" || !strings.Contains(me.Msg, "5x5") {
		t.Errorf("a 5x5 mask for an 8x6 image: %v", err)
	}

	// No default installed: the request says how to get one.
	req.Model = ""
	req.Points = []SegmentPoint{{X: 2, Y: 1, Label: 1}}
	if _, err := e.svc.Segment(ctx, req); !errs.Is(err, errs.InvalidArgument) || !strings.Contains(err.Error(), "make models") {
		t.Errorf("no default: %v", err)
	}
	// A model of another application is refused by name.
	e.register(t, "hist", Embedding, histPkg(t))
	req.Model = "hist"
	if _, err := e.svc.Segment(ctx, req); !errs.Is(err, errs.InvalidArgument) || !strings.Contains(err.Error(), "segmentation") {
		t.Errorf("an embedding model: %v", err)
	}
}

func asModelError(err error, me **ModelError) bool { return errors.As(err, me) }

// TestSegmentRefusesBadPrompts: prompts that cannot name an object of the
// image are 400s naming the field, before any model runs.
func TestSegmentRefusesBadPrompts(t *testing.T) {
	e := newEnv(t, Options{})
	f := e.add(t, "pics", "obj.png", rectPNG(8, 6))
	e.register(t, "my-sam", Segmentation, promptablePkg(t))
	for _, tc := range []struct {
		name, field string
		req         SegmentRequest
	}{
		{"no prompt", "box", SegmentRequest{}},
		{"only negative clicks", "box", SegmentRequest{Points: []SegmentPoint{{X: 1, Y: 1, Label: 0}}}},
		{"label 2", "points", SegmentRequest{Points: []SegmentPoint{{X: 1, Y: 1, Label: 2}}}},
		{"click outside", "points", SegmentRequest{Points: []SegmentPoint{{X: 9, Y: 1, Label: 1}}}},
		{"box of 3 numbers", "box", SegmentRequest{Box: []float64{0, 0, 3}}},
		{"box outside", "box", SegmentRequest{Box: []float64{0, 0, 9, 4}}},
		{"empty box", "box", SegmentRequest{Box: []float64{3, 1, 3, 4}}},
		{"frame of an image", "frame", SegmentRequest{Box: []float64{0, 0, 3, 3}, Frame: new(int)}},
	} {
		tc.req.UniqueName, tc.req.Model = f.UniqueName, "my-sam"
		_, err := e.svc.Segment(context.Background(), tc.req)
		var ee *errs.Error
		if !asErr(err, &ee) || ee.Code != errs.InvalidArgument || ee.Field != tc.field {
			t.Errorf("%s: %v, want invalid %s", tc.name, err, tc.field)
		}
	}
}
