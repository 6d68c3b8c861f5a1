package augment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"math"
	"reflect"
	"sync"
	"testing"
)

// rect is a filled rectangle of one colour, drawn on a test scene.
type rect struct {
	label string
	c     color.NRGBA
	r     image.Rectangle
}

var background = color.NRGBA{128, 128, 128, 255}

// scene draws rects on a gray w x h canvas.
func scene(w, h int, rects []rect) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), &image.Uniform{background}, image.Point{}, draw.Src)
	for _, r := range rects {
		draw.Draw(img, r.r, &image.Uniform{r.c}, image.Point{}, draw.Src)
	}
	return img
}

func encodePNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func scenePNG(t testing.TB, w, h int, rects []rect) []byte { return encodePNG(t, scene(w, h, rects)) }

func decodeNRGBA(t testing.TB, data []byte) *image.NRGBA {
	t.Helper()
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	n := image.NewNRGBA(img.Bounds())
	draw.Draw(n, n.Bounds(), img, img.Bounds().Min, draw.Src)
	return n
}

// colourBox is the bounding box of the pixels within 40 per channel of c
// (edges blended with the background by interpolation do not count).
func colourBox(img *image.NRGBA, c color.NRGBA) (Box, int) {
	x0, y0, x1, y1, n := math.MaxInt, math.MaxInt, -1, -1, 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			p := img.NRGBAAt(x, y)
			if near(p.R, c.R) && near(p.G, c.G) && near(p.B, c.B) {
				x0, y0, x1, y1, n = min(x0, x), min(y0, y), max(x1, x), max(y1, y), n+1
			}
		}
	}
	return Box{X: float64(x0), Y: float64(y0), W: float64(x1 - x0 + 1), H: float64(y1 - y0 + 1)}, n
}

func near(a, b uint8) bool { return int(a)-int(b) <= 40 && int(b)-int(a) <= 40 }

var sceneRects = []rect{
	{"red", color.NRGBA{220, 30, 30, 255}, image.Rect(40, 30, 100, 80)},
	{"green", color.NRGBA{30, 200, 30, 255}, image.Rect(200, 60, 260, 150)},
	{"blue", color.NRGBA{30, 30, 220, 255}, image.Rect(120, 150, 170, 210)},
}

func sceneBoxes() []Box {
	var boxes []Box
	for _, r := range sceneRects {
		boxes = append(boxes, Box{ID: r.label, Label: r.label, X: float64(r.r.Min.X), Y: float64(r.r.Min.Y),
			W: float64(r.r.Dx()), H: float64(r.r.Dy())})
	}
	return boxes
}

// TestBoxesFollowPixels applies each geometric augmentation to a scene of
// coloured rectangles and checks every moved box against the bounding box
// of its colour's pixels in the output.
func TestBoxesFollowPixels(t *testing.T) {
	img := scenePNG(t, 320, 240, sceneRects)
	step := func(typ, prop string, v float64) Step { return Step{Type: typ, Property: prop, Value: v} }
	cases := []struct {
		name       string
		steps      []Step
		w, h       int
		kept       string // labels of the boxes that must survive
		minVisible float64
	}{
		{"flip horizontal", []Step{step(FlipImage, FlipHorizontal, 0)}, 320, 240, "red green blue", 0},
		{"flip vertical", []Step{step(FlipImage, FlipVertical, 0)}, 320, 240, "red green blue", 0},
		{"clockwise", []Step{step(NinetyRotation, Clockwise, 0)}, 240, 320, "red green blue", 0},
		{"counter-clockwise", []Step{step(NinetyRotation, CounterClockwise, 0)}, 240, 320, "red green blue", 0},
		{"upside down", []Step{step(NinetyRotation, UpsideDown, 0)}, 320, 240, "red green blue", 0},
		{"rotate 17", []Step{step(ImageRotation, PercentageScale, 17)}, 320, 240, "red green blue", 0},
		{"rotate -40", []Step{step(ImageRotation, PercentageScale, -40)}, 320, 240, "red green blue", 0},
		{"rotate 200", []Step{step(ImageRotation, PercentageScale, 200)}, 320, 240, "red green blue", 0},
		{"shear horizontal 20", []Step{step(Shear, ShearHorizontal, 20)}, 320, 240, "red green blue", 0},
		{"shear vertical -25", []Step{step(Shear, ShearVertical, -25)}, 320, 240, "red green blue", 0},
		{"crop 40", []Step{{Type: Crop, Property: CropPercentage, Value: 40, X: 0.2, Y: 0.7}}, 192, 144, "red green blue", 0},
		{"crop drops", []Step{{Type: Crop, Property: CropPercentage, Value: 50, X: 1, Y: 1}}, 160, 120, "green", 0.25},
		{"zero shear then turn", []Step{step(Shear, ShearHorizontal, 0), step(NinetyRotation, CounterClockwise, 0),
			step(ImageRotation, PercentageScale, 360)}, 240, 320, "red green blue", 0},
		{"chain", []Step{step(NinetyRotation, Clockwise, 0), step(ImageRotation, PercentageScale, 8),
			{Type: Crop, Property: CropPercentage, Value: 10, X: 0.5, Y: 0.1}, step(FlipImage, FlipHorizontal, 0),
			step(Shear, ShearVertical, 5), step(ImageBlur, Blur, 1)}, 216, 288, "red green blue", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := ApplySteps(t.Context(), img, sceneBoxes(), c.steps, Options{MinVisible: c.minVisible})
			if err != nil {
				t.Fatal(err)
			}
			if out.Format != "png" || out.Width != c.w || out.Height != c.h {
				t.Fatalf("output %s %dx%d, want png %dx%d", out.Format, out.Width, out.Height, c.w, c.h)
			}
			got := decodeNRGBA(t, out.Image)
			if got.Bounds().Dx() != c.w || got.Bounds().Dy() != c.h {
				t.Fatalf("decoded %v, want %dx%d", got.Bounds(), c.w, c.h)
			}
			labels := ""
			for _, b := range out.Boxes {
				labels += " " + b.Label
			}
			if labels != " "+c.kept {
				t.Errorf("kept boxes%s, want %s", labels, c.kept)
			}
			for _, b := range out.Boxes {
				var col color.NRGBA
				for _, r := range sceneRects {
					if r.label == b.Label {
						col = r.c
					}
				}
				px, n := colourBox(got, col)
				if n == 0 {
					t.Errorf("%s: no pixels of its colour in the output", b.Label)
					continue
				}
				if d := boxDistance(b, px); d > 2 {
					t.Errorf("%s: box %s, pixels at %s (off by %.1f)", b.Label, showBox(b), showBox(px), d)
				}
			}
		})
	}
}

// TestCropPercentageIsShareCut: CROP_PERCENTAGE is the share of each side
// cut away, so [0, 0] leaves the image as it was (pixels and boxes), a fixed
// 20 keeps 80% of the width and of the height with the boxes on their
// pixels, and [0, 20] keeps between 80% and all of it.
func TestCropPercentageIsShareCut(t *testing.T) {
	img := scenePNG(t, 320, 240, sceneRects)
	cfg := func(lo, hi int) *Config {
		c, err := Parse(fmt.Appendf(nil, `{"IMAGE_LEVEL": [{"id": "CROP", "properties": [{"id": "CROP_PERCENTAGE", "values": [%d, %d]}]}]}`, lo, hi))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	outs, err := ApplyN(t.Context(), img, sceneBoxes(), cfg(0, 0), 7, 3, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := decodeNRGBA(t, img)
	for i, o := range outs {
		if o.Width != 320 || o.Height != 240 || !bytes.Equal(decodeNRGBA(t, o.Image).Pix, want.Pix) {
			t.Errorf("[0, 0] output %d: %dx%d, pixels changed", i, o.Width, o.Height)
		}
		if !reflect.DeepEqual(o.Boxes, sceneBoxes()) {
			t.Errorf("[0, 0] output %d moved boxes: %+v", i, o.Boxes)
		}
	}
	outs, err = ApplyN(t.Context(), img, sceneBoxes(), cfg(20, 20), 7, 4, Options{MinVisible: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range outs {
		if o.Width != 256 || o.Height != 192 || len(o.Steps) != 1 || o.Steps[0].Value != 20 {
			t.Fatalf("[20, 20] output %d: %dx%d steps %+v; want 256x192 (80%% of 320x240)", i, o.Width, o.Height, o.Steps)
		}
		got := decodeNRGBA(t, o.Image)
		for _, b := range o.Boxes {
			for _, r := range sceneRects {
				if r.label != b.Label {
					continue
				}
				if px, n := colourBox(got, r.c); n == 0 || boxDistance(b, px) > 1 {
					t.Errorf("output %d %s: box %s, pixels at %s", i, b.Label, showBox(b), showBox(px))
				}
			}
		}
	}
	outs, err = ApplyN(t.Context(), img, nil, cfg(0, 20), 3, 8, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range outs {
		if o.Width < 256 || o.Width > 320 || o.Height < 192 || o.Height > 240 {
			t.Errorf("[0, 20] output %d: %dx%d cuts more than 20%%", i, o.Width, o.Height)
		}
	}
}

func boxDistance(a, b Box) float64 {
	return max(math.Abs(a.X-b.X), math.Abs(a.Y-b.Y), math.Abs(a.X+a.W-b.X-b.W), math.Abs(a.Y+a.H-b.Y-b.H))
}

func showBox(b Box) string { return fmt.Sprintf("[%.1f,%.1f %.1fx%.1f]", b.X, b.Y, b.W, b.H) }

// hsv returns hue in degrees, chroma and value of an 8-bit colour.
func hsv(r, g, b uint8) (h, c, v float64) {
	R, G, B := float64(r), float64(g), float64(b)
	mx, mn := max(R, G, B), min(R, G, B)
	c, v = mx-mn, mx
	switch {
	case c == 0:
		return 0, 0, v
	case mx == R:
		h = (G - B) / c
	case mx == G:
		h = (B-R)/c + 2
	default:
		h = (R-G)/c + 4
	}
	return math.Mod(h*60+360, 360), c, v
}

// rainbow has every hue across its width at saturation s and value v.
func rainbow(w, h int, s, v float64) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		hue := float64(x) * 360 / float64(w)
		c := v * s
		xx := c * (1 - math.Abs(math.Mod(hue/60, 2)-1))
		var r, g, b float64
		switch int(hue / 60) {
		case 0:
			r, g = c, xx
		case 1:
			r, g = xx, c
		case 2:
			g, b = c, xx
		case 3:
			g, b = xx, c
		case 4:
			r, b = xx, c
		default:
			r, b = c, xx
		}
		m := v - c
		col := color.NRGBA{uint8(math.Round((r + m) * 255)), uint8(math.Round((g + m) * 255)), uint8(math.Round((b + m) * 255)), 255}
		for y := range h {
			img.SetNRGBA(x, y, col)
		}
	}
	return img
}

// TestPhotometric checks colour steps by what they measurably do, and that
// they leave boxes alone.
func TestPhotometric(t *testing.T) {
	src := rainbow(180, 40, 0.5, 0.7)
	data := encodePNG(t, src)
	boxes := []Box{{Label: "a", X: 10, Y: 5, W: 20, H: 10}}
	apply := func(st Step) *image.NRGBA {
		out, err := ApplySteps(t.Context(), data, boxes, []Step{st}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Boxes) != 1 || !reflect.DeepEqual(out.Boxes[0], boxes[0]) || out.Width != 180 || out.Height != 40 {
			t.Errorf("%s moved boxes or size: %+v %dx%d", st.Type, out.Boxes, out.Width, out.Height)
		}
		return decodeNRGBA(t, out.Image)
	}
	// measure averages f(before, after) over pixels of row 0.
	measure := func(img *image.NRGBA, f func(a, b color.NRGBA) (float64, bool)) float64 {
		sum, n := 0.0, 0
		for x := range 180 {
			if v, ok := f(src.NRGBAAt(x, 0), img.NRGBAAt(x, 0)); ok {
				sum, n = sum+v, n+1
			}
		}
		return sum / float64(n)
	}
	hueShift := func(a, b color.NRGBA) (float64, bool) {
		h0, _, _ := hsv(a.R, a.G, a.B)
		h1, _, _ := hsv(b.R, b.G, b.B)
		return math.Remainder(h1-h0, 360), true
	}
	chromaRatio := func(a, b color.NRGBA) (float64, bool) {
		_, c0, _ := hsv(a.R, a.G, a.B)
		_, c1, _ := hsv(b.R, b.G, b.B)
		return c1 / c0, c0 > 0
	}
	valueRatio := func(a, b color.NRGBA) (float64, bool) {
		_, _, v0 := hsv(a.R, a.G, a.B)
		_, _, v1 := hsv(b.R, b.G, b.B)
		return v1 / v0, true
	}
	within := func(name string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s: measured %.3f, want %.3f ± %.3f", name, got, want, tol)
		}
	}
	within("hue +30 mean shift", measure(apply(Step{Type: Hue, Property: HueDegrees, Value: 30}), hueShift), 30, 1)
	within("hue -45 mean shift", measure(apply(Step{Type: Hue, Property: HueDegrees, Value: -45}), hueShift), -45, 1)
	within("grayscale 40% chroma", measure(apply(Step{Type: Grayscale, Property: GrayscalePercentage, Value: 40}), chromaRatio), 0.6, 0.02)
	within("saturation +30 chroma", measure(apply(Step{Type: Saturation, Property: SaturationDegrees, Value: 30}), chromaRatio), 1.3, 0.02)
	within("saturation -50 chroma", measure(apply(Step{Type: Saturation, Property: SaturationDegrees, Value: -50}), chromaRatio), 0.5, 0.02)
	within("brightness -20 value", measure(apply(Step{Type: Brightness, Property: BrightnessDegrees, Value: -20}), valueRatio), 0.8, 0.01)
	within("brightness +25 value", measure(apply(Step{Type: Brightness, Property: BrightnessDegrees, Value: 25}), valueRatio), 1.25, 0.01)

	gray := apply(Step{Type: Grayscale, Property: GrayscalePercentage, Value: 100})
	grayPixels := 0
	for i := 0; i < len(gray.Pix); i += 4 {
		if p := gray.Pix[i : i+3]; max(p[0], p[1], p[2])-min(p[0], p[1], p[2]) <= 1 {
			grayPixels++
		}
	}
	within("grayscale 100% gray fraction", float64(grayPixels)/(180*40), 1, 0)

	for _, pct := range []float64{5, 30} {
		flat := encodePNG(t, scene(200, 200, nil))
		out, err := ApplySteps(t.Context(), flat, nil, []Step{{Type: Noise, Property: NoisePercentage, Value: pct, Seed: 42}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		img, noisy := decodeNRGBA(t, out.Image), 0
		for i := 0; i < len(img.Pix); i += 4 {
			if (color.NRGBA{img.Pix[i], img.Pix[i+1], img.Pix[i+2], 255}) != background {
				noisy++
			}
		}
		within(fmt.Sprintf("noise %g%% noisy fraction", pct), float64(noisy)/40000, pct/100, 0.006)
	}
}

func TestBlur(t *testing.T) {
	edge := scene(100, 20, []rect{{"white", color.NRGBA{255, 255, 255, 255}, image.Rect(50, 0, 100, 20)}})
	out, err := ApplySteps(t.Context(), encodePNG(t, edge), nil, []Step{{Type: ImageBlur, Property: Blur, Value: 2}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	img := decodeNRGBA(t, out.Image)
	row := func(x int) uint8 { return img.NRGBAAt(x, 10).R }
	// A Gaussian of sigma 2 spreads the step over a few pixels each way and
	// leaves pixels well away from it alone.
	if row(40) != 128 || row(60) != 255 || row(48) <= 128 || row(48) >= 191 || row(51) <= 191 || row(51) >= 255 {
		t.Errorf("blurred edge profile x=40..60: %v", func() (p []uint8) {
			for x := 40; x <= 60; x++ {
				p = append(p, row(x))
			}
			return
		}())
	}
}

func TestDeterministic(t *testing.T) {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, rainbow(320, 240, 0.8, 0.9), &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse([]byte(fullConfig))
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Key: "frame-0001"}
	one, err := Apply(t.Context(), b.Bytes(), sceneBoxes(), cfg, 7, opt)
	if err != nil {
		t.Fatal(err)
	}
	two, err := Apply(t.Context(), b.Bytes(), sceneBoxes(), cfg, 7, opt)
	if err != nil {
		t.Fatal(err)
	}
	if one.Format != "jpeg" || !bytes.Equal(one.Image, two.Image) || !equalSteps(one.Steps, two.Steps) {
		t.Fatalf("same seed gave different outputs (%s, %d vs %d bytes)", one.Format, len(one.Image), len(two.Image))
	}
	replay, err := ApplySteps(t.Context(), b.Bytes(), sceneBoxes(), one.Steps, opt)
	if err != nil || !bytes.Equal(replay.Image, one.Image) {
		t.Fatalf("replaying the recorded steps gave different bytes (err %v)", err)
	}
	many, err := ApplyN(t.Context(), b.Bytes(), sceneBoxes(), cfg, 7, 3, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(many) != 3 || !bytes.Equal(many[0].Image, one.Image) {
		t.Fatal("ApplyN output 0 differs from Apply")
	}
	if bytes.Equal(many[1].Image, many[0].Image) || equalSteps(many[1].Steps, many[2].Steps) {
		t.Error("ApplyN outputs repeat")
	}
	other, err := Apply(t.Context(), b.Bytes(), sceneBoxes(), cfg, 8, opt)
	if err != nil || bytes.Equal(other.Image, one.Image) {
		t.Errorf("seeds 7 and 8 gave the same image (err %v)", err)
	}
}

// TestConcurrent runs many chains at once: libvips is shared process-wide and
// the outputs must not depend on what else runs.
func TestConcurrent(t *testing.T) {
	cfg, err := Parse([]byte(fullConfig))
	if err != nil {
		t.Fatal(err)
	}
	img := scenePNG(t, 160, 120, sceneRects)
	want, err := ApplyN(t.Context(), img, sceneBoxes(), cfg, 3, 4, Options{Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			i := g % 4
			got, err := ApplySteps(t.Context(), img, sceneBoxes(), want[i].Steps, Options{Key: "k"})
			if err != nil {
				t.Error(err)
				return
			}
			if !bytes.Equal(got.Image, want[i].Image) || len(got.Boxes) != len(want[i].Boxes) {
				t.Errorf("goroutine %d: output %d differs when run concurrently", g, i)
			}
		})
	}
	wg.Wait()
}

func TestCancelled(t *testing.T) {
	cfg, _ := Parse([]byte(fullConfig))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := ApplyN(ctx, scenePNG(t, 40, 30, nil), nil, cfg, 1, 3, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("ApplyN on a cancelled context: %v", err)
	}
}

// TestWindowedDecode: a chain that ends in a crop decodes only part of a JPEG
// (needed); its output must be byte for byte what the whole decode gives.
func TestWindowedDecode(t *testing.T) {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, rainbow(333, 222, 0.8, 0.9), &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	crop := func(p, x, y float64) Step { return Step{Type: Crop, Property: CropPercentage, Value: p, X: x, Y: y} }
	flip := func(prop string) Step { return Step{Type: FlipImage, Property: prop} }
	blur := Step{Type: ImageBlur, Property: Blur, Value: 2}
	chains := [][]Step{
		{flip(FlipHorizontal), blur, crop(20, 0.3, 0.6)},
		{flip(FlipVertical), crop(50, 1, 0)},
		{crop(30, 0.1, 0.9), blur, flip(FlipHorizontal), {Type: Noise, Property: NoisePercentage, Value: 20, Seed: 3}, crop(40, 0.5, 0.5)},
		{{Type: Brightness, Property: BrightnessDegrees, Value: 20}, crop(70, 0, 1), {Type: ImageBlur, Property: Blur, Value: 7}},
	}
	for i, steps := range chains {
		if w := needed(steps, 333, 222); w.W*w.H >= 333*222 {
			t.Errorf("chain %d: needed %+v is the whole image", i, w)
		}
		part, err := ApplySteps(t.Context(), b.Bytes(), sceneBoxes(), steps, Options{})
		if err != nil {
			t.Fatal(err)
		}
		src, format, _, err := decode(b.Bytes(), nil)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := run(src, format, sceneBoxes(), steps, 0, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(part.Image, whole.Image) || part.Width != whole.Width || !reflect.DeepEqual(part.Boxes, whole.Boxes) {
			t.Errorf("chain %d: windowed decode gave different output (%dx%d, %d vs %d bytes)",
				i, part.Width, part.Height, len(part.Image), len(whole.Image))
		}
	}
}
