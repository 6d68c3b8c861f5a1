package vips

/*
#cgo pkg-config: vips
#include <stdlib.h>
#include <stdint.h>
#include <vips/vips.h>
#include "raster.h"

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
func fitArea(pix []byte, w, h, bands, size int) ([]byte, int, int) {
	if w <= size && h <= size {
		return pix, w, h
	}
	scale := float64(size) / float64(max(w, h))
	tw, th := max(1, int(float64(w)*scale+0.5)), max(1, int(float64(h)*scale+0.5))
	cols, rows := areaWeights(w, tw), areaWeights(h, th)
	row := tw * bands
	tmp := make([]float32, h*row) // rows resized first
	for y := range h {
		src := pix[y*w*bands : (y+1)*w*bands]
		for x, ws := range cols {
			for b := range bands {
				s := float32(0)
				for _, wt := range ws.w {
					s += wt.f * float32(src[wt.i*bands+b])
				}
				tmp[y*row+x*bands+b] = s
			}
		}
	}
	out := make([]byte, th*row)
	for y, ws := range rows {
		for x := range row {
			s := float32(0)
			for _, wt := range ws.w {
				s += wt.f * tmp[wt.i*row+x]
			}
			out[y*row+x] = byte(min(255, s+0.5))
		}
	}
	return out, tw, th
}

type weight struct {
	i int
	f float32
}

type weights struct{ w []weight }

// areaWeights maps n input pixels onto m < n output pixels: output j
// covers input [j*n/m, (j+1)*n/m), each input pixel weighted by its overlap.
func areaWeights(n, m int) []weights {
	out := make([]weights, m)
	step := float64(n) / float64(m)
	for j := range out {
		lo, hi := float64(j)*step, float64(j+1)*step
		for i := int(lo); i < n && float64(i) < hi; i++ {
			overlap := min(hi, float64(i+1)) - max(lo, float64(i))
			if overlap > 0 {
				out[j].w = append(out[j].w, weight{i, float32(overlap / step)})
			}
		}
	}
	return out
}
