package web

import (
	"context"

	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// The grid, item view and review pages draw every shape (issue 33), so their
// answers carry each shape's geometry beside its box. A grid page is many
// small tiles: there a polygon or polyline keeps at most maxTileVertices
// points a ring (every k-th point, which a tile of at most 400 px cannot tell
// from the whole) and a mask whose counts are longer than maxTileMask bytes
// is left as its box, so a page of 100 files stays small whatever was drawn.
// The item view and the review crops carry shapes whole.
const (
	maxTileVertices = 64
	maxTileMask     = 8 << 10
)

// appGeometry is a shape's geometry in an app answer (docs/shapes.md); all
// empty for a box or a class.
type appGeometry struct {
	Polygon   [][]float64        `json:"polygon,omitempty"`
	Mask      *shape.EncodedMask `json:"mask,omitempty"`
	Keypoints []shape.Keypoint   `json:"keypoints,omitempty"`
	Points    []float64          `json:"points,omitempty"`
}

// geometryOf is b's geometry for an answer; tile caps it as a grid tile
// draws it.
func geometryOf(b lake.Box, tile bool) appGeometry {
	g := appGeometry{Polygon: b.Polygon, Mask: b.Mask, Keypoints: b.Keypoints, Points: b.Points}
	if !tile {
		return g
	}
	if g.Polygon != nil {
		rings := make([][]float64, len(g.Polygon))
		for i, r := range g.Polygon {
			rings[i] = everyKth(r, maxTileVertices)
		}
		g.Polygon = rings
	}
	g.Points = everyKth(g.Points, maxTileVertices)
	if g.Mask != nil && len(g.Mask.Counts) > maxTileMask {
		g.Mask = nil
	}
	return g
}

// everyKth keeps at most n of xy's points (x, y pairs): every k-th, and the
// last, so an open line still ends where it ends.
func everyKth(xy []float64, n int) []float64 {
	pts := len(xy) / 2
	if pts <= n {
		return xy
	}
	k := (pts + n - 2) / (n - 1)
	out := make([]float64, 0, 2*n)
	for i := 0; i < pts-1; i += k {
		out = append(out, xy[2*i], xy[2*i+1])
	}
	return append(out, xy[2*pts-2], xy[2*pts-1])
}

// skeletonEdges gives the declared skeleton edges of the keypoints labels
// among boxes (label name to its pairs of point names), looked up once a
// label per answer in known; labels that declare none are left out.
func (s *server) skeletonEdges(ctx context.Context, boxes []lake.Box, known map[string][][2]string) (map[string][][2]string, error) {
	var out map[string][][2]string
	if s.Annotate == nil {
		return nil, nil
	}
	for _, b := range boxes {
		if b.Type != shape.Keypoints {
			continue
		}
		edges, seen := known[b.Label]
		if !seen {
			sk, err := s.Annotate.Skeleton(ctx, b.Label)
			if err != nil {
				return nil, err
			}
			if sk != nil {
				edges = sk.Edges
			}
			known[b.Label] = edges
		}
		if edges != nil {
			if out == nil {
				out = map[string][][2]string{}
			}
			out[b.Label] = edges
		}
	}
	return out, nil
}
