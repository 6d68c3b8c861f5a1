package vips

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

// TestDecodeGreyPaths: a JPEG decodes its luminance through libjpeg at a
// DCT scale-down, any other format through libvips; both give the same
// size and nearly the same pixels for the same picture, and never enlarge.
// CheckGrey gives a JPEG's DecodeGrey exactly (the lake's ingest scores
// from it, a compute_quality job from DecodeGrey).
func TestDecodeGreyPaths(t *testing.T) {
	photo, err := os.ReadFile("/usr/share/darknet/data/dog.jpg") // 768x576, Debian package darknet
	if err != nil {
		t.Fatal(err)
	}
	r := whole(t, photo)
	png, err := r.Share().Encode(PNG, 0)
	if err != nil {
		t.Fatal(err)
	}
	jpg, err := r.Encode(JPEG, 95)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{240, 256, 100, 768} {
		a, err := DecodeGrey(jpg, size)
		if err != nil {
			t.Fatal(err)
		}
		_, c, err := CheckGrey(jpg, math.MaxInt, size)
		if err != nil || c == nil || !slices.Equal(c.Pix, a.Pix) || c.W != a.W {
			t.Fatalf("size %d: CheckGrey's grey is not DecodeGrey's (%v)", size, err)
		}
		b, err := DecodeGrey(png, size)
		if err != nil {
			t.Fatal(err)
		}
		if a.W != b.W || a.H != b.H || max(a.W, a.H) != size {
			t.Fatalf("size %d: JPEG %dx%d, PNG %dx%d", size, a.W, a.H, b.W, b.H)
		}
		sum := 0
		for i := range a.Pix {
			sum += abs(int(a.Pix[i]) - int(b.Pix[i]))
		}
		// 3.25: a JPEG's DCT scaling to 3/8 (288 px, then averaged to 256)
		// keeps a little more detail than libvips' 3x3 box shrink of the PNG.
		if mean := float64(sum) / float64(len(a.Pix)); mean > 3.25 {
			t.Errorf("size %d: JPEG and PNG greys differ by %.2f grey levels on average", size, mean)
		}
	}
	small, err := DecodeGrey(testPNG(t, 40, 30, true), 240)
	if err != nil || small.W != 40 || small.H != 30 {
		t.Fatalf("a 40x30 PNG with alpha decodes to %dx%d, %v", small.W, small.H, err)
	}
	if _, err := DecodeGrey([]byte{0xFF, 0xD8, 0xFF, 0xE0, 1, 2}, 240); err == nil {
		t.Fatal("a broken JPEG decoded")
	}
}

// TestFitAreaAsFirstWritten: fitArea, rearranged for speed, gives the bytes
// its first form gave (fitAreaFirst, kept here as written), for grey and
// RGB and for the sizes scores and thumbnails ask of common frames and of
// odd ones: scores stored at ingest must equal those a job computes later.
func TestFitAreaAsFirstWritten(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ w, h, bands, size int }{
		{350, 263, 1, 240}, {288, 216, 1, 240}, {1400, 1050, 1, 240}, {263, 350, 1, 240}, {241, 17, 1, 240},
		{1000, 3, 1, 240}, {5, 700, 1, 7}, {480, 270, 3, 256}, {960, 540, 3, 256}, {333, 777, 3, 100}, {300, 200, 3, 299},
	} {
		pix := make([]byte, c.w*c.h*c.bands)
		for i := range pix {
			pix[i] = byte(rng.IntN(256))
		}
		if c.w == 350 { // smooth too, where sums land near .5
			for i := range pix {
				pix[i] = byte(i % 7 * 37)
			}
		}
		got, gw, gh := fitArea(pix, c.w, c.h, c.bands, c.size)
		want, ww, wh := fitAreaFirst(pix, c.w, c.h, c.bands, c.size)
		if gw != ww || gh != wh || !slices.Equal(got, want) {
			t.Fatalf("%dx%dx%d to %d: %dx%d, first form %dx%d, bytes equal %v", c.w, c.h, c.bands, c.size, gw, gh, ww, wh,
				slices.Equal(got, want))
		}
	}
}

func fitAreaFirst(pix []byte, w, h, bands, size int) ([]byte, int, int) {
	if w <= size && h <= size {
		return pix, w, h
	}
	type weight struct {
		i int
		f float32
	}
	areaWeights := func(n, m int) [][]weight {
		out := make([][]weight, m)
		step := float64(n) / float64(m)
		for j := range out {
			lo, hi := float64(j)*step, float64(j+1)*step
			for i := int(lo); i < n && float64(i) < hi; i++ {
				overlap := min(hi, float64(i+1)) - max(lo, float64(i))
				if overlap > 0 {
					out[j] = append(out[j], weight{i, float32(overlap / step)})
				}
			}
		}
		return out
	}
	scale := float64(size) / float64(max(w, h))
	tw, th := max(1, int(float64(w)*scale+0.5)), max(1, int(float64(h)*scale+0.5))
	cols, rows := areaWeights(w, tw), areaWeights(h, th)
	row := tw * bands
	tmp := make([]float32, h*row)
	for y := range h {
		src := pix[y*w*bands : (y+1)*w*bands]
		for x, ws := range cols {
			for b := range bands {
				s := float32(0)
				for _, wt := range ws {
					s += wt.f * float32(src[wt.i*bands+b])
				}
				tmp[y*row+x*bands+b] = s
			}
		}
	}
	out := make([]byte, th*row)
	for y, ws := range rows {
		for x := range row {
			s := float32(0)
			for _, wt := range ws {
				s += wt.f * tmp[wt.i*row+x]
			}
			out[y*row+x] = byte(min(255, s+0.5))
		}
	}
	return out, tw, th
}

func BenchmarkFitArea(b *testing.B) {
	pix := make([]byte, 350*263)
	for i := range pix {
		pix[i] = byte(i * 7)
	}
	for b.Loop() {
		fitArea(pix, 350, 263, 1, 240)
	}
}
