package labelimport_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/labelimport"
	"github.com/framelake/framelake/lake/shape"
)

// TestShapesThroughTheSpill: a COCO polygon, an RLE mask, and a polygon of
// two overlapping rings come out of an import's temporary file as they
// went in; the overlapping one as the mask of their union, the pixels
// pycocotools reads: squares 0-4 and 2-6 on a 10x10 image set pixels 0-3
// and 2-5 of each axis, 16 + 16 - the 4 they share = 28, where even-odd
// would leave the shared 4 out (24).
func TestShapesThroughTheSpill(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.jpg"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "coco.json"), []byte(`{"images": [{"id": 1, "file_name": "a.jpg", "width": 10, "height": 10}],
 "categories": [{"id": 1, "name": "cat"}],
 "annotations": [
  {"id": 1, "image_id": 1, "category_id": 1, "bbox": [1, 1, 3, 3], "area": 7.5, "segmentation": [[1, 1, 4, 1, 4, 4]]},
  {"id": 2, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 4], "area": 4, "iscrowd": 1, "segmentation": {"size": [10, 10], "counts": [0, 4, 96]}},
  {"id": 3, "image_id": 1, "category_id": 1, "bbox": [0, 0, 6, 6], "area": 36,
   "segmentation": [[0, 0, 0, 4, 4, 4, 4, 0], [2, 2, 2, 6, 6, 6, 6, 2]]}]}`), 0o644)
	var got []format.Box
	sink := func(ctx context.Context, b labelimport.Batch) (labelimport.Outcome, error) {
		for _, p := range b.Paths {
			for _, lb := range b.Boxes(filepath.Base(p), 10, 10) {
				got = append(got, format.Box{Label: lb.Label, X: lb.X, Y: lb.Y, W: lb.W, H: lb.H, Geometry: lb.Geometry})
			}
		}
		return labelimport.Outcome{}, nil
	}
	if _, err := labelimport.Run(context.Background(), dir, labelimport.Options{Collection: "c", Format: format.COCO}, sink, nil); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d annotations: %+v", len(got), got)
	}
	if got[0].Type != shape.Polygon || !reflect.DeepEqual(got[0].Polygon, [][]float64{{1, 1, 4, 1, 4, 4}}) || got[0].W != 3 {
		t.Errorf("polygon %+v", got[0])
	}
	if got[1].Type != shape.Mask || got[1].Mask.Counts != "04P3" || got[1].Mask.Size != [2]int{10, 10} {
		t.Errorf("mask %+v", got[1])
	}
	m, err := got[2].Mask.RLE()
	if got[2].Type != shape.Mask || err != nil || m.Area() != 28 {
		t.Errorf("overlapping rings %+v: %v, area %d", got[2], err, m.Area())
	}
}
