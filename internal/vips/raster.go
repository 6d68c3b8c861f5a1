package vips

/*
#cgo pkg-config: vips libjpeg
#cgo CFLAGS: -O3
#cgo LDFLAGS: -lm
#include <glib.h>
#include <stdlib.h>
#include "raster.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Raster is a decoded image in plain memory, 8-bit RGB or RGBA (not
// premultiplied), for augment's chains. A chain of libvips operations costs
// twice what the same work costs here on a 1080p JPEG: libvips' JPEG load
// and save wrap the codec in a buffer source, a pipeline of tiles and a
// write-behind thread, which together cost as much as the codec itself. So
// JPEGs are decoded and encoded with libjpeg-turbo directly, other formats
// through libvips, and the operations run on memory.
//
// A Raster may hold only a window of its image (see DecodeRaster). Every
// operation consumes its receiver: use the returned Raster and nothing else,
// even on error. Operations change the pixels in place when no other Raster
// shares them (Share), so a chain allocates only where pixels move.
type Raster struct {
	mem     *block
	r       C.fl_raster
	cleanup runtime.Cleanup
	closed  bool
}

// Rect is a rectangle of pixels: columns X..X+W-1, rows Y..Y+H-1.
type Rect struct{ X, Y, W, H int }

// block is C memory shared by Rasters; the last to close frees it.
type block struct {
	p    unsafe.Pointer
	refs atomic.Int32
}

func (b *block) release() {
	if b.refs.Add(-1) == 0 {
		C.g_free(C.gpointer(b.p))
	}
}

var errNoMemory = errors.New("raster: out of memory")

// isa is an instruction set the written-out kernels may use (C's fl_isa).
type isa int

const (
	isaPlain  isa = C.FL_ISA_PLAIN
	isaSSSE3  isa = C.FL_ISA_SSSE3
	isaAVX2   isa = C.FL_ISA_AVX2
	isaAVX512 isa = C.FL_ISA_AVX512
)

// holdISA keeps the kernels to level and up to nothing wider, until the
// function it returns puts the widest back: tests check every twin against
// the same reference on one machine. No kernel may run meanwhile.
func holdISA(level isa) (restore func()) {
	C.fl_isa = C.int(level)
	return func() { C.fl_isa = C.FL_ISA_AVX512 }
}

// own wraps g_malloc'ed memory holding r's pixels.
func own(p unsafe.Pointer, r C.fl_raster) *Raster {
	b := &block{p: p}
	b.refs.Store(1)
	return track(b, r)
}

func track(b *block, r C.fl_raster) *Raster {
	rs := &Raster{mem: b, r: r}
	rs.cleanup = runtime.AddCleanup(rs, (*block).release, b)
	return rs
}

// alloc makes a raster of a W x H image holding the window win.
func alloc(bands, W, H int, win Rect) (*Raster, error) {
	stride := win.W * bands
	p := C.g_try_malloc(C.gsize(stride * win.H))
	if p == nil {
		return nil, errNoMemory
	}
	return own(unsafe.Pointer(p), C.fl_raster{px: (*C.uint8_t)(p), stride: C.size_t(stride), bands: C.int(bands),
		W: C.int(W), H: C.int(H), x: C.int(win.X), y: C.int(win.Y), w: C.int(win.W), h: C.int(win.H)}), nil
}

// Window is the part of an image to decode and whether to mirror it
// left-right: the JPEG decoder mirrors rows while they are still in cache,
// where a Flip afterwards reads the whole image back from memory (1.0 ms
// after a 1080p decode, against 0.4 ms on pixels in cache).
type Window struct {
	Rect
	Mirror bool
}

// isJPEG reports whether buf starts as a JPEG does (a start marker and the
// next marker), which libjpeg-turbo then reads directly.
func isJPEG(buf []byte) bool {
	return len(buf) >= 3 && buf[0] == 0xff && buf[1] == 0xd8 && buf[2] == 0xff
}

// DecodeRaster decodes buf and reports its format (jpeg, png, ...). window
// gets the image size before any pixel is decoded and returns the part of
// the image the caller will read, or an error to stop (a size limit). A
// JPEG is decoded only there (the Raster's window); other formats whole.
// A mirrored decode is the decode followed by Flip(false). Pixels are 8-bit
// sRGB, with alpha when the source has it.
func DecodeRaster(buf []byte, window func(w, h int) (Window, error)) (*Raster, string, error) {
	if err := startup(); err != nil {
		return nil, "", err
	}
	if len(buf) == 0 {
		return nil, "", fmt.Errorf("%w: empty", ErrDecode)
	}
	if !isJPEG(buf) {
		return decodeVips(buf, window)
	}
	var r C.fl_raster
	var msg [200]C.char
	src, n := (*C.uint8_t)(unsafe.Pointer(&buf[0])), C.size_t(len(buf))
	switch C.fl_jpeg_header(src, n, &r, &msg[0], C.size_t(len(msg))) {
	case -1:
		return nil, "", fmt.Errorf("%w: %s", ErrDecode, C.GoString(&msg[0]))
	case 0: // CMYK and YCCK: libvips converts them
		return decodeVips(buf, window)
	}
	win, err := window(int(r.W), int(r.H))
	if err != nil {
		return nil, "", err
	}
	if win.W < 1 || win.H < 1 || win.X < 0 || win.Y < 0 || win.X+win.W > int(r.W) || win.Y+win.H > int(r.H) {
		return nil, "", fmt.Errorf("raster: window %+v outside the %dx%d image", win.Rect, r.W, r.H)
	}
	r.x, r.y, r.w, r.h = C.int(win.X), C.int(win.Y), C.int(win.W), C.int(win.H)
	mirror := C.int(0)
	if win.Mirror {
		mirror = 1
	}
	var mem *C.uint8_t
	if C.fl_jpeg_decode(src, n, &r, mirror, &mem, &msg[0], C.size_t(len(msg))) != 0 {
		return nil, "", fmt.Errorf("%w: %s", ErrDecode, C.GoString(&msg[0]))
	}
	if win.Mirror {
		r.x = r.W - r.x - r.w
	}
	return own(unsafe.Pointer(mem), r), "jpeg", nil
}

// Width of the whole image in pixels.
func (r *Raster) Width() int { return int(r.r.W) }

// Height of the whole image in pixels.
func (r *Raster) Height() int { return int(r.r.H) }

// Bands is 3 for RGB and 4 for RGBA.
func (r *Raster) Bands() int { return int(r.r.bands) }

// Window is the part of the image in memory.
func (r *Raster) Window() Rect { return Rect{int(r.r.x), int(r.r.y), int(r.r.w), int(r.r.h)} }

func (r *Raster) whole() bool { return r.r.x == 0 && r.r.y == 0 && r.r.w == r.r.W && r.r.h == r.r.H }

// Share returns a second Raster on the same pixels; operations on either
// leave the other as it is.
func (r *Raster) Share() *Raster {
	r.mem.refs.Add(1)
	return track(r.mem, r.r)
}

// Close releases the pixels (once every sharer has closed).
func (r *Raster) Close() {
	if r == nil || r.closed {
		return
	}
	r.closed = true
	r.cleanup.Stop()
	r.mem.release()
}

// target is where a point operation on r writes: r itself when nobody else
// reads its pixels, else new memory of r's shape.
func (r *Raster) target() (*Raster, error) {
	if r.mem.refs.Load() == 1 {
		return r, nil
	}
	return alloc(r.Bands(), r.Width(), r.Height(), r.Window())
}

// done ends an operation that read r and wrote out (which may be r).
func (r *Raster) done(out *Raster, err error) (*Raster, error) {
	runtime.KeepAlive(r)
	if out != r {
		r.Close()
	}
	if err != nil {
		out.Close()
		return nil, err
	}
	return out, nil
}

// pointOp runs a kernel that maps r's window onto a target of the same shape.
func (r *Raster) pointOp(kernel func(in, out *C.fl_raster)) (*Raster, error) {
	out, err := r.target()
	if err != nil {
		return r.done(nil, err)
	}
	in, o := r.r, out.r // copies: cgo checks a whole Raster behind a pointer
	kernel(&in, &o)
	return r.done(out, nil)
}

// Flip mirrors the image left-right, or top-bottom when vertical.
func (r *Raster) Flip(vertical bool) (*Raster, error) {
	out, err := r.target()
	if err != nil {
		return r.done(nil, err)
	}
	in := r.r
	v := C.int(0)
	if vertical {
		v = 1
		out.r.y = r.r.H - in.y - in.h
	} else {
		out.r.x = r.r.W - in.x - in.w
	}
	C.fl_flip(&in, &out.r, v)
	return r.done(out, nil)
}

// Rot turns the image clockwise by quarter * 90 degrees (quarter 1, 2 or 3).
func (r *Raster) Rot(quarter int) (*Raster, error) {
	if quarter < 1 || quarter > 3 || !r.whole() {
		return r.done(nil, fmt.Errorf("raster: rot %d of window %+v", quarter, r.Window()))
	}
	w, h := r.Width(), r.Height()
	if quarter != 2 {
		w, h = h, w
	}
	out, err := alloc(r.Bands(), w, h, Rect{0, 0, w, h})
	if err != nil {
		return r.done(nil, err)
	}
	C.fl_rot(&r.r, &out.r, C.int(quarter))
	return r.done(out, nil)
}

// Affine maps the image through the matrix [a b; c d] onto a w x h canvas:
// an input point (x, y), in pixel-edge coordinates (pixel i covers [i, i+1)),
// lands at (a(x-ix) + b(y-iy) + ox, c(x-ix) + d(y-iy) + oy). Interpolation is
// bilinear at 1/64 of a pixel; uncovered output is zero in every band
// (black, and transparent when there is alpha; colour is not premultiplied,
// so edges of transparent images darken slightly).
func (r *Raster) Affine(a, b, c, d, ix, iy, ox, oy float64, w, h int) (*Raster, error) {
	det := a*d - b*c
	inv := [4]C.double{C.double(d / det), C.double(-b / det), C.double(-c / det), C.double(a / det)}
	// Positions are 16.16 fixed point in 64 bits: an inverse that moves 2^20
	// pixels a step, or centres as far out, could overflow them.
	sane := math.Abs(det) >= 1e-9 && w < 1<<24 && h < 1<<24
	for _, v := range append(inv[:], C.double(ix), C.double(iy), C.double(ox), C.double(oy)) {
		sane = sane && math.Abs(float64(v)) < 1<<20
	}
	if !sane || !r.whole() {
		return r.done(nil, fmt.Errorf("raster: affine [%g %g; %g %g] (centres %g,%g and %g,%g) of window %+v", a, b, c, d, ix, iy, ox, oy, r.Window()))
	}
	out, err := alloc(r.Bands(), w, h, Rect{0, 0, w, h})
	if err != nil {
		return r.done(nil, err)
	}
	C.fl_affine(&r.r, &out.r, &inv[0], C.double(ix), C.double(iy), C.double(ox), C.double(oy))
	return r.done(out, nil)
}

// BlurRadius is how far Blur reaches for sigma: three standard deviations,
// which hold 99.7% of the Gaussian's weight.
func BlurRadius(sigma float64) int { return max(1, int(math.Ceil(3*sigma))) }

// Blur convolves with a Gaussian of standard deviation sigma pixels cut at
// BlurRadius, edges replicated. Within BlurRadius of a window edge that is
// not an image edge the result is not the whole image's: a caller reading
// a window keeps that margin outside what it finally keeps.
func (r *Raster) Blur(sigma float64) (*Raster, error) {
	out, err := alloc(r.Bands(), r.Width(), r.Height(), r.Window())
	if err != nil {
		return r.done(nil, err)
	}
	if C.fl_blur(&r.r, &out.r, C.double(sigma), C.int(BlurRadius(sigma))) != 0 {
		return r.done(out, errNoMemory)
	}
	return r.done(out, nil)
}

// Crop makes the w x h window whose top-left corner is (left, top) the whole
// image. No pixel moves: the result shares r's memory.
func (r *Raster) Crop(left, top, w, h int) (*Raster, error) {
	win := r.Window()
	x0, y0 := max(win.X, left), max(win.Y, top)
	x1, y1 := min(win.X+win.W, left+w), min(win.Y+win.H, top+h)
	if w < 1 || h < 1 || left < 0 || top < 0 || left+w > r.Width() || top+h > r.Height() || x1 <= x0 || y1 <= y0 {
		return r.done(nil, fmt.Errorf("raster: crop %dx%d+%d+%d of window %+v", w, h, left, top, win))
	}
	off := uintptr(y0-win.Y)*uintptr(r.r.stride) + uintptr((x0-win.X)*r.Bands())
	r.r.px = (*C.uint8_t)(unsafe.Add(unsafe.Pointer(r.r.px), off))
	r.r.W, r.r.H = C.int(w), C.int(h)
	r.r.x, r.r.y, r.r.w, r.r.h = C.int(x0-left), C.int(y0-top), C.int(x1-x0), C.int(y1-y0)
	return r, nil
}

// Recomb multiplies each pixel's colour, as a column, by the row-major 3 x 3
// matrix m, rounding and clamping to 8 bits. Alpha is kept. Entries are
// taken to 1/4096 and must lie within ±8.
func (r *Raster) Recomb(m [9]float64) (*Raster, error) {
	var fixed [9]C.int16_t
	for i, v := range m {
		if !(math.Abs(v) < 7.99) {
			return r.done(nil, fmt.Errorf("raster: recomb entry %g outside ±8", v))
		}
		fixed[i] = C.int16_t(math.Round(v * 4096))
	}
	return r.pointOp(func(in, out *C.fl_raster) { C.fl_recomb(in, out, &fixed[0]) })
}

// MapLUT maps every colour band through lut. Alpha is kept.
func (r *Raster) MapLUT(lut *[256]byte) (*Raster, error) {
	return r.pointOp(func(in, out *C.fl_raster) { C.fl_lut(in, out, (*C.uint8_t)(unsafe.Pointer(&lut[0]))) })
}

// HueShift turns every pixel's hue by degrees, as a shift of H in HSV does:
// value and saturation stay, gray pixels stay gray. Alpha is kept.
func (r *Raster) HueShift(degrees float64) (*Raster, error) {
	return r.pointOp(func(in, out *C.fl_raster) { C.fl_hue(in, out, C.double(degrees)) })
}

// Noise replaces each pixel, with probability fraction (0..1), by a colour
// with uniform random channels. Which pixels and which colours depends only
// on seed and the pixel's row and column in the whole image, so equal seeds
// give equal images whatever window is held. Alpha is kept.
func (r *Raster) Noise(seed uint64, fraction float64) (*Raster, error) {
	return r.pointOp(func(in, out *C.fl_raster) { C.fl_noise(in, out, C.uint64_t(seed), C.double(fraction)) })
}

// Encode writes the image in format; quality applies to JPEG and WebP. JPEG
// is baseline 4:2:0 with standard Huffman tables, alpha laid over white. The
// window must be the whole image. r stays usable.
func (r *Raster) Encode(format Format, quality int) ([]byte, error) {
	return r.AppendEncode(nil, format, quality)
}

// AppendEncode is Encode appending to dst. A JPEG is written straight into
// dst's spare capacity when it fits: a caller encoding image after image
// into one reused buffer touches no new memory, where a new buffer each
// time costs page faults (a tenth of a 1080p chain on a VM).
func (r *Raster) AppendEncode(dst []byte, format Format, quality int) ([]byte, error) {
	if !r.whole() {
		return dst, fmt.Errorf("raster: encode of window %+v of a %dx%d image", r.Window(), r.Width(), r.Height())
	}
	switch format {
	case PNG, WebP:
		out, err := encodeVips(r, format, quality)
		return append(dst, out...), err
	case JPEG:
	default:
		return dst, fmt.Errorf("encode: unsupported format %q", format)
	}
	return appendJPEG(dst, func(into *C.uint8_t, room C.size_t, out **C.uint8_t, n *C.ulong, msg *C.char, msglen C.size_t) C.int {
		defer runtime.KeepAlive(r)
		return C.fl_jpeg_encode(&r.r, C.int(quality), into, room, out, n, msg, msglen)
	})
}

// appendJPEG runs a JPEG encoder that writes into dst's spare capacity when
// the image fits there, and into memory of its own (copied, then freed)
// when not.
func appendJPEG(dst []byte, encode func(into *C.uint8_t, room C.size_t, out **C.uint8_t, n *C.ulong, msg *C.char, msglen C.size_t) C.int) ([]byte, error) {
	spare := dst[len(dst):cap(dst)]
	var into *C.uint8_t
	if len(spare) > 0 {
		into = (*C.uint8_t)(unsafe.Pointer(&spare[0]))
	}
	var out *C.uint8_t
	var n C.ulong
	var msg [200]C.char
	if encode(into, C.size_t(len(spare)), &out, &n, &msg[0], C.size_t(len(msg))) != 0 {
		return dst, fmt.Errorf("jpeg encode: %s", C.GoString(&msg[0]))
	}
	if out == into {
		return dst[:len(dst)+int(n)], nil
	}
	defer C.free(unsafe.Pointer(out))
	return append(dst, unsafe.Slice((*byte)(unsafe.Pointer(out)), int(n))...), nil
}
