package format

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
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

// Writing: CVAT for images 1.1, the export (ExportCVAT).

// cvatWriter writes CVAT for images 1.1 (docs.cvat.ai, XML annotation
// format) as CVAT's own export lays it out: annotations.xml with the images
// under images/. Each frame is an <image name width height subset> (subset
// Train, Validation or Test) holding its shapes:
//
//	box        <box xtl ytl xbr ybr>, occluded and rotation from the attributes of those names
//	polygon    <polygon points="x,y;x,y">; a polygon of several rings (CVAT has no holes
//	           or parts) is written as the <mask> of its pixels read even-odd
//	mask       <mask rle left top width height>: CVAT's run lengths over the mask's box,
//	           row by row, the first a run of zeros
//	polyline   <polyline points>
//	keypoints  <skeleton> with a <points label> per point of the label (outside="1" when
//	           not labelled, occluded="1" when hidden), its label declared a skeleton in
//	           <meta> with one points sublabel per name; keypoints named 1, 2, ... n in
//	           order (what CVAT's <points> import to) go back as <points>
//	class      <tag>
//
// Other attributes are <attribute name>value</attribute> children, declared
// as text attributes of their label in <meta>. Coordinates are written as
// stored, to the digit. Augmented frames are listed in augmented/.
type cvatWriter struct {
	a         *archive
	images    *spool
	n         int
	points    *pointOrder
	attrs     map[string][]string // attribute names seen per label
	augmented *augmentedLists
	buf       bytes.Buffer
}

var cvatSubsets = [...]string{"Train", "Validation", "Test"}

func newCVATWriter(a *archive) (*cvatWriter, error) {
	images, err := a.spool()
	if err != nil {
		return nil, err
	}
	aug, err := newAugmentedLists(a, splitDirs)
	return &cvatWriter{a: a, images: images, points: newPointOrder(a.skel), attrs: map[string][]string{}, augmented: aug}, err
}

func (c *cvatWriter) frame(fr *Frame) error {
	a, file := c.a, mediaFile(fr)
	if a.media {
		if err := a.copyMedia("images/"+file, fr); err != nil {
			return err
		}
	}
	b := &c.buf
	b.Reset()
	fmt.Fprintf(b, "  <image id=\"%d\" name=\"%s\" width=\"%d\" height=\"%d\" subset=\"%s\">\n",
		c.n, esc(file), fr.Width, fr.Height, cvatSubsets[splitIndex(fr.Split)])
	c.n++
	for _, bx := range fr.Boxes {
		c.shape(b, bx, fr.Width, fr.Height)
	}
	b.WriteString("  </image>\n")
	if _, err := c.images.Write(b.Bytes()); err != nil {
		return err
	}
	return c.augmented.add(fr, "images/"+file, "images/"+sourceFile(fr))
}

// shape writes one annotation as its CVAT element.
func (c *cvatWriter) shape(b *bytes.Buffer, bx ExportBox, width, height int) {
	label := c.a.ds.Labels[bx.ClassID]
	occluded := "0"
	if v, ok := bx.Attributes["occluded"].(bool); ok && v {
		occluded = "1"
	}
	head := fmt.Sprintf(`label="%s" source="manual" occluded="%s" z_order="0"`, esc(label), occluded)
	switch {
	case bx.Type == shape.Polygon && len(bx.Polygon) == 1:
		fmt.Fprintf(b, "    <polygon %s points=\"%s\">\n", head, cvatXY(bx.Polygon[0]))
		c.attributes(b, label, bx.Attributes)
		b.WriteString("    </polygon>\n")
	case bx.Type == shape.Polygon || bx.Type == shape.Mask:
		if !c.mask(b, head, bx, width, height) {
			return
		}
		c.attributes(b, label, bx.Attributes)
		b.WriteString("    </mask>\n")
	case bx.Type == shape.Polyline:
		fmt.Fprintf(b, "    <polyline %s points=\"%s\">\n", head, cvatXY(bx.Points))
		c.attributes(b, label, bx.Attributes)
		b.WriteString("    </polyline>\n")
	case bx.Type == shape.Keypoints:
		c.keypoints(b, head, label, bx)
	case bx.Type == shape.Class:
		fmt.Fprintf(b, "    <tag label=\"%s\" source=\"manual\">\n", esc(label))
		c.attributes(b, label, bx.Attributes)
		b.WriteString("    </tag>\n")
	default:
		rot := ""
		if r, ok := bx.Attributes["rotation"].(float64); ok && r != 0 {
			rot = ` rotation="` + num(r) + `"`
		}
		fmt.Fprintf(b, "    <box %s xtl=\"%s\" ytl=\"%s\" xbr=\"%s\" ybr=\"%s\"%s>\n", head, num(bx.X), num(bx.Y), num(bx.X+bx.W), num(bx.Y+bx.H), rot)
		c.attributes(b, label, bx.Attributes)
		b.WriteString("    </box>\n")
	}
}

// mask writes the opening <mask> of a mask or a polygon of several rings;
// false when it has no pixel on the frame.
func (c *cvatWriter) mask(b *bytes.Buffer, head string, bx ExportBox, width, height int) bool {
	var r shape.RLE
	if bx.Type == shape.Polygon {
		if width <= 0 || height <= 0 {
			return false
		}
		r = shape.Rings(bx.Polygon, height, width)
	} else {
		var err error
		if bx.Mask == nil {
			return false
		}
		if r, err = bx.Mask.RLE(); err != nil {
			return false
		}
	}
	bits := r.Decode() // column-major
	x0, y0, x1, y1 := r.Width, r.Height, -1, -1
	for i, v := range bits {
		if v != 0 {
			x, y := i/r.Height, i%r.Height
			x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
		}
	}
	if x1 < 0 {
		return false
	}
	var runs []string
	run, on := 0, byte(0)
	for y := y0; y <= y1; y++ {
		for x := x0; x <= x1; x++ {
			if v := bits[x*r.Height+y]; v != on {
				runs = append(runs, strconv.Itoa(run))
				run, on = 0, v
			}
			run++
		}
	}
	runs = append(runs, strconv.Itoa(run))
	fmt.Fprintf(b, "    <mask %s rle=\"%s\" left=\"%d\" top=\"%d\" width=\"%d\" height=\"%d\">\n",
		head, strings.Join(runs, ", "), x0, y0, x1-x0+1, y1-y0+1)
	return true
}

// keypoints writes a <skeleton>, or <points> for CVAT's own unnamed points.
func (c *cvatWriter) keypoints(b *bytes.Buffer, head, label string, bx ExportBox) {
	if c.a.skel[label] == nil && numbered(bx.Keypoints) {
		xy := make([]float64, 0, 2*len(bx.Keypoints))
		for _, k := range bx.Keypoints {
			xy = append(xy, k.X, k.Y)
		}
		fmt.Fprintf(b, "    <points %s points=\"%s\">\n", head, cvatXY(xy))
		c.attributes(b, label, bx.Attributes)
		b.WriteString("    </points>\n")
		return
	}
	c.points.see(label, bx.Keypoints)
	fmt.Fprintf(b, "    <skeleton %s>\n", head)
	byName := make(map[string]shape.Keypoint, len(bx.Keypoints))
	for _, k := range bx.Keypoints {
		byName[k.Name] = k
	}
	// Every declared point is written (CVAT's skeleton has them all); one
	// the shape lacks is outside. Points seen later on other frames are
	// declared in <meta> but not added here.
	for _, n := range c.points.names[label] {
		k, ok := byName[n]
		outside, occ := "0", "0"
		if !ok || k.V == 0 {
			outside = "1"
		} else if k.V == 1 {
			occ = "1"
		}
		fmt.Fprintf(b, "      <points label=\"%s\" source=\"manual\" outside=\"%s\" occluded=\"%s\" points=\"%s,%s\"></points>\n",
			esc(n), outside, occ, num(k.X), num(k.Y))
	}
	c.attributes(b, label, bx.Attributes)
	b.WriteString("    </skeleton>\n")
}

// numbered: the points are named 1, 2, ... n in order, as CVAT's <points>
// import to, and all visible.
func numbered(kps []shape.Keypoint) bool {
	for i, k := range kps {
		if k.Name != strconv.Itoa(i+1) || k.V != 2 {
			return false
		}
	}
	return len(kps) > 0
}

// attributes writes the annotation's attributes but occluded and rotation
// (attributes of the element itself), sorted by name.
func (c *cvatWriter) attributes(b *bytes.Buffer, label string, attrs map[string]any) {
	names := make([]string, 0, len(attrs))
	for k := range attrs {
		if k != "occluded" && k != "rotation" {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		if !slices.Contains(c.attrs[label], k) {
			c.attrs[label] = append(c.attrs[label], k)
		}
		fmt.Fprintf(b, "      <attribute name=\"%s\">%s</attribute>\n", esc(k), esc(attrText(attrs[k])))
	}
}

// attrText is an attribute's value as CVAT's text: strings as they are,
// numbers and booleans as written, anything else as JSON.
func attrText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return num(v)
	case bool:
		return strconv.FormatBool(v)
	}
	j, _ := json.Marshal(v)
	return string(j)
}

func (c *cvatWriter) finish() error {
	a := c.a
	var h bytes.Buffer
	h.WriteString("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<annotations>\n  <version>1.1</version>\n  <meta>\n    <task>\n")
	fmt.Fprintf(&h, "      <name>%s</name>\n      <size>%d</size>\n      <mode>annotation</mode>\n      <labels>\n",
		esc(strings.TrimSpace(a.ds.Name+" "+a.ds.Version)), c.n)
	for _, l := range a.ds.Labels {
		c.label(&h, l)
	}
	h.WriteString("      </labels>\n    </task>\n  </meta>\n")
	err := a.z.entry(a.path("annotations.xml"), true, false, func(w io.Writer) error {
		return writeAll(w, h.Bytes(), c.images, "</annotations>\n")
	})
	if err != nil {
		return err
	}
	return c.augmented.finish()
}

// label declares one label: a skeleton with its points as sublabels when
// it has named points, else a label of any shape; with its attributes.
func (c *cvatWriter) label(h *bytes.Buffer, l string) {
	names := c.points.names[l]
	kind := "any"
	if len(names) > 0 {
		kind = "skeleton"
	}
	fmt.Fprintf(h, "        <label>\n          <name>%s</name>\n          <type>%s</type>\n          <attributes>\n", esc(l), kind)
	for _, n := range c.attrs[l] {
		fmt.Fprintf(h, "            <attribute>\n              <name>%s</name>\n              <mutable>False</mutable>\n"+
			"              <input_type>text</input_type>\n              <default_value></default_value>\n              <values></values>\n            </attribute>\n", esc(n))
	}
	h.WriteString("          </attributes>\n")
	if len(names) > 0 {
		h.WriteString("          <svg>" + esc(c.svg(l, names)) + "</svg>\n")
	}
	h.WriteString("        </label>\n")
	for _, n := range names {
		fmt.Fprintf(h, "        <label>\n          <name>%s</name>\n          <type>points</type>\n          <attributes>\n          </attributes>\n          <parent>%s</parent>\n        </label>\n", esc(n), esc(l))
	}
}

// svg is the skeleton's drawing CVAT keeps with a skeleton label: a node
// per point (on a circle, as no layout is declared) and the declared edges.
func (c *cvatWriter) svg(l string, names []string) string {
	var s strings.Builder
	at := func(i int) (float64, float64) {
		t := 2 * math.Pi * float64(i) / float64(len(names))
		return 50 + 40*math.Cos(t), 50 + 40*math.Sin(t)
	}
	for _, e := range c.points.edges(l) {
		x1, y1 := at(e[0] - 1)
		x2, y2 := at(e[1] - 1)
		fmt.Fprintf(&s, `<line x1="%.2f" y1="%.2f" x2="%.2f" y2="%.2f" stroke="black" data-type="edge" data-node-from="%d" stroke-width="0.5" data-node-to="%d"></line>`,
			x1, y1, x2, y2, e[0], e[1])
	}
	for i, n := range names {
		x, y := at(i)
		fmt.Fprintf(&s, `<circle r="1.5" stroke="black" fill="#b3b3b3" cx="%.2f" cy="%.2f" stroke-width="0.1" data-type="element node" data-element-id="%d" data-node-id="%d" data-label-name="%s"></circle>`,
			x, y, i+1, i+1, esc(n))
	}
	return s.String()
}

// cvatXY is CVAT's points="x,y;x,y".
func cvatXY(xy []float64) string {
	var b strings.Builder
	for i := 0; i+1 < len(xy); i += 2 {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(num(xy[i]) + "," + num(xy[i+1]))
	}
	return b.String()
}

// num writes a coordinate in the fewest digits that read back the same.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// esc escapes text for an XML attribute or element.
func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
