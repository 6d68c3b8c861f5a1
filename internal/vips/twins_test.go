package vips

import (
	"fmt"
	"image"
	"math"
	"testing"
)

// eachISA runs f once with the kernels held to each instruction set, so
// the plain C, SSE2/SSSE3, AVX2 and AVX-512 twins all meet the same want on
// one machine. A set the machine lacks falls back to the widest it has.
func eachISA(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, c := range []struct {
		name  string
		level isa
	}{{"plain", isaPlain}, {"ssse3", isaSSSE3}, {"avx2", isaAVX2}, {"avx512", isaAVX512}} {
		t.Run(c.name, func(t *testing.T) {
			defer holdISA(c.level)()
			f(t)
		})
	}
}

// blurWeights is fl_blur's weights: the Gaussian cut at r, quantised to
// integers summing to whole, the centre taking what rounding leaves.
func blurWeights(sigma float64, r, whole int) []int {
	wt := make([]int, r+1)
	sum := 1.0
	for k := 1; k <= r; k++ {
		sum += 2 * math.Exp(-float64(k*k)/(2*sigma*sigma))
	}
	rest := 0
	for k := 1; k <= r; k++ {
		wt[k] = int(math.Round(math.Exp(-float64(k*k)/(2*sigma*sigma)) / sum * float64(whole)))
		rest += 2 * wt[k]
	}
	wt[0] = whole - rest
	return wt
}

// refBlur is fl_blur's arithmetic written out plainly: a vertical pass of
// 8-bit weights giving values times 256, edges replicated, then a
// horizontal pass averaging each mirrored pair and keeping the high half
// of its product with a 16-bit weight.
func refBlur(src *image.NRGBA, sigma float64, bands int) *image.NRGBA {
	w, h, r := src.Bounds().Dx(), src.Bounds().Dy(), BlurRadius(sigma)
	wv, wh := blurWeights(sigma, r, 256), blurWeights(sigma, r, 65535)
	for k := 1; k <= r; k++ {
		wh[k] *= 2
	}
	clamp := func(v, n int) int { return max(0, min(n-1, v)) }
	at := func(x, y, k int) int { return int(src.Pix[clamp(y, h)*src.Stride+clamp(x, w)*4+k]) }
	out := image.NewNRGBA(src.Bounds())
	col := make([]int, w*4)
	for y := range h {
		for x := range w {
			for k := range bands {
				s := wv[0] * at(x, y, k)
				for j := 1; j <= r; j++ {
					s += wv[j] * (at(x, y-j, k) + at(x, y+j, k))
				}
				col[x*4+k] = s
			}
		}
		for x := range w {
			for k := range bands {
				c := func(dx int) int { return col[clamp(x+dx, w)*4+k] }
				s := (r+2)/2 + c(0)*wh[0]>>16
				for j := 1; j <= r; j++ {
					pair := (c(-j) + c(j) + 1) >> 1
					s += pair * wh[j] >> 16
				}
				out.Pix[y*out.Stride+x*4+k] = uint8((s + 128) >> 8)
			}
			if bands == 3 {
				out.Pix[y*out.Stride+x*4+3] = 255
			}
		}
	}
	return out
}

// Blur matches its plain arithmetic bit for bit with every instruction
// set: widths below, at and past a register's worth of bytes (vector
// tails), RGB and RGBA, sigmas whose reach passes the image's edges.
func TestBlurMatchesReference(t *testing.T) {
	eachISA(t, func(t *testing.T) {
		px := reader(t)
		for _, alpha := range []bool{false, true} {
			bands := 3
			if alpha {
				bands = 4
			}
			for _, w := range []int{1, 5, 16, 21, 22, 33, 100} {
				img, data := randomPNG(t, w, 9, alpha)
				for _, sigma := range []float64{0.5, 0.93, 2, 3.7} {
					got := px(whole(t, data).Blur(sigma))
					if d := maxDiff(got, refBlur(img, sigma, bands)); d != 0 {
						t.Errorf("%s: differs from the reference by %d", fmt.Sprintf("width %d sigma %g alpha %v", w, sigma, alpha), d)
					}
				}
			}
		}
	})
}
