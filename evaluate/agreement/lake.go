package agreement

import (
	"fmt"

	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// FromLake is a frame's answers as Measure reads them: boxes are the lake's
// human shapes of the frame, answers maps each answer's operation to its
// annotator. A class shape is its annotator's class of the frame; a mask or
// polygon has pixels (on the width×height frame); other shapes are their
// boxes. Boxes of other operations are left out.
func FromLake(key string, width, height int, answers map[string]string, order []string, boxes []lake.Box) (Frame, error) {
	f := Frame{Key: key, Classes: map[string]string{}}
	for _, op := range order {
		f.Annotators = append(f.Annotators, answers[op])
	}
	for _, b := range boxes {
		who, ok := answers[b.Operation]
		if !ok {
			continue
		}
		s := Shape{Annotator: who, Label: b.Label, Box: shape.Rect{X: b.X, Y: b.Y, W: b.W, H: b.H}}
		switch b.Type {
		case shape.Class:
			if f.Classes[who] == "" {
				f.Classes[who] = b.Label
			}
			continue
		case shape.Mask:
			if b.Mask == nil {
				return Frame{}, fmt.Errorf("frame %s: a mask of %s without pixels", key, who)
			}
			r, err := b.Mask.RLE()
			if err != nil {
				return Frame{}, fmt.Errorf("frame %s: a mask of %s: %w", key, who, err)
			}
			s.Mask = &r
		case shape.Polygon:
			if width > 0 && height > 0 {
				r := shape.Rings(b.Polygon, height, width)
				s.Mask = &r
			}
		}
		f.Shapes = append(f.Shapes, s)
	}
	return f, nil
}

// ToLake is a consensus (Consensus's shapes and class) as lake boxes to
// write: boxes, masks where the merge kept pixels, and the class as a class
// shape.
func ToLake(shapes []Shape, class string) []lake.Box {
	out := make([]lake.Box, 0, len(shapes)+1)
	for _, s := range shapes {
		b := lake.Box{Label: s.Label, X: s.Box.X, Y: s.Box.Y, W: s.Box.W, H: s.Box.H}
		if s.Mask != nil {
			b.Type = shape.Mask
			b.Mask = &shape.EncodedMask{Size: [2]int{s.Mask.Height, s.Mask.Width}, Counts: s.Mask.String()}
		}
		out = append(out, b)
	}
	if class != "" {
		out = append(out, lake.Box{Label: class, Geometry: shape.Geometry{Type: shape.Class}})
	}
	return out
}
