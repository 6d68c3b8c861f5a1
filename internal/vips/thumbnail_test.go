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

// TestCheckGreyThumb: one decode gives the check, the grey CheckGrey gives
// (the same bytes) and, where its DCT scale leaves 256 px, the grid
// thumbnail, of FitJPEG's size and within a level or two of its colours;
// where it does not (1920x1080 decodes its grey at 240 px), no thumbnail;
// and a truncated JPEG is still refused.
func TestCheckGreyThumb(t *testing.T) {
	dir := t.TempDir()
	photo, err := os.ReadFile("/usr/share/darknet/data/dog.jpg")
	if err != nil {
		t.Fatalf("real photo (Debian package darknet): %v", err)
	}
	for _, c := range []struct {
		w, h  int
		thumb bool
	}{{1400, 1050, true}, {1280, 720, true}, {200, 150, true}, {1920, 1080, false}, {640, 480, false}} {
		buf, _, _, err := ThumbnailJPEG(photo, c.w, c.h, 90)
		if err != nil {
			t.Fatal(err)
		}
		info, grey, thumb, err := CheckGreyThumb(buf, 1<<30, 240, 256, 80)
		if err != nil || info.Width != c.w || info.Height != c.h {
			t.Fatalf("%dx%d: %+v %v", c.w, c.h, info, err)
		}
		want, err := DecodeGrey(buf, 240)
		if err != nil {
			t.Fatal(err)
		}
		if grey == nil || grey.W != want.W || grey.H != want.H || string(grey.Pix) != string(want.Pix) {
			t.Fatalf("%dx%d: the grey is not DecodeGrey's", c.w, c.h)
		}
		if (thumb != nil) != c.thumb {
			t.Fatalf("%dx%d: thumbnail %v, want %v", c.w, c.h, thumb != nil, c.thumb)
		}
		if thumb == nil {
			continue
		}
		path := filepath.Join(dir, "x.jpg")
		if err := os.WriteFile(path, buf, 0o644); err != nil {
			t.Fatal(err)
		}
		cold, err := FitJPEG(path, 256, 80)
		if err != nil {
			t.Fatal(err)
		}
		a, b := pixels(t, whole(t, thumb), nil), pixels(t, whole(t, cold), nil)
		if a.Bounds() != b.Bounds() {
			t.Fatalf("%dx%d: thumbnail %v, FitJPEG's %v", c.w, c.h, a.Bounds(), b.Bounds())
		}
		sum := 0
		for i := range a.Pix {
			sum += abs(int(a.Pix[i]) - int(b.Pix[i]))
		}
		if mean := float64(sum) / float64(len(a.Pix)); mean > 2 {
			t.Errorf("%dx%d: mean difference %.2f from FitJPEG", c.w, c.h, mean)
		} else {
			t.Logf("%dx%d: %v, mean difference %.2f from FitJPEG", c.w, c.h, a.Bounds().Size(), mean)
		}
		if _, _, th, err := CheckGreyThumb(buf[:len(buf)*2/3], 1<<30, 240, 256, 80); err == nil || th != nil {
			t.Errorf("%dx%d truncated: %v", c.w, c.h, err)
		}
	}
}
