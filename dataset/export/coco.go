package export

import (
	"encoding/json"
	"io"

	"github.com/framelake/framelake/lake/shape"
)

// cocoWriter writes {train,valid,test}/annotations.json with the images
// beside it (file_name is relative to that folder). Each split's images and
// annotations arrays are spooled separately and joined at the end; ids count
// from 1 within a split, category ids from 1 in label order.
type cocoWriter struct {
	a     *archive
	parts [3]cocoSplit
}

type cocoSplit struct {
	images, anns   *spool
	nImage, nAnnot int
}

// cocoImage is an image record; augmented frames add two keys COCO readers
// ignore: augmented and derived_from (the source's file_name).
type cocoImage struct {
	ID          int    `json:"id"`
	FileName    string `json:"file_name"`
	Width       int    `json:"width"`
	Height      int    `json:"height"`
	Augmented   bool   `json:"augmented,omitempty"`
	DerivedFrom string `json:"derived_from,omitempty"`
}

type cocoAnnotation struct {
	ID           int        `json:"id"`
	ImageID      int        `json:"image_id"`
	CategoryID   int        `json:"category_id"`
	BBox         [4]float64 `json:"bbox"`
	Area         float64    `json:"area"`
	Segmentation any        `json:"segmentation"`
	IsCrowd      int        `json:"iscrowd"`
}

// cocoSegment writes a polygon's rings or a mask as the annotation's
// segmentation, with the shape's area. A polygon whose rings overlap is
// written as the mask framelake reads it (even-odd: a ring inside another
// is a hole), since COCO's readers would fill the hole (they unite rings).
// Other shapes keep their box alone.
func cocoSegment(ann *cocoAnnotation, b Box, width, height int) {
	switch {
	case b.Type == shape.Polygon && width > 0 && height > 0 && shape.RingsOverlap(b.Polygon, height, width):
		m := shape.Rings(b.Polygon, height, width)
		ann.Segmentation = shape.EncodedMask{Size: [2]int{height, width}, Counts: m.String()}
	case b.Type == shape.Polygon:
		ann.Segmentation = b.Polygon
	case b.Type == shape.Mask && b.Mask != nil:
		ann.Segmentation = *b.Mask
	default:
		return
	}
	if b.Area != nil {
		ann.Area = round6(*b.Area)
	}
}

func newCOCOWriter(a *archive) (*cocoWriter, error) {
	c := &cocoWriter{a: a}
	for i := range c.parts {
		var err error
		if c.parts[i].images, err = a.spool(); err != nil {
			return nil, err
		}
		if c.parts[i].anns, err = a.spool(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *cocoWriter) frame(fr *Frame) error {
	a, si := c.a, splitIndex(fr.Split)
	p := &c.parts[si]
	file := mediaFile(fr)
	if a.media {
		if err := a.copyMedia(splitDirs[si]+"/"+file, fr); err != nil {
			return err
		}
	}
	p.nImage++
	img := cocoImage{ID: p.nImage, FileName: file, Width: fr.Width, Height: fr.Height, Augmented: fr.Augmented}
	if fr.Augmented {
		img.DerivedFrom = sourceFile(fr)
	}
	if err := appendJSON(p.images, p.nImage == 1, img); err != nil {
		return err
	}
	for _, b := range fr.Boxes {
		r, ok := clip(b, fr.Width, fr.Height)
		if !ok {
			continue
		}
		p.nAnnot++
		// Rounded to a millionth of a pixel so corner arithmetic does not
		// print 12.099999999999998 for 12.1.
		w, h := round6(r.x1-r.x0), round6(r.y1-r.y0)
		ann := cocoAnnotation{ID: p.nAnnot, ImageID: p.nImage, CategoryID: b.ClassID + 1,
			BBox: [4]float64{round6(r.x0), round6(r.y0), w, h}, Area: round6(w * h), Segmentation: []any{}}
		cocoSegment(&ann, b, fr.Width, fr.Height)
		if err := appendJSON(p.anns, p.nAnnot == 1, ann); err != nil {
			return err
		}
	}
	return nil
}

// appendJSON writes v as the next element of a JSON array being spooled.
func appendJSON(s *spool, first bool, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if !first {
		s.WriteString(",")
	}
	s.WriteString("\n  ")
	_, err = s.Write(b)
	return err
}

func (c *cocoWriter) finish() error {
	a := c.a
	type category struct {
		ID            int    `json:"id"`
		Name          string `json:"name"`
		Supercategory string `json:"supercategory"`
	}
	cats := make([]category, len(a.ds.Labels))
	for i, l := range a.ds.Labels {
		cats[i] = category{ID: i + 1, Name: l, Supercategory: "none"}
	}
	head, err := json.Marshal(struct {
		Info       map[string]string `json:"info"`
		Licenses   []any             `json:"licenses"`
		Categories []category        `json:"categories"`
	}{map[string]string{"description": a.ds.Name, "version": a.ds.Version}, []any{}, cats})
	if err != nil {
		return err
	}
	for i := range c.parts {
		p := &c.parts[i]
		err := a.z.entry(a.path(splitDirs[i]+"/annotations.json"), true, false, func(w io.Writer) error {
			return writeAll(w, head[:len(head)-1], `,"images":[`, p.images, "\n],\"annotations\":[", p.anns, "\n]}\n")
		})
		if err != nil {
			return err
		}
	}
	return nil
}
