package vips

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFitJPEGDirectMatchesVips: a thumbnail of a 1080p JPEG made without
// libvips (DCT scale-down, area average) has libvips' size and, pixel for
// pixel, nearly its colours (a mean difference of 2-3.4 levels of 255 on
// these photos, both re-encoded at quality 80); files it cannot read as well
// go to libvips.
func TestFitJPEGDirectMatchesVips(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"dog.jpg", "horses.jpg", "person.jpg"} {
		photo, err := os.ReadFile("/usr/share/darknet/data/" + name)
		if err != nil {
			t.Fatalf("real photo (Debian package darknet): %v", err)
		}
		frame, _, _, err := ThumbnailJPEG(photo, 1920, 1080, 90)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, frame, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{128, 256, 512} {
			direct, ok, err := fitJPEGDirect(path, size, 80)
			if err != nil || !ok {
				t.Fatalf("%s at %d: direct path not taken: %v", name, size, err)
			}
			via, err := fitVips(path, size, 80)
			if err != nil {
				t.Fatal(err)
			}
			a, b := pixels(t, whole(t, direct), nil), pixels(t, whole(t, via), nil)
			if a.Bounds() != b.Bounds() || a.Bounds().Dx() != size {
				t.Fatalf("%s at %d: %v, libvips %v", name, size, a.Bounds(), b.Bounds())
			}
			sum := 0
			for i := range a.Pix {
				sum += abs(int(a.Pix[i]) - int(b.Pix[i]))
			}
			if mean := float64(sum) / float64(len(a.Pix)); mean > 4 {
				t.Errorf("%s at %d: mean difference %.2f from libvips", name, size, mean)
			}
		}
	}
	png := filepath.Join(dir, "x.png")
	if err := os.WriteFile(png, testPNG(t, 300, 200, false), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := fitJPEGDirect(png, 256, 80); ok || err != nil {
		t.Errorf("a PNG took the JPEG path: %v", err)
	}
	if b, err := FitJPEG(png, 256, 80); err != nil || !isJPEG(b) {
		t.Errorf("PNG through libvips: %v", err)
	}
}
