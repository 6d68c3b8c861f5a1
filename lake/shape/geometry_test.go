package shape

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestEncodedMaskReadsBothCOCOForms(t *testing.T) {
	// The 4x4 "half pixel" square of TestFromRing: counts 5 2 2 2 5.
	for _, in := range []string{`{"size": [4, 4], "counts": "52203"}`, `{"size": [4, 4], "counts": [5, 2, 2, 2, 5]}`} {
		var m EncodedMask
		if err := json.Unmarshal([]byte(in), &m); err != nil || m.Counts != "52203" || m.Size != [2]int{4, 4} {
			t.Errorf("%s: %+v %v", in, m, err)
		}
		if r, err := m.RLE(); err != nil || r.Area() != 4 {
			t.Errorf("%s: RLE %v %v", in, r, err)
		}
	}
	var m EncodedMask
	if err := json.Unmarshal([]byte(`{"size": [4, 4], "counts": [5, -2]}`), &m); err == nil {
		t.Error("a negative count was read")
	}
}

func TestGeometryCheckAndBounds(t *testing.T) {
	sq := EncodedMask{Size: [2]int{4, 4}, Counts: "52203"} // rows and columns 1-2
	cases := []struct {
		g    Geometry
		err  string
		want Rect
	}{
		{Geometry{Type: Polygon, Polygon: [][]float64{{0, 0, 4, 0, 0, 3}, {5, 5, 6, 5, 6, 7}}}, "", Rect{0, 0, 6, 7}},
		{Geometry{Type: Polyline, Points: []float64{1, 2, 3, 2}}, "", Rect{1, 2, 2, 0}},
		{Geometry{Type: Keypoints, Keypoints: []Keypoint{{"a", 1, 1, 2}, {"b", 9, 9, 0}}}, "", Rect{1, 1, 0, 0}},
		{Geometry{Type: Mask, Mask: &sq}, "", Rect{1, 1, 2, 2}},
		{Geometry{Type: Keypoints, Keypoints: []Keypoint{{"a", 1, 1, 0}}}, "no labelled point", Rect{}},
		{Geometry{Type: Mask, Mask: &EncodedMask{Size: [2]int{4, 4}, Counts: "`0"}}, "no pixel set", Rect{}},
		{Geometry{Type: Mask}, "without its counts", Rect{}},
	}
	for i, c := range cases {
		err := c.g.Check(4, 4)
		if (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%d: Check %v, want %q", i, err, c.err)
		}
		if c.err == "" && c.g.Bounds() != c.want {
			t.Errorf("%d: Bounds %v, want %v", i, c.g.Bounds(), c.want)
		}
	}
	if err := (Geometry{Type: Mask, Mask: &sq}).Check(5, 4); err == nil {
		t.Error("a 4x4 mask on a 4x5 frame was taken")
	}
}
