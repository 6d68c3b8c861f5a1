package curate

import (
	"math"
	"slices"
	"sync"

	"github.com/framelake/framelake/internal/vips"
	"github.com/framelake/framelake/lake"
)

// Score computes the quality of an encoded image whose stored size is width
// x height (0 when unknown: the decoded size gives the aspect).
func Score(data []byte, width, height int) (lake.Quality, error) {
	g, err := vips.DecodeGrey(data, ScoreSize)
	if err != nil {
		return lake.Quality{}, err
	}
	return ScoreGrey(g, width, height), nil
}

// ScoreGrey is Score of the image whose DecodeGrey at ScoreSize is g.
func ScoreGrey(g vips.Grey, width, height int) lake.Quality {
	q := Measure(g)
	if width > 0 && height > 0 {
		q.Aspect = float64(width) / float64(height)
	}
	return q
}

// IngestScorer is Score for lake.Lake.ScoreAtIngest, a JPEG scored from
// the luminance the lake's check decodes.
func IngestScorer() lake.Scorer {
	return lake.Scorer{Bytes: Score, GreySize: ScoreSize, Grey: ScoreGrey}
}

// Measure computes the scores of a greyscale image (see the package comment).
func Measure(g vips.Grey) lake.Quality {
	var q lake.Quality
	n := len(g.Pix)
	if n == 0 {
		return q
	}
	var hist [256]int
	for _, p := range g.Pix {
		hist[p]++
	}
	var sum, sq float64
	for v, c := range hist {
		f := float64(v) * float64(c)
		sum += f
		sq += f * float64(v)
	}
	mean := sum / float64(n)
	q.Brightness = mean / 255
	q.Contrast = math.Sqrt(max(0, sq/float64(n)-mean*mean)) / 255
	for _, c := range hist {
		if c > 0 {
			p := float64(c) / float64(n)
			q.Entropy -= p * math.Log2(p)
		}
	}
	q.Sharpness = laplacianVariance(g)
	q.Aspect = float64(g.W) / float64(g.H)
	sums := sumsOf(g)
	defer sums.free()
	q.PHash = dctHash(sums.shrink(0, 0, g.W, g.H))
	q.CentreHashes = centreHashes(g, sums)
	return q
}

// laplacianVariance is the variance of the 4-neighbour Laplacian over the
// pixels that have all four neighbours; 0 for images under 3x3.
func laplacianVariance(g vips.Grey) float64 {
	if g.W < 3 || g.H < 3 {
		return 0
	}
	var sum, sq int64
	w := g.W
	for y := 1; y < g.H-1; y++ {
		up, row, down := g.Pix[(y-1)*w:y*w], g.Pix[y*w:(y+1)*w], g.Pix[(y+1)*w:(y+2)*w]
		for x := 1; x < w-1; x++ {
			l := int64(up[x]) + int64(down[x]) + int64(row[x-1]) + int64(row[x+1]) - 4*int64(row[x])
			sum += l
			sq += l * l
		}
	}
	m := float64((g.W - 2) * (g.H - 2))
	mean := float64(sum) / m
	return float64(sq)/m - mean*mean
}

const hashSide = 32 // the hash's DCT runs on the image averaged to 32x32

// dctBasis[u][x] is cos((2x+1)uπ/64), the DCT-II basis of the 8 lowest
// frequencies over 32 samples.
var dctBasis = func() (b [8][hashSide]float64) {
	for u := range 8 {
		for x := range hashSide {
			b[u][x] = math.Cos(float64(2*x+1) * float64(u) * math.Pi / (2 * hashSide))
		}
	}
	return b
}()

// dctHash is the 64-bit DCT perceptual hash of an image averaged down to
// 32x32 (sums.shrink): bit 8u+v is set when coefficient (u, v) of the 8x8
// lowest frequencies is above their median.
func dctHash(small []float64) uint64 {
	// Rows first: 32 rows x 8 frequencies, then 8x8 over the columns.
	var rows [hashSide][8]float64
	for y := range hashSide {
		line := small[y*hashSide : (y+1)*hashSide]
		for v := range 8 {
			s := 0.0
			for x, p := range line {
				s += p * dctBasis[v][x]
			}
			rows[y][v] = s
		}
	}
	var coef [64]float64
	for u := range 8 {
		for v := range 8 {
			s := 0.0
			for y := range hashSide {
				s += rows[y][v] * dctBasis[u][y]
			}
			coef[8*u+v] = s
		}
	}
	sorted := coef
	slices.Sort(sorted[:])
	med := (sorted[31] + sorted[32]) / 2
	var h uint64
	for i, c := range coef {
		if c > med {
			h |= 1 << i
		}
	}
	return h
}

// sums is the summed-area table of a grey image: at[y*(w+1)+x] is the sum
// of the pixels above row y and left of column x, modulo 2^32, which keeps
// any area of under 16 million pixels exact. The three hashes of an image
// (whole, centres 0.9 and 0.8) take their 32x32 averages from one table,
// four look-ups a cell, where summing each cell's pixels for each hash cost
// a tenth of a 640x480 JPEG's import.
type sums struct {
	w   int
	at  []uint32
	buf *[]uint32
}

var sumsPool sync.Pool

func sumsOf(g vips.Grey) sums {
	n := (g.W + 1) * (g.H + 1)
	buf, _ := sumsPool.Get().(*[]uint32)
	if buf == nil || cap(*buf) < n {
		b := make([]uint32, n)
		buf = &b
	}
	at := (*buf)[:n]
	stride := g.W + 1
	clear(at[:stride])
	for y := range g.H {
		above, row := at[y*stride:(y+1)*stride], at[(y+1)*stride:(y+2)*stride]
		row[0] = 0
		run := uint32(0)
		for x, p := range g.Pix[y*g.W : (y+1)*g.W] {
			run += uint32(p)
			row[x+1] = above[x+1] + run
		}
	}
	return sums{w: g.W, at: at, buf: buf}
}

func (s sums) free() { sumsPool.Put(s.buf) }

// area is the sum of the pixels of rows [y0, y1) and columns [x0, x1).
func (s sums) area(x0, y0, x1, y1 int) uint32 {
	st := s.w + 1
	return s.at[y1*st+x1] - s.at[y0*st+x1] - s.at[y1*st+x0] + s.at[y0*st+x0]
}

// shrink averages the w x h area at x0, y0 down to 32x32 (area average; an
// area smaller than that on a side is sampled).
func (s sums) shrink(x0, y0, w, h int) []float64 {
	out := make([]float64, hashSide*hashSide)
	for ty := range hashSide {
		cy0, cy1 := ty*h/hashSide, max((ty+1)*h/hashSide, ty*h/hashSide+1)
		for tx := range hashSide {
			cx0, cx1 := tx*w/hashSide, max((tx+1)*w/hashSide, tx*w/hashSide+1)
			sum := s.area(x0+cx0, y0+cy0, x0+cx1, y0+cy1)
			out[ty*hashSide+tx] = float64(sum) / float64((cy1-cy0)*(cx1-cx0))
		}
	}
	return out
}
