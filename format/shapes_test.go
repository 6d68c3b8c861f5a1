package format

import (
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/framelake/framelake/lake/shape"
)

// TestSegmentationPaintsShapes: the Semantic Segmentation export paints a
// polygon's own pixels, not its box. The triangle (0,0) (8,0) (0,8) on an
// 8x8 frame sets in column x the rows y with x+y+1 < 8 (centres below the
// hypotenuse, one on it out): 7+6+...+1 = 28 pixels of its 64-pixel box;
// the 2x2 box beside paints its rectangle.
func TestSegmentationPaintsShapes(t *testing.T) {
	frames := []Frame{{UniqueName: "a-1", Split: "train", Width: 8, Height: 8, Boxes: []ExportBox{
		{Label: "cat", X: 0, Y: 0, W: 8, H: 8, Geometry: shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{{0, 0, 8, 0, 0, 8}}}},
		{Label: "dog", ClassID: 1, X: 6, Y: 6, W: 2, H: 2},
	}}}
	zr, _ := export(t, ExportSemanticSegmentation, Dataset{Name: "s", Version: "1.0", Labels: []string{"cat", "dog"}}, frames, false)
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, "SegmentationClass/a-1.png") {
			continue
		}
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		m := img.(*image.Paletted)
		counts := map[uint8]int{}
		for y := range 8 {
			for x := range 8 {
				v := m.ColorIndexAt(x, y)
				counts[v]++
				if v == 1 && x+y+1 >= 8 {
					t.Errorf("(%d,%d) is cat outside the triangle", x, y)
				}
			}
		}
		if counts[1] != 28 || counts[2] != 4 {
			t.Errorf("pixels by class %v, want cat 28, dog 4", counts)
		}
		return
	}
	t.Fatal("no mask in the archive")
}

// TestSegmentationLeavesPointsOut: keypoints, polylines and classes have no
// area, so the Semantic Segmentation export paints none of them (not their
// boxes): the frame is all background.
func TestSegmentationLeavesPointsOut(t *testing.T) {
	frames := []Frame{{UniqueName: "a-1", Split: "train", Width: 8, Height: 8, Boxes: []ExportBox{
		{Label: "cat", X: 1, Y: 1, W: 4, H: 4, Geometry: shape.Geometry{Type: shape.Keypoints, Keypoints: []shape.Keypoint{{Name: "a", X: 1, Y: 1, V: 2}, {Name: "b", X: 5, Y: 5, V: 2}}}},
		{Label: "dog", ClassID: 1, X: 2, Y: 2, W: 5, H: 5, Geometry: shape.Geometry{Type: shape.Polyline, Points: []float64{2, 2, 7, 7}}},
		{Label: "dog", ClassID: 1, Geometry: shape.Geometry{Type: shape.Class}},
	}}}
	zr, _ := export(t, ExportSemanticSegmentation, Dataset{Name: "s", Version: "1.0", Labels: []string{"cat", "dog"}}, frames, false)
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "SegmentationClass/a-1.png") {
			if got := maskText(t, readEntry(t, f)); strings.ContainsAny(got[strings.Index(got, "\n"):], "12") {
				t.Errorf("painted:\n%s", got)
			}
			return
		}
	}
	t.Fatal("no mask in the archive")
}
