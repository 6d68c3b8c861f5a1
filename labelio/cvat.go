package labelio

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// CVAT for images 1.1: one XML, <meta> naming the labels, then an <image
// name width height subset> per image holding <box xtl ytl xbr ybr> (with
// <attribute name>value</attribute> children), <polygon>, <polyline> and
// <points> (points="x,y;x,y", read as their bounding box), and <tag>,
// <mask>, <skeleton>, <ellipse>, <cuboid> (no box: counted as ignored). It is
// read element by element. Images are looked for beside it and under
// images/, where CVAT's export puts them.

type cvatShape struct {
	Label    string  `xml:"label,attr"`
	XTL      float64 `xml:"xtl,attr"`
	YTL      float64 `xml:"ytl,attr"`
	XBR      float64 `xml:"xbr,attr"`
	YBR      float64 `xml:"ybr,attr"`
	Points   string  `xml:"points,attr"`
	Occluded string  `xml:"occluded,attr"`
	Rotation string  `xml:"rotation,attr"`
	Attrs    []struct {
		Name  string `xml:"name,attr"`
		Value string `xml:",chardata"`
	} `xml:"attribute"`
}

type cvatImage struct {
	Name      string      `xml:"name,attr"`
	Width     int         `xml:"width,attr"`
	Height    int         `xml:"height,attr"`
	Subset    string      `xml:"subset,attr"`
	Boxes     []cvatShape `xml:"box"`
	Polygons  []cvatShape `xml:"polygon"`
	Polylines []cvatShape `xml:"polyline"`
	Points    []cvatShape `xml:"points"`
	Other     []struct {
		XMLName xml.Name
	} `xml:",any"`
}

func (rd *reader) cvat() error {
	for _, x := range rd.tree.withExt(".xml") {
		if h := rd.tree.head(x, 4096); !bytes.Contains(h, []byte("<annotations")) {
			continue
		}
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
			if l.Name != "" && !seen[l.Name] {
				seen[l.Name] = true
				rd.rep.Categories = append(rd.rep.Categories, l.Name)
			}
		case "image":
			var im cvatImage
			if err := dec.DecodeElement(&im, &se); err != nil {
				return err
			}
			return rd.cvatImage(rel, line, im)
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
		return err
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

func (rd *reader) cvatImage(rel string, line int, im cvatImage) error {
	it := Item{Source: rel, Width: im.Width, Height: im.Height, Split: splitName(im.Subset)}
	for _, s := range im.Boxes {
		b := Box{Label: s.Label, X: s.XTL, Y: s.YTL, W: s.XBR - s.XTL, H: s.YBR - s.YTL, Line: line}
		rd.cvatShape(rel, &it, b, s)
	}
	for _, group := range []struct {
		kind   string
		shapes []cvatShape
	}{{"polygon", im.Polygons}, {"polyline", im.Polylines}, {"points", im.Points}} {
		kind := group.kind
		for _, s := range group.shapes {
			xy, err := cvatPoints(s.Points)
			if err != nil {
				rd.rep.add(Malformed, rel, line, "%s %s of image %q: %v", s.Label, kind, im.Name, err)
				continue
			}
			b := Box{Label: s.Label, Line: line}
			b.X, b.Y, b.W, b.H = pointsBox(xy)
			rd.rep.add(PolygonReduced, rel, line, "%s %s of image %q read as its bounding box", s.Label, kind, im.Name)
			rd.cvatShape(rel, &it, b, s)
		}
	}
	for _, o := range im.Other {
		rd.rep.add(Ignored, rel, line, "<%s> of image %q is no box; not imported", o.XMLName.Local, im.Name)
	}
	dir := pathDir(rel)
	media := rd.tree.find(im.Name, joinRel(dir, "images", im.Name), joinRel(dir, im.Name), joinRel("images", im.Name), im.Name)
	if media == "" {
		rd.rep.add(LabelWithoutImage, rel, line, "image %q: not beside the XML or under images/ (%d boxes not imported)",
			im.Name, len(it.Boxes))
		return nil
	}
	it.Media = media
	return rd.send(it)
}

// cvatShape adds a shape's box with its attributes, or counts it refused.
func (rd *reader) cvatShape(rel string, it *Item, b Box, s cvatShape) {
	if strings.TrimSpace(b.Label) == "" {
		rd.rep.add(Malformed, rel, b.Line, "a shape without a label")
		return
	}
	if b.W <= 0 || b.H <= 0 {
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
		if !ok || errx != nil || erry != nil {
			return nil, fmt.Errorf("points %q are not x,y;x,y", s)
		}
		out = append(out, fx, fy)
	}
	return out, nil
}
