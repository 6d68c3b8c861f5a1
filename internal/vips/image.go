package vips

/*
#cgo pkg-config: vips
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <vips/vips.h>
#include "raster.h"

static void fl_free_copy(VipsImage *im, gpointer data) { g_free(data); }

// fl_decode loads from a C copy of the caller's bytes: the loader reads
// lazily, so the bytes must live as long as the image, which Go memory may
// not. The copy is freed when the loaded image closes. Pixels are brought to
// 8-bit sRGB (plus alpha when present) so every operation after this sees one
// pixel format.
static int fl_decode(const void *buf, size_t len, VipsImage **out, char *loader, size_t loaderlen) {
	void *copy = g_malloc(len);
	memcpy(copy, buf, len);
	VipsImage *im = vips_image_new_from_buffer(copy, len, "",
		"access", VIPS_ACCESS_SEQUENTIAL,
		"fail_on", VIPS_FAIL_ON_ERROR, NULL);
	if (!im) {
		g_free(copy);
		return -1;
	}
	g_signal_connect(im, "postclose", G_CALLBACK(fl_free_copy), copy);
	const char *l = NULL;
	loader[0] = 0;
	if (vips_image_get_typeof(im, VIPS_META_LOADER) && !vips_image_get_string(im, VIPS_META_LOADER, &l))
		g_strlcpy(loader, l, loaderlen);
	if (vips_image_get_n_pages(im) > 1 || im->Ysize != vips_image_get_page_height(im)) {
		// A multi-page file decodes as a tall strip; keep the first page only.
		VipsImage *t;
		if (vips_extract_area(im, &t, 0, 0, im->Xsize, vips_image_get_page_height(im), NULL)) {
			g_object_unref(im);
			return -1;
		}
		g_object_unref(im);
		im = t;
	}
	int alpha = vips_image_hasalpha(im);
	if (im->Type != VIPS_INTERPRETATION_sRGB || im->BandFmt != VIPS_FORMAT_UCHAR || im->Bands != 3 + alpha) {
		VipsImage *t, *u;
		if (vips_colourspace(im, &t, VIPS_INTERPRETATION_sRGB, NULL)) {
			g_object_unref(im);
			return -1;
		}
		g_object_unref(im);
		if (vips_cast_uchar(t, &u, NULL)) {
			g_object_unref(t);
			return -1;
		}
		g_object_unref(t);
		im = u;
		if (im->Bands > 3 + alpha) {
			if (vips_extract_band(im, &t, 0, "n", 3 + alpha, NULL)) {
				g_object_unref(im);
				return -1;
			}
			g_object_unref(im);
			im = t;
		}
	}
	*out = im;
	return 0;
}

// fl_pixels decodes im into memory as interleaved 8-bit bands; *mem is
// g_malloc'ed. The image is closed.
static int fl_pixels(VipsImage *im, void **mem) {
	size_t n;
	*mem = vips_image_write_to_memory(im, &n);
	g_object_unref(im);
	return *mem ? 0 : -1;
}

static int fl_save(VipsImage *in, int format, int quality, void **buf, size_t *len) {
	switch (format) {
	case 1:
		return vips_pngsave_buffer(in, buf, len, "strip", TRUE, "compression", 6, NULL);
	case 2:
		return vips_webpsave_buffer(in, buf, len, "strip", TRUE, "Q", quality, NULL);
	default:
		vips_error("framelake", "format %d not supported", format);
		return -1;
	}
}

// fl_save_memory encodes w x h pixels of bands interleaved bands whose rows
// are stride bytes apart.
static int fl_save_memory(const uint8_t *px, size_t stride, int w, int h, int bands, int format, int quality,
		void **buf, size_t *len) {
	size_t row = (size_t)w * bands;
	uint8_t *packed = NULL;
	if (stride != row) {
		if (!(packed = g_try_malloc(row * h))) {
			vips_error("framelake", "out of memory");
			return -1;
		}
		for (int y = 0; y < h; y++) memcpy(packed + y * row, px + y * stride, row);
		px = packed;
	}
	VipsImage *im = vips_image_new_from_memory(px, row * h, w, h, bands, VIPS_FORMAT_UCHAR);
	int rc = -1;
	if (im) {
		im->Type = VIPS_INTERPRETATION_sRGB;
		rc = fl_save(im, format, quality, buf, len);
		g_object_unref(im);
	}
	g_free(packed);
	return rc;
}

static void fl_unref(VipsImage *im) { g_object_unref(im); }
static int fl_width(VipsImage *im) { return im->Xsize; }
static int fl_height(VipsImage *im) { return im->Ysize; }
static int fl_bands(VipsImage *im) { return im->Bands; }
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Format names an encoding for Encode.
type Format string

// Encodings Encode writes.
const (
	JPEG Format = "jpeg"
	PNG  Format = "png"
	WebP Format = "webp"
)

// decodeVips reads any format libvips knows into a raster of 8-bit sRGB
// (plus alpha). window sees the size before any pixel is decoded, so a size
// limit costs nothing; its rectangle is not used (the whole image is
// decoded), its mirror is a Flip.
func decodeVips(buf []byte, window func(w, h int) (Window, error)) (*Raster, string, error) {
	var im *C.VipsImage
	var loader [64]C.char
	if C.fl_decode(unsafe.Pointer(&buf[0]), C.size_t(len(buf)), &im, &loader[0], C.size_t(len(loader))) != 0 {
		return nil, "", fmt.Errorf("%w: %s", ErrDecode, firstLine(lastError()))
	}
	w, h, bands := int(C.fl_width(im)), int(C.fl_height(im)), int(C.fl_bands(im))
	win, err := window(w, h)
	if err != nil {
		C.fl_unref(im)
		return nil, "", err
	}
	var mem unsafe.Pointer
	if C.fl_pixels(im, &mem) != 0 {
		return nil, "", fmt.Errorf("%w: %s", ErrDecode, firstLine(lastError()))
	}
	r := C.fl_raster{px: (*C.uint8_t)(mem), stride: C.size_t(w * bands), bands: C.int(bands),
		W: C.int(w), H: C.int(h), w: C.int(w), h: C.int(h)}
	rs, format := own(mem, r), loaderFormat(C.GoString(&loader[0]))
	if win.Mirror {
		rs, err = rs.Flip(false)
	}
	return rs, format, err
}

// encodeVips writes r (whole) as PNG or WebP.
func encodeVips(r *Raster, format Format, quality int) ([]byte, error) {
	f := map[Format]C.int{PNG: 1, WebP: 2}[format]
	var buf unsafe.Pointer
	var n C.size_t
	rc := C.fl_save_memory(r.r.px, r.r.stride, r.r.w, r.r.h, r.r.bands, f, C.int(quality), &buf, &n)
	runtime.KeepAlive(r)
	if rc != 0 {
		return nil, fmt.Errorf("libvips %ssave: %s", format, firstLine(lastError()))
	}
	defer C.g_free(C.gpointer(buf))
	return C.GoBytes(buf, C.int(n)), nil
}
