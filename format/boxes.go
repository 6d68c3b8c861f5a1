package format

import "math"

// YOLOBox is a box in the yolo convention of REST Download Dataset: class
// index from 0 and the box centre and size normalized to 0..1.
type YOLOBox struct {
	ClassID int     `json:"classId"`
	CX      float64 `json:"cx"`
	CY      float64 `json:"cy"`
	W       float64 `json:"w"`
	H       float64 `json:"h"`
}

// RCNNBox is a box in the rcnn convention: corners in pixels.
type RCNNBox struct {
	Label string  `json:"label"`
	XMin  float64 `json:"xmin"`
	YMin  float64 `json:"ymin"`
	XMax  float64 `json:"xmax"`
	YMax  float64 `json:"ymax"`
}

// TFBox is a box in the tensorflow convention: class from 1 and corners
// normalized to 0..1.
type TFBox struct {
	Label   string  `json:"label"`
	ClassID int     `json:"classId"`
	XMin    float64 `json:"xmin"`
	YMin    float64 `json:"ymin"`
	XMax    float64 `json:"xmax"`
	YMax    float64 `json:"ymax"`
}

// YOLOBoxes converts a frame's boxes, clipped to the image. A frame without a
// known size has no normalized boxes; the result is never nil, so it encodes
// as [].
func YOLOBoxes(fr Frame) []YOLOBox {
	out := []YOLOBox{}
	if fr.Width <= 0 || fr.Height <= 0 {
		return out
	}
	w, h := float64(fr.Width), float64(fr.Height)
	for _, b := range fr.Boxes {
		r, ok := clip(b, fr.Width, fr.Height)
		if !ok {
			continue
		}
		out = append(out, YOLOBox{ClassID: b.ClassID,
			CX: round6((r.x0 + r.x1) / 2 / w), CY: round6((r.y0 + r.y1) / 2 / h),
			W: round6((r.x1 - r.x0) / w), H: round6((r.y1 - r.y0) / h)})
	}
	return out
}

// RCNNBoxes converts a frame's boxes, clipped to the image when its size is
// known.
func RCNNBoxes(fr Frame) []RCNNBox {
	out := []RCNNBox{}
	for _, b := range fr.Boxes {
		r, ok := clip(b, fr.Width, fr.Height)
		if !ok {
			continue
		}
		out = append(out, RCNNBox{Label: b.Label, XMin: r.x0, YMin: r.y0, XMax: r.x1, YMax: r.y1})
	}
	return out
}

// TFBoxes converts a frame's boxes as YOLOBoxes does, with corners and a
// class from 1 (0 is the background class in the TF Object Detection API).
func TFBoxes(fr Frame) []TFBox {
	out := []TFBox{}
	if fr.Width <= 0 || fr.Height <= 0 {
		return out
	}
	w, h := float64(fr.Width), float64(fr.Height)
	for _, b := range fr.Boxes {
		r, ok := clip(b, fr.Width, fr.Height)
		if !ok {
			continue
		}
		out = append(out, TFBox{Label: b.Label, ClassID: b.ClassID + 1,
			XMin: round6(r.x0 / w), YMin: round6(r.y0 / h), XMax: round6(r.x1 / w), YMax: round6(r.y1 / h)})
	}
	return out
}

// rect is a box by its corners in pixels.
type rect struct{ x0, y0, x1, y1 float64 }

// clip gives the part of b inside a w×h image (the whole box when the size
// is unknown), and false when nothing with an area is left.
func clip(b ExportBox, w, h int) (rect, bool) {
	r := rect{b.X, b.Y, b.X + b.W, b.Y + b.H}
	if w > 0 && h > 0 {
		r.x0 = math.Max(r.x0, 0)
		r.y0 = math.Max(r.y0, 0)
		r.x1 = math.Min(r.x1, float64(w))
		r.y1 = math.Min(r.y1, float64(h))
	}
	return r, r.x1 > r.x0 && r.y1 > r.y0
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }
