package format_test

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/lake/shape"
)

// labelmeJSON is a labelme file as this test reads it, apart from the reader.
type labelmeJSON struct {
	ImagePath   string          `json:"imagePath"`
	ImageWidth  int             `json:"imageWidth"`
	ImageHeight int             `json:"imageHeight"`
	Flags       map[string]bool `json:"flags"`
	Shapes      []struct {
		Label     string      `json:"label"`
		Points    [][]float64 `json:"points"`
		ShapeType string      `json:"shape_type"`
	} `json:"shapes"`
}

// labelmeWant is what a labelme file holds, worked out here: per shape
// its type in framelake, its label and the points it must keep
// (a circle's centre and radius instead).
type labelmeWant struct {
	typ, label string
	xy         []float64
	circle     [3]float64
}

func labelmeExpect(t *testing.T, file string) (labelmeJSON, []labelmeWant) {
	var doc labelmeJSON
	if err := json.Unmarshal([]byte(readString(t, file)), &doc); err != nil {
		t.Fatal(err)
	}
	var out []labelmeWant
	var flags []string
	for f, on := range doc.Flags {
		if on && f != "__ignore__" {
			flags = append(flags, f)
		}
	}
	sort.Strings(flags)
	for _, f := range flags {
		out = append(out, labelmeWant{typ: "class", label: f})
	}
	types := map[string]string{"rectangle": "box", "polygon": "polygon", "line": "polyline", "linestrip": "polyline",
		"point": "keypoints", "circle": "polygon"}
	for _, s := range doc.Shapes {
		w := labelmeWant{typ: types[s.ShapeType], label: s.Label}
		for _, p := range s.Points {
			w.xy = append(w.xy, p...)
		}
		if s.ShapeType == "circle" {
			c, p := s.Points[0], s.Points[1]
			w.circle, w.xy = [3]float64{c[0], c[1], math.Hypot(p[0]-c[0], p[1]-c[1])}, nil
		}
		out = append(out, w)
	}
	return doc, out
}

// TestLabelmeExamplesAll reads every labelme folder of Debian's
// labelme-examples (boxes, classification flags, instance and semantic
// polygons, video frames, the tutorial whose imagePath names its JSON, and
// the primitives) and checks each image's shapes against its JSON read
// here: the count, the types, the labels, every point kept as written,
// a rectangle's box its corners', a circle's vertices on its circle, and
// nothing refused once fitted on the image's size.
func TestLabelmeExamplesAll(t *testing.T) {
	total := 0
	for _, d := range []string{"bbox_detection/data_annotated", "classification/data_annotated",
		"instance_segmentation/data_annotated", "semantic_segmentation/data_annotated",
		"video_annotation/data_annotated", "tutorial", "primitives"} {
		dir := filepath.Join(labelmeExamples, d)
		items, rep := read(t, dir, format.Labelme)
		jsons, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		if len(jsons) == 0 || len(items) != len(jsons) {
			t.Fatalf("%s: %d items for %d JSON files, problems %v", d, len(items), len(jsons), rep.Problems)
		}
		for _, j := range jsons {
			doc, want := labelmeExpect(t, j)
			var it format.Item
			for _, cand := range items {
				if cand.Source == filepath.Base(j) {
					it = cand
				}
			}
			got := rep.Fit(it, doc.ImageWidth, doc.ImageHeight)
			if len(got) != len(want) {
				t.Errorf("%s/%s: %d shapes, the JSON holds %d", d, filepath.Base(j), len(got), len(want))
				continue
			}
			for i, w := range want {
				if err := labelmeSame(got[i], w, doc.ImageWidth, doc.ImageHeight); err != nil {
					t.Errorf("%s/%s shape %d (%s): %v", d, filepath.Base(j), i, w.label, err)
				}
			}
			total += len(got)
		}
		if rep.Refused() != 0 {
			t.Errorf("%s: problems %v", d, rep.Problems)
		}
	}
	// 9 boxes, 2 flags, 18 + 18 polygons, 15 video polygons, 4 tutorial, 7 primitives.
	if total != 73 {
		t.Errorf("%d shapes in all, want 73", total)
	}
}

// labelmeSame compares one imported shape with what its JSON holds.
func labelmeSame(b format.Box, w labelmeWant, width, height int) error {
	typ := string(b.Type)
	if typ == "" {
		typ = "box"
	}
	if typ != w.typ || b.Label != w.label {
		return fmt.Errorf("%s %q, want %s %q", typ, b.Label, w.typ, w.label)
	}
	var xy []float64
	switch b.Type {
	case "":
		x0, x1 := min(w.xy[0], w.xy[2]), max(w.xy[0], w.xy[2])
		y0, y1 := min(w.xy[1], w.xy[3]), max(w.xy[1], w.xy[3])
		if b.X != x0 || b.Y != y0 || b.W != x1-x0 || b.H != y1-y0 {
			return fmt.Errorf("box %v,%v %vx%v, corners %v", b.X, b.Y, b.W, b.H, w.xy)
		}
		return nil
	case shape.Class:
		return nil
	case shape.Polygon:
		xy = b.Polygon[0]
	case shape.Polyline:
		xy = b.Points
	case shape.Keypoints:
		xy = []float64{b.Keypoints[0].X, b.Keypoints[0].Y}
	}
	if w.circle[2] > 0 {
		for i := 0; i < len(xy); i += 2 {
			if r := math.Hypot(xy[i]-w.circle[0], xy[i+1]-w.circle[1]); math.Abs(r-w.circle[2]) > 1e-9 {
				return fmt.Errorf("vertex %d at %v from the centre, radius %v", i/2, r, w.circle[2])
			}
		}
		return nil
	}
	if !slices.Equal(xy, w.xy) {
		return fmt.Errorf("points %v, the JSON's %v", xy, w.xy)
	}
	r := shape.PointsBounds(w.xy) // cut to the image, as readers cut boxes (a chair of 2011_000006 ends 0.4 px below it)
	x1, y1 := min(r.X+r.W, float64(width)), min(r.Y+r.H, float64(height))
	r.X, r.Y = max(r.X, 0), max(r.Y, 0)
	r.W, r.H = x1-r.X, y1-r.Y
	if b.Type != shape.Keypoints && (b.X != r.X || b.Y != r.Y || b.W != r.W || b.H != r.H) {
		return fmt.Errorf("box %v,%v %vx%v, the points' %+v", b.X, b.Y, b.W, b.H, r)
	}
	return nil
}
