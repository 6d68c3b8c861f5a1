package vips

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"testing"

	"github.com/framelake/framelake/internal/testmedia"
)

// FuzzCheck feeds arbitrary bytes to the image check every upload and
// import passes: it never crashes the process, refuses with ErrDecode or
// ErrTooManyPixels, and what it accepts has a size within the pixel limit.
// CheckGrey, the check of a lake that scores at ingest, judges alike.
// The corpus lives in testdata/fuzz/FuzzCheck.
func FuzzCheck(f *testing.F) {
	var p, g bytes.Buffer
	png.Encode(&p, image.NewGray(image.Rect(0, 0, 8, 6)))
	pal := image.NewPaletted(image.Rect(0, 0, 4, 4), []color.Color{color.Black, color.White})
	gif.Encode(&g, pal, nil)
	for _, b := range [][]byte{testmedia.JPEG(16, 8, 1), p.Bytes(), g.Bytes(), testmedia.WithSize(p.Bytes(), 50000, 50000),
		testmedia.GarbageIDATPNG(p.Bytes()), testmedia.GarbageScanJPEG(testmedia.JPEG(16, 16, 2)),
		[]byte("RIFF\x1a\x00\x00\x00WEBPVP8 \x0e\x00\x00\x00"), []byte("GIF89a\xff\xff\xff\xff")} {
		f.Add(b)
	}
	const limit = 1 << 16
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := Check(b, limit)
		switch {
		case errors.Is(err, ErrDecode), errors.Is(err, ErrTooManyPixels):
		case err != nil:
			t.Fatalf("Check: %v, want ErrDecode or ErrTooManyPixels", err)
		case info.Width <= 0 || info.Height <= 0 || info.Width*info.Height > limit:
			t.Fatalf("Check accepted a %dx%d image over the limit of %d pixels", info.Width, info.Height, limit)
		}
		ginfo, _, gerr := CheckGrey(b, limit, 32)
		if (gerr == nil) != (err == nil) || err == nil && ginfo != info {
			t.Fatalf("CheckGrey = %+v, %v; Check = %+v, %v", ginfo, gerr, info, err)
		}
	})
}
