package vips

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"testing"

	"github.com/framelake/framelake/internal/testmedia"
)

func testJPEG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), uint8(x ^ y), 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// checks are Check and CheckGrey, which must judge every image alike.
var checks = map[string]func([]byte, int) (Info, error){
	"Check": Check,
	"CheckGrey": func(b []byte, maxPixels int) (Info, error) {
		info, _, err := CheckGrey(b, maxPixels, 240)
		return info, err
	},
}

func TestProbeAndCheck(t *testing.T) {
	j := testJPEG(t, 64, 48)
	var p bytes.Buffer
	png.Encode(&p, image.NewGray(image.Rect(0, 0, 10, 7)))
	cases := []struct {
		name   string
		data   []byte
		want   Info
		bad    bool // Check must fail
		badHdr bool // Probe must fail too (a truncated file may fail either way)
	}{
		{"jpeg", j, Info{64, 48, 3, 1, "jpeg"}, false, false},
		{"png", p.Bytes(), Info{10, 7, 1, 1, "png"}, false, false},
		{"truncated jpeg", j[:len(j)/2], Info{}, true, false},
		{"truncated png", p.Bytes()[:len(p.Bytes())-20], Info{}, true, false},
		// Whole files (end marker last) whose pixel data is damaged: only a decode shows it.
		{"jpeg with garbage scan data", testmedia.GarbageScanJPEG(j), Info{}, true, false},
		{"png whose IDAT is not zlib", testmedia.GarbageIDATPNG(p.Bytes()), Info{}, true, false},
		{"text", []byte("hello, not an image"), Info{}, true, true},
		{"empty", nil, Info{}, true, true},
		{"svg is untrusted", []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>`), Info{}, true, true},
	}
	for _, c := range cases {
		for fn, check := range checks {
			got, err := check(c.data, math.MaxInt)
			if c.bad {
				if err == nil || !errors.Is(err, ErrDecode) {
					t.Errorf("%s: %s = %+v, %v; want ErrDecode", c.name, fn, got, err)
				}
			} else if err != nil || got != c.want {
				t.Errorf("%s: %s = %+v, %v; want %+v", c.name, fn, got, err, c.want)
			}
		}
		_, err := Probe(c.data)
		if c.badHdr && err == nil || !c.bad && err != nil {
			t.Errorf("%s: Probe err = %v", c.name, err)
		}
	}
}

// TestCheckPixelLimit: an image over the limit is refused from its header,
// before any pixel is decoded (the pixel data here does not match the header
// and would fail to decode), and the error carries the header's size.
func TestCheckPixelLimit(t *testing.T) {
	var p bytes.Buffer
	png.Encode(&p, image.NewGray(image.Rect(0, 0, 10, 7)))
	j := testJPEG(t, 64, 48)
	for name, b := range map[string][]byte{"png": p.Bytes(), "jpeg": j} {
		for fn, check := range checks {
			info, err := check(b, 10*7)
			if name == "png" && err != nil {
				t.Errorf("png: %s: 10x7 with a limit of 70 pixels: %v", fn, err)
			}
			if name == "jpeg" && (!errors.Is(err, ErrTooManyPixels) || info.Width != 64) {
				t.Errorf("jpeg: %s: 64x48 with a limit of 70 pixels = %+v, %v; want ErrTooManyPixels", fn, info, err)
			}
			info, err = check(testmedia.WithSize(b, 50000, 50000), 100_000_000)
			if !errors.Is(err, ErrTooManyPixels) || info.Width != 50000 || info.Height != 50000 {
				t.Errorf("%s: %s: 50000x50000 = %+v, %v; want ErrTooManyPixels with the size", name, fn, info, err)
			}
		}
	}
}

func BenchmarkCheckJPEG640(b *testing.B) {
	j := testJPEG(b, 640, 480)
	b.SetBytes(int64(len(j)))
	for b.Loop() {
		if _, err := Check(j, math.MaxInt); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkProbeJPEG640(b *testing.B) {
	j := testJPEG(b, 640, 480)
	for b.Loop() {
		if _, err := Probe(j); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCheckReadLimit: a buffer past MaxCheckBytes (a valid JPEG padded with
// zeros, as a zip bomb's bomb.jpg is) is refused with ErrTooManyBytes by
// both checks, before libvips sees it; one at the limit is checked.
func TestCheckReadLimit(t *testing.T) {
	j := testJPEG(t, 64, 48)
	big := make([]byte, MaxCheckBytes+1)
	copy(big, j)
	for fn, check := range checks {
		if _, err := check(big, 100_000_000); !errors.Is(err, ErrTooManyBytes) {
			t.Errorf("%s: %d bytes = %v; want ErrTooManyBytes", fn, len(big), err)
		}
		if info, err := check(big[:MaxCheckBytes], 100_000_000); err != nil || info.Width != 64 {
			t.Errorf("%s: %d bytes (a JPEG and zeros) = %+v, %v; want it checked", fn, MaxCheckBytes, info, err)
		}
	}
}
