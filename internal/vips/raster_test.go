package vips

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// testPNG is a lossless w x h image whose pixel (x, y) is (x, y, x+y) mod 256.
func testPNG(t testing.TB, w, h int, alpha bool) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			a := uint8(255)
			if alpha {
				a = uint8(x * 255 / w)
			}
			img.SetNRGBA(x, y, color.NRGBA{uint8(x), uint8(y), uint8(x + y), a})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// all is the window of the whole image.
func all(w, h int) (Window, error) { return Window{Rect: Rect{W: w, H: h}}, nil }

// whole decodes all of data.
func whole(t *testing.T, data []byte) *Raster {
	t.Helper()
	r, _, err := DecodeRaster(data, all)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// reader returns a function that reads the result of an operation back
// through a lossless PNG, closing it.
func reader(t *testing.T) func(*Raster, error) *image.NRGBA {
	return func(r *Raster, err error) *image.NRGBA { t.Helper(); return pixels(t, r, err) }
}

func pixels(t *testing.T, r *Raster, err error) *image.NRGBA {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out, err := r.Encode(PNG, 0)
	if err != nil {
		t.Fatal(err)
	}
	g, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	n := image.NewNRGBA(g.Bounds())
	draw.Draw(n, n.Bounds(), g, g.Bounds().Min, draw.Src)
	return n
}

func maxDiff(a, b *image.NRGBA) int {
	if a.Bounds() != b.Bounds() {
		return 1 << 30
	}
	d := 0
	for i := range a.Pix {
		d = max(d, abs(int(a.Pix[i])-int(b.Pix[i])))
	}
	return d
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func TestDecodeNormalises(t *testing.T) {
	var g, gj bytes.Buffer
	png.Encode(&g, image.NewGray16(image.Rect(0, 0, 5, 4)))
	jpeg.Encode(&gj, image.NewGray(image.Rect(0, 0, 9, 7)), nil)
	for _, c := range []struct {
		name, format string
		data         []byte
		bands        int
	}{
		{"rgb png", "png", testPNG(t, 6, 5, false), 3},
		{"rgba png", "png", testPNG(t, 6, 5, true), 4},
		{"gray16 png", "png", g.Bytes(), 3},
		{"jpeg", "jpeg", testJPEG(t, 8, 8), 3},
		{"gray jpeg", "jpeg", gj.Bytes(), 3},
	} {
		r, format, err := DecodeRaster(c.data, all)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r.Bands() != c.bands || format != c.format {
			t.Errorf("%s: %d bands of %s, want %d of %s", c.name, r.Bands(), format, c.bands, c.format)
		}
		r.Close()
	}
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>`)
	if _, _, err := DecodeRaster(svg, all); err == nil {
		t.Error("svg decoded; untrusted loaders must be blocked")
	}
	j := testJPEG(t, 64, 48)
	for name, bad := range map[string][]byte{"truncated": j[:len(j)/2], "header only": j[:200], "empty": nil} {
		if _, _, err := DecodeRaster(bad, all); !errors.Is(err, ErrDecode) {
			t.Errorf("%s jpeg: %v, want ErrDecode", name, err)
		}
	}
	limit := errors.New("too big")
	if _, _, err := DecodeRaster(j, func(w, h int) (Window, error) { return Window{}, limit }); err != limit {
		t.Errorf("window error: %v", err)
	}
}

// Identity-like operations must give back the pixels unchanged, which pins
// down the rounding of Recomb, the pixel-edge convention of Affine and the
// table of MapLUT.
func TestOperationsExact(t *testing.T) {
	px := reader(t)
	src := whole(t, testPNG(t, 40, 30, true))
	defer src.Close()
	want := px(src.Share(), nil)
	check := func(name string, got *image.NRGBA) {
		t.Helper()
		if d := maxDiff(got, want); d != 0 {
			t.Errorf("%s differs by %d", name, d)
		}
	}
	check("identity recomb", px(src.Share().Recomb([9]float64{1, 0, 0, 0, 1, 0, 0, 0, 1})))
	var lut [256]byte
	for v := range lut {
		lut[v] = byte(v)
	}
	check("identity maplut", px(src.Share().MapLUT(&lut)))
	check("zero hue shift", px(src.Share().HueShift(0)))
	check("zero noise", px(src.Share().Noise(1, 0)))
	check("blur of nothing", px(src.Share().Blur(0.01)))
	// A half turn about the centre through Affine is exactly Rot(2).
	rot := px(src.Share().Rot(2))
	if d := maxDiff(px(src.Share().Affine(-1, 0, 0, -1, 20, 15, 20, 15, 40, 30)), rot); d != 0 {
		t.Errorf("affine half turn differs from rot by %d", d)
	}
	turned, err := src.Share().Rot(1)
	if err == nil {
		turned, err = turned.Rot(3)
	}
	check("quarter turn and back", px(turned, err))
	for _, vertical := range []bool{false, true} {
		f, err := src.Share().Flip(vertical)
		if err == nil {
			f, err = f.Flip(vertical) // in place: nobody else holds f
		}
		check(fmt.Sprintf("double flip (vertical %v)", vertical), px(f, err))
	}
	ex := px(src.Share().Crop(3, 4, 10, 5))
	if ex.Bounds().Dx() != 10 || ex.Bounds().Dy() != 5 || ex.NRGBAAt(0, 0) != want.NRGBAAt(3, 4) {
		t.Errorf("crop: %v, first pixel %v want %v", ex.Bounds(), ex.NRGBAAt(0, 0), want.NRGBAAt(3, 4))
	}
	check("source after all of them", px(src.Share(), nil))
}

// A window of a JPEG decodes to the same pixels as that part of the whole,
// and blur and noise on a window agree with the whole image inside it (blur
// away from the window's inner edges).
func TestWindows(t *testing.T) {
	px := reader(t)
	data := testJPEG(t, 301, 203)
	full := px(whole(t, data), nil)
	for _, win := range []Rect{{0, 0, 301, 203}, {17, 33, 100, 100}, {1, 1, 299, 201}, {280, 190, 21, 13}, {64, 64, 64, 64}} {
		r, _, err := DecodeRaster(data, func(w, h int) (Window, error) { return Window{Rect: win}, nil })
		if err != nil {
			t.Fatal(err)
		}
		if r.Window() != win {
			t.Fatalf("window %+v decoded as %+v", win, r.Window())
		}
		got := px(r.Crop(win.X, win.Y, win.W, win.H))
		part := image.NewNRGBA(image.Rect(0, 0, win.W, win.H))
		draw.Draw(part, part.Bounds(), full, image.Pt(win.X, win.Y), draw.Src)
		if d := maxDiff(got, part); d != 0 {
			t.Errorf("window %+v differs from the whole decode by %d", win, d)
		}
	}
	win, d := Rect{40, 30, 120, 90}, BlurRadius(2)
	inner := Rect{win.X + d, win.Y + d, win.W - 2*d, win.H - 2*d}
	cut := func(r *Raster, err error) *image.NRGBA {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return px(r.Crop(inner.X, inner.Y, inner.W, inner.H))
	}
	part := func() *Raster {
		r, _, err := DecodeRaster(data, func(w, h int) (Window, error) { return Window{Rect: win}, nil })
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if d := maxDiff(cut(part().Blur(2)), cut(whole(t, data).Blur(2))); d != 0 {
		t.Errorf("blur of a window differs by %d inside its margin", d)
	}
	if d := maxDiff(cut(part().Noise(5, 0.3)), cut(whole(t, data).Noise(5, 0.3))); d != 0 {
		t.Errorf("noise of a window differs by %d", d)
	}
	if _, err := part().Encode(JPEG, 90); err == nil {
		t.Error("encoded a window that is not the whole image")
	}
	if _, err := part().Rot(1); err == nil {
		t.Error("turned a window that is not the whole image")
	}
}

// A mirrored decode is the decode and then Flip(false), for JPEG windows
// (mirrored by the decoder) and for other formats (flipped after).
func TestMirroredDecode(t *testing.T) {
	eachISA(t, func(t *testing.T) {
		px := reader(t)
		for _, data := range [][]byte{testJPEG(t, 301, 203), testPNG(t, 301, 203, true)} {
			for _, win := range []Rect{{0, 0, 301, 203}, {17, 33, 100, 100}, {280, 190, 21, 13}} {
				decode := func(mirror bool) *Raster {
					r, _, err := DecodeRaster(data, func(w, h int) (Window, error) { return Window{win, mirror}, nil })
					if err != nil {
						t.Fatal(err)
					}
					return r
				}
				flipped, err := decode(false).Flip(false)
				if err != nil {
					t.Fatal(err)
				}
				mirrored := decode(true)
				if mirrored.Window() != flipped.Window() {
					t.Fatalf("window %+v: mirrored decode holds %+v, flip %+v", win, mirrored.Window(), flipped.Window())
				}
				w := flipped.Window()
				if d := maxDiff(px(mirrored.Crop(w.X, w.Y, w.W, w.H)), px(flipped.Crop(w.X, w.Y, w.W, w.H))); d != 0 {
					t.Errorf("window %+v: mirrored decode differs from decode and flip by %d", win, d)
				}
			}
		}
	})
}

func TestHueAndNoise(t *testing.T) {
	px := reader(t)
	img := image.NewNRGBA(image.Rect(0, 0, 200, 100))
	for i := 0; i < len(img.Pix); i += 4 {
		copy(img.Pix[i:], []byte{200, 40, 40, 255}) // hue 0, chroma 160
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	src := whole(t, b.Bytes())
	defer src.Close()
	for _, c := range []struct {
		deg  float64
		want [3]byte
	}{{120, [3]byte{40, 200, 40}}, {-120, [3]byte{40, 40, 200}}, {30, [3]byte{200, 120, 40}}, {360, [3]byte{200, 40, 40}}} {
		got := px(src.Share().HueShift(c.deg)).Pix[:3]
		if [3]byte(got) != c.want {
			t.Errorf("hue %+v: got %v, want %v", c.deg, got, c.want)
		}
	}
	a, bb := px(src.Share().Noise(7, 0.25)), px(src.Share().Noise(7, 0.25))
	if maxDiff(a, bb) != 0 {
		t.Error("noise with one seed differs between runs")
	}
	changed := 0
	for i := 0; i < len(a.Pix); i += 4 {
		if [3]byte(a.Pix[i:i+3]) != [3]byte{200, 40, 40} {
			changed++
		}
	}
	if f := float64(changed) / 20000; f < 0.23 || f > 0.27 {
		t.Errorf("noise changed %.3f of pixels, want 0.25", f)
	}
}

func TestConcurrentChains(t *testing.T) {
	data := testPNG(t, 64, 48, false)
	want := ""
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			r, _, err := DecodeRaster(data, all)
			if err == nil {
				r, err = r.Blur(1.5)
			}
			if err == nil {
				r, err = r.Noise(3, 0.1)
			}
			var out []byte
			if err == nil {
				out, err = r.Encode(JPEG, 80)
				r.Close()
			}
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if want == "" {
				want = string(out)
			} else if want != string(out) {
				t.Error("concurrent chains gave different bytes")
			}
		})
	}
	wg.Wait()
}

// randomPNG is a w x h image of uniformly random colours (and alpha).
func randomPNG(t *testing.T, w, h int, alpha bool) (*image.NRGBA, []byte) {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(uint64(w), uint64(h)))
	for i := range img.Pix {
		img.Pix[i] = uint8(rng.IntN(256))
		if !alpha && i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return img, b.Bytes()
}

// hsvShift is the hue shift in floating point: each channel n (red 5,
// green 3, blue 1) is the value less the chroma times the hue's distance
// from that channel's sextants.
func hsvShift(p []uint8, degrees float64) [3]float64 {
	r, g, b := float64(p[0]), float64(p[1]), float64(p[2])
	mx, mn := max(r, g, b), min(r, g, b)
	c := mx - mn
	var h float64
	switch {
	case c == 0:
	case mx == r:
		h = (g - b) / c
	case mx == g:
		h = (b-r)/c + 2
	default:
		h = (r-g)/c + 4
	}
	h = math.Mod(h+degrees/60+12, 6)
	var out [3]float64
	for i, n := range []float64{5, 3, 1} {
		k := math.Mod(n+h, 6)
		out[i] = mx - c*max(0, min(k, 4-k, 1))
	}
	return out
}

// refHue is fl_hue's integer arithmetic written out plainly: the hue in
// 1/16 levels of the pixel's chroma, the shift in whole sextants and
// 1/65536 of one.
func refHue(p []uint8, degrees float64) [3]uint8 {
	s := math.Mod(degrees/60, 6)
	if s < 0 {
		s += 6
	}
	shift := int(math.Round(s*65536)) % (6 << 16)
	whole, frac := shift>>16, shift&0xffff
	r, g, b := int(p[0]), int(p[1]), int(p[2])
	mx, c := max(r, g, b), max(r, g, b)-min(r, g, b)
	var H int
	switch mx {
	case r:
		H = g - b
	case g:
		H = b - r + 2*c
	default:
		H = r - g + 4*c
	}
	if H < 0 {
		H += 6 * c
	}
	if H += whole * c; H >= 6*c {
		H -= 6 * c
	}
	C := c << 4
	P := H<<4 + frac*C>>16
	if P >= 6*C {
		P -= 6 * C
	}
	var out [3]uint8
	for i, o := range []int{5, 3, 1} {
		t := P - (6-o)*C
		if t < 0 {
			t += 6 * C
		}
		out[i] = uint8(mx - (max(0, min(C, t, 4*C-t))+8)>>4)
	}
	return out
}

// pointCase is a point operation, its floating-point meaning and, where the
// arithmetic is pinned, its exact bytes.
type pointCase struct {
	name  string
	op    func(*Raster) (*Raster, error)
	want  func(p []uint8) [3]float64
	exact func(p []uint8) [3]uint8
}

func hueCase(deg float64) pointCase {
	return pointCase{fmt.Sprintf("hue %g", deg), func(r *Raster) (*Raster, error) { return r.HueShift(deg) },
		func(p []uint8) [3]float64 { return hsvShift(p, deg) }, func(p []uint8) [3]uint8 { return refHue(p, deg) }}
}

// The vectorised point operations agree with floating point within a unit,
// on RGB and RGBA, odd widths (vector tails) and in place (the source not
// shared) as well as into a new raster.
func TestPointOpsMatchFloat(t *testing.T) {
	eachISA(t, func(t *testing.T) {
		px := reader(t)
		gray := [9]float64{0.65, 0.41, 0.04, 0.2, 0.75, 0.05, 0.2, 0.41, 0.39}
		for _, alpha := range []bool{false, true} {
			img, data := randomPNG(t, 37, 11, alpha)
			for _, c := range []pointCase{
				hueCase(-50), hueCase(17.5), hueCase(30), hueCase(200),
				{"recomb", func(r *Raster) (*Raster, error) { return r.Recomb(gray) }, func(p []uint8) (o [3]float64) {
					for i := range 3 {
						v := gray[3*i]*float64(p[0]) + gray[3*i+1]*float64(p[1]) + gray[3*i+2]*float64(p[2])
						o[i] = max(0, min(255, v))
					}
					return o
				}, func(p []uint8) (o [3]uint8) {
					for i := range 3 {
						v := 2048
						for j := range 3 {
							v += int(math.Round(gray[3*i+j]*4096)) * int(p[j])
						}
						o[i] = uint8(max(0, min(255, v>>12)))
					}
					return o
				}},
			} {
				src := whole(t, data)
				copied := px(c.op(src.Share()))
				inPlace := px(c.op(src)) // src's last holder: the kernel writes over it
				if d := maxDiff(copied, inPlace); d != 0 {
					t.Errorf("%s (alpha %v): in place differs from a copy by %d", c.name, alpha, d)
				}
				for i := 0; i < len(img.Pix); i += 4 {
					want, got := c.want(img.Pix[i:i+3]), copied.Pix[i:i+4]
					if c.exact != nil && c.exact(img.Pix[i:i+3]) != [3]uint8(got[:3]) {
						t.Fatalf("%s (alpha %v): pixel %v gave %v, want exactly %v", c.name, alpha, img.Pix[i:i+4], got, c.exact(img.Pix[i:i+3]))
					}
					for k := range 3 {
						if math.Abs(want[k]-float64(got[k])) > 1 {
							t.Fatalf("%s (alpha %v): pixel %v gave %v, want %.2f", c.name, alpha, img.Pix[i:i+4], got, want)
						}
					}
					if got[3] != img.Pix[i+3] {
						t.Fatalf("%s: alpha %d became %d", c.name, img.Pix[i+3], got[3])
					}
				}
			}
		}
	})
}

// Horizontal flips trade blocks of pixels between the row's ends in
// registers and finish pixel by pixel in the middle: every width, odd and
// even, below and above a block or two, in place and into a new raster.
func TestFlipWidths(t *testing.T) {
	eachISA(t, func(t *testing.T) {
		px := reader(t)
		for _, alpha := range []bool{false, true} {
			for _, w := range []int{1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 100} {
				img, data := randomPNG(t, w, 3, alpha)
				want := image.NewNRGBA(img.Bounds())
				for y := range 3 {
					for x := range w {
						want.SetNRGBA(w-1-x, y, img.NRGBAAt(x, y))
					}
				}
				src := whole(t, data)
				copied := px(src.Share().Flip(false))
				inPlace := px(src.Flip(false))
				if d := maxDiff(copied, want); d != 0 {
					t.Errorf("width %d (alpha %v): flip into a new raster is off by %d", w, alpha, d)
				}
				if d := maxDiff(inPlace, want); d != 0 {
					t.Errorf("width %d (alpha %v): flip in place is off by %d", w, alpha, d)
				}
			}
		}
	})
}

// Noise at quality 100 outgrows the encoder's first buffer: the JPEG still
// comes out whole.
func TestEncodeOutgrowsFirstBuffer(t *testing.T) {
	_, data := randomPNG(t, 300, 200, false)
	src := whole(t, data)
	defer src.Close()
	out, err := src.Encode(JPEG, 100)
	if err != nil {
		t.Fatal(err)
	}
	if first := 300*200/2 + 65536; len(out) <= first {
		t.Fatalf("JPEG of %d bytes did not outgrow the first buffer of %d", len(out), first)
	}
	img, err := jpeg.Decode(bytes.NewReader(out))
	if err != nil || img.Bounds().Dx() != 300 || img.Bounds().Dy() != 200 {
		t.Fatalf("encoded JPEG does not read back: %v", err)
	}
}

// refAffine is fl_affine's arithmetic written out plainly: positions in
// 16.16 stepping from each row's first pixel, 1/64-pixel fractions, the
// 2 x 2 neighbourhood zero outside the image, vertical then horizontal mix.
func refAffine(src *image.NRGBA, inv [4]float64, ix, iy, ox, oy float64, bands int) *image.NRGBA {
	w, h := src.Bounds().Dx(), src.Bounds().Dy()
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	du, dv := int64(math.Round(inv[0]*65536)), int64(math.Round(inv[2]*65536))
	at := func(x, y, k int) int {
		if x < 0 || y < 0 || x >= w || y >= h {
			return 0
		}
		return int(src.Pix[y*src.Stride+x*4+k])
	}
	for y := range h {
		X, Y := 0.5-ox, float64(y)+0.5-oy
		u0 := int64(math.Round((inv[0]*X + inv[1]*Y + ix - 0.5) * 65536))
		v0 := int64(math.Round((inv[2]*X + inv[3]*Y + iy - 0.5) * 65536))
		for x := range w {
			u, v := u0+int64(x)*du, v0+int64(x)*dv
			x0, y0 := int(u>>16), int(v>>16)
			fx, fy := int(u>>10)&63, int(v>>10)&63
			for k := range bands {
				l := at(x0, y0, k)*(64-fy) + at(x0, y0+1, k)*fy
				r := at(x0+1, y0, k)*(64-fy) + at(x0+1, y0+1, k)*fy
				out.Pix[y*out.Stride+x*4+k] = uint8((l*(64-fx) + r*fx + 2048) >> 12)
			}
			if bands == 3 {
				out.Pix[y*out.Stride+x*4+3] = 255
			}
		}
	}
	return out
}

// Rotations and shears, RGB and RGBA, match the plain arithmetic bit for
// bit: the fast path (no checks inside the image, registers) and the edges
// and the fill agree with it everywhere.
func TestAffineMatchesReference(t *testing.T) {
	eachISA(t, func(t *testing.T) {
		px := reader(t)
		for _, alpha := range []bool{false, true} {
			img, data := randomPNG(t, 150, 97, alpha)
			bands := 3
			if alpha {
				bands = 4
			}
			for _, c := range []struct {
				name       string
				a, b, c, d float64
			}{
				{"rotate 17", math.Cos(0.2967), math.Sin(0.2967), -math.Sin(0.2967), math.Cos(0.2967)},
				{"rotate -100", math.Cos(-1.745), math.Sin(-1.745), -math.Sin(-1.745), math.Cos(-1.745)},
				{"shear x", 1, 0.4, 0, 1},
				{"shear y", 1, 0, -0.7, 1},
				{"zoom out", 0.5, 0, 0, 0.5},
			} {
				det := c.a*c.d - c.b*c.c
				inv := [4]float64{c.d / det, -c.b / det, -c.c / det, c.a / det}
				got := px(whole(t, data).Affine(c.a, c.b, c.c, c.d, 75, 48.5, 75, 48.5, 150, 97))
				if d := maxDiff(got, refAffine(img, inv, 75, 48.5, 75, 48.5, bands)); d != 0 {
					t.Errorf("%s (alpha %v): differs from the reference by %d", c.name, alpha, d)
				}
			}
		}
	})
}

// Noise changes the asked fraction of pixels, for fractions whose gaps
// between noisy pixels are mostly short (found by thresholds) and mostly
// long (found by a logarithm).
func TestNoiseFractions(t *testing.T) {
	px := reader(t)
	img := image.NewNRGBA(image.Rect(0, 0, 1000, 200))
	for i := range img.Pix {
		img.Pix[i] = 128
		if i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	src := whole(t, b.Bytes())
	defer src.Close()
	for _, f := range []float64{0.002, 0.05, 0.5, 0.97} {
		got := px(src.Share().Noise(11, f))
		changed := 0
		for i := 0; i < len(got.Pix); i += 4 {
			if [3]byte(got.Pix[i:i+3]) != [3]byte{128, 128, 128} {
				changed++
			}
		}
		n := float64(len(got.Pix) / 4)
		sd := math.Sqrt(n * f * (1 - f))
		if d := math.Abs(float64(changed) - n*f); d > 5*sd+1 {
			t.Errorf("noise %g changed %d of %.0f pixels, want %.0f ± %.0f", f, changed, n, n*f, 5*sd)
		}
	}
}

// Right-angle turns move every pixel where it belongs, across tiles, for
// RGB (moved 4 bytes at a time) and RGBA.
func TestRotMatchesReference(t *testing.T) {
	px := reader(t)
	for _, alpha := range []bool{false, true} {
		img, data := randomPNG(t, 70, 45, alpha)
		for q := 1; q <= 3; q++ {
			got := px(whole(t, data).Rot(q))
			for y := range 45 {
				for x := range 70 {
					var X, Y int // where (x, y) lands, turned q quarters clockwise
					switch q {
					case 1:
						X, Y = 44-y, x
					case 2:
						X, Y = 69-x, 44-y
					case 3:
						X, Y = y, 69-x
					}
					if got.NRGBAAt(X, Y) != img.NRGBAAt(x, y) {
						t.Fatalf("quarter %d (alpha %v): (%d, %d) landed as %v, want %v", q, alpha, x, y, got.NRGBAAt(X, Y), img.NRGBAAt(x, y))
					}
				}
			}
		}
	}
}

// Windows one or two pixels wide, anywhere in a row, decode to the whole
// decode's pixels: libjpeg-turbo would upsample their chroma differently.
func TestNarrowWindows(t *testing.T) {
	px := reader(t)
	for _, w := range []int{64, 34} {
		img, _ := randomPNG(t, w, 8, false)
		var b bytes.Buffer
		if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
			t.Fatal(err)
		}
		full := px(whole(t, b.Bytes()), nil)
		for x := range w {
			for _, ww := range []int{1, 2} {
				win := Rect{x, 3, min(ww, w-x), 1}
				r, _, err := DecodeRaster(b.Bytes(), func(int, int) (Window, error) { return Window{Rect: win}, nil })
				if err != nil {
					t.Fatal(err)
				}
				got := px(r.Crop(win.X, win.Y, win.W, win.H))
				part := image.NewNRGBA(image.Rect(0, 0, win.W, win.H))
				draw.Draw(part, part.Bounds(), full, image.Pt(win.X, win.Y), draw.Src)
				if d := maxDiff(got, part); d != 0 {
					t.Fatalf("%d-wide image, window %+v differs from the whole decode by %d", w, win, d)
				}
			}
		}
	}
}

// A nearly singular map, whose inverse would overflow the fixed-point
// positions, is an error, not a crash; so are tiny noise fractions quiet.
func TestDegenerateInputs(t *testing.T) {
	px := reader(t)
	_, data := randomPNG(t, 80, 80, false)
	if _, err := whole(t, data).Affine(1, 1e3, -2e-12, -3e-14, 40, 40, 40, 40, 80, 80); err == nil {
		t.Error("a nearly singular affine map was accepted")
	}
	src := whole(t, data)
	defer src.Close()
	if d := maxDiff(px(src.Share().Noise(3, 1e-30)), px(src.Share(), nil)); d != 0 {
		t.Errorf("noise of fraction 1e-30 changed pixels (by %d)", d)
	}
}
