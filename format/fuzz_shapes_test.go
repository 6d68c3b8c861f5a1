package format

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLSBrush feeds Label Studio's brush decoder any bytes on any image
// size: it must return without panicking, in time bounded by the bytes
// (not the size a header claims), and a mask it gives must be one the lake
// takes: counts covering the image and a pixel set.
func FuzzLSBrush(f *testing.F) {
	f.Add([]byte{0, 0, 0, 18, 57, 27, 252, 96, 32, 1, 0, 6, 0, 40, 0, 192, 3, 128, 17, 56, 32}, uint16(3), uint16(1))
	for _, seed := range [][]int{lsEncode(rgba(5, 4, 255, [2]int{1, 1}, [2]int{4, 3})), lsEncode(rgba(5, 4, 0))} {
		b := make([]byte, len(seed))
		for i, v := range seed {
			b[i] = byte(v)
		}
		f.Add(b, uint16(5), uint16(4))
		f.Add(b, uint16(4), uint16(5))
	}
	f.Add([]byte{255, 255, 255, 255, 0xff, 0xff, 0xff}, uint16(65535), uint16(65535)) // 2^32-1 values claimed
	f.Fuzz(func(t *testing.T, data []byte, w, h uint16) {
		rle := make([]int, len(data))
		for i, b := range data {
			rle[i] = int(b)
		}
		m, err := lsBrushMask(rle, int(w), int(h))
		if err != nil {
			return
		}
		r, err := m.RLE()
		if err != nil || r.Width != int(w) || r.Height != int(h) || r.Area() == 0 {
			t.Fatalf("mask %+v (%v) for a %dx%d image", m, err, w, h)
		}
	})
}

// FuzzYOLOPose feeds the YOLO reader any data.yaml and label file: Read
// must return without panicking, every problem it lists counted, and every
// shape it hands out must be one the lake takes once placed.
func FuzzYOLOPose(f *testing.F) {
	f.Add([]byte("names: [person]\nkpt_shape: [2, 3]\nflip_idx: [1, 0]\nkpt_names: [l, r]\n"),
		[]byte("0 0.5 0.5 0.2 0.2 0.4 0.4 2 0.6 0.4 1\n0 0.5 0.5 0.2 0.2 0 0 0 0 0 0\n"))
	f.Add([]byte("names:\n  0: fish\nkpt_shape: [3, 2]\nkpt_names:\n  0:\n    - a\n    - a\n    - b\n"),
		[]byte("0 0.5 0.5 0.2 0.2 0.4 0.4 NaN 0.4 0 0\n0 0.5 0.5 0.2 0.2 0.4 Inf 0.1 0.1 9 9\n"))
	f.Add([]byte("names: [a]\nkpt_shape: [99999999999, 3]\nflip_idx: [[\n"), []byte("0 0.5 0.5 0.2 0.2 0.4 0.4 2\n"))
	f.Fuzz(func(t *testing.T, yaml, labels []byte) {
		dir := t.TempDir()
		for name, b := range map[string][]byte{"data.yaml": yaml, "images/a.jpg": []byte("x"), "labels/a.txt": labels} {
			p := filepath.Join(dir, filepath.FromSlash(name))
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, b, 0o644)
		}
		fuzzReadFit(t, dir, YOLO)
	})
}

// FuzzVOCSegmentation feeds the VOC reader any class PNG (and the same
// bytes as an object PNG): no panic, and masks the lake takes.
func FuzzVOCSegmentation(f *testing.F) {
	pal := make(color.Palette, 256)
	for i := range pal {
		pal[i] = color.Gray{Y: uint8(i)}
	}
	img := image.NewPaletted(image.Rect(0, 0, 100, 80), pal)
	for i := range img.Pix {
		img.Pix[i] = uint8([]int{0, 255, 3, 15, 3}[i%5])
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	f.Add(b.Bytes(), false)
	f.Add(b.Bytes(), true)
	f.Add([]byte("\x89PNG\r\n\x1a\n"), false)
	f.Add([]byte("not a png"), true)
	f.Fuzz(func(t *testing.T, seg []byte, objects bool) {
		dir := t.TempDir()
		files := map[string][]byte{"JPEGImages/a.jpg": []byte("x"), "SegmentationClass/a.png": seg}
		if objects {
			files["SegmentationObject/a.png"] = seg
		}
		for name, b := range files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, b, 0o644)
		}
		fuzzReadFit(t, dir, VOC)
	})
}

// fuzzReadFit reads dir as f and places every item on a 100x80 image: a
// box must land inside it, a shape must pass the lake's check, and every
// listed problem must be counted.
func fuzzReadFit(t *testing.T, dir string, f Format) {
	fit := newReport(f, "")
	emit := func(it Item) error {
		for _, b := range fit.Fit(it, 100, 80) {
			in := b.X >= 0 && b.Y >= 0 && b.W >= 0 && b.H >= 0 && b.X+b.W <= 100.0001 && b.Y+b.H <= 80.0001
			if !in && !isShape(b) || math.IsNaN(b.X+b.Y+b.W+b.H) {
				t.Fatalf("%s: box %+v placed outside the 100x80 image", f, b)
			}
			if err := b.Geometry.Check(100, 80); err != nil {
				t.Fatalf("%s: shape %+v passed Fit but fails the lake's check: %v", f, b, err)
			}
		}
		return nil
	}
	got, err := Read(context.Background(), dir, f, emit)
	if err != nil || got == nil {
		return
	}
	listed := map[Kind]int{}
	for _, p := range got.Problems {
		listed[p.Kind]++
	}
	for k, n := range listed {
		if got.Counts[k] < n {
			t.Fatalf("%s: %d problems of kind %s listed, %d counted", f, n, k, got.Counts[k])
		}
	}
}
