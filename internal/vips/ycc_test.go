package vips

import (
	"bytes"
	"errors"
	"image"
	"image/jpeg"
	"math"
	"testing"
)

// meanDiff is the mean absolute difference of two decoded JPEGs' channels.
func meanDiff(t *testing.T, a, b []byte) float64 {
	t.Helper()
	ia, err := jpeg.Decode(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	ib, err := jpeg.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if ia.Bounds() != ib.Bounds() {
		t.Fatalf("sizes %v and %v", ia.Bounds(), ib.Bounds())
	}
	var sum float64
	r := ia.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			r1, g1, b1, _ := ia.At(x, y).RGBA()
			r2, g2, b2, _ := ib.At(x, y).RGBA()
			for _, d := range []float64{float64(r1) - float64(r2), float64(g1) - float64(g2), float64(b1) - float64(b2)} {
				sum += math.Abs(d) / 257
			}
		}
	}
	return sum / float64(3*r.Dx()*r.Dy())
}

// Planes go back into a JPEG as they came out, sizes that are not whole
// blocks included: the result looks like the source (one more round of
// quantisation) and keeps its size.
func TestYCCRoundTrip(t *testing.T) {
	for _, size := range [][2]int{{64, 48}, {98, 70}, {130, 34}} {
		src := testJPEG(t, size[0], size[1])
		w, h, ok := YCC420(src)
		if !ok || w != size[0] || h != size[1] {
			t.Fatalf("YCC420 = %d, %d, %v for a %v JPEG", w, h, ok, size)
		}
		y, err := DecodeYCC(src, h, false)
		if err != nil {
			t.Fatal(err)
		}
		out, err := y.Encode(95)
		y.Close()
		if err != nil {
			t.Fatal(err)
		}
		if d := meanDiff(t, src, out); d > 1.5 {
			t.Errorf("%v: re-encoded planes differ from the source by %.2f on average", size, d)
		}
	}
}

// A window of rows decoded mirrored, then cropped, is the same as the whole
// image decoded, flipped and cropped: the planes agree byte for byte.
func TestYCCWindowAndMirror(t *testing.T) {
	src := testJPEG(t, 96, 80)
	crop := func(y *YCC, err error) []byte {
		t.Helper()
		if err == nil {
			y, err = y.Crop(10, 6, 40, 22)
		}
		if err == nil {
			y, err = y.Blur(1.5)
		}
		if err == nil {
			y, err = y.Crop(4, 4, 30, 12)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer y.Close()
		out, err := y.Encode(90)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	whole, err := DecodeYCC(src, 80, false)
	if err != nil {
		t.Fatal(err)
	}
	want := crop(whole.Flip(false))
	if got := crop(DecodeYCC(src, 40, true)); !bytes.Equal(got, want) {
		t.Error("40 rows decoded mirrored differ from the whole image flipped")
	}
}

// The planes' flip, crop and blur match the same steps on the decoded
// pixels, to within what 4:2:0 chroma and a second encode allow.
func TestYCCMatchesPixels(t *testing.T) {
	src := testJPEG(t, 120, 90)
	y, err := DecodeYCC(src, 90, false)
	if err == nil {
		y, err = y.Flip(true)
	}
	if err == nil {
		y, err = y.Blur(2)
	}
	if err == nil {
		y, err = y.Crop(20, 10, 80, 60)
	}
	if err != nil {
		t.Fatal(err)
	}
	planar, err := y.Encode(95)
	y.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := whole(t, src)
	r, err = r.Flip(true)
	if err == nil {
		r, err = r.Blur(2)
	}
	if err == nil {
		r, err = r.Crop(20, 10, 80, 60)
	}
	if err != nil {
		t.Fatal(err)
	}
	pixels, err := r.Encode(JPEG, 95)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if d := meanDiff(t, planar, pixels); d > 1.5 {
		t.Errorf("planes and pixels differ by %.2f on average", d)
	}
}

// Other JPEGs are not read as planes, and odd crops are refused.
func TestYCCRefuses(t *testing.T) {
	var gray bytes.Buffer
	if err := jpeg.Encode(&gray, image.NewGray(image.Rect(0, 0, 16, 16)), nil); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"gray JPEG": gray.Bytes(), "PNG": testPNG(t, 8, 8, false), "nothing": nil} {
		if _, _, ok := YCC420(data); ok {
			t.Errorf("%s: taken for YCbCr 4:2:0", name)
		}
		if _, err := DecodeYCC(data, 8, false); !errors.Is(err, ErrNotYCC420) {
			t.Errorf("%s: DecodeYCC error %v", name, err)
		}
	}
	y, err := DecodeYCC(testJPEG(t, 32, 32), 32, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := y.Crop(1, 2, 10, 10); err == nil {
		t.Error("a crop at an odd column was taken")
	}
}

// AppendEncode writes into the spare room of the buffer it is given when
// the JPEG fits (no new memory), past what the buffer holds, and into
// memory of its own when it does not fit: the bytes are Encode's each way.
func TestAppendEncode(t *testing.T) {
	src := testJPEG(t, 200, 120)
	r := whole(t, src)
	defer r.Close()
	y, err := DecodeYCC(src, 120, false)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	for name, enc := range map[string]func(dst []byte) ([]byte, error){
		"raster": func(dst []byte) ([]byte, error) { return r.AppendEncode(dst, JPEG, 90) },
		"planes": func(dst []byte) ([]byte, error) { return y.AppendEncode(dst, 90) },
	} {
		want, err := enc(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			prefix, room int
			inPlace      bool
		}{{0, 1 << 20, true}, {7, 1 << 20, true}, {0, 100, false}, {3, len(want) + 3, true}, {0, len(want) - 1, false}} {
			buf := make([]byte, c.prefix, c.prefix+c.room)
			for i := range buf {
				buf[i] = 'p'
			}
			got, err := enc(buf)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got[:c.prefix], buf) || !bytes.Equal(got[c.prefix:], want) {
				t.Errorf("%s %+v: appended bytes differ from Encode's", name, c)
			}
			if same := &got[0] == &buf[:1][0]; same != c.inPlace {
				t.Errorf("%s %+v: written in the given buffer %v, want %v", name, c, same, c.inPlace)
			}
		}
	}
}

// A JPEG whose end is damaged is refused as planes as it is as pixels,
// heights that are not whole strips of 16 included (the raw decoder moves
// past the last row).
func TestYCCDamagedEnd(t *testing.T) {
	for _, h := range []int{40, 48, 1080} {
		src := testJPEG(t, 64, h)
		bad := append(append([]byte{}, src[:len(src)-2]...), 0xff, 0xd8) // a second start where the end was
		if _, _, err := DecodeRaster(bad, all); err == nil {
			t.Fatalf("height %d: the pixel decoder took the damaged JPEG", h)
		}
		if y, err := DecodeYCC(bad, h, false); err == nil {
			y.Close()
			t.Errorf("height %d: the planes of a damaged JPEG decoded", h)
		}
	}
}
