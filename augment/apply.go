package augment

import (
	"context"
	"fmt"
	"math"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/vips"
)

// Apply validates cfg, draws output 0's steps for the image opt.Key from seed
// and applies them to img and its boxes.
func Apply(ctx context.Context, img []byte, boxes []Box, cfg *Config, seed uint64, opt Options) (Output, error) {
	if err := cfg.Validate(); err != nil {
		return Output{}, err
	}
	return ApplySteps(ctx, img, boxes, cfg.Sample(seed, opt.Key, 0), opt)
}

// ApplyN makes n outputs of img, output i applying cfg.Sample(seed, opt.Key,
// i). The image is decoded once for all of them.
func ApplyN(ctx context.Context, img []byte, boxes []Box, cfg *Config, seed uint64, n int, opt Options) ([]Output, error) {
	if n < 0 {
		return nil, errs.Invalid("n", "output count %d is negative", n)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := opt.check(); err != nil {
		return nil, err
	}
	if err := checkBoxes(boxes); err != nil {
		return nil, err
	}
	src, format, err := decode(ctx, img, false)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	outs := make([]Output, 0, n)
	for i := range n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		o, err := run(src, format, boxes, cfg.Sample(seed, opt.Key, i), opt)
		if err != nil {
			return nil, err
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// ApplySteps applies explicit steps (as recorded in an Output, or written by
// hand) to img and its boxes: one decode, the steps in order, one encode.
func ApplySteps(ctx context.Context, img []byte, boxes []Box, steps []Step, opt Options) (Output, error) {
	for i, st := range steps {
		if err := checkStep(i, st); err != nil {
			return Output{}, err
		}
	}
	if err := opt.check(); err != nil {
		return Output{}, err
	}
	if err := checkBoxes(boxes); err != nil {
		return Output{}, err
	}
	src, format, err := decode(ctx, img, streamable(steps))
	if err != nil {
		return Output{}, err
	}
	defer src.Close()
	return run(src, format, boxes, steps, opt)
}

func (o Options) check() error {
	switch o.Format {
	case "", string(vips.JPEG), string(vips.PNG), string(vips.WebP):
	default:
		return errs.Invalid("format", "output format %q not supported; use jpeg, png or webp", o.Format)
	}
	if o.Quality < 0 || o.Quality > 100 {
		return errs.Invalid("quality", "quality %d not in 1..100", o.Quality)
	}
	if o.MinVisible < 0 || o.MinVisible > 1 {
		return errs.Invalid("min_visible", "minimum visible fraction %g not in 0..1", o.MinVisible)
	}
	return nil
}

func decode(ctx context.Context, img []byte, sequential bool) (*vips.Image, string, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	src, format, err := vips.Decode(img, sequential)
	if err != nil {
		return nil, "", errs.Wrap(errs.UnsupportedMedia, err, "augment: read image")
	}
	if w, h := src.Width(), src.Height(); w*h > MaxPixels {
		src.Close()
		return nil, "", errs.New(errs.TooLarge, "image", "augment: image of %dx%d pixels is above the limit of %d", w, h, MaxPixels)
	}
	return src, format, nil
}

// checkBoxes rejects boxes no transform can make sense of.
func checkBoxes(boxes []Box) error {
	for i, b := range boxes {
		for _, v := range []float64{b.X, b.Y, b.W, b.H} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return errs.Invalid("boxes", "box %d: coordinates must be finite", i)
			}
		}
		if b.W < 0 || b.H < 0 {
			return errs.Invalid("boxes", "box %d: negative size %gx%g", i, b.W, b.H)
		}
	}
	return nil
}

// streamable reports whether the decoder can stream pixels top to bottom
// instead of holding the whole decoded image: right-angle turns and vertical
// flips read the source out of order, while rotation and shear copy their
// input to memory themselves (streaming saves a second copy) and everything
// after them reads from that copy.
func streamable(steps []Step) bool {
	for _, st := range steps {
		switch {
		case (st.Type == ImageRotation || st.Type == Shear) && !identityAffine(st):
			return true
		case st.Type == NinetyRotation, st.Type == FlipImage && st.Property == FlipVertical:
			return false
		}
	}
	return true
}

// chain is one output in the making: the image so far, its size, its boxes.
type chain struct {
	im         *vips.Image
	w, h       int
	boxes      []tracked
	minVisible float64
}

// next moves the chain on to im, releasing the previous stage (libvips keeps
// what later stages still need).
func (c *chain) next(im *vips.Image, err error) error {
	if err != nil {
		return err
	}
	c.im.Close()
	c.im = im
	return nil
}

func run(src *vips.Image, format string, boxes []Box, steps []Step, opt Options) (Output, error) {
	c := &chain{w: src.Width(), h: src.Height(), minVisible: opt.MinVisible}
	if c.minVisible == 0 {
		c.minVisible = DefaultMinVisible
	}
	// The chain's first stage is a second reference to src, so closing stages
	// never closes the caller's image.
	first, err := src.Extract(0, 0, c.w, c.h)
	if err != nil {
		return Output{}, err
	}
	c.im = first
	defer func() { c.im.Close() }()
	for _, b := range boxes {
		c.boxes = append(c.boxes, tracked{box: b, visible: 1})
	}
	c.boxes = clip(c.boxes, c.w, c.h, c.minVisible)
	for i, st := range steps {
		if err := c.step(st); err != nil {
			return Output{}, fmt.Errorf("augment: step %d %s.%s: %w", i, st.Type, st.Property, err)
		}
	}
	out := Output{Format: outputFormat(opt.Format, format, c.im.Bands()), Width: c.w, Height: c.h,
		Boxes: make([]Box, len(c.boxes)), Steps: append([]Step{}, steps...)}
	for i, t := range c.boxes {
		out.Boxes[i] = t.box
	}
	q := opt.Quality
	if q == 0 {
		q = DefaultQuality
	}
	out.Image, err = c.im.Encode(vips.Format(out.Format), q)
	if err != nil {
		return Output{}, fmt.Errorf("augment: %w", err)
	}
	return out, nil
}

func outputFormat(want, input string, bands int) string {
	switch {
	case want != "":
		return want
	case input == "jpeg" || input == "png" || input == "webp":
		return input
	case bands == 4:
		return "png"
	}
	return "jpeg"
}

// step applies one step to the image and its boxes.
func (c *chain) step(st Step) error {
	v := st.Value
	switch st.Type {
	case FlipImage:
		vertical := st.Property == FlipVertical
		moveFlip(c.boxes, vertical, c.w, c.h)
		return c.next(c.im.Flip(vertical))
	case NinetyRotation:
		q := map[string]int{Clockwise: 1, UpsideDown: 2, CounterClockwise: 3}[st.Property]
		moveTurn(c.boxes, q, c.w, c.h)
		if q != 2 {
			c.w, c.h = c.h, c.w
		}
		return c.next(c.im.Rot(q))
	case ImageRotation:
		return c.affine(rotation(v, c.w, c.h), identityAffine(st))
	case Shear:
		return c.affine(shear(st.Property == ShearVertical, v, c.w, c.h), identityAffine(st))
	case Crop:
		return c.crop(v, st.X, st.Y)
	case ImageBlur:
		if v < 0.05 { // a narrower Gaussian changes no pixel
			return nil
		}
		return c.next(c.im.GaussBlur(v))
	case Grayscale:
		return c.grayMix(v / 100)
	case Saturation:
		return c.grayMix(-v / 100) // colourfulness 1+v/100 is gray weight -v/100
	case Brightness:
		return c.brightness(1 + v/100)
	case Hue:
		if v == 0 {
			return nil
		}
		return c.next(c.im.HueShift(v))
	case Noise:
		if v == 0 {
			return nil
		}
		return c.next(c.im.Noise(st.Seed, v/100))
	}
	return fmt.Errorf("unknown augmentation")
}

// identityAffine reports a rotation or shear that moves no pixel.
func identityAffine(st Step) bool {
	return st.Value == 0 || st.Type == ImageRotation && math.Abs(st.Value) == 360
}

func (c *chain) affine(m affine2, identity bool) error {
	if identity {
		return nil
	}
	moveAffine(c.boxes, m)
	c.boxes = clip(c.boxes, c.w, c.h, c.minVisible)
	return c.next(c.im.Affine(m.a, m.b, m.c, m.d, m.cx, m.cy, m.cx, m.cy, c.w, c.h))
}

// crop keeps a window of percent% of each side; x and y place it within the
// room left around it (0 left/top, 1 right/bottom).
func (c *chain) crop(percent, x, y float64) error {
	w := max(1, int(math.Round(float64(c.w)*percent/100)))
	h := max(1, int(math.Round(float64(c.h)*percent/100)))
	if w == c.w && h == c.h {
		return nil
	}
	left := int(math.Round(x * float64(c.w-w)))
	top := int(math.Round(y * float64(c.h-h)))
	moveShift(c.boxes, left, top)
	c.w, c.h = w, h
	c.boxes = clip(c.boxes, w, h, c.minVisible)
	return c.next(c.im.Extract(left, top, w, h))
}

// Rec. 601 luma weights, as Pillow's "L" mode and OpenCV's gray use.
var luma = [3]float64{0.299, 0.587, 0.114}

// grayMix moves each pixel towards its luma by k (1 is gray, 0 unchanged,
// negative k pushes colours away from gray). Alpha is kept.
func (c *chain) grayMix(k float64) error {
	if k == 0 {
		return nil
	}
	n := c.im.Bands()
	m := make([]float64, n*n)
	for i := range n {
		m[i*n+i] = 1
	}
	for i := range 3 {
		for j := range 3 {
			m[i*n+j] = (1-k)*b2f(i == j) + k*luma[j]
		}
	}
	return c.next(c.im.Recomb(m))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// brightness scales the colour bands by f, through a lookup table.
func (c *chain) brightness(f float64) error {
	if f == 1 {
		return nil
	}
	n := c.im.Bands()
	lut := make([]byte, 256*n)
	for v := range 256 {
		s := byte(min(255, math.Round(float64(v)*f)))
		for b := range n {
			lut[v*n+b] = s
		}
		if n == 4 {
			lut[v*n+3] = byte(v)
		}
	}
	return c.next(c.im.MapLUT(lut))
}
