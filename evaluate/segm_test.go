package evaluate_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/evaluate"
	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/labelimport"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// segmTruth is one 200x200 image whose one person is the polygon of the
// square (10, 10)-(50, 50): 40x40 = 1,600 pixels, COCO's area.
const segmTruth = `{"images": [{"id": 1, "file_name": "a.png", "width": 200, "height": 200}],
 "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [10, 10, 40, 40], "area": 1600, "iscrowd": 0,
   "segmentation": [[10, 10, 50, 10, 50, 50, 10, 50]]}],
 "categories": [{"id": 1, "name": "person"}]}`

// TestSegmEvaluation: the same predictions judged as boxes and as masks,
// worked by hand from cocoeval.py.
//
// The model gives two people. First (score 0.9) the triangle (10, 10),
// (50, 10), (10, 50): its box is the truth's, but rleFrPoly sets in column
// 10+i the rows whose centres lie below the hypotenuse, 39-i of them for i
// = 0..38: 780 pixels, all inside the square, IoU 780/1600 = 0.4875. Then
// (0.8) the square itself, as a mask of counts 2010, then 40 set and 160
// clear 39 times, 40 set, and 30,150 clear: IoU 1.
//
//   - bbox: the triangle's box matches at every threshold (IoU 1), the
//     square is a false positive: precision 1 at recall 1, AP 1.
//   - segm: the triangle matches at none (0.4875 < 0.5), the square at
//     every one: FP then TP, precision 1/2 at recall 1 and made monotone
//     1/2 at every recall point, AP 1/2; VOC's all-points AP 1/2 too. AR1
//     reads the triangle alone: 0. Areas are the masks': the truth's COCO
//     area 1,600 is medium, and so is the square; the triangle's 780 is
//     small, so in the medium range it is left out (unmatched, outside):
//     AP 1 there. The small range has no truth: -1.
func TestSegmEvaluation(t *testing.T) {
	a := openSegm(t)
	box := runEvaluation(t, a, evaluate.Request{Key: "box", GTOperations: []string{"import:truth"}})
	if !closeTo(box.MAP, 1) || box.IoUType != evaluate.IoUBox {
		t.Errorf("bbox: mAP %v (%q), want 1", box.MAP, box.IoUType)
	}
	segm := runEvaluation(t, a, evaluate.Request{Key: "segm", GTOperations: []string{"import:truth"}, IoUType: evaluate.IoUSegm})
	if segm.IoUType != evaluate.IoUSegm || segm.Params.IoUType != evaluate.IoUSegm {
		t.Errorf("iou type %q / %q", segm.IoUType, segm.Params.IoUType)
	}
	for name, c := range map[string][2]float64{
		"mAP": {segm.MAP, .5}, "AP50": {segm.AP50, .5}, "AP75": {segm.AP75, .5}, "VOC_AP50": {segm.VOCAP50, .5},
		"mAP_medium": {segm.MAPMedium, 1}, "mAP_small": {segm.MAPSmall, -1}, "mAP_large": {segm.MAPLarge, -1},
		"AR1": {segm.AR1, 0}, "AR10": {segm.AR10, 1}, "AR100": {segm.AR100, 1}, "AR_medium": {segm.ARMedium, 1},
	} {
		if !closeTo(c[0], c[1]) {
			t.Errorf("segm %s = %v, want %v", name, c[0], c[1])
		}
	}
	if l := segm.Labels["person"]; l.TP != 1 || l.FP != 1 || l.FN != 0 {
		t.Errorf("person %+v: the triangle is a false positive at IoU 0.5", l)
	}
	bad := evaluate.Request{Key: "bad", PredRunID: "run_t", IoUType: "keypoint"}
	if _, err := a.Evaluate.Start(context.Background(), bad); err == nil {
		t.Error("iou_type keypoint was taken")
	}
}

// openSegm imports segmTruth and gives run_t the two predictions.
func openSegm(t *testing.T) *appliance.Appliance {
	t.Helper()
	ctx := context.Background()
	src := t.TempDir()
	var img bytes.Buffer
	png.Encode(&img, image.NewGray(image.Rect(0, 0, 200, 200)))
	os.WriteFile(filepath.Join(src, "a.png"), img.Bytes(), 0o644)
	os.WriteFile(filepath.Join(src, "annotations.json"), []byte(segmTruth), 0o644)
	a, err := appliance.Open(ctx, appliance.Config{DataDir: filepath.Join(t.TempDir(), "lake"),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if _, err := labelimport.Run(ctx, src, labelimport.Options{Collection: "truth", Format: format.COCO},
		labelimport.LakeSink(a.Lake, a.Annotate, "truth"), a.Annotate); err != nil {
		t.Fatal(err)
	}
	counts := []uint32{2010}
	for i := range 40 {
		counts = append(counts, 40)
		if i < 39 {
			counts = append(counts, 160)
		}
	}
	counts = append(counts, 30150)
	square := shape.RLE{Height: 200, Width: 200, Counts: counts}
	hi, lo := 0.9, 0.8
	preds := []lake.Box{
		{Label: "person", Confidence: &hi, Geometry: shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{{10, 10, 50, 10, 10, 50}}}},
		{Label: "person", Confidence: &lo, Geometry: shape.Geometry{Type: shape.Mask,
			Mask: &shape.EncodedMask{Size: [2]int{200, 200}, Counts: square.String()}}},
	}
	err = a.Lake.DB().Tx(ctx, func(tx *sql.Tx) error {
		return lake.ReplaceBoxes(ctx, tx, 1, lake.Machine, "run_t", 0, preds)
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestDisagreementsReadMasks: label disagreements compare polygons and masks
// by their pixels where both sides are one (issue 32), else by boxes. The
// triangle's box is the truth's (box IoU 1) but its pixels cover 780 of
// 1,600 (IoU 0.4875 < 0.5): it is the model's extra shape, and the square
// (0.8) the match. Compared by boxes the triangle (0.9) would take the
// truth and the square be extra.
func TestDisagreementsReadMasks(t *testing.T) {
	a := openSegm(t)
	ctx := context.Background()
	id, err := a.Evaluate.FindDisagreements(ctx, evaluate.DisagreementRequest{RunID: "run_t", IoU: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	j, err := a.Jobs.Wait(ctx, id)
	if err != nil || j.Status != "completed" {
		t.Fatalf("%+v %v", j, err)
	}
	var res evaluate.Disagreements
	if err := json.Unmarshal(j.Result, &res); err != nil {
		t.Fatal(err)
	}
	if res.Extra != 1 || res.Missed != 0 || len(res.Files) != 1 || len(res.Files[0].Extra) != 1 ||
		res.Files[0].Extra[0].Confidence == nil || *res.Files[0].Extra[0].Confidence != 0.9 {
		t.Errorf("disagreements %+v: want the triangle (0.9) extra", res)
	}
}
