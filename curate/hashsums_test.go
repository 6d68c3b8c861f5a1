package curate

import (
	"math/rand/v2"
	"testing"

	"github.com/framelake/framelake/internal/vips"
)

// TestHashesAsFirstWritten: the whole-image and centre hashes Measure takes
// from one summed-area table are those of their first form (each hash
// summing its cells' pixels, the centres copied out first; kept below as
// written), for score-sized greys, greys smaller than the hash on a side,
// and a grey whose table passes 2^32: hashes stored at ingest must equal
// those stored before.
func TestHashesAsFirstWritten(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range [][2]int{{240, 180}, {180, 240}, {240, 135}, {216, 162}, {31, 7}, {1, 1}, {3, 40}, {4100, 4100}} {
		g := vips.Grey{W: c[0], H: c[1], Pix: make([]byte, c[0]*c[1])}
		for i := range g.Pix {
			g.Pix[i] = byte(200 + rng.IntN(56))
			if c[0] == 240 && i%c[0] > 120 { // a smooth half, where averages tie
				g.Pix[i] = byte(i / c[0])
			}
		}
		q := Measure(g)
		whole, centres := phashFirst(g), centreHashesFirst(g)
		if q.PHash != whole || q.CentreHashes != centres {
			t.Fatalf("%dx%d: hashes %x %x, first form %x %x", c[0], c[1], q.PHash, q.CentreHashes, whole, centres)
		}
	}
}

func phashFirst(g vips.Grey) uint64 { return dctHash(shrinkFirst(g)) }

func centreHashesFirst(g vips.Grey) [2]uint64 {
	var out [2]uint64
	for k, f := range CentreScales {
		w, h := max(1, int(float64(g.W)*f+0.5)), max(1, int(float64(g.H)*f+0.5))
		x0, y0 := (g.W-w)/2, (g.H-h)/2
		c := vips.Grey{W: w, H: h, Pix: make([]byte, w*h)}
		for y := range h {
			copy(c.Pix[y*w:(y+1)*w], g.Pix[(y0+y)*g.W+x0:])
		}
		out[k] = phashFirst(c)
	}
	return out
}

func shrinkFirst(g vips.Grey) []float64 {
	out := make([]float64, hashSide*hashSide)
	for ty := range hashSide {
		y0, y1 := ty*g.H/hashSide, max((ty+1)*g.H/hashSide, ty*g.H/hashSide+1)
		for tx := range hashSide {
			x0, x1 := tx*g.W/hashSide, max((tx+1)*g.W/hashSide, tx*g.W/hashSide+1)
			s := 0
			for y := y0; y < y1; y++ {
				for _, p := range g.Pix[y*g.W+x0 : y*g.W+x1] {
					s += int(p)
				}
			}
			out[ty*hashSide+tx] = float64(s) / float64((y1-y0)*(x1-x0))
		}
	}
	return out
}

func BenchmarkHashes(b *testing.B) {
	g := vips.Grey{W: 240, H: 180, Pix: make([]byte, 240*180)}
	for i := range g.Pix {
		g.Pix[i] = byte(i * 13)
	}
	b.Run("summed", func(b *testing.B) {
		for b.Loop() {
			s := sumsOf(g)
			dctHash(s.shrink(0, 0, g.W, g.H))
			centreHashes(g, s)
			s.free()
		}
	})
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			phashFirst(g)
			centreHashesFirst(g)
		}
	})
}
