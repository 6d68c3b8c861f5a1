package vips

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"
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

func TestProbeAndVerify(t *testing.T) {
	j := testJPEG(t, 64, 48)
	var p bytes.Buffer
	png.Encode(&p, image.NewGray(image.Rect(0, 0, 10, 7)))
	cases := []struct {
		name   string
		data   []byte
		want   Info
		bad    bool // Verify must fail
		badHdr bool // Probe must fail too (a truncated file may fail either way)
	}{
		{"jpeg", j, Info{64, 48, 3, 1, "jpeg"}, false, false},
		{"png", p.Bytes(), Info{10, 7, 1, 1, "png"}, false, false},
		{"truncated jpeg", j[:len(j)/2], Info{}, true, false},
		{"truncated png", p.Bytes()[:len(p.Bytes())-20], Info{}, true, false},
		{"text", []byte("hello, not an image"), Info{}, true, true},
		{"empty", nil, Info{}, true, true},
		{"svg is untrusted", []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>`), Info{}, true, true},
	}
	for _, c := range cases {
		got, err := Verify(c.data)
		if c.bad {
			if err == nil || !errors.Is(err, ErrDecode) {
				t.Errorf("%s: Verify = %+v, %v; want ErrDecode", c.name, got, err)
			}
		} else if err != nil || got != c.want {
			t.Errorf("%s: Verify = %+v, %v; want %+v", c.name, got, err, c.want)
		}
		_, err = Probe(c.data)
		if c.badHdr && err == nil || !c.bad && err != nil {
			t.Errorf("%s: Probe err = %v", c.name, err)
		}
	}
}

func BenchmarkVerifyJPEG640(b *testing.B) {
	j := testJPEG(b, 640, 480)
	b.SetBytes(int64(len(j)))
	for b.Loop() {
		if _, err := Verify(j); err != nil {
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
