package shape

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Geometry is an annotation's shape as clients, files and the lake write it
// (docs/shapes.md): Type names the one field that holds it. A box (Type ""
// or "box") keeps its rectangle beside this and has none, and so does a
// class (a label on the whole frame). Area is the shape's, measured by the
// lake when it stores the shape.
type Geometry struct {
	Type      Type         `json:"type,omitempty"`
	Polygon   [][]float64  `json:"polygon,omitempty"`   // rings of x1, y1, x2, y2, ...; read even-odd
	Mask      *EncodedMask `json:"mask,omitempty"`      // COCO's RLE of the frame's size
	Keypoints []Keypoint   `json:"keypoints,omitempty"` // named points, visibility 0/1/2
	Points    []float64    `json:"points,omitempty"`    // a polyline's x1, y1, x2, y2, ...
	Area      *float64     `json:"area,omitempty"`      // pixels; read only
}

// EncodedMask is COCO's run-length encoding of a frame-sized mask: Size is
// [height, width] and Counts the compressed string. A list of counts (COCO's
// uncompressed form, as crowd regions carry) is read too and kept compressed.
type EncodedMask struct {
	Size   [2]int `json:"size"`
	Counts string `json:"counts"`
}

// UnmarshalJSON reads counts as COCO's string or as a list of run lengths.
func (m *EncodedMask) UnmarshalJSON(b []byte) error {
	var raw struct {
		Size   [2]int          `json:"size"`
		Counts json.RawMessage `json:"counts"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	m.Size = raw.Size
	if c := bytes.TrimSpace(raw.Counts); len(c) > 0 && c[0] == '[' {
		var counts []uint32
		if err := json.Unmarshal(c, &counts); err != nil {
			return fmt.Errorf("mask counts: %w", err)
		}
		m.Counts = RLE{Height: raw.Size[0], Width: raw.Size[1], Counts: counts}.String()
		return nil
	}
	return json.Unmarshal(raw.Counts, &m.Counts)
}

// RLE decodes the mask, checking that its counts cover its size.
func (m EncodedMask) RLE() (RLE, error) {
	return ParseString(m.Counts, m.Size[0], m.Size[1])
}

// Check checks the shape on a width×height frame (0 when unknown), as
// every writer of shapes must: a polygon's rings and a polyline's points
// (CheckPolygon, CheckPoints), keypoints with one labelled at least
// (CheckKeypoints), a mask whose counts cover the frame. A box or a class
// has nothing to check here.
func (g Geometry) Check(width, height int) error {
	switch g.Type {
	case Polygon:
		return CheckPolygon(g.Polygon, width, height)
	case Polyline:
		return CheckPoints(g.Points, 2, width, height)
	case Keypoints:
		if err := CheckKeypoints(g.Keypoints, nil, width, height); err != nil {
			return err
		}
		if Labelled(g.Keypoints) == 0 {
			return fmt.Errorf("keypoints has no labelled point (every v is 0)")
		}
	case Mask:
		if g.Mask == nil {
			return fmt.Errorf("a mask without its counts")
		}
		r, err := g.Mask.RLE()
		if err != nil {
			return err
		}
		if width > 0 && height > 0 && (r.Height != height || r.Width != width) {
			return fmt.Errorf("mask size [%d, %d] is not the frame's [height, width] = [%d, %d]", r.Height, r.Width, height, width)
		}
		if r.Area() == 0 {
			return fmt.Errorf("mask has no pixel set")
		}
	}
	return nil
}

// Bounds is the box around a checked shape: its points' (a polygon's over
// all rings, keypoints' over the labelled ones), or a mask's set pixels'. A
// box or a class has none.
func (g Geometry) Bounds() Rect {
	switch g.Type {
	case Polygon:
		var all []float64
		for _, r := range g.Polygon {
			all = append(all, r...)
		}
		return PointsBounds(all)
	case Polyline:
		return PointsBounds(g.Points)
	case Keypoints:
		return KeypointsBounds(g.Keypoints)
	case Mask:
		if r, err := g.Mask.RLE(); err == nil {
			return r.Bounds()
		}
	}
	return Rect{}
}
