package vips

/*
#cgo pkg-config: vips
#include <stdlib.h>
#include <vips/vips.h>

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
	"unsafe"
)

// Grey is an 8-bit luminance image, Pix row by row.
type Grey struct {
	W, H int
	Pix  []byte
}

// DecodeGrey decodes an encoded image to 8-bit luminance no larger than
// size x size, aspect ratio kept and never enlarged, in stored orientation
// (no EXIF rotation). JPEGs shrink on load, so a 1080p JPEG at size 256 is
// decoded at a quarter scale before the final resize.
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
	var p unsafe.Pointer
	var w, h C.int
	if C.fl_grey(unsafe.Pointer(&buf[0]), C.size_t(len(buf)), C.int(size), &p, &w, &h) != 0 {
		return Grey{}, fmt.Errorf("%w: %s", ErrDecode, firstLine(lastError()))
	}
	defer C.g_free(C.gpointer(p))
	return Grey{W: int(w), H: int(h), Pix: C.GoBytes(p, w*h)}, nil
}
