package augment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"

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
// i). The image is decoded once for all of them; each output has memory of
// its own (opt.Buffer is not used).
func ApplyN(ctx context.Context, img []byte, boxes []Box, cfg *Config, seed uint64, n int, opt Options) ([]Output, error) {
	opt.Buffer = nil
	outs := make([]Output, 0, max(n, 0))
	err := ApplyEach(ctx, img, boxes, cfg, seed, n, opt, func(_ int, o Output) error {
		outs = append(outs, o)
		return nil
	})
	return outs, err
}

// ApplyEach is ApplyN handing each output to fn as it is made, its image
// in opt.Buffer (grown as needed) and valid until fn returns: a caller that
// writes each output away, as a dataset build does, reuses one buffer for
// them all. An error from fn stops the outputs and is returned.
func ApplyEach(ctx context.Context, img []byte, boxes []Box, cfg *Config, seed uint64, n int, opt Options, fn func(i int, o Output) error) error {
	if n < 0 {
		return errs.Invalid("n", "output count %d is negative", n)
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := opt.check(); err != nil {
		return err
	}
	if err := checkBoxes(boxes); err != nil {
		return err
	}
	reuse := opt.Buffer != nil
	defer pin()()
	var d decoded
	defer d.close()
	for i := range n {
		if err := ctx.Err(); err != nil {
			return err
		}
		o, err := d.run(img, boxes, cfg.Sample(seed, opt.Key, i), opt)
		if err != nil {
			return err
		}
		if reuse && cap(o.Image) > cap(opt.Buffer) {
			opt.Buffer = o.Image[:0]
		}
		if err := fn(i, o); err != nil {
			return err
		}
	}
	return nil
}

// decoded is ApplyN's image, decoded once for all of its outputs: as
// pixels, as YCbCr planes, or both, as its chains need.
type decoded struct {
	src    *vips.Raster
	format string
	ycc    *vips.YCC
	noYCC  bool // the planes would not decode
}

func (d *decoded) run(img []byte, boxes []Box, steps []Step, opt Options) (Output, error) {
	if _, ok := planar(img, steps, opt); ok && !d.noYCC {
		if d.ycc == nil {
			var err error
			d.ycc, err = vips.DecodeYCC(img, math.MaxInt32, false)
			d.noYCC = err != nil // the pixel path says what is wrong
		}
		if d.ycc != nil {
			return runYCC(d.ycc.Share(), boxes, steps, 0, opt)
		}
	}
	if d.src == nil {
		var err error
		if d.src, d.format, _, err = decode(img, nil); err != nil {
			return Output{}, err
		}
	}
	return run(d.src.Share(), d.format, boxes, steps, 0, opt)
}

func (d *decoded) close() {
	if d.src != nil {
		d.src.Close()
	}
	if d.ycc != nil {
		d.ycc.Close()
	}
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
	if err := ctx.Err(); err != nil {
		return Output{}, err
	}
	defer pin()()
	if rows, ok := planar(img, steps, opt); ok {
		mirror := mirrorFirst(steps)
		if y, err := vips.DecodeYCC(img, rows, mirror); err == nil {
			return runYCC(y, boxes, steps, b2i(mirror), opt)
		} // else the pixel path says what is wrong with img
	}
	src, format, decoded, err := decode(img, steps)
	if err != nil {
		return Output{}, err
	}
	return run(src, format, boxes, steps, decoded, opt)
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

// decode reads the part of img that steps read (needed; all of it for no
// steps, as ApplyN wants for its many outputs). It reports how many of the
// leading steps the decoder did itself: a first horizontal flip, which it
// does as it writes the rows, where a flip afterwards reads them all back.
func decode(img []byte, steps []Step) (*vips.Raster, string, int, error) {
	mirror := mirrorFirst(steps)
	src, format, err := vips.DecodeRaster(img, func(w, h int) (vips.Window, error) {
		if w*h > MaxPixels {
			return vips.Window{}, errs.New(errs.TooLarge, "image", "augment: image of %dx%d pixels is above the limit of %d", w, h, MaxPixels)
		}
		return vips.Window{Rect: needed(steps, w, h), Mirror: mirror}, nil
	})
	var e *errs.Error
	switch {
	case errors.As(err, &e):
		return nil, "", 0, err
	case err != nil:
		return nil, "", 0, errs.Wrap(errs.UnsupportedMedia, err, "augment: read image")
	}
	return src, format, b2i(mirror), nil
}

// pin keeps the calling goroutine on its OS thread until the function it
// returns is called. A chain is a few long calls into C on megabytes of
// pixels; between two of them an unpinned goroutine may resume on another
// thread, and so another core, whose caches hold none of them: pinned, a
// 1080p chain costs a tenth less CPU.
func pin() (unpin func()) {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}

// mirrorFirst reports whether steps start with a horizontal flip, which the
// decoders do as they write the rows.
func mirrorFirst(steps []Step) bool {
	return len(steps) > 0 && steps[0].Type == FlipImage && steps[0].Property == FlipHorizontal
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
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
		if err := checkShape(i, b); err != nil {
			return err
		}
	}
	return nil
}

// chain is one output in the making: the image so far, its boxes.
type chain struct {
	r          *vips.Raster
	boxes      []tracked
	minVisible float64
}

// next moves the chain on to the result of an operation, which consumed the
// previous stage.
func (c *chain) next(r *vips.Raster, err error) error {
	c.r = r
	return err
}

func (c *chain) size() (w, h int) { return c.r.Width(), c.r.Height() }

// newChain starts a chain on a w x h image: boxes, and shapes copied for
// it, clipped to it.
func newChain(boxes []Box, w, h int, opt Options) (*chain, error) {
	c := &chain{minVisible: opt.MinVisible}
	if c.minVisible == 0 {
		c.minVisible = DefaultMinVisible
	}
	for _, b := range boxes {
		t := tracked{box: b, visible: 1}
		if isShape(b) {
			if err := startShape(&t, w, h, opt); err != nil {
				return nil, err
			}
		}
		c.boxes = append(c.boxes, t)
	}
	c.boxes = clip(c.boxes, w, h, c.minVisible)
	return c, nil
}

// output is the chain's result: the encoded image, its boxes and steps.
func (c *chain) output(format string, w, h int, steps []Step, img []byte) Output {
	out := Output{Format: format, Width: w, Height: h, Image: img, Boxes: make([]Box, len(c.boxes)), Steps: append([]Step{}, steps...)}
	for i, t := range c.boxes {
		if isShape(t.box) {
			t.finishShape(w, h)
		}
		out.Boxes[i] = t.box
	}
	return out
}

func quality(opt Options) int {
	if opt.Quality == 0 {
		return DefaultQuality
	}
	return opt.Quality
}

// run applies steps to src, which it consumes; the first decoded of them
// the decoder did already, so only their boxes move.
func run(src *vips.Raster, format string, boxes []Box, steps []Step, decoded int, opt Options) (Output, error) {
	c, err := newChain(boxes, src.Width(), src.Height(), opt)
	if err != nil {
		src.Close()
		return Output{}, err
	}
	c.r = src
	defer func() { c.r.Close() }()
	for i, st := range steps {
		if i < decoded { // a horizontal flip (decode)
			w, h := c.size()
			moveFlip(c.boxes, false, w, h)
			continue
		}
		if err := c.step(st); err != nil {
			return Output{}, fmt.Errorf("augment: step %d %s.%s: %w", i, st.Type, st.Property, err)
		}
	}
	w, h := c.size()
	format = outputFormat(opt.Format, format, c.r.Bands())
	img, err := c.r.AppendEncode(opt.Buffer[:0], vips.Format(format), quality(opt))
	if err != nil {
		return Output{}, fmt.Errorf("augment: %w", err)
	}
	return c.output(format, w, h, steps, img), nil
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
	w, h := c.size()
	switch st.Type {
	case FlipImage:
		vertical := st.Property == FlipVertical
		moveFlip(c.boxes, vertical, w, h)
		return c.next(c.r.Flip(vertical))
	case NinetyRotation:
		q := quarters[st.Property]
		moveTurn(c.boxes, q, w, h)
		return c.next(c.r.Rot(q))
	case ImageRotation:
		return c.affine(rotation(v, w, h), identityAffine(st))
	case Shear:
		return c.affine(shear(st.Property == ShearVertical, v, w, h), identityAffine(st))
	case Crop:
		return c.crop(v, st.X, st.Y)
	case ImageBlur:
		if !blurs(v) {
			return nil
		}
		return c.next(c.r.Blur(v))
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
		return c.next(c.r.HueShift(v))
	case Noise:
		if v == 0 {
			return nil
		}
		return c.next(c.r.Noise(st.Seed, v/100))
	}
	return fmt.Errorf("unknown augmentation")
}

// quarters are the clockwise quarter turns of each NINETY_ROTATION property.
var quarters = map[string]int{Clockwise: 1, UpsideDown: 2, CounterClockwise: 3}

// blurs reports whether a Gaussian of sigma changes any pixel.
func blurs(sigma float64) bool { return sigma >= 0.05 }

// identityAffine reports a rotation or shear that moves no pixel.
func identityAffine(st Step) bool {
	return st.Value == 0 || st.Type == ImageRotation && math.Abs(st.Value) == 360
}

func (c *chain) affine(m affine2, identity bool) error {
	if identity {
		return nil
	}
	w, h := c.size()
	moveAffine(c.boxes, m)
	c.boxes = clip(c.boxes, w, h, c.minVisible)
	return c.next(c.r.Affine(m.a, m.b, m.c, m.d, m.cx, m.cy, m.cx, m.cy, w, h))
}

// cropRect is the window left of a w x h image when cut% of its width and
// cut% of its height are cut away (CROP_PERCENTAGE, see the package
// comment), placed by x and y within the room around it (0 left/top, 1
// right/bottom). At least one pixel stays. On an image of even width and
// height the window's size and place are even too: a JPEG's half-size chroma
// is then cut where its samples meet, and the chain can run on the JPEG's
// planes (planar).
func cropRect(w, h int, cut, x, y float64) vips.Rect {
	keep := (100 - cut) / 100
	even := w%2 == 0 && h%2 == 0
	side := func(n int) int {
		if even {
			return max(2, 2*int(math.Round(float64(n)*keep/2)))
		}
		return max(1, int(math.Round(float64(n)*keep)))
	}
	place := func(room int, f float64) int {
		if even {
			return 2 * int(math.Round(f*float64(room)/2))
		}
		return int(math.Round(f * float64(room)))
	}
	cw, ch := side(w), side(h)
	return vips.Rect{X: place(w-cw, x), Y: place(h-ch, y), W: cw, H: ch}
}

func (c *chain) crop(cut, x, y float64) error {
	w, h := c.size()
	r := cropRect(w, h, cut, x, y)
	if r.W == w && r.H == h {
		return nil
	}
	c.cropBoxes(r)
	return c.next(c.r.Crop(r.X, r.Y, r.W, r.H))
}

// cropBoxes moves and clips the boxes to the crop r.
func (c *chain) cropBoxes(r vips.Rect) {
	moveShift(c.boxes, r.X, r.Y, r.W, r.H)
	c.boxes = clip(c.boxes, r.W, r.H, c.minVisible)
}

// Rec. 601 luma weights, as Pillow's "L" mode and OpenCV's gray use.
var luma = [3]float64{0.299, 0.587, 0.114}

// grayMix moves each pixel towards its luma by k (1 is gray, 0 unchanged,
// negative k pushes colours away from gray). Alpha is kept.
func (c *chain) grayMix(k float64) error {
	if k == 0 {
		return nil
	}
	var m [9]float64
	for i := range 3 {
		for j := range 3 {
			m[i*3+j] = (1-k)*b2f(i == j) + k*luma[j]
		}
	}
	return c.next(c.r.Recomb(m))
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
	var lut [256]byte
	for v := range lut {
		lut[v] = byte(min(255, math.Round(float64(v)*f)))
	}
	return c.next(c.r.MapLUT(&lut))
}

// needed is the part of a w x h source that steps read: the whole output,
// mapped back through each step. Flips mirror it, crops shift it, blurs
// widen it by their reach; turns, rotations and shears read everything.
// Decoding only this part is what makes a crop save work.
func needed(steps []Step, w, h int) vips.Rect {
	sizes := make([][2]int, len(steps)+1)
	sizes[0] = [2]int{w, h}
	for i, st := range steps {
		w, h = sizes[i][0], sizes[i][1]
		switch {
		case st.Type == NinetyRotation && quarters[st.Property] != 2:
			w, h = h, w
		case st.Type == Crop:
			r := cropRect(w, h, st.Value, st.X, st.Y)
			w, h = r.W, r.H
		}
		sizes[i+1] = [2]int{w, h}
	}
	r := vips.Rect{W: w, H: h}
	for i := len(steps) - 1; i >= 0; i-- {
		st, w, h := steps[i], sizes[i][0], sizes[i][1]
		switch {
		case st.Type == FlipImage && st.Property == FlipVertical:
			r.Y = h - r.Y - r.H
		case st.Type == FlipImage:
			r.X = w - r.X - r.W
		case st.Type == NinetyRotation, (st.Type == ImageRotation || st.Type == Shear) && !identityAffine(st):
			r = vips.Rect{W: w, H: h}
		case st.Type == Crop:
			if c := cropRect(w, h, st.Value, st.X, st.Y); c.W != w || c.H != h {
				r.X, r.Y = r.X+c.X, r.Y+c.Y
			}
		case st.Type == ImageBlur && blurs(st.Value):
			d := vips.BlurRadius(st.Value)
			x0, y0 := max(0, r.X-d), max(0, r.Y-d)
			r = vips.Rect{X: x0, Y: y0, W: min(w, r.X+r.W+d) - x0, H: min(h, r.Y+r.H+d) - y0}
		}
	}
	return r
}
