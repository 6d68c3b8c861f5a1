package evaluate_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/evaluate"
	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/labelimport"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// cocoKP is COCO's 51 numbers of a person with the given points labelled
// (v 2), the others 0, 0, 0.
func cocoKP(points map[string][2]float64) []float64 {
	out := make([]float64, 51)
	for i, n := range shape.COCOPerson.Names {
		if p, ok := points[n]; ok {
			out[3*i], out[3*i+1], out[3*i+2] = p[0], p[1], 2
		}
	}
	return out
}

// predKP is a prediction's 17 points, all at at except those in moved.
func predKP(at [2]float64, moved map[string][2]float64) []shape.Keypoint {
	out := make([]shape.Keypoint, 17)
	for i, n := range shape.COCOPerson.Names {
		p := at
		if m, ok := moved[n]; ok {
			p = m
		}
		out[i] = shape.Keypoint{Name: n, X: p[0], Y: p[1], V: 2}
	}
	return out
}

// openKeypoints imports the three images of TestKeypointsEvaluation as
// import:truth (COCO person keypoints) and gives run_t its five people.
func openKeypoints(t *testing.T) *appliance.Appliance { return openKeypointsAt(t, "") }

// openKeypointsAt is openKeypoints serving the API on addr when it is set.
func openKeypointsAt(t *testing.T, addr string) *appliance.Appliance {
	t.Helper()
	ctx := context.Background()
	type ann map[string]any
	anns := []ann{
		{"id": 1, "image_id": 1, "bbox": []float64{10, 10, 100, 100}, "area": 10000, "num_keypoints": 2,
			"keypoints": cocoKP(map[string][2]float64{"nose": {50, 50}, "left_shoulder": {60, 80}})},
		{"id": 2, "image_id": 1, "bbox": []float64{150, 150, 40, 40}, "area": 1600, "iscrowd": 1, "num_keypoints": 0,
			"keypoints": cocoKP(nil)},
		{"id": 3, "image_id": 2, "bbox": []float64{0, 0, 50, 50}, "area": 2000, "num_keypoints": 1,
			"keypoints": cocoKP(map[string][2]float64{"nose": {20, 20}})},
		{"id": 4, "image_id": 2, "bbox": []float64{100, 100, 60, 60}, "area": 3000, "num_keypoints": 0,
			"keypoints": cocoKP(nil)},
		{"id": 5, "image_id": 3, "bbox": []float64{20, 20, 100, 100}, "area": 12000, "num_keypoints": 2,
			"keypoints": cocoKP(map[string][2]float64{"nose": {60, 60}, "left_eye": {62, 58}})},
	}
	for _, a := range anns {
		a["category_id"] = 1
		if a["iscrowd"] == nil {
			a["iscrowd"] = 0
		}
	}
	doc := map[string]any{
		"images": []ann{{"id": 1, "file_name": "a.png", "width": 200, "height": 200},
			{"id": 2, "file_name": "b.png", "width": 200, "height": 200}, {"id": 3, "file_name": "c.png", "width": 200, "height": 200}},
		"annotations": anns,
		"categories":  []ann{{"id": 1, "name": "person", "keypoints": shape.COCOPerson.Names}},
	}
	src := t.TempDir()
	for i, name := range []string{"a.png", "b.png", "c.png"} {
		img := image.NewRGBA(image.Rect(0, 0, 200, 200))
		img.Set(i, i, color.RGBA{R: uint8(50 * i), A: 255})
		var buf bytes.Buffer
		png.Encode(&buf, img)
		os.WriteFile(filepath.Join(src, name), buf.Bytes(), 0o644)
	}
	js, _ := json.Marshal(doc)
	os.WriteFile(filepath.Join(src, "annotations.json"), js, 0o644)
	a, err := appliance.Open(ctx, appliance.Config{DataDir: filepath.Join(t.TempDir(), "lake"), Addr: addr,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if addr != "" {
		sctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- a.Serve(sctx) }()
		t.Cleanup(func() { cancel(); <-done })
	}
	if _, err := labelimport.Run(ctx, src, labelimport.Options{Collection: "truth", Format: format.COCO},
		labelimport.LakeSink(a.Lake, a.Annotate, "truth"), a.Annotate); err != nil {
		t.Fatal(err)
	}
	kp := func(score float64, kps []shape.Keypoint) lake.Box {
		return lake.Box{Label: "person", Confidence: &score, Geometry: shape.Geometry{Type: shape.Keypoints, Keypoints: kps}}
	}
	model := map[string][]lake.Box{
		"a.png": {kp(.9, predKP([2]float64{50, 50}, map[string][2]float64{"left_shoulder": {60, 80}})),
			kp(.8, predKP([2]float64{170, 170}, nil))},
		"b.png": {kp(.95, predKP([2]float64{190, 10}, nil)), kp(.7, predKP([2]float64{22, 20}, nil)),
			kp(.6, predKP([2]float64{130, 130}, nil))},
	}
	seqs := fileSeqs(t, a)
	err = a.Lake.DB().Tx(ctx, func(tx *sql.Tx) error {
		for name, bs := range model {
			if err := lake.ReplaceBoxes(ctx, tx, seqs[name], lake.Machine, "run_t", 0, bs); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func fileSeqs(t *testing.T, a *appliance.Appliance) map[string]int64 {
	t.Helper()
	seqs := map[string]int64{}
	rows, err := a.Lake.DB().R.QueryContext(context.Background(), `SELECT seq, name FROM file`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var name string
		rows.Scan(&seq, &name)
		seqs[name] = seq
	}
	return seqs
}

// TestKeypointsEvaluation: COCO's ten keypoints figures, worked by hand from
// cocoeval.py (computeOks, evaluateImg, accumulate, summarize with
// maxDets 20 and area ranges all, medium [32², 96²], large [96², 1e10]).
// Sigmas are COCO's person sigmas (the names are COCO's 17).
//
// Truth (COCO's areas): a.png: A, labelled nose (50, 50) and left_shoulder
// (60, 80), area 10,000 (large); B, a crowd with no point, box (150, 150,
// 40, 40). b.png: C, nose (20, 20), area 2,000 (medium); D, not crowd but
// with no labelled point (num_keypoints 0, imported as its box (100, 100,
// 60, 60)): ignored. c.png: E, area 12,000 (large), no prediction.
//
// Predictions (17 points each, their areas their points' box): on a.png
// P1 (0.9) exactly on A's two points, the rest at (50, 50): OKS 1 with A,
// area 10 × 30 = 300; P2 (0.8) every point at (170, 170), inside B's box
// enlarged 3× about its centre: OKS 1 with B (distance 0), area 0. On b.png
// P5 (0.95) at (190, 10): 30 px above D's enlarged box (OKS < 0.04), far
// from C: matches nothing; P3 (0.7) at (22, 20): C's nose 2 px off,
// e = 4 / (2·0.026)² / 2000 / 2 = 0.369822, OKS exp(-e) = 0.690870, a
// match at OKS .50 to .65, nothing at .70 on (D's enlarged box is 18 px
// away); P4 (0.6) at (130, 130), inside D's enlarged box: OKS 1, ignored.
//
// all: 3 people count (A, C, E). In score order P5 fp, P1 tp, P2 ignored
// (the crowd), P3 tp at 4 thresholds else fp, P4 ignored (D).
//   - .50-.65: recall 0, 1/3, 2/3, precision 0, 1/2, 2/3, made monotone
//     2/3: 67 of 101 recall points (0 to .66) read 2/3.
//   - .70-.95: recall 0, 1/3, 1/3, precision 0, 1/2, 1/3 -> 1/2, 1/2, 1/3:
//     34 points (0 to .33) read 1/2.
//   - AP = (4·67·2/3 + 6·34/2) / 1010 = 842/3030; AP50 = 134/303; AP75 =
//     17/101; AR = (4·2/3 + 6·1/3) / 10 = 7/15; AR50 = 2/3; AR75 = 1/3.
//
// medium: C alone counts; every prediction's area (0 or 300) is below the
// range, so unmatched ones are left out: P3 alone, a tp at .50-.65 (AP 1
// there), nothing after. APm = ARm = 4/10.
//
// large: A and E count; P1 tp, the others matched to ignored truth or left
// out unmatched (areas 0): recall 1/2 at precision 1, 51 points read 1 at
// every threshold. APl = 51/101, ARl = 1/2.
func TestKeypointsEvaluation(t *testing.T) {
	a := openKeypoints(t)
	res := runEvaluation(t, a, evaluate.Request{Key: "kp", GTOperations: []string{"import:truth"}, IoUType: evaluate.IoUKeypoints})
	if res.IoUType != evaluate.IoUKeypoints || res.AR20 == nil || res.AR50 == nil || res.AR75 == nil {
		t.Fatalf("iou type %q, AR20 %v AR50 %v AR75 %v", res.IoUType, res.AR20, res.AR50, res.AR75)
	}
	for name, c := range map[string][2]float64{
		"AP": {res.MAP, 842.0 / 3030}, "AP50": {res.AP50, 134.0 / 303}, "AP75": {res.AP75, 17.0 / 101},
		"APm": {res.MAPMedium, .4}, "APl": {res.MAPLarge, 51.0 / 101},
		"AR": {*res.AR20, 7.0 / 15}, "AR50": {*res.AR50, 2.0 / 3}, "AR75": {*res.AR75, 1.0 / 3},
		"ARm": {res.ARMedium, .4}, "ARl": {res.ARLarge, .5},
		// Keypoints have no small range and no maxDets 1, 10, 100.
		"APs": {res.MAPSmall, -1}, "ARs": {res.ARSmall, -1}, "AR1": {res.AR1, -1}, "AR100": {res.AR100, -1},
	} {
		if math.Abs(c[0]-c[1]) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, c[0], c[1])
		}
	}
	// "declared" once the import's category declares the label's skeleton.
	if s := res.Sigmas["person"]; s.Source != "coco" && s.Source != "declared" || !slices.Equal(s.Sigmas, shape.COCOPerson.Sigmas) {
		t.Errorf("sigmas %+v, want COCO's person sigmas", res.Sigmas)
	}
	// Outcomes at OKS 0.5: on b.png C and P3 are a pair (OKS 0.690870), D
	// and P4 ignored, P5 a false positive.
	outs, err := a.Evaluate.Outcomes(context.Background(), "kp", uniqueName(t, a, "b.png"))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range outs {
		kinds = append(kinds, o.Source+":"+o.Outcome)
		if o.Outcome == "tp" && (o.IoU == nil || math.Abs(*o.IoU-math.Exp(-4/(.052*.052)/2000/2)) > 1e-12) {
			t.Errorf("%+v: want OKS %v", o, math.Exp(-4/(.052*.052)/2000/2))
		}
	}
	want := []string{"human:tp", "human:ignored", "machine:fp", "machine:tp", "machine:ignored"}
	if !slices.Equal(kinds, want) {
		t.Errorf("b.png outcomes %v, want %v", kinds, want)
	}
	if l := res.Labels["person"]; l.TP != 2 || l.FP != 1 || l.FN != 1 {
		t.Errorf("person %+v: want tp 2 (A, C), fp 1 (P5), fn 1 (E)", l)
	}
	for q, want := range map[string]int{"eval.kp.fp > 0": 1, "eval.kp.fn > 0": 1, "eval.kp.tp = 1": 2} {
		if n, err := a.Lake.Count(context.Background(), lake.Selection{ItemType: "image", Query: q}); err != nil || n != want {
			t.Errorf("%s: %d files %v, want %d (b.png's P5, c.png's E, a and b one pair each)", q, n, err, want)
		}
	}
}

func uniqueName(t *testing.T, a *appliance.Appliance, name string) string {
	t.Helper()
	var u string
	if err := a.Lake.DB().R.QueryRow(`SELECT unique_name FROM file WHERE name = ?`, name).Scan(&u); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestKeypointsSigmas: a keypoints label that declares no sigmas and whose
// points are not COCO's person is refused, naming it, unless the request
// gives each of its points a sigma; sigmas need iou_type keypoints.
func TestKeypointsSigmas(t *testing.T) {
	a := openKeypoints(t)
	ctx := context.Background()
	hand := lake.Box{Label: "hand", Geometry: shape.Geometry{Type: shape.Keypoints,
		Keypoints: []shape.Keypoint{{Name: "thumb", X: 5, Y: 5, V: 2}, {Name: "wrist", X: 9, Y: 9, V: 2}}}}
	err := a.Lake.DB().Tx(ctx, func(tx *sql.Tx) error {
		return lake.ReplaceBoxes(ctx, tx, fileSeqs(t, a)["c.png"], lake.Machine, "run_t", 0, []lake.Box{hand})
	})
	if err != nil {
		t.Fatal(err)
	}
	req := evaluate.Request{Key: "kp", PredRunID: "run_t", IoUType: evaluate.IoUKeypoints}
	if _, err := a.Evaluate.Start(ctx, req); !errs.Is(err, errs.InvalidArgument) || !bytes.Contains([]byte(err.Error()), []byte(`"hand"`)) {
		t.Errorf("hand without sigmas: %v, want a 400 naming it", err)
	}
	req.Sigmas = map[string]map[string]float64{"hand": {"thumb": .03}}
	if _, err := a.Evaluate.Start(ctx, req); err == nil {
		t.Error("sigmas for thumb alone were taken: wrist has none")
	}
	req.Sigmas["hand"]["wrist"] = -1
	if _, err := a.Evaluate.Start(ctx, req); err == nil {
		t.Error("a negative sigma was taken")
	}
	if _, err := a.Evaluate.Start(ctx, evaluate.Request{Key: "b", PredRunID: "run_t", Sigmas: req.Sigmas}); err == nil {
		t.Error("sigmas were taken for iou_type bbox")
	}
	req.Sigmas["hand"]["wrist"] = .04
	res := runEvaluation(t, a, evaluate.Request{Key: "kp2", GTOperations: []string{"import:truth"}, IoUType: evaluate.IoUKeypoints,
		Sigmas: req.Sigmas})
	if s := res.Sigmas["hand"]; s.Source != "request" || !slices.Equal(s.Keypoints, []string{"thumb", "wrist"}) ||
		!slices.Equal(s.Sigmas, []float64{.03, .04}) {
		t.Errorf("hand sigmas %+v", res.Sigmas)
	}
	if l := res.Labels["hand"]; l.FP != 1 || l.AP != -1 {
		t.Errorf("hand %+v: no truth, its one prediction a false positive, AP undefined", l)
	}
}

// TestKeypointsOverHTTP: evaluate_detections takes iou_type keypoints and
// sigmas through the server, and get_evaluation answers the ten figures'
// recall and the sigmas each label used; a label without sigmas is a 400
// naming it.
func TestKeypointsOverHTTP(t *testing.T) {
	a := openKeypointsAt(t, "127.0.0.1:0")
	ctx := context.Background()
	hand := lake.Box{Label: "hand", Geometry: shape.Geometry{Type: shape.Keypoints,
		Keypoints: []shape.Keypoint{{Name: "thumb", X: 5, Y: 5, V: 2}}}}
	err := a.Lake.DB().Tx(ctx, func(tx *sql.Tx) error {
		return lake.ReplaceBoxes(ctx, tx, fileSeqs(t, a)["c.png"], lake.Machine, "run_t", 0, []lake.Box{hand})
	})
	if err != nil {
		t.Fatal(err)
	}
	k, secret, err := a.Keys.Create(ctx, "w", auth.Write, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(a.BaseURL(), k.Key, secret)
	req := map[string]any{"key": "kp", "pred_run_id": "run_t", "gt_operations": []string{"import:truth"}, "iou_type": "keypoints"}
	var started struct{ JobID string }
	err = c.Call(ctx, "evaluate_detections", req, &started)
	if err == nil || !strings.Contains(err.Error(), `"hand"`) || !strings.Contains(err.Error(), "400") {
		t.Errorf("without sigmas: %v, want a 400 naming hand", err)
	}
	req["sigmas"] = map[string]map[string]float64{"hand": {"thumb": .05}}
	if err := c.Call(ctx, "evaluate_detections", req, &started); err != nil {
		t.Fatal(err)
	}
	if j, err := c.WaitJob(ctx, started.JobID); err != nil || j.Status != "completed" {
		t.Fatalf("%+v %v", j, err)
	}
	var got struct {
		IoUType string                          `json:"iouType"`
		AR20    *float64                        `json:"AR20"`
		Params  evaluate.Params                 `json:"params"`
		Sigmas  map[string]evaluate.LabelSigmas `json:"sigmas"`
	}
	if err := c.Call(ctx, "get_evaluation", map[string]string{"key": "kp"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.IoUType != "keypoints" || got.AR20 == nil || math.Abs(*got.AR20-7.0/15) > 1e-9 ||
		got.Sigmas["hand"].Source != "request" || len(got.Sigmas["person"].Sigmas) != 17 || got.Params.Sigmas["hand"]["thumb"] != .05 {
		t.Errorf("get_evaluation: %+v", got)
	}
}
