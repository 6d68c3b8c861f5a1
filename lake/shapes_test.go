package lake_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// shapesJSON is one annotation of every type on a 64x48 image, as a client
// writes them (docs/shapes.md): the box fields of the shapes are left out,
// the lake derives them.
const shapesJSON = `[
 {"label": "car", "x": 1, "y": 2, "width": 10, "height": 20},
 {"label": "person", "type": "polygon", "polygon": [[10, 10, 10, 30, 30, 30, 30, 10], [15, 15, 15, 25, 25, 25, 25, 15]]},
 {"label": "road", "type": "polyline", "points": [0, 40, 63, 40]},
 {"label": "person", "type": "keypoints", "keypoints": [{"name": "nose", "x": 20, "y": 12, "v": 2},
   {"name": "left_eye", "x": 18, "y": 11, "v": 1}, {"name": "right_eye", "x": 0, "y": 0, "v": 0}]},
 {"label": "sky", "type": "mask", "mask": {"size": [48, 64], "counts": [0, 4, 44, 4, 3020]}},
 {"label": "night", "type": "class"}
]`

// lakeOf opens a lake holding n 64x48 JPEGs and returns it and them.
func lakeOf(t *testing.T, n int) (*lake.Lake, []lake.File) {
	t.Helper()
	l, _ := openLake(t)
	var ups []lake.Upload
	for i := range n {
		ups = append(ups, mem(fmt.Sprintf("%c.jpg", 'a'+i), jpegBytes(t, 64, 48, uint8(i+1))))
	}
	res, err := l.Add(context.Background(), lake.AddOptions{Collection: "c"}, ups)
	if err != nil || len(res.Stored) != n {
		t.Fatal(res, err)
	}
	return l, res.Stored
}

// TestShapesRoundTrip: every type is stored with its box and area derived
// from the shape, and reads back as written; the same shapes again change
// nothing.
func TestShapesRoundTrip(t *testing.T) {
	ctx := context.Background()
	l, files := lakeOf(t, 1)
	f := files[0]
	var in []lake.Box
	if err := json.Unmarshal([]byte(shapesJSON), &in); err != nil {
		t.Fatal(err)
	}
	set := func(b []lake.Box) (lake.SetBoxesResult, error) {
		return l.SetHumanBoxes(ctx, "import:c", []lake.FileBoxes{{UniqueName: f.UniqueName, Boxes: b}})
	}
	if r, err := set(in); err != nil || r.Changed != 1 {
		t.Fatalf("set: %+v %v", r, err)
	}
	got, err := l.Boxes(ctx, lake.BoxQuery{FileSeqs: []int64{f.Seq()}})
	if err != nil || len(got) != len(in) {
		t.Fatalf("read %d annotations, %v", len(got), err)
	}
	want := []struct {
		typ        shape.Type
		x, y, w, h float64
		area       float64 // -1: none
	}{
		{shape.Box, 1, 2, 10, 20, -1},
		// 20x20 outer ring less the 10x10 hole, read even-odd.
		{shape.Polygon, 10, 10, 20, 20, 300},
		// A horizontal line: its box is the lake's precision tall; no area.
		{shape.Polyline, 0, 40, 63, 1e-6, -1},
		// The labelled points only (v > 0): (18, 11) and (20, 12).
		{shape.Keypoints, 18, 11, 2, 1, 2},
		// Rows 0-3 of columns 0 and 1: counts 0, 4, 44, 4, then the rest.
		{shape.Mask, 0, 0, 2, 4, 8},
		// A class names the whole frame.
		{shape.Class, 0, 0, 64, 48, -1},
	}
	for i, w := range want {
		g := got[i]
		if g.Type != w.typ || g.X != w.x || g.Y != w.y || g.W != w.w || g.H != w.h {
			t.Errorf("%d: %s at %g,%g %gx%g, want %s at %g,%g %gx%g", i, g.Type, g.X, g.Y, g.W, g.H, w.typ, w.x, w.y, w.w, w.h)
		}
		if (w.area < 0) != (g.Area == nil) || (g.Area != nil && *g.Area != w.area) {
			t.Errorf("%d: %s area %v, want %v", i, w.typ, g.Area, w.area)
		}
	}
	if len(got[1].Polygon) != 2 || len(got[3].Keypoints) != 3 || got[4].Mask.Counts != `04\10Pm2` ||
		len(got[2].Points) != 4 {
		t.Errorf("geometry did not read back: %+v", got)
	}
	// Read back and written again, nothing changes: derived fields agree.
	if r, err := set(got); err != nil || r.Changed != 0 {
		t.Errorf("the shapes as read, written again: %+v %v", r, err)
	}
}

// TestShapesRefused: a malformed shape is a 400 that names the annotation
// and what is wrong, and nothing of the call is written.
func TestShapesRefused(t *testing.T) {
	ctx := context.Background()
	l, files := lakeOf(t, 1)
	f := files[0]
	good := lake.Box{Label: "car", X: 1, Y: 2, W: 10, H: 20}
	cases := []struct {
		name, json, want string
	}{
		{"two-point ring", `{"label": "a", "type": "polygon", "polygon": [[0, 0, 5, 5]]}`, "polygon ring 0 has 2 points; it needs at least 3"},
		{"no rings", `{"label": "a", "type": "polygon"}`, "a polygon needs its polygon field"},
		{"wrong field", `{"label": "a", "type": "polygon", "points": [0, 0, 5, 5]}`, "a polygon has no points field"},
		{"mask sum", `{"label": "a", "type": "mask", "mask": {"size": [48, 64], "counts": [0, 4]}}`, "mask counts sum to 4, not height×width"},
		{"mask size", `{"label": "a", "type": "mask", "mask": {"size": [10, 10], "counts": [0, 100]}}`, "mask size [10, 10] is not the frame's"},
		{"empty mask", `{"label": "a", "type": "mask", "mask": {"size": [48, 64], "counts": [3072]}}`, "mask has no pixel set"},
		{"keypoint v", `{"label": "a", "type": "keypoints", "keypoints": [{"name": "nose", "x": 1, "y": 1, "v": 7}]}`, "visibility 7"},
		{"no labelled keypoint", `{"label": "a", "type": "keypoints", "keypoints": [{"name": "nose", "x": 1, "y": 1, "v": 0}]}`, "no labelled point"},
		{"far polyline", `{"label": "a", "type": "polyline", "points": [0, 0, 500, 0]}`, "point 1 (500, 0) lies more than the image's size outside"},
		{"unknown type", `{"label": "a", "type": "circle"}`, `unknown shape type "circle"`},
		{"empty label", `{"label": "", "type": "class"}`, "label is empty"},
	}
	for _, c := range cases {
		var b lake.Box
		if err := json.Unmarshal([]byte(c.json), &b); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, err := l.SetHumanBoxes(ctx, "import:c", []lake.FileBoxes{{UniqueName: f.UniqueName, Boxes: []lake.Box{good, b}}})
		if !errs.Is(err, errs.InvalidArgument) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "annotations[1]") {
			t.Errorf("%s: %v, want an invalid_argument naming annotations[1] and %q", c.name, err, c.want)
		}
	}
	if got, _ := l.Boxes(ctx, lake.BoxQuery{FileSeqs: []int64{f.Seq()}}); len(got) != 0 {
		t.Errorf("refused calls wrote %d annotations", len(got))
	}
}

// TestShapesQueried: the query language reads shapes (docs/shapes.md):
// their type, area, points and visible keypoints, and class labels, on any
// annotation or on one (annotation(...)).
func TestShapesQueried(t *testing.T) {
	ctx := context.Background()
	l, files := lakeOf(t, 2)
	var in []lake.Box
	if err := json.Unmarshal([]byte(shapesJSON), &in); err != nil {
		t.Fatal(err)
	}
	// a.jpg has every shape; b.jpg one 10x20 box.
	_, err := l.SetHumanBoxes(ctx, "import:c", []lake.FileBoxes{{UniqueName: files[0].UniqueName, Boxes: in},
		{UniqueName: files[1].UniqueName, Boxes: in[:1]}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		query string
		want  int
	}{
		{"annotation.type = polygon", 1},
		{"annotation.type = box", 2},
		{"annotation.type IN (mask, keypoints)", 1},
		{"annotation.area < 100", 1},   // the keypoints' 2 and the mask's 8 on a; b's box is 200
		{"annotation.area >= 200", 2},  // boxes (10x20) on both, the polygon's 300 on a
		{"annotation.area > 250", 1},   // the polygon
		{"annotation.points >= 8", 1},  // the polygon's two rings of 4
		{"annotation.points > 100", 0}, //
		{"annotation.keypoints.visible >= 1", 1},
		{"annotation.keypoints.visible >= 2", 0}, // one visible (v 2), one hidden
		{"class = night", 1},
		{"class = person", 0}, // a polygon's label is no class
		{"annotation.type = class AND annotation.label = night", 1},
		{"annotation(type = mask AND area = 8)", 1},
		{"annotation(type = box AND area = 8)", 0},
		{"NOT annotation.type = polygon", 1},
	} {
		n, err := l.Count(ctx, lake.Selection{ItemType: "image", Query: c.query})
		if err != nil || n != c.want {
			t.Errorf("%s: %d files, %v; want %d", c.query, n, err, c.want)
		}
	}
	if _, err := l.Count(ctx, lake.Selection{ItemType: "image", Query: "annotation.type = circle"}); err == nil {
		t.Error("annotation.type = circle was taken")
	}
}

// TestShapeCoordinatesRounded: a shape's coordinates are kept to 1e-6 px as
// a box's are, so a conversion's noise (0.1 × 768 = 76.80000000000001)
// never reads back.
func TestShapeCoordinatesRounded(t *testing.T) {
	ctx := context.Background()
	l, files := lakeOf(t, 1)
	f := files[0]
	noisy := 0.1 * 768 / 20 // 3.8400000000000003
	b := lake.Box{Label: "a", Geometry: shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{{noisy, 1, 10, 1, 10, 10}}}}
	if _, err := l.SetHumanBoxes(ctx, "import:c", []lake.FileBoxes{{UniqueName: f.UniqueName, Boxes: []lake.Box{b}}}); err != nil {
		t.Fatal(err)
	}
	got, _ := l.Boxes(ctx, lake.BoxQuery{FileSeqs: []int64{f.Seq()}})
	if len(got) != 1 || got[0].Polygon[0][0] != 3.84 || got[0].X != 3.84 {
		t.Errorf("read back %+v", got)
	}
	if b.Polygon[0][0] != noisy {
		t.Error("the caller's polygon was changed")
	}
}
