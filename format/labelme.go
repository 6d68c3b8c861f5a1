package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/framelake/framelake/lake/shape"
)

// labelme: one JSON per image, beside it, {"shapes": [{"label", "points":
// [[x, y], ...], "shape_type", "group_id", "flags"}], "imagePath",
// "imageWidth", "imageHeight", "flags"}, in pixels. Shape types: rectangle
// (two corners: a box), polygon, line and linestrip (polylines), point
// (keypoints of one point named by its label), circle (centre and a point
// on it: a polygon of circleVertices vertices). The image's flags that are
// true are classes; a shape's group_id and flags become its attributes.

type labelmeDoc struct {
	Shapes      []labelmeShape  `json:"shapes"`
	ImagePath   string          `json:"imagePath"`
	ImageWidth  int             `json:"imageWidth"`
	ImageHeight int             `json:"imageHeight"`
	Flags       map[string]bool `json:"flags"`
}

type labelmeShape struct {
	Label     string          `json:"label"`
	Points    [][]float64     `json:"points"`
	ShapeType string          `json:"shape_type"`
	GroupID   *int            `json:"group_id"`
	Flags     map[string]bool `json:"flags"`
}

// circleVertices is how many vertices stand for a labelme circle: at a
// radius of 100 px the polygon's area is within 0.2% of the circle's.
const circleVertices = 64

// isLabelmeHead tells a labelme JSON by its first bytes.
func isLabelmeHead(h []byte) bool {
	return bytes.HasPrefix(h, []byte("{")) && bytes.Contains(h, []byte(`"shapes"`)) &&
		(bytes.Contains(h, []byte(`"shape_type"`)) || bytes.Contains(h, []byte(`"imagePath"`)))
}

func (rd *reader) labelme() error {
	for _, j := range rd.tree.withExt(".json") {
		if !isLabelmeHead(bytes.TrimSpace(rd.tree.head(j, 8192))) {
			continue
		}
		rd.found = true
		if err := rd.labelmeFile(j); err != nil {
			return err
		}
	}
	return nil
}

func (rd *reader) labelmeFile(rel string) error {
	b, err := os.ReadFile(rd.tree.abs(rel))
	if err != nil {
		return relErr(err, rel)
	}
	var doc labelmeDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		rd.rep.add(Malformed, rel, 0, "not a labelme JSON: %v", err)
		return nil
	}
	it := Item{Source: rel, Width: doc.ImageWidth, Height: doc.ImageHeight}
	for _, name := range slices.Sorted(maps.Keys(doc.Flags)) {
		if doc.Flags[name] && name != "__ignore__" {
			it.Boxes = append(it.Boxes, Box{Label: name, Geometry: shape.Geometry{Type: shape.Class}})
		}
	}
	for i, s := range doc.Shapes {
		if len(it.Boxes) >= rd.caps.ShapesPerFile {
			rd.rep.add(OverLimit, rel, 0, "shapes %d and on: past the limit of %d a file, not imported", i, rd.caps.ShapesPerFile)
			break
		}
		bx, err := labelmeBox(s)
		if err != nil {
			rd.rep.add(Malformed, rel, 0, "shape %d (%s %q): %v; not imported", i, s.ShapeType, s.Label, err)
			continue
		}
		it.Boxes = append(it.Boxes, bx)
	}
	base := pathDir(rel)
	media := rd.tree.find(doc.ImagePath, joinRel(base, doc.ImagePath))
	if media == "" {
		// labelme keeps the image beside its JSON under the same stem; an
		// imagePath that names no image (the JSON itself, as labelme's own
		// tutorial writes, its pixels in imageData) falls back to it.
		stem := strings.TrimSuffix(rel, path.Ext(rel))
		for _, ext := range []string{".jpg", ".jpeg", ".png", ".JPG", ".PNG", ".bmp"} {
			if media = rd.tree.find("", stem+ext); media != "" {
				break
			}
		}
	}
	if media == "" {
		rd.rep.add(LabelWithoutImage, rel, 0, "image %q: not beside the JSON (%d shapes not imported)", doc.ImagePath, len(it.Boxes))
		return nil
	}
	it.Media = media
	return rd.send(it)
}

// labelmeBox reads one labelme shape.
func labelmeBox(s labelmeShape) (Box, error) {
	b := Box{Label: s.Label}
	if s.GroupID != nil {
		b.Attributes = withAttr(b.Attributes, "group_id", *s.GroupID)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Flags)) {
		b.Attributes = withAttr(b.Attributes, k, s.Flags[k])
	}
	xy := make([]float64, 0, 2*len(s.Points))
	for _, p := range s.Points {
		if len(p) != 2 || math.IsNaN(p[0]+p[1]) || math.IsInf(p[0]+p[1], 0) {
			return b, fmt.Errorf("point %v is not [x, y] of finite numbers", p)
		}
		xy = append(xy, p[0], p[1])
	}
	need := map[string]int{"rectangle": 2, "circle": 2, "point": 1, "line": 2, "linestrip": 2, "polygon": 3}
	n, ok := need[s.ShapeType]
	switch {
	case !ok:
		return b, fmt.Errorf("shape type %q is not one framelake reads (rectangle, polygon, line, linestrip, point, circle)", s.ShapeType)
	case len(xy)/2 < n:
		return b, fmt.Errorf("%d points; a %s needs %d", len(xy)/2, s.ShapeType, n)
	}
	switch s.ShapeType {
	case "rectangle":
		b.X, b.Y = min(xy[0], xy[2]), min(xy[1], xy[3])
		b.W, b.H = math.Abs(xy[2]-xy[0]), math.Abs(xy[3]-xy[1])
	case "polygon":
		b.Geometry = shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{xy}}
	case "line", "linestrip":
		b.Geometry = shape.Geometry{Type: shape.Polyline, Points: xy}
	case "point":
		b.Geometry = shape.Geometry{Type: shape.Keypoints, Keypoints: []shape.Keypoint{{Name: s.Label, X: xy[0], Y: xy[1], V: 2}}}
	case "circle":
		b.Geometry = shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{circle(xy[0], xy[1], xy[2], xy[3])}}
	}
	return b, nil
}

// circle is the polygon of circleVertices vertices on the circle centred at
// (cx, cy) through (px, py).
func circle(cx, cy, px, py float64) []float64 {
	r := math.Hypot(px-cx, py-cy)
	out := make([]float64, 0, 2*circleVertices)
	for i := range circleVertices {
		a := 2 * math.Pi * float64(i) / circleVertices
		out = append(out, cx+r*math.Cos(a), cy+r*math.Sin(a))
	}
	return out
}
