package format

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/framelake/framelake/lake/shape"
)

// CVAT for images 1.1: one XML, <meta> naming the labels, then an <image
// name width height subset> per image holding its shapes, each with
// <attribute name>value</attribute> children: <box xtl ytl xbr ybr>;
// <polygon>, <polyline> and <points> (points="x,y;x,y"; points become
// keypoints named 1, 2, ... as CVAT names none); <skeleton> (its <points
// label> children are named keypoints, outside="1" not labelled,
// occluded="1" hidden); <mask rle left top width height> (CVAT's run
// lengths over its box, row by row, zeros first); <tag> (a class). <ellipse>
// and <cuboid> are counted as ignored. It is read element by element. Images
// are looked for beside it and under images/, where CVAT's export puts them.

// cvatShape is one shape element. Coordinates are read as text and parsed
// shape by shape: a value out of range (xbr="1e400") is that shape's
// problem, not the file's.
type cvatShape struct {
	Label    string `xml:"label,attr"`
	XTL      string `xml:"xtl,attr"`
	YTL      string `xml:"ytl,attr"`
	XBR      string `xml:"xbr,attr"`
	YBR      string `xml:"ybr,attr"`
	Points   string `xml:"points,attr"`
	Occluded string `xml:"occluded,attr"`
	Rotation string `xml:"rotation,attr"`
	Outside  string `xml:"outside,attr"`
	RLE      string `xml:"rle,attr"`
	Left     string `xml:"left,attr"`
	Top      string `xml:"top,attr"`
	Width    string `xml:"width,attr"`
	Height   string `xml:"height,attr"`
	Attrs    []struct {
		Name  string `xml:"name,attr"`
		Value string `xml:",chardata"`
	} `xml:"attribute"`
	Kids []cvatShape `xml:"points"` // a skeleton's named points
}

// cvatKinds are the shape elements read; others are counted ignored.
var cvatKinds = map[string]bool{"box": true, "polygon": true, "polyline": true, "points": true, "skeleton": true,
	"mask": true, "tag": true}

func (rd *reader) cvat() error {
	for _, x := range rd.tree.withExt(".xml") {
		if h := rd.tree.head(x, 4096); !bytes.Contains(h, []byte("<annotations")) {
			continue
		}
		rd.found = true
		if err := rd.cvatFile(x); err != nil {
			return err
		}
	}
	return nil
}

func (rd *reader) cvatFile(rel string) error {
	seen := map[string]bool{}
	err := rd.eachStart(rel, func(dec *xml.Decoder, se xml.StartElement, line int) error {
		switch se.Name.Local {
		case "label":
			var l struct {
				Name string `xml:"name"`
			}
			if err := dec.DecodeElement(&l, &se); err != nil {
				return err
			}
			if l.Name != "" {
				rd.category(seen, l.Name)
			}
		case "image":
			return rd.cvatImage(rel, dec, se, line)
		}
		return nil
	})
	var syn *xml.SyntaxError
	if errors.As(err, &syn) {
		rd.rep.add(Malformed, rel, syn.Line, "%s; the rest of the file is not read", syn.Msg)
		return nil
	}
	return err
}

// eachStart calls fn with each start element of the XML file rel and the
// line it is on, until the end, fn's error or a syntax error.
func (rd *reader) eachStart(rel string, fn func(dec *xml.Decoder, se xml.StartElement, line int) error) error {
	f, err := os.Open(rd.tree.abs(rel))
	if err != nil {
		return relErr(err, rel)
	}
	defer f.Close()
	dec := xml.NewDecoder(f)
	for {
		t, err := dec.Token()
		if err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if se, ok := t.(xml.StartElement); ok {
			line, _ := dec.InputPos()
			if err := fn(dec, se, line); err != nil {
				return err
			}
		}
	}
}

// cvatImage reads an <image> element shape by shape, so an image of a
// million boxes holds at most Caps.ShapesPerFile of them, and a shape that
// does not parse is one malformed shape.
func (rd *reader) cvatImage(rel string, dec *xml.Decoder, se xml.StartElement, line int) error {
	var name, subset string
	var width, height int
	for _, a := range se.Attr {
		switch a.Name.Local {
		case "name":
			name = a.Value
		case "subset":
			subset = a.Value
		case "width":
			width, _ = strconv.Atoi(strings.TrimSpace(a.Value))
		case "height":
			height, _ = strconv.Atoi(strings.TrimSpace(a.Value))
		}
	}
	it := Item{Source: rel, Width: width, Height: height, Split: splitName(subset)}
	over, overLine := 0, 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		if _, end := t.(xml.EndElement); end {
			break
		}
		child, ok := t.(xml.StartElement)
		if !ok {
			continue
		}
		at, _ := dec.InputPos()
		kind := child.Name.Local
		if !cvatKinds[kind] {
			rd.rep.add(Ignored, rel, at, "<%s> of image %q is no shape framelake keeps; not imported", kind, name)
			if err := dec.Skip(); err != nil {
				return err
			}
			continue
		}
		var s cvatShape
		if err := dec.DecodeElement(&s, &child); err != nil {
			return err
		}
		if len(it.Boxes) >= rd.caps.ShapesPerFile {
			if over++; over == 1 {
				overLine = at
			}
			continue
		}
		rd.cvatShapeOf(rel, at, name, kind, s, &it)
	}
	if over > 0 {
		rd.rep.AddN(Problem{Kind: OverLimit, File: rel, Line: overLine, Message: fmt.Sprintf(
			"image %q: %d shapes past the limit of %d a file, not imported (the first here)", name, over, rd.caps.ShapesPerFile)}, over)
	}
	dir := pathDir(rel)
	media := rd.tree.find(name, joinRel(dir, "images", name), joinRel(dir, name), joinRel("images", name), name)
	if media == "" {
		rd.rep.add(LabelWithoutImage, rel, line, "image %q: not beside the XML or under images/ (%d boxes not imported)",
			name, len(it.Boxes))
		return nil
	}
	it.Media = media
	return rd.send(it)
}

// cvatShapeOf turns one shape of image name into a box of it, or a problem.
func (rd *reader) cvatShapeOf(rel string, line int, name, kind string, s cvatShape, it *Item) {
	b := Box{Label: s.Label, Line: line}
	if kind == "box" {
		var c [4]float64
		for i, v := range []struct{ attr, text string }{{"xtl", s.XTL}, {"ytl", s.YTL}, {"xbr", s.XBR}, {"ybr", s.YBR}} {
			f, err := strconv.ParseFloat(strings.TrimSpace(v.text), 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				rd.rep.add(Malformed, rel, line, "%s box of image %q: %s %q is not a finite number; not imported", s.Label, name, v.attr, v.text)
				return
			}
			c[i] = f
		}
		b.X, b.Y, b.W, b.H = c[0], c[1], c[2]-c[0], c[3]-c[1]
		rd.cvatShape(rel, it, b, s)
		return
	}
	g, err := cvatGeometry(kind, s, it.Width, it.Height)
	if err != nil {
		rd.rep.add(Malformed, rel, line, "%s %s of image %q: %v; not imported", s.Label, kind, name, err)
		return
	}
	b.Geometry = g
	rd.cvatShape(rel, it, b, s)
}

// cvatGeometry reads a shape that is not a box (its box is then derived).
func cvatGeometry(kind string, s cvatShape, width, height int) (shape.Geometry, error) {
	switch kind {
	case "tag":
		return shape.Geometry{Type: shape.Class}, nil
	case "mask":
		return cvatMask(s, width, height)
	case "skeleton":
		g := shape.Geometry{Type: shape.Keypoints}
		for _, k := range s.Kids {
			xy, err := cvatPoints(k.Points)
			if err != nil || len(xy) != 2 {
				return g, fmt.Errorf("point %q: %q is not one x,y", k.Label, k.Points)
			}
			g.Keypoints = append(g.Keypoints, shape.Keypoint{Name: k.Label, X: xy[0], Y: xy[1], V: cvatVisibility(k)})
		}
		return g, nil
	}
	xy, err := cvatPoints(s.Points)
	if err != nil {
		return shape.Geometry{}, err
	}
	switch kind {
	case "polygon":
		return shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{xy}}, nil
	case "polyline":
		return shape.Geometry{Type: shape.Polyline, Points: xy}, nil
	}
	g := shape.Geometry{Type: shape.Keypoints}
	for i := 0; i+1 < len(xy); i += 2 {
		g.Keypoints = append(g.Keypoints, shape.Keypoint{Name: strconv.Itoa(i/2 + 1), X: xy[i], Y: xy[i+1], V: 2})
	}
	return g, nil
}

// cvatVisibility is COCO's visibility of a skeleton's point.
func cvatVisibility(k cvatShape) int {
	switch {
	case k.Outside == "1":
		return 0
	case k.Occluded == "1":
		return 1
	}
	return 2
}

// cvatMask turns CVAT's mask (run lengths over its box, row by row, zeros
// first) into COCO's RLE of the width×height image.
func cvatMask(s cvatShape, width, height int) (shape.Geometry, error) {
	if width <= 0 || height <= 0 {
		return shape.Geometry{}, fmt.Errorf("the image has no width and height to place the mask on")
	}
	var box [4]int
	for i, v := range []string{s.Left, s.Top, s.Width, s.Height} {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return shape.Geometry{}, fmt.Errorf("left, top, width and height must be whole numbers, got %q", v)
		}
		box[i] = n
	}
	left, top, w, h := box[0], box[1], box[2], box[3]
	if w == 0 || h == 0 || left+w > width || top+h > height {
		return shape.Geometry{}, fmt.Errorf("mask box %dx%d at (%d, %d) is not inside the %dx%d image", w, h, left, top, width, height)
	}
	bits := make([]byte, width*height) // column-major, as COCO
	pos, on := 0, false
	for _, f := range strings.Split(s.RLE, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 || pos+n > w*h {
			return shape.Geometry{}, fmt.Errorf("rle %q is not run lengths covering its %dx%d box", s.RLE, w, h)
		}
		for ; n > 0; n-- {
			if on {
				bits[(left+pos%w)*height+top+pos/w] = 1
			}
			pos++
		}
		on = !on
	}
	if pos != w*h {
		return shape.Geometry{}, fmt.Errorf("rle covers %d of its %dx%d box", pos, w, h)
	}
	r := shape.Encode(bits, height, width)
	return shape.Geometry{Type: shape.Mask, Mask: &shape.EncodedMask{Size: [2]int{height, width}, Counts: r.String()}}, nil
}

// cvatShape adds a shape's box with its attributes, or counts it refused.
func (rd *reader) cvatShape(rel string, it *Item, b Box, s cvatShape) {
	if strings.TrimSpace(b.Label) == "" {
		rd.rep.add(Malformed, rel, b.Line, "a shape without a label")
		return
	}
	if !isShape(b) && (b.W <= 0 || b.H <= 0) {
		rd.rep.add(ZeroSize, rel, b.Line, "%s box of size %gx%g", b.Label, b.W, b.H)
		return
	}
	if s.Occluded == "1" {
		b.Attributes = withAttr(b.Attributes, "occluded", true)
	}
	if r, err := strconv.ParseFloat(s.Rotation, 64); err == nil && r != 0 {
		b.Attributes = withAttr(b.Attributes, "rotation", r)
	}
	for _, a := range s.Attrs {
		b.Attributes = withAttr(b.Attributes, a.Name, strings.TrimSpace(a.Value))
	}
	it.Boxes = append(it.Boxes, b)
}

// cvatPoints parses "x,y;x,y;..." into x, y pairs.
func cvatPoints(s string) ([]float64, error) {
	var out []float64
	for _, pt := range strings.Split(strings.TrimSpace(s), ";") {
		x, y, ok := strings.Cut(pt, ",")
		fx, errx := strconv.ParseFloat(strings.TrimSpace(x), 64)
		fy, erry := strconv.ParseFloat(strings.TrimSpace(y), 64)
		if !ok || errx != nil || erry != nil || math.IsNaN(fx+fy) || math.IsInf(fx+fy, 0) {
			return nil, fmt.Errorf("points %q are not x,y;x,y", s)
		}
		out = append(out, fx, fy)
	}
	return out, nil
}
