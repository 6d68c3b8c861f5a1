package labelimport

import (
	"reflect"
	"testing"

	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/lake/shape"
)

// TestSpillKeepsShapes: every shape comes back from the spill as it went
// in, polygons (spilled as numbers) and the rest (as JSON) alike.
func TestSpillKeepsShapes(t *testing.T) {
	s, err := newBoxSpill(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	area := 12.5
	in := []format.Box{
		{Label: "a", X: 1, Y: 2, W: 3, H: 4, Line: 7},
		{Label: "p", Geometry: shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{{0.1, 0.2, 10, 0, 10, 10.333333333333334}, {2, 2, 3, 2, 3, 3}}},
			Attributes: map[string]any{"iscrowd": 0.0}},
		{Label: "pa", Geometry: shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{{0, 0, 4, 0, 4, 4}}, Area: &area}},
		{Label: "m", Geometry: shape.Geometry{Type: shape.Mask, Mask: &shape.EncodedMask{Size: [2]int{2, 2}, Counts: "04"}}},
		{Label: "k", Relative: true, Geometry: shape.Geometry{Type: shape.Keypoints, Keypoints: []shape.Keypoint{{Name: "nose", X: 0.5, Y: 0.5, V: 2}}}},
		{Label: "l", Geometry: shape.Geometry{Type: shape.Polyline, Points: []float64{0, 0, 1, 1}}},
	}
	sp, err := s.put(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.get([]span{sp}, 100)
	if err != nil || !reflect.DeepEqual(got, in) {
		t.Errorf("read back %+v, %v\nwant %+v", got, err, in)
	}
	// A polygon from format.ReadEncoded, as its bytes, comes back as numbers.
	ring := [][]float64{{1.25, 2, 31, 2, 31, 22.75}}
	sp, err = s.put([]format.Box{{Label: "e", Geometry: shape.Geometry{Type: shape.Polygon}, Rings: format.AppendRings(nil, ring)}})
	if err != nil {
		t.Fatal(err)
	}
	want := []format.Box{{Label: "e", Geometry: shape.Geometry{Type: shape.Polygon, Polygon: ring}}}
	if got, err := s.get([]span{sp}, 100); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v, %v\nwant %+v", got, err, want)
	}
}
