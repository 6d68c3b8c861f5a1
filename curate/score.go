package curate

import (
	"math"
	"slices"

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
	q.PHash = phash(g)
	q.CentreHashes = centreHashes(g)
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

// phash is the 64-bit DCT perceptual hash: bit 8u+v is set when
// coefficient (u, v) of the 8x8 lowest frequencies is above their median.
func phash(g vips.Grey) uint64 {
	small := shrink(g)
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

// shrink averages g down to 32x32 (area average; an image smaller than that
// on a side is sampled).
func shrink(g vips.Grey) []float64 {
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
