package vips

/*
#cgo pkg-config: vips
#include <stdlib.h>
#include <stdint.h>
#include <vips/vips.h>
#include "raster.h"

void fl_fit_area(const uint8_t *pix, size_t stride, int w, int h, int bands, int tw, int th,
		const long long *cidx, const float *cf, int cn, const long long *ridx, const float *rf, int rn,
		uint8_t *out);

// fl_grey shrinks buf to fit a size x size square (never enlarging; JPEG
// shrinks on load), without EXIF rotation, takes the first page, converts it
// to 8-bit luminance (alpha dropped, 16-bit scaled down) and returns the
// pixels, w*h bytes, row by row.
static int fl_grey(const void *buf, size_t len, int size, void **out, int *w, int *h) {
	VipsImage *t, *u;
	if (vips_thumbnail_buffer((void *)buf, len, &t, size, "size", VIPS_SIZE_DOWN, "no_rotate", TRUE, NULL))
		return -1;
	if (t->Type != VIPS_INTERPRETATION_B_W && t->Type != VIPS_INTERPRETATION_GREY16) {
		int rc = vips_colourspace(t, &u, VIPS_INTERPRETATION_B_W, NULL);
		g_object_unref(t);
		if (rc) return -1;
		t = u;
	}
	if (t->Bands > 1) {
		int rc = vips_extract_band(t, &u, 0, NULL);
		g_object_unref(t);
		if (rc) return -1;
		t = u;
	}
	if (t->BandFmt != VIPS_FORMAT_UCHAR) {
		int rc = t->BandFmt == VIPS_FORMAT_USHORT ? vips_linear1(t, &u, 1.0 / 256, 0, NULL) : vips_copy(t, &u, NULL);
		g_object_unref(t);
		if (rc) return -1;
		rc = vips_cast_uchar(u, &t, NULL);
		g_object_unref(u);
		if (rc) return -1;
	}
	size_t n;
	*out = vips_image_write_to_memory(t, &n);
	*w = t->Xsize;
	*h = t->Ysize;
	g_object_unref(t);
	return *out ? 0 : -1;
}
*/
import "C"

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Grey is an 8-bit luminance image, Pix row by row.
type Grey struct {
	W, H int
	Pix  []byte
}

// DecodeGrey decodes an encoded image to 8-bit luminance no larger than
// size x size, aspect ratio kept and never enlarged, in stored orientation
// (no EXIF rotation). JPEGs decode their luminance alone through
// libjpeg-turbo at the smallest DCT scale M/8 that keeps the longer side at
// least size, then are averaged down to size: a 1920x1080 JPEG at size 240
// decodes at 1/8 and a 640x480 one at 3/8, with nothing left to resize.
// Other formats go through libvips (shrink-on-load where the format has it).
func DecodeGrey(buf []byte, size int) (Grey, error) {
	if err := startup(); err != nil {
		return Grey{}, err
	}
	if len(buf) == 0 {
		return Grey{}, fmt.Errorf("%w: empty", ErrDecode)
	}
	if size < 1 {
		return Grey{}, fmt.Errorf("vips: grey size %d", size)
	}
	if isJPEG(buf) {
		_, g, _, ok, err := jpegGrey(buf, size, 0, 0, math.MaxInt64)
		if ok || err != nil {
			return g, err
		}
	}
	var p unsafe.Pointer
	var w, h C.int
	if C.fl_grey(unsafe.Pointer(&buf[0]), C.size_t(len(buf)), C.int(size), &p, &w, &h) != 0 {
		return Grey{}, fmt.Errorf("%w: %s", ErrDecode, firstLine(lastError()))
	}
	defer C.g_free(C.gpointer(p))
	return Grey{W: int(w), H: int(h), Pix: C.GoBytes(p, w*h)}, nil
}

// CheckGrey is Check that also returns, for a JPEG libjpeg converts to
// grey, the luminance DecodeGrey(buf, size) gives, from the same one
// decode: its scans are all read, with the warnings Check fails on, so the
// grey decode is the check. For any other image grey is nil and the image
// is checked by Check.
func CheckGrey(buf []byte, maxPixels, size int) (info Info, grey *Grey, err error) {
	info, grey, _, err = CheckGreyThumb(buf, maxPixels, size, 0, 0)
	return info, grey, err
}

// CheckGreyThumb is CheckGrey that also returns, when the same decode
// serves it, the image as a JPEG fitting thumb x thumb at quality q, the
// thumbnail FitJPEG makes of it (within rounding): for a YCbCr JPEG without
// a colour profile whose grey decode's DCT scale leaves at least thumb
// pixels on its longer side (1400x1050 at 1/4, 1280x720 at 1/4; not 640x480
// nor 1920x1080, whose grey decodes at 240 px), the decode keeps the chroma
// planes and the thumbnail's planes are averaged down from the decode's
// (planesThumb). Otherwise thumbJPEG is nil
// and the grey is what CheckGrey gives. The grey is the same bytes either
// way.
func CheckGreyThumb(buf []byte, maxPixels, size, thumb, q int) (info Info, grey *Grey, thumbJPEG []byte, err error) {
	if err := startup(); err != nil {
		return Info{}, nil, nil, err
	}
	if err := checkSize(buf); err != nil {
		return Info{}, nil, nil, err
	}
	if size < 1 || len(buf) == 0 || !isJPEG(buf) {
		info, err = Check(buf, maxPixels)
		return info, nil, nil, err
	}
	info, g, thumbJPEG, ok, err := jpegGrey(buf, size, thumb, q, int64(maxPixels))
	if !ok && err == nil {
		info, err = Check(buf, maxPixels)
		return info, nil, nil, err
	}
	if err != nil {
		return info, nil, nil, err
	}
	return info, &g, thumbJPEG, nil
}

// jpegGrey decodes a JPEG's luminance (fl_jpeg_scaled_ycc) and averages it
// down to size, and with thumb > 0 makes the thumbnail of CheckGreyThumb
// when the decode kept the chroma for it; ok is false, with no error, for a
// JPEG libjpeg does not convert to grey (CMYK). Over maxPixels it fails
// with ErrTooManyPixels and the header's Info.
func jpegGrey(buf []byte, size, thumb, q int, maxPixels int64) (info Info, g Grey, thumbJPEG []byte, ok bool, err error) {
	var hdr C.fl_raster
	var planes [3]C.fl_raster
	var p, ycc *C.uint8_t
	var w, h C.int
	var msg [200]C.char
	rc := C.fl_jpeg_scaled_ycc((*C.uint8_t)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), C.int(size), 0, C.int(thumb),
		C.longlong(maxPixels), &hdr, &p, &planes[0], &ycc, &w, &h, &msg[0], C.size_t(len(msg)))
	info = Info{Width: int(hdr.W), Height: int(hdr.H), Bands: int(hdr.bands), Pages: 1, Format: "jpeg"}
	switch rc {
	case 0:
		pix, tw, th := fitFromC(unsafe.Pointer(p), int(w), int(h), 1, size)
		C.g_free(C.gpointer(p))
		if ycc != nil {
			thumbJPEG, err = planesThumb(&planes, thumb, q)
			C.g_free(C.gpointer(ycc))
		}
		return info, Grey{W: tw, H: th, Pix: pix}, thumbJPEG, err == nil, err
	case 1:
		return info, Grey{}, nil, false, nil
	case 2:
		return info, Grey{}, nil, false, fmt.Errorf("%w: %dx%d", ErrTooManyPixels, info.Width, info.Height)
	}
	return Info{}, Grey{}, nil, false, fmt.Errorf("%w: %s", ErrDecode, C.GoString(&msg[0]))
}

// fitFromC is fitArea of w x h pixels of bands bytes in C memory, which the
// caller frees: the result is Go memory either way (a copy when the image
// already fits), with no copy of the source first.
func fitFromC(p unsafe.Pointer, w, h, bands, size int) ([]byte, int, int) {
	src := unsafe.Slice((*byte)(p), w*h*bands)
	pix, tw, th := fitArea(src, w, h, bands, size)
	if len(pix) > 0 && &pix[0] == &src[0] {
		pix = append([]byte(nil), src...)
	}
	return pix, tw, th
}

// planesThumb averages a JPEG's decoded planes (C memory: luma, then the
// two chroma planes at their own scaled size) down to a 4:2:0 thumbnail
// fitting thumb x thumb, each plane straight to its size in the JPEG, and
// encodes them as they are at quality q: no chroma upsampling, colour
// interleaving or conversion, nor the encoder's downsampling, and a third
// of the sums of averaging interleaved YCbCr down to thumb. A plane smaller
// than its size in the thumbnail (never from libjpeg's scaled planes, whose
// chroma is at least half the luma) gives no thumbnail (nil, nil).
func planesThumb(planes *[3]C.fl_raster, thumb, q int) ([]byte, error) {
	tw, th := fitSize(int(planes[0].w), int(planes[0].h), thumb)
	cw, ch := (tw+1)/2, (th+1)/2
	size := [3][2]int{{tw, th}, {cw, ch}, {cw, ch}}
	// C memory, for the encoder takes rasters that point into it; under
	// 128 KB, so malloc hands back the last one's pages.
	mem := C.malloc(C.size_t(tw*th + 2*cw*ch))
	defer C.free(mem)
	var out [3]C.fl_raster
	off := 0
	for k, pl := range planes {
		ow, oh := size[k][0], size[k][1]
		if ow > int(pl.w) || oh > int(pl.h) {
			return nil, nil
		}
		dst := (*C.uint8_t)(unsafe.Add(mem, off))
		cols, rows := cachedWeights(int(pl.w), ow), cachedWeights(int(pl.h), oh)
		C.fl_fit_area(pl.px, pl.stride, pl.w, pl.h, 1, C.int(ow), C.int(oh),
			(*C.longlong)(unsafe.Pointer(&cols.idx[0])), (*C.float)(unsafe.Pointer(&cols.f[0])), C.int(cols.n),
			(*C.longlong)(unsafe.Pointer(&rows.idx[0])), (*C.float)(unsafe.Pointer(&rows.f[0])), C.int(rows.n), dst)
		out[k] = C.fl_raster{px: dst, stride: C.size_t(ow), bands: 1, W: C.int(ow), H: C.int(oh), w: C.int(ow), h: C.int(oh)}
		off += ow * oh
	}
	// A 256 px thumbnail at quality 80 is 8-20 KB: room for most, so the
	// encoder writes into Go memory and nothing is copied after.
	return appendJPEG(make([]byte, 0, 32<<10), func(into *C.uint8_t, room C.size_t, o **C.uint8_t, n *C.ulong, msg *C.char, msglen C.size_t) C.int {
		return C.fl_jpeg_encode_ycc(&out[0], C.int(q), into, room, o, n, msg, msglen)
	})
}

// fitSize is the size fitArea averages a w x h image down to for size.
func fitSize(w, h, size int) (int, int) {
	if w <= size && h <= size {
		return w, h
	}
	scale := float64(size) / float64(max(w, h))
	return max(1, int(float64(w)*scale+0.5)), max(1, int(float64(h)*scale+0.5))
}

// fitArea averages a w x h image of bands bytes per pixel down to fit size
// x size: each output pixel is the mean of the input area it covers, partly
// covered pixels weighted by how much. An image that fits is returned as is.
// Each sum adds its weighted pixels in input order in float32, rows first,
// so it gives the same bytes however the loops run. Here they add term k of
// every output of a row before term k+1, every output the same number of
// terms (areaWeights pads with zero weights, which leave a sum of
// non-negative terms as it is): summed one output at a time, each waiting on
// its last addition and its count of 2 or 3 terms varying from pixel to
// pixel, the whole took as long as the JPEG decode before it at ingest.
func fitArea(pix []byte, w, h, bands, size int) ([]byte, int, int) {
	if (w <= size && h <= size) || len(pix) < w*h*bands || w*h == 0 {
		return pix, w, h
	}
	tw, th := fitSize(w, h, size)
	cols, rows := cachedWeights(w, tw), cachedWeights(h, th)
	out := make([]byte, th*tw*bands)
	// The sums run in C (fit.c): the same float32 additions in the same order.
	C.fl_fit_area((*C.uint8_t)(unsafe.Pointer(&pix[0])), C.size_t(w*bands), C.int(w), C.int(h), C.int(bands), C.int(tw), C.int(th),
		(*C.longlong)(unsafe.Pointer(&cols.idx[0])), (*C.float)(unsafe.Pointer(&cols.f[0])), C.int(cols.n),
		(*C.longlong)(unsafe.Pointer(&rows.idx[0])), (*C.float)(unsafe.Pointer(&rows.f[0])), C.int(rows.n),
		(*C.uint8_t)(unsafe.Pointer(&out[0])))
	return out, tw, th
}

// weightsCache holds areaWeights by their (n, m), at most maxCachedWeights
// of them: an import meets a few image sizes thousands of times, and making
// a 1400x1050 JPEG's weights again for each cost a third of its sums. The
// weights are only read once made.
var (
	weightsCache  sync.Map // [2]int -> weights
	weightsCached atomic.Int32
)

const maxCachedWeights = 512

func cachedWeights(n, m int) weights {
	k := [2]int{n, m}
	if w, ok := weightsCache.Load(k); ok {
		return w.(weights)
	}
	w := areaWeights(n, m)
	if weightsCached.Add(1) <= maxCachedWeights {
		weightsCache.Store(k, w)
	}
	return w
}

// weights maps each of m output pixels to the n input pixels it covers:
// term k of output j is input pixel idx[k*m+j] of weight f[k*m+j]. An
// output of fewer terms is padded with zero weights on its last pixel.
type weights struct {
	m, n int
	idx  []int64 // long long for fl_fit_area
	f    []float32
}

// areaWeights maps n input pixels onto m < n output pixels: output j
// covers input [j*n/m, (j+1)*n/m), each input pixel weighted by its overlap.
func areaWeights(n, m int) weights {
	step := float64(n) / float64(m)
	firsts, fs := make([]int, m), make([][]float32, m)
	most := 1
	for j := range m {
		lo, hi := float64(j)*step, float64(j+1)*step
		firsts[j] = int(lo)
		for i := int(lo); i < n && float64(i) < hi; i++ {
			// Positive for every i the loop reaches: int(lo) <= i < hi.
			overlap := min(hi, float64(i+1)) - max(lo, float64(i))
			fs[j] = append(fs[j], float32(overlap/step))
		}
		most = max(most, len(fs[j]))
	}
	ws := weights{m: m, n: most, idx: make([]int64, m*most), f: make([]float32, m*most)}
	for j := range m {
		for k := range most {
			ws.idx[k*m+j] = int64(min(firsts[j]+k, firsts[j]+len(fs[j])-1))
			if k < len(fs[j]) {
				ws.f[k*m+j] = fs[j][k]
			}
		}
	}
	return ws
}
