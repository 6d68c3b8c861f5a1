package vips

import (
	"math"
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
