package augment

import (
	"bytes"
	"image/jpeg"
	"math"
	"reflect"
	"testing"

	"github.com/framelake/framelake/internal/vips"
)

// Flips, right-angle turns, even crops and blurs of a 4:2:0 JPEG run on its
// planes: the boxes are the pixel path's and still enclose their colours,
// the pixels are the pixel path's to within the chroma's resolution,
// ApplySteps (rows decoded as needed, a first flip done by the decoder) and
// ApplyN (all of the planes) give the same bytes, and any other chain takes
// the pixels.
func TestPlanarChains(t *testing.T) {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, scene(320, 240, sceneRects), &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	img := b.Bytes()
	crop := func(p, x, y float64) Step { return Step{Type: Crop, Property: CropPercentage, Value: p, X: x, Y: y} }
	flip := func(prop string) Step { return Step{Type: FlipImage, Property: prop} }
	blur := func(s float64) Step { return Step{Type: ImageBlur, Property: Blur, Value: s} }
	turn := func(prop string) Step { return Step{Type: NinetyRotation, Property: prop} }
	for _, c := range []struct {
		name   string
		steps  []Step
		opt    Options
		planar bool
	}{
		{"flip blur crop", []Step{flip(FlipHorizontal), blur(2), crop(20, 0.5, 0.5)}, Options{}, true},
		{"vertical flip, corner crop", []Step{flip(FlipVertical), crop(50, 1, 0)}, Options{}, true},
		{"crop blur flip crop", []Step{crop(30, 0.1, 0.75), blur(1.5), flip(FlipHorizontal), crop(50, 0.5, 0.5)}, Options{Format: "jpeg"}, true},
		{"blur alone", []Step{blur(3)}, Options{}, true},
		{"turn, crop", []Step{turn(Clockwise), crop(50, 0.2, 0.4)}, Options{}, true},
		{"flip, half turn", []Step{flip(FlipVertical), turn(UpsideDown)}, Options{}, true},
		{"flip, turn back, blur", []Step{flip(FlipHorizontal), turn(CounterClockwise), blur(1)}, Options{}, true},
		{"crop anywhere", []Step{crop(23, 0.3, 0.7)}, Options{}, true},
		{"png out", []Step{flip(FlipHorizontal)}, Options{Format: "png"}, false},
		{"hue", []Step{flip(FlipHorizontal), {Type: Hue, Property: HueDegrees, Value: 30}}, Options{}, false},
	} {
		if _, ok := planar(img, c.steps, c.opt); ok != c.planar {
			t.Errorf("%s: planar %v, want %v", c.name, ok, c.planar)
			continue
		}
		got, err := ApplySteps(t.Context(), img, sceneBoxes(), c.steps, c.opt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var d decoded
		all, err := d.run(img, sceneBoxes(), c.steps, c.opt)
		d.close()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !bytes.Equal(got.Image, all.Image) || !reflect.DeepEqual(got.Boxes, all.Boxes) {
			t.Errorf("%s: ApplySteps and ApplyN differ", c.name)
		}
		if !c.planar {
			continue
		}
		src, format, _, err := decode(img, nil)
		if err != nil {
			t.Fatal(err)
		}
		pixels, err := run(src, format, sceneBoxes(), c.steps, 0, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Boxes, pixels.Boxes) || got.Width != pixels.Width || got.Height != pixels.Height {
			t.Errorf("%s: planes gave %dx%d and boxes %v, pixels %dx%d and %v", c.name, got.Width, got.Height, got.Boxes, pixels.Width, pixels.Height, pixels.Boxes)
		}
		a, p := decodeNRGBA(t, got.Image), decodeNRGBA(t, pixels.Image)
		var sum float64
		for i := range a.Pix {
			sum += math.Abs(float64(a.Pix[i]) - float64(p.Pix[i]))
		}
		if mean := sum / float64(len(a.Pix)); mean > 1.5 {
			t.Errorf("%s: planes and pixels differ by %.2f a channel on average", c.name, mean)
		}
		for _, box := range got.Boxes {
			for _, r := range sceneRects {
				if r.label != box.Label {
					continue
				}
				found, n := colourBox(a, r.c)
				if n == 0 || math.Abs(found.X-box.X) > 2 || math.Abs(found.Y-box.Y) > 2 ||
					math.Abs(found.X+found.W-box.X-box.W) > 2 || math.Abs(found.Y+found.H-box.Y-box.H) > 2 {
					t.Errorf("%s: %s box %+v, its colour at %+v", c.name, r.label, box, found)
				}
			}
		}
	}
}

// Crops of an even image are even in size and place and stay inside it;
// odd images keep the plain rounding.
func TestCropRectEven(t *testing.T) {
	for _, size := range [][2]int{{320, 240}, {2, 2}, {333, 222}, {101, 77}} {
		w, h := size[0], size[1]
		even := w%2 == 0 && h%2 == 0
		for _, p := range []float64{0, 1, 23, 67, 99, 100} {
			for _, f := range []float64{0, 0.3, 0.5, 1} {
				r := cropRect(w, h, p, f, 1-f)
				if r.X < 0 || r.Y < 0 || r.W < 1 || r.H < 1 || r.X+r.W > w || r.Y+r.H > h {
					t.Errorf("%dx%d %g%% at %g: %+v outside the image", w, h, p, f, r)
				}
				if even && (r.X%2 != 0 || r.Y%2 != 0 || r.W%2 != 0 || r.H%2 != 0) {
					t.Errorf("%dx%d %g%% at %g: %+v not even", w, h, p, f, r)
				}
				keep := (100 - p) / 100 // p is the share cut away
				if want := max(1, int(math.Round(float64(w)*keep))); !even && r.W != want {
					t.Errorf("%dx%d %g%% cut: width %d, want %d", w, h, p, r.W, want)
				}
				if r.W > 2 && math.Abs(float64(r.W)-float64(w)*keep) > 1.5 { // 2 is an even image's least
					t.Errorf("%dx%d %g%% cut: width %d is not %g%% of %d", w, h, p, r.W, 100-p, w)
				}
				if p == 0 && (r != vips.Rect{W: w, H: h}) {
					t.Errorf("%dx%d: a 0%% cut gives %+v, not the whole image", w, h, r)
				}
			}
		}
	}
}
