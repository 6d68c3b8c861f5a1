package augment

import (
	"fmt"

	"github.com/framelake/framelake/internal/vips"
)

// planar reports whether steps can run on img's YCbCr planes (vips.YCC)
// rather than its pixels, and how many rows of them they read: a 4:2:0 JPEG
// in, a JPEG out, only flips, right-angle turns, crops and blurs, and every
// size and crop offset even, so that each chroma sample stays over its 2 x 2
// luma pixels (crops of an even image are even, see cropRect). Such a chain
// skips the codec's chroma upsampling, colour conversion and downsampling;
// the geometric augmentations of a dataset of camera JPEGs usually are one.
func planar(img []byte, steps []Step, opt Options) (rows int, ok bool) {
	if outputFormat(opt.Format, "jpeg", 3) != "jpeg" {
		return 0, false
	}
	W, H, ok := vips.YCC420(img)
	if !ok || W%2 != 0 || H%2 != 0 || W*H > MaxPixels {
		return 0, false
	}
	w, h, blurred := W, H, 0
	for _, st := range steps {
		switch st.Type {
		case FlipImage:
		case NinetyRotation:
			if quarters[st.Property] != 2 {
				w, h = h, w
			}
		case ImageBlur:
			blurred++
		case Crop:
			r := cropRect(w, h, st.Value, st.X, st.Y)
			if (r.W != w || r.H != h) && (r.X%2 != 0 || r.Y%2 != 0 || r.W%2 != 0 || r.H%2 != 0) {
				return 0, false
			}
			w, h = r.W, r.H
		default:
			return 0, false
		}
	}
	// The chroma of a blur reaches up to two luma rows past the luma's.
	r := needed(steps, W, H)
	return min(H, r.Y+r.H+2*blurred+2), true
}

// runYCC is run on planes; the first decoded steps the decoder did (a
// horizontal flip), so only their boxes move.
func runYCC(y *vips.YCC, boxes []Box, steps []Step, decoded int, opt Options) (Output, error) {
	c, err := newChain(boxes, y.Width(), y.Height(), opt)
	if err != nil {
		y.Close()
		return Output{}, err
	}
	defer func() {
		if y != nil {
			y.Close()
		}
	}()
	for i, st := range steps {
		w, h := y.Width(), y.Height()
		var err error
		switch {
		case st.Type == FlipImage:
			vertical := st.Property == FlipVertical
			moveFlip(c.boxes, vertical, w, h)
			if i >= decoded {
				y, err = y.Flip(vertical)
			}
		case st.Type == NinetyRotation:
			q := quarters[st.Property]
			moveTurn(c.boxes, q, w, h)
			y, err = y.Rot(q)
		case st.Type == Crop:
			if r := cropRect(w, h, st.Value, st.X, st.Y); r.W != w || r.H != h {
				c.cropBoxes(r)
				y, err = y.Crop(r.X, r.Y, r.W, r.H)
			}
		case st.Type == ImageBlur && blurs(st.Value):
			y, err = y.Blur(st.Value)
		}
		if err != nil {
			return Output{}, fmt.Errorf("augment: step %d %s.%s: %w", i, st.Type, st.Property, err)
		}
	}
	img, err := y.AppendEncode(opt.Buffer[:0], quality(opt))
	if err != nil {
		return Output{}, fmt.Errorf("augment: %w", err)
	}
	return c.output(string(vips.JPEG), y.Width(), y.Height(), steps, img), nil
}
