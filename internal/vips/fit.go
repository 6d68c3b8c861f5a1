package vips

/*
#cgo pkg-config: vips
#include <stdlib.h>
#include <vips/vips.h>

// fl_fit_jpeg shrinks the image file at path to fit in a size x size square,
// keeping its aspect ratio and never enlarging (shrink-on-load for JPEG),
// without EXIF rotation so that boxes in stored pixels stay aligned; alpha is
// flattened onto white and the result is 8-bit sRGB JPEG at quality q.
static int fl_fit_jpeg(const char *path, int size, int q, void **out, size_t *outlen) {
	VipsImage *t, *u;
	if (vips_thumbnail(path, &t, size, "size", VIPS_SIZE_DOWN, "no_rotate", TRUE, NULL))
		return -1;
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
*/
import "C"

import (
	"fmt"
	"unsafe"
)

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
