// Package testmedia makes media for tests and benchmarks: JPEGs with
// content that varies per seed (so every file hashes differently) and short
// videos through ffmpeg.
package testmedia

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"os/exec"
	"path/filepath"
)

// JPEG encodes a w x h gradient image whose colours depend on seed.
func JPEG(w, h, seed int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	s := uint8(seed) ^ uint8(seed>>8) ^ uint8(seed>>16)
	for y := 0; y < h; y++ {
		row := img.Pix[y*img.Stride:]
		for x := 0; x < w; x++ {
			row[4*x], row[4*x+1], row[4*x+2], row[4*x+3] = uint8(x)+s, uint8(y)^s, uint8(x+y)+uint8(seed>>3), 255
		}
	}
	// A seed-dependent block makes near-identical seeds differ in many bytes.
	for y := (seed * 7) % h; y < min(h, (seed*7)%h+h/8); y++ {
		for x := (seed * 13) % w; x < min(w, (seed*13)%w+w/8); x++ {
			img.Set(x, y, color.RGBA{s, 255 - s, uint8(seed), 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}); err != nil {
		panic(err) // encoding to memory cannot fail
	}
	return b.Bytes()
}

// WriteJPEGs writes n w x h JPEGs named img-00000.jpg... into dir.
func WriteJPEGs(dir string, n, w, h int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("img-%05d.jpg", i)), JPEG(w, h, i), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Video writes an H.264 MP4 test pattern of w x h at fps for seconds to path.
func Video(path string, w, h, fps int, seconds float64) error {
	out, err := exec.Command("ffmpeg", "-v", "error", "-y", "-f", "lavfi",
		"-i", fmt.Sprintf("testsrc=size=%dx%d:rate=%d:duration=%g", w, h, fps, seconds),
		"-pix_fmt", "yuv420p", path).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ffmpeg: %v: %s", err, out)
	}
	return nil
}
