package evaluate

import (
	"encoding/json"
	"fmt"

	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// maskOf draws an annotation on its height×width frame for iou_type segm,
// as pycocotools' annToRLE does: a mask as stored, a polygon as its rings'
// pixels (rleFrPoly; rings read even-odd, which is COCO's union wherever the
// rings do not overlap, and the COCO import stores those that do as masks).
// An annotation with no segment (a box, keypoints, a polyline) is the
// rectangle of its box, as rleFrBbox draws it, where pycocotools would
// stop with an error.
func maskOf(b lake.ScoredBox, height, width int) (*shape.Prepared, error) {
	if height <= 0 || width <= 0 {
		return nil, fmt.Errorf("a file without a size has no masks to compare")
	}
	switch b.Type {
	case shape.Mask:
		var m shape.EncodedMask
		if err := json.Unmarshal([]byte(b.Geometry), &m); err != nil {
			return nil, fmt.Errorf("mask of annotation %d: %w", b.Seq, err)
		}
		r, err := m.RLE()
		if err != nil {
			return nil, fmt.Errorf("mask of annotation %d: %w", b.Seq, err)
		}
		return shape.Prepare(r), nil
	case shape.Polygon:
		var rings [][]float64
		if err := json.Unmarshal([]byte(b.Geometry), &rings); err != nil {
			return nil, fmt.Errorf("polygon of annotation %d: %w", b.Seq, err)
		}
		return shape.Prepare(shape.Rings(rings, height, width)), nil
	}
	return shape.Prepare(shape.FromRect(shape.Rect{X: b.X, Y: b.Y, W: b.W, H: b.H}, height, width)), nil
}
