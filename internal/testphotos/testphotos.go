// Package testphotos gives tests real photos, from Debian packages the
// tests already rely on (darknet's sample images, labelme's examples), and
// near-duplicate copies of them made with libvips.
package testphotos

import (
	"os"
	"testing"

	"github.com/framelake/framelake/internal/vips"
)

// Darknet is where package darknet keeps its sample photos (dog.jpg,
// eagle.jpg, giraffe.jpg, horses.jpg, kite.jpg, person.jpg, scream.jpg).
const Darknet = "/usr/share/darknet/data/"

// Files are distinct real photos; labelme's video frames are left out,
// being near duplicates of each other.
var Files = []string{
	Darknet + "dog.jpg", Darknet + "eagle.jpg", Darknet + "giraffe.jpg", Darknet + "horses.jpg",
	Darknet + "kite.jpg", Darknet + "person.jpg", Darknet + "scream.jpg",
	"/usr/share/doc/labelme-examples/examples/classification/data_annotated/0001.jpg",
	"/usr/share/doc/labelme-examples/examples/classification/data_annotated/0002.jpg",
	"/usr/share/doc/labelme-examples/examples/bbox_detection/data_annotated/2011_000003.jpg",
	"/usr/share/doc/labelme-examples/examples/bbox_detection/data_annotated/2011_000006.jpg",
	"/usr/share/doc/labelme-examples/examples/bbox_detection/data_annotated/2011_000025.jpg",
	"/usr/share/doc/labelme-examples/examples/tutorial/apc2016_obj3.jpg",
}

// Read reads a photo, failing the test when its package is missing.
func Read(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("real photo (Debian packages darknet and labelme-examples): %v", err)
	}
	return b
}

// Edit decodes a photo, applies op (nil: none) and encodes the result as JPEG at quality q.
func Edit(t testing.TB, b []byte, q int, op func(r *vips.Raster) (*vips.Raster, error)) []byte {
	t.Helper()
	r, _, err := vips.DecodeRaster(b, func(w, h int) (vips.Window, error) { return vips.Window{Rect: vips.Rect{W: w, H: h}}, nil })
	if err == nil && op != nil {
		r, err = op(r)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out, err := r.Encode(vips.JPEG, q)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Half is a photo resized to half its width and height.
func Half(t testing.TB, b []byte) []byte {
	t.Helper()
	info, err := vips.Probe(b)
	if err != nil {
		t.Fatal(err)
	}
	half, _, _, err := vips.ThumbnailJPEG(b, info.Width/2, info.Height/2, 85)
	if err != nil {
		t.Fatal(err)
	}
	return half
}

// Brighter scales every channel by 1.2.
func Brighter(r *vips.Raster) (*vips.Raster, error) {
	return r.Recomb([9]float64{1.2, 0, 0, 0, 1.2, 0, 0, 0, 1.2})
}

// Copies are near duplicates of a photo: re-encoded at JPEG quality 40,
// resized to half, cropped by cropPct percent on every side, brighter,
// blurred (sigma 1), and with 2% of pixels replaced by noise.
func Copies(t testing.TB, b []byte, cropPct int) map[string][]byte {
	t.Helper()
	info, err := vips.Probe(b)
	if err != nil {
		t.Fatal(err)
	}
	w, h := info.Width, info.Height
	return map[string][]byte{
		"reencoded": Edit(t, b, 40, nil),
		"resized":   Half(t, b),
		"cropped": Edit(t, b, 90, func(r *vips.Raster) (*vips.Raster, error) {
			return r.Crop(w*cropPct/100, h*cropPct/100, w-2*w*cropPct/100, h-2*h*cropPct/100)
		}),
		"brighter": Edit(t, b, 90, Brighter),
		"blurred":  Edit(t, b, 90, func(r *vips.Raster) (*vips.Raster, error) { return r.Blur(1) }),
		"noisy":    Edit(t, b, 90, func(r *vips.Raster) (*vips.Raster, error) { return r.Noise(7, 0.02) }),
	}
}
