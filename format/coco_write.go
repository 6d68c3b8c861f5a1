package format

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
	a      *archive
	parts  [3]cocoSplit
	points *pointOrder
}

type cocoSplit struct {
	images, anns   *spool
	nImage, nAnnot int
	written        int    // annotations in anns
	points         *spool // keypoints annotations held back, one cocoPending a line
}

// cocoPending is a keypoints annotation waiting for its category's point
// order to be final.
type cocoPending struct {
	Ann    cocoAnnotationOut `json:"a"`
	Label  string            `json:"l"`
	Points []shape.Keypoint  `json:"k"`
}

// cocoImageOut is an image record; augmented frames add two keys COCO readers
// ignore: augmented and derived_from (the source's file_name).
type cocoImageOut struct {
	ID          int    `json:"id"`
	FileName    string `json:"file_name"`
	Width       int    `json:"width"`
	Height      int    `json:"height"`
	Augmented   bool   `json:"augmented,omitempty"`
	DerivedFrom string `json:"derived_from,omitempty"`
	// A frame sampled from a video names the video (its uniqueName) and the
	// frame, 0 first; readers ignore both.
	Video      string `json:"video,omitempty"`
	FrameIndex *int   `json:"frame_index,omitempty"`
}

type cocoAnnotationOut struct {
	ID           int        `json:"id"`
	ImageID      int        `json:"image_id"`
	CategoryID   int        `json:"category_id"`
	BBox         [4]float64 `json:"bbox"`
	Area         float64    `json:"area"`
	Segmentation any        `json:"segmentation"`
	IsCrowd      int        `json:"iscrowd"`
	Keypoints    []float64  `json:"keypoints,omitempty"`
	NumKeypoints *int       `json:"num_keypoints,omitempty"`
	// Attributes as CVAT's COCO export writes them (COCO readers ignore
	// the key); iscrowd is its own key.
	Attributes map[string]any `json:"attributes,omitempty"`
	// TrackID is a video track's number (unique in its video), also in
	// attributes as track_id beside keyframe, where CVAT's COCO export and
	// framelake's COCO import keep annotation attributes.
	TrackID *int `json:"track_id,omitempty"`
}

// cocoAttributes splits COCO's iscrowd (1 when the attribute is 1, true or
// "1") from the other attributes.
func cocoAttributes(attrs map[string]any) (map[string]any, int) {
	crowd := 0
	var out map[string]any
	for k, v := range attrs {
		if k == "iscrowd" {
			switch v {
			case 1, 1.0, true, "1", "true":
				crowd = 1
			}
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		out[k] = v
	}
	return out, crowd
}

// cocoSegmentOut writes a polygon's rings or a mask as the annotation's
// segmentation, with the shape's area. A polygon whose rings overlap is
// written as the mask framelake reads it (even-odd: a ring inside another
// is a hole), since COCO's readers would fill the hole (they unite rings).
// Other shapes keep their box alone.
func cocoSegmentOut(ann *cocoAnnotationOut, b ExportBox, width, height int) {
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
	c := &cocoWriter{a: a, points: newPointOrder(a.skel)}
	for i := range c.parts {
		var err error
		if c.parts[i].images, err = a.spool(); err != nil {
			return nil, err
		}
		if c.parts[i].anns, err = a.spool(); err != nil {
			return nil, err
		}
		if c.parts[i].points, err = a.spool(); err != nil {
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
	img := cocoImageOut{ID: p.nImage, FileName: file, Width: fr.Width, Height: fr.Height, Augmented: fr.Augmented}
	if fr.Augmented {
		img.DerivedFrom = sourceFile(fr)
	}
	if fr.Video != "" {
		n := fr.VideoFrame
		img.Video, img.FrameIndex = fr.Video, &n
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
		ann := cocoAnnotationOut{ID: p.nAnnot, ImageID: p.nImage, CategoryID: b.ClassID + 1,
			BBox: [4]float64{round6(r.x0), round6(r.y0), w, h}, Area: round6(w * h), Segmentation: []any{}}
		cocoSegmentOut(&ann, b, fr.Width, fr.Height)
		ann.Attributes, ann.IsCrowd = cocoAttributes(b.Attributes)
		if b.Track != nil {
			if ann.Attributes == nil {
				ann.Attributes = map[string]any{}
			}
			ann.TrackID = b.Track
			ann.Attributes["track_id"], ann.Attributes["keyframe"] = *b.Track, !b.Interpolated
		}
		if b.Type == shape.Keypoints {
			label := a.ds.Labels[b.ClassID]
			c.points.see(label, b.Keypoints)
			line, err := json.Marshal(cocoPending{ann, label, b.Keypoints})
			if err != nil {
				return err
			}
			p.points.Write(append(line, '\n'))
			continue
		}
		p.written++
		if err := appendJSON(p.anns, p.written == 1, ann); err != nil {
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
		ID            int      `json:"id"`
		Name          string   `json:"name"`
		Supercategory string   `json:"supercategory"`
		Keypoints     []string `json:"keypoints,omitempty"`
		Skeleton      [][2]int `json:"skeleton,omitempty"`
	}
	cats := make([]category, len(a.ds.Labels))
	for i, l := range a.ds.Labels {
		cats[i] = category{ID: i + 1, Name: l, Supercategory: "none", Keypoints: c.points.names[l], Skeleton: c.points.edges(l)}
	}
	for i := range c.parts {
		if err := c.flushPoints(&c.parts[i]); err != nil {
			return err
		}
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

// flushPoints appends a split's held-back keypoints annotations, each with
// a triple for every point of its category in the final order.
func (c *cocoWriter) flushPoints(p *cocoSplit) error {
	return p.points.eachLine(func(line []byte) error {
		var k cocoPending
		if err := json.Unmarshal(line, &k); err != nil {
			return err
		}
		k.Ann.Keypoints = c.points.triples(k.Label, k.Points, 0)
		n := 0
		for i := 2; i < len(k.Ann.Keypoints); i += 3 {
			if k.Ann.Keypoints[i] > 0 {
				n++
			}
		}
		k.Ann.NumKeypoints = &n
		p.written++
		return appendJSON(p.anns, p.written == 1, k.Ann)
	})
}
