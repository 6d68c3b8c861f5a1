package evaluate_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/evaluate"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// TestClassEvaluation: iou_type class on seven images, worked by hand.
//
//	f1 truth cat, run cat .9 and dog .4: top cat, correct
//	f2 truth cat, run dog .8 and cat .6: top dog, wrong
//	f3 truth dog, run dog .7: correct
//	f4 truth dog, no prediction: wrong, in none's column
//	f5 no class but a human box (labelled), run cat .5: none's row
//	f6 nobody labelled it, run dog .9: not judged
//	f7 truth bird, run cat .5 then dog .5: tied, the first stored (cat) wins
//
// Judged 6, of which 5 have a true class and 2 are correct: accuracy 0.4.
// cat: tp f1, fp f5 and f7, fn f2: precision 1/3, recall 1/2, F1 0.4.
// dog: tp f3, fp f2, fn f4: 1/2, 1/2, 1/2. bird: fn f7: 0, 0, 0.
// Confusion (rows truth, columns top prediction; bird, cat, dog, none):
// bird [0 1 0 0], cat [0 1 1 0], dog [0 0 1 1], none [0 1 0 0].
func TestClassEvaluation(t *testing.T) {
	ctx := context.Background()
	a, err := appliance.Open(ctx, appliance.Config{DataDir: filepath.Join(t.TempDir(), "lake"),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	var ups []lake.Upload
	for i := range 7 {
		img := image.NewRGBA(image.Rect(0, 0, 20, 20))
		img.Set(i, i, color.RGBA{R: 200, A: 255})
		var buf bytes.Buffer
		png.Encode(&buf, img)
		b := buf.Bytes()
		ups = append(ups, lake.Upload{Name: fmt.Sprintf("f%d.png", i+1),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }})
	}
	if _, err := a.Lake.Add(ctx, lake.AddOptions{Collection: "c"}, ups); err != nil {
		t.Fatal(err)
	}
	class := func(label string, conf float64) lake.Box {
		b := lake.Box{Label: label, Geometry: shape.Geometry{Type: shape.Class}}
		if conf > 0 {
			b.Confidence = &conf
		}
		return b
	}
	truth := map[string][]lake.Box{"f1.png": {class("cat", 0)}, "f2.png": {class("cat", 0)}, "f3.png": {class("dog", 0)},
		"f4.png": {class("dog", 0)}, "f5.png": {{Label: "car", X: 1, Y: 1, W: 5, H: 5}}, "f7.png": {class("bird", 0)}}
	run := map[string][]lake.Box{"f1.png": {class("cat", .9), class("dog", .4)}, "f2.png": {class("dog", .8), class("cat", .6)},
		"f3.png": {class("dog", .7)}, "f5.png": {class("cat", .5)}, "f6.png": {class("dog", .9)},
		"f7.png": {class("cat", .5), class("dog", .5)}}
	seqs := fileSeqs(t, a)
	err = a.Lake.DB().Tx(ctx, func(tx *sql.Tx) error {
		for name, bs := range truth {
			if err := lake.ReplaceBoxes(ctx, tx, seqs[name], lake.Human, "proj", 0, bs); err != nil {
				return err
			}
		}
		for name, bs := range run {
			if err := lake.ReplaceBoxes(ctx, tx, seqs[name], lake.Machine, "run_t", 0, bs); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res := runEvaluation(t, a, evaluate.Request{Key: "cls", GTOperations: []string{"proj"}, IoUType: evaluate.IoUClass})
	c := res.Classification
	if c == nil {
		t.Fatalf("no classification in %+v", res)
	}
	if c.Frames != 6 || c.Truthful != 5 || c.Correct != 2 || math.Abs(c.Accuracy-.4) > 1e-12 {
		t.Errorf("frames %d truthful %d correct %d accuracy %v, want 6 5 2 0.4", c.Frames, c.Truthful, c.Correct, c.Accuracy)
	}
	want := map[string]evaluate.ClassResult{
		"cat":  {Precision: 1.0 / 3, Recall: .5, F1: .4, TP: 1, FP: 2, FN: 1, Support: 2},
		"dog":  {Precision: .5, Recall: .5, F1: .5, TP: 1, FP: 1, FN: 1, Support: 2},
		"bird": {FN: 1, Support: 1},
	}
	for l, w := range want {
		g := c.Labels[l]
		if g.TP != w.TP || g.FP != w.FP || g.FN != w.FN || g.Support != w.Support ||
			math.Abs(g.Precision-w.Precision) > 1e-12 || math.Abs(g.Recall-w.Recall) > 1e-12 || math.Abs(g.F1-w.F1) > 1e-12 {
			t.Errorf("%s: %+v, want %+v", l, g, w)
		}
	}
	wantConf := evaluate.Confusion{Labels: []string{"bird", "cat", "dog", "none"},
		Matrix: [][]int{{0, 1, 0, 0}, {0, 1, 1, 0}, {0, 0, 1, 1}, {0, 1, 0, 0}}}
	if !reflect.DeepEqual(c.Confusion, wantConf) {
		t.Errorf("confusion %+v, want %+v", c.Confusion, wantConf)
	}
	if res.MAP != -1 || res.Labels["cat"].FP != 2 || res.Truth.Frames != 6 {
		t.Errorf("box figures: mAP %v, cat %+v, frames %d", res.MAP, res.Labels["cat"], res.Truth.Frames)
	}
	// f2's outcomes: the true cat missed, the top prediction (dog) a false
	// positive; the second prediction is not judged.
	outs, err := a.Evaluate.Outcomes(ctx, "cls", uniqueName(t, a, "f2.png"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range outs {
		got = append(got, o.Source+":"+o.Label+":"+o.Outcome)
	}
	if w := []string{"human:cat:fn", "machine:dog:fp"}; !slices.Equal(got, w) {
		t.Errorf("f2 outcomes %v, want %v", got, w)
	}
	// Each judged file's counts are query fields: fp on f2, f5, f7; fn on f2, f4, f7.
	for q, want := range map[string]int{"eval.cls.fp > 0": 3, "eval.cls.fn > 0": 3, "eval.cls.tp = 1": 2} {
		if n, err := a.Lake.Count(ctx, lake.Selection{ItemType: "image", Query: q}); err != nil || n != want {
			t.Errorf("%s: %d files %v, want %d", q, n, err, want)
		}
	}
}
