package vips

/*
#cgo pkg-config: vips
#include <stdlib.h>
#include <stdint.h>
#include <vips/vips.h>
#include "raster.h"

// fl_save_srgb_jpeg flattens alpha onto white, converts to 8-bit sRGB and
// encodes as JPEG at quality q. It takes t and unrefs it.
static int fl_save_srgb_jpeg(VipsImage *t, int q, void **out, size_t *outlen) {
	VipsImage *u;
	if (vips_image_hasalpha(t)) {
		VipsArrayDouble *white = vips_array_double_newv(1, 255.0);
		int rc = vips_flatten(t, &u, "background", white, NULL);
		vips_area_unref(VIPS_AREA(white));
		g_object_unref(t);
		if (rc) return -1;
		t = u;
	}
	if (t->Type != VIPS_INTERPRETATION_sRGB || t->BandFmt != VIPS_FORMAT_UCHAR) {
		int rc = vips_colourspace(t, &u, VIPS_INTERPRETATION_sRGB, NULL);
		g_object_unref(t);
		if (rc) return -1;
		rc = vips_cast_uchar(u, &t, NULL);
		g_object_unref(u);
		if (rc) return -1;
	}
	int rc = vips_jpegsave_buffer(t, out, outlen, "strip", TRUE, "Q", q, NULL);
	g_object_unref(t);
	return rc;
}

// fl_thumbnail_jpeg resizes buf to exactly w x h (aspect ratio not kept: a
// model's input size is fixed and boxes map back per axis), with shrink-on-
// load for JPEG, the first page of multi-page files, alpha flattened onto
// white and 8-bit sRGB out, and encodes it as JPEG. srcw and srch get the
// stored (unrotated) size of the source.
static int fl_thumbnail_jpeg(const void *buf, size_t len, int w, int h, int q,
		void **out, size_t *outlen, int *srcw, int *srch) {
	VipsImage *src = vips_image_new_from_buffer(buf, len, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL);
	if (!src) return -1;
	*srcw = src->Xsize;
	*srch = vips_image_get_page_height(src);
	g_object_unref(src);
	VipsImage *t;
	if (vips_thumbnail_buffer((void *)buf, len, &t, w, "height", h, "size", VIPS_SIZE_FORCE,
			"no_rotate", TRUE, NULL))
		return -1;
	return fl_save_srgb_jpeg(t, q, out, outlen);
}

// fl_fit_jpeg shrinks the image file at path to fit in a size x size square,
// keeping its aspect ratio and never enlarging (shrink-on-load for JPEG),
// without EXIF rotation so that boxes in stored pixels stay aligned; alpha is
// flattened onto white and the result is 8-bit sRGB JPEG at quality q.
static int fl_fit_jpeg(const char *path, int size, int q, void **out, size_t *outlen) {
	VipsImage *t;
	if (vips_thumbnail(path, &t, size, "size", VIPS_SIZE_DOWN, "no_rotate", TRUE, NULL))
		return -1;
	return fl_save_srgb_jpeg(t, q, out, outlen);
}
*/
import "C"

import (
	"fmt"
	"math"
	"os"
	"unsafe"
)

// ThumbnailJPEG resizes an encoded image to exactly w x h pixels and
// encodes it as JPEG at quality q, returning the JPEG and the source's size.
// It decodes with shrink-on-load, so large JPEGs cost far less than a full
// decode.
func ThumbnailJPEG(buf []byte, w, h, q int) (out []byte, srcW, srcH int, err error) {
	if err := startup(); err != nil {
		return nil, 0, 0, err
	}
	if len(buf) == 0 {
		return nil, 0, 0, fmt.Errorf("%w: empty", ErrDecode)
	}
	if w < 1 || h < 1 {
		return nil, 0, 0, fmt.Errorf("vips: thumbnail size %dx%d", w, h)
	}
	var p unsafe.Pointer
	var n C.size_t
	var sw, sh C.int
	if C.fl_thumbnail_jpeg(unsafe.Pointer(&buf[0]), C.size_t(len(buf)), C.int(w), C.int(h), C.int(q), &p, &n, &sw, &sh) != 0 {
		return nil, 0, 0, fmt.Errorf("%w: %s", ErrDecode, firstLine(lastError()))
	}
	defer C.g_free(C.gpointer(p))
	return C.GoBytes(p, C.int(n)), int(sw), int(sh), nil
}

// FitJPEG reads the image file at path and returns it as a JPEG no larger
// than size x size, aspect ratio kept, for display thumbnails. Reading from
// the file lets libvips shrink on load without the whole file in memory.
func FitJPEG(path string, size, q int) ([]byte, error) {
	if err := startup(); err != nil {
		return nil, err
	}
	if size < 1 {
		return nil, fmt.Errorf("vips: thumbnail size %d", size)
	}
	if b, ok, err := fitJPEGDirect(path, size, q); ok || err != nil {
		return b, err
	}
	return fitVips(path, size, q)
}

// fitVips is FitJPEG through libvips' thumbnail.
func fitVips(path string, size, q int) ([]byte, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var p unsafe.Pointer
	var n C.size_t
	if C.fl_fit_jpeg(cpath, C.int(size), C.int(q), &p, &n) != 0 {
		return nil, fmt.Errorf("%w: %s", ErrDecode, firstLine(lastError()))
	}
	defer C.g_free(C.gpointer(p))
	return C.GoBytes(p, C.int(n)), nil
}

// fitJPEGDirect is FitJPEG of a JPEG without libvips: libjpeg-turbo decodes
// it at the DCT scale-down that keeps it at least size, the rest is averaged
// down (fitArea) and encoded. A cold 1080p frame to 256 px cost 17-20 ms of
// CPU through libvips, two thirds of it outside the codec. ok is false for
// files it leaves to libvips: not JPEG, CMYK, damaged, or with a colour
// profile.
func fitJPEGDirect(path string, size, q int) (out []byte, ok bool, err error) {
	buf, err := os.ReadFile(path)
	if err != nil || !isJPEG(buf) {
		return nil, false, nil // libvips names the file in its error
	}
	var hdr C.fl_raster
	var p *C.uint8_t
	var w, h C.int
	var msg [200]C.char
	if C.fl_jpeg_scaled((*C.uint8_t)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), C.int(size), 1, C.longlong(math.MaxInt64),
		&hdr, &p, &w, &h, &msg[0], C.size_t(len(msg))) != 0 {
		return nil, false, nil // damaged data too: libvips shows what decodes of it, as before
	}
	pix := C.GoBytes(unsafe.Pointer(p), 3*w*h)
	C.g_free(C.gpointer(p))
	pix, tw, th := fitArea(pix, int(w), int(h), 3, size)
	r, err := alloc(3, tw, th, Rect{W: tw, H: th})
	if err != nil {
		return nil, false, err
	}
	defer r.Close()
	copy(unsafe.Slice((*byte)(unsafe.Pointer(r.r.px)), len(pix)), pix)
	out, err = r.Encode(JPEG, q)
	return out, err == nil, err
}
