package vips

/*
#cgo pkg-config: vips
#include <stdlib.h>
#include <stdint.h>
#include <vips/vips.h>
#include "raster.h"

void fl_fit_area(const uint8_t *pix, int w, int h, int bands, int tw, int th,
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
		_, g, ok, err := jpegGrey(buf, size, math.MaxInt64)
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
	if err := startup(); err != nil {
		return Info{}, nil, err
	}
	if err := checkSize(buf); err != nil {
		return Info{}, nil, err
	}
	if size < 1 || len(buf) == 0 || !isJPEG(buf) {
		info, err = Check(buf, maxPixels)
		return info, nil, err
	}
	info, g, ok, err := jpegGrey(buf, size, int64(maxPixels))
	if !ok && err == nil {
		info, err = Check(buf, maxPixels)
		return info, nil, err
	}
	if err != nil {
		return info, nil, err
	}
	return info, &g, nil
}

// jpegGrey decodes a JPEG's luminance (fl_jpeg_scaled) and averages it down
// to size; ok is false, with no error, for a JPEG libjpeg does not convert
// to grey (CMYK). Over maxPixels it fails with ErrTooManyPixels and the
// header's Info.
func jpegGrey(buf []byte, size int, maxPixels int64) (info Info, g Grey, ok bool, err error) {
	var hdr C.fl_raster
	var p *C.uint8_t
	var w, h C.int
	var msg [200]C.char
	rc := C.fl_jpeg_scaled((*C.uint8_t)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), C.int(size), 0, C.longlong(maxPixels),
		&hdr, &p, &w, &h, &msg[0], C.size_t(len(msg)))
	info = Info{Width: int(hdr.W), Height: int(hdr.H), Bands: int(hdr.bands), Pages: 1, Format: "jpeg"}
	switch rc {
	case 0:
		g := Grey{W: int(w), H: int(h), Pix: C.GoBytes(unsafe.Pointer(p), w*h)}
		C.g_free(C.gpointer(p))
		return info, g.fit(size), true, nil
	case 1:
		return info, Grey{}, false, nil
	case 2:
		return info, Grey{}, false, fmt.Errorf("%w: %dx%d", ErrTooManyPixels, info.Width, info.Height)
	}
	return Info{}, Grey{}, false, fmt.Errorf("%w: %s", ErrDecode, C.GoString(&msg[0]))
}

// fit averages g down to fit size x size (see fitArea).
func (g Grey) fit(size int) Grey {
	pix, w, h := fitArea(g.Pix, g.W, g.H, 1, size)
	return Grey{W: w, H: h, Pix: pix}
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
	scale := float64(size) / float64(max(w, h))
	tw, th := max(1, int(float64(w)*scale+0.5)), max(1, int(float64(h)*scale+0.5))
	cols, rows := areaWeights(w, tw), areaWeights(h, th)
	out := make([]byte, th*tw*bands)
	// The sums run in C (fit.c): the same float32 additions in the same order.
	C.fl_fit_area((*C.uint8_t)(unsafe.Pointer(&pix[0])), C.int(w), C.int(h), C.int(bands), C.int(tw), C.int(th),
		(*C.longlong)(unsafe.Pointer(&cols.idx[0])), (*C.float)(unsafe.Pointer(&cols.f[0])), C.int(cols.n),
		(*C.longlong)(unsafe.Pointer(&rows.idx[0])), (*C.float)(unsafe.Pointer(&rows.f[0])), C.int(rows.n),
		(*C.uint8_t)(unsafe.Pointer(&out[0])))
	return out, tw, th
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
