package vips

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
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

func decodePNG(t *testing.T, im *Image) *image.NRGBA {
	t.Helper()
	out, err := im.Encode(PNG, 0)
	if err != nil {
		t.Fatal(err)
	}
	g, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	n := image.NewNRGBA(g.Bounds())
	for y := g.Bounds().Min.Y; y < g.Bounds().Max.Y; y++ {
		for x := g.Bounds().Min.X; x < g.Bounds().Max.X; x++ {
			n.Set(x, y, g.At(x, y))
		}
	}
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
	var g bytes.Buffer
	png.Encode(&g, image.NewGray16(image.Rect(0, 0, 5, 4)))
	for _, c := range []struct {
		name  string
		data  []byte
		bands int
	}{
		{"rgb png", testPNG(t, 6, 5, false), 3},
		{"rgba png", testPNG(t, 6, 5, true), 4},
		{"gray16 png", g.Bytes(), 3},
		{"jpeg", testJPEG(t, 8, 8), 3},
	} {
		im, _, err := Decode(c.data, false)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if im.Bands() != c.bands {
			t.Errorf("%s: bands %d, want %d", c.name, im.Bands(), c.bands)
		}
		im.Close()
	}
	if _, _, err := Decode([]byte(`<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>`), false); err == nil {
		t.Error("svg decoded; untrusted loaders must be blocked")
	}
}

// Identity-like operations must give back the pixels unchanged, which pins
// down the rounding of Recomb, the pixel-edge convention of Affine and the
// table layout of MapLUT.
func TestOperationsExact(t *testing.T) {
	src, _, err := Decode(testPNG(t, 40, 30, true), false)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	want := decodePNG(t, src)
	must := func(im *Image, err error) *Image {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return im
	}

	id := make([]float64, 16)
	for i := 0; i < 4; i++ {
		id[i*5] = 1
	}
	if d := maxDiff(decodePNG(t, must(src.Recomb(id))), want); d != 0 {
		t.Errorf("identity recomb differs by %d", d)
	}
	lut := make([]byte, 256*4)
	for v := range 256 {
		for b := range 4 {
			lut[v*4+b] = byte(v)
		}
	}
	if d := maxDiff(decodePNG(t, must(src.MapLUT(lut))), want); d != 0 {
		t.Errorf("identity maplut differs by %d", d)
	}
	if d := maxDiff(decodePNG(t, must(src.HueShift(0))), want); d != 0 {
		t.Errorf("zero hue shift differs by %d", d)
	}
	if d := maxDiff(decodePNG(t, must(src.Noise(1, 0))), want); d != 0 {
		t.Errorf("zero noise differs by %d", d)
	}
	// A half turn about the centre through Affine is exactly Rot(2) (without
	// alpha: libvips premultiplies alpha for interpolation, which rounds).
	rgb, _, err := Decode(testPNG(t, 40, 30, false), false)
	if err != nil {
		t.Fatal(err)
	}
	rot := decodePNG(t, must(rgb.Rot(2)))
	aff := must(rgb.Affine(-1, 0, 0, -1, 20, 15, 20, 15, 40, 30))
	if d := maxDiff(decodePNG(t, aff), rot); d != 0 {
		t.Errorf("affine half turn differs from rot by %d", d)
	}
	// Flipping twice is the identity.
	ff := must(must(src.Flip(false)).Flip(false))
	if d := maxDiff(decodePNG(t, ff), want); d != 0 {
		t.Errorf("double flip differs by %d", d)
	}
	ex := decodePNG(t, must(src.Extract(3, 4, 10, 5)))
	if ex.Bounds().Dx() != 10 || ex.Bounds().Dy() != 5 || ex.NRGBAAt(0, 0) != want.NRGBAAt(3, 4) {
		t.Errorf("extract: %v, first pixel %v want %v", ex.Bounds(), ex.NRGBAAt(0, 0), want.NRGBAAt(3, 4))
	}
}

func TestHueAndNoise(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 200, 100))
	for i := 0; i < len(img.Pix); i += 4 {
		copy(img.Pix[i:], []byte{200, 40, 40, 255}) // hue 0, chroma 160
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	src, _, err := Decode(b.Bytes(), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		deg  float64
		want [3]byte
	}{{120, [3]byte{40, 200, 40}}, {-120, [3]byte{40, 40, 200}}, {30, [3]byte{200, 120, 40}}, {360, [3]byte{200, 40, 40}}} {
		h, err := src.HueShift(c.deg)
		if err != nil {
			t.Fatal(err)
		}
		got := decodePNG(t, h).Pix[:3]
		if [3]byte(got) != c.want {
			t.Errorf("hue %+v: got %v, want %v", c.deg, got, c.want)
		}
	}
	n1, _ := src.Noise(7, 0.25)
	n2, _ := src.Noise(7, 0.25)
	a, bb := decodePNG(t, n1), decodePNG(t, n2)
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
			im, _, err := Decode(data, true)
			if err != nil {
				t.Error(err)
				return
			}
			defer im.Close()
			b, err := im.GaussBlur(1.5)
			if err == nil {
				b, err = b.Noise(3, 0.1)
			}
			var out []byte
			if err == nil {
				out, err = b.Encode(JPEG, 80)
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
