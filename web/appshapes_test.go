package web

import (
	"strings"
	"testing"

	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// A grid tile's shape is capped: at most maxTileVertices points a ring or
// line, its first and last kept, and a mask past maxTileMask left as its box;
// the item view's shapes are whole.
func TestTileGeometryCaps(t *testing.T) {
	ring := make([]float64, 0, 2000)
	for i := range 1000 {
		ring = append(ring, float64(i), float64(2*i))
	}
	big := &shape.EncodedMask{Size: [2]int{4, 4}, Counts: strings.Repeat("1", maxTileMask+1)}
	small := &shape.EncodedMask{Size: [2]int{4, 4}, Counts: "0l"}
	b := lake.Box{Geometry: shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{ring, ring[:20]}, Points: ring}}
	g := geometryOf(b, true)
	for i, r := range [][]float64{g.Polygon[0], g.Points} {
		if n := len(r) / 2; n > maxTileVertices || n < maxTileVertices/2 {
			t.Errorf("capped line %d keeps %d points, want at most %d (and not far fewer)", i, n, maxTileVertices)
		}
		if r[0] != 0 || r[1] != 0 || r[len(r)-2] != 999 || r[len(r)-1] != 1998 {
			t.Errorf("capped line %d does not keep its first and last points: %v ... %v", i, r[:2], r[len(r)-2:])
		}
	}
	if len(g.Polygon[1]) != 20 {
		t.Errorf("a ring within the cap changed: %d numbers, want 20", len(g.Polygon[1]))
	}
	if whole := geometryOf(b, false); len(whole.Polygon[0]) != 2000 || len(whole.Points) != 2000 {
		t.Errorf("the item view's shape is capped: %d, %d numbers", len(whole.Polygon[0]), len(whole.Points))
	}
	if g := geometryOf(lake.Box{Geometry: shape.Geometry{Type: shape.Mask, Mask: big}}, true); g.Mask != nil {
		t.Error("a tile's mask past the cap is carried; it is drawn as its box")
	}
	if g := geometryOf(lake.Box{Geometry: shape.Geometry{Type: shape.Mask, Mask: small}}, true); g.Mask != small {
		t.Error("a tile's small mask is left out")
	}
}
