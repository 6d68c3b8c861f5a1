// Package vips is framelake's one cgo layer: libvips 8.14 for decoding,
// header probes and thumbnails, and Rasters, decoded pixels in memory with
// the kernels augment needs (geometry.c, blur.c, colour.c) and JPEG through
// libjpeg-turbo (jpeg.c), the library libvips itself uses, as pixels or as
// the YCbCr planes a JPEG stores (YCC). libvips is process-global, so
// it is started once (on first use) with untrusted loaders blocked (no
// ImageMagick, PDF or matlab parsing of uploads) and its operation cache off:
// every image we touch is new bytes, so a cache only holds memory, and a cache
// keyed by buffer address could hand back a stale image for reused memory.
//
// Go byte slices are only touched during the C call that receives them
// (read, or written: the spare room of AppendEncode's buffer); no libvips
// object outlives the call that made it, and C memory outlives its call only
// inside a Raster.
package vips

/*
#cgo pkg-config: vips
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <vips/vips.h>
#include "raster.h"

// Warnings about the bytes of one upload go to the caller as an error, not to stderr.
static void fl_quiet(const gchar *domain, GLogLevelFlags level, const gchar *msg, gpointer data) {}

static int fl_init(void) {
	if (VIPS_INIT("framelake")) return -1;
	g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING, fl_quiet, NULL);
	vips_block_untrusted_set(TRUE);
	vips_cache_set_max(0);
	vips_cache_set_max_mem(0);
	vips_cache_set_max_files(0);
	vips_concurrency_set(1);
	// A 1080p raster is 6 MB, above glibc's mmap threshold: each one would be
	// mapped and unmapped, its pages faulted in and zeroed every time (a
	// sixth of a chain's time). Rasters under 64 MB come from the heap, and
	// the heap keeps up to 128 MB of freed memory for the next chain.
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 128 << 20);
	return 0;
}

typedef struct {
	int width, height, bands, pages;
	char loader[64];
} fl_info;

static void fl_fill(VipsImage *im, fl_info *out) {
	const char *loader = NULL;
	out->width = im->Xsize;
	out->height = im->Ysize;
	out->bands = im->Bands;
	out->pages = vips_image_get_n_pages(im);
	out->loader[0] = 0;
	if (vips_image_get_typeof(im, VIPS_META_LOADER) && !vips_image_get_string(im, VIPS_META_LOADER, &loader))
		g_strlcpy(out->loader, loader, sizeof out->loader);
}

// fl_probe reads the header.
static int fl_probe(const void *buf, size_t len, fl_info *out) {
	VipsImage *im = vips_image_new_from_buffer(buf, len, "",
		"access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL);
	if (!im) return -1;
	fl_fill(im, out);
	g_object_unref(im);
	return 0;
}

// fl_decode_all decodes every pixel of the first page, failing as the
// decoder of a dataset build does (fl_decode in image.go), so an image the
// lake takes is one a build can read.
static int fl_decode_all(const void *buf, size_t len) {
	VipsImage *im = vips_image_new_from_buffer(buf, len, "",
		"access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_ERROR, NULL);
	if (!im) return -1;
	double avg;
	int rc = vips_avg(im, &avg, NULL);
	g_object_unref(im);
	return rc;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// Info is what a header read tells about an image.
type Info struct {
	Width, Height int
	Bands         int    // 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA
	Pages         int    // frames of an animated GIF or WebP, pages of a TIFF
	Format        string // jpeg, png, webp, gif, tiff, heif, ...
}

// ErrDecode is wrapped by every failure to read an image.
var ErrDecode = errors.New("not a decodable image")

var startup = sync.OnceValue(func() error {
	if C.fl_init() != 0 {
		return fmt.Errorf("libvips: start: %s", lastError())
	}
	return nil
})

// Start initialises libvips; every entry point calls it, so calling it is only
// needed to fail early (at appliance start) when libvips is broken.
func Start() error { return startup() }

// Version is the libvips version string, e.g. "8.14.1".
func Version() string { return C.GoString(C.vips_version_string()) }

func lastError() string {
	p := C.vips_error_buffer_copy()
	defer C.g_free(C.gpointer(p))
	return strings.TrimSpace(C.GoString(p))
}

// ErrTooManyPixels is wrapped by Check when an image's header claims more
// pixels than allowed; nothing was decoded.
var ErrTooManyPixels = errors.New("too many pixels")

// MaxCheckBytes is the most bytes Check and CheckGrey hand libvips: the
// read limit of every image check, so one file (a zip bomb's 4 GiB of
// zeros named .jpg) cannot make libvips hold gigabytes. Ingest refuses a
// larger image before it reads it into memory.
const MaxCheckBytes = 64 << 20

// ErrTooManyBytes is wrapped by Check and CheckGrey for a buffer of more
// than MaxCheckBytes; libvips did not see it.
var ErrTooManyBytes = errors.New("too many bytes for an image check")

func checkSize(buf []byte) error {
	if len(buf) > MaxCheckBytes {
		return fmt.Errorf("%w: %d bytes, more than the %d an image check reads", ErrTooManyBytes, len(buf), MaxCheckBytes)
	}
	return nil
}

// Probe reads the image header of buf without decoding pixels.
func Probe(buf []byte) (Info, error) {
	if err := startup(); err != nil {
		return Info{}, err
	}
	if len(buf) == 0 {
		return Info{}, fmt.Errorf("%w: empty", ErrDecode)
	}
	var out C.fl_info
	if C.fl_probe(unsafe.Pointer(&buf[0]), C.size_t(len(buf)), &out) != 0 {
		return Info{}, fmt.Errorf("%w: %s", ErrDecode, firstLine(lastError()))
	}
	return Info{
		Width:  int(out.width),
		Height: int(out.height),
		Bands:  int(out.bands),
		Pages:  max(1, int(out.pages)),
		Format: loaderFormat(C.GoString(&out.loader[0])),
	}, nil
}

// Check reads the header and, unless the image has more than maxPixels
// pixels (ErrTooManyPixels, with the header's Info), decodes every pixel, as
// the decoders of a dataset build do and with the damage they refuse, so a
// corrupt file fails here rather than later in a model or a build. A JPEG's
// scan data is read at 1/8 scale (libjpeg decodes all of it but inverts one
// coefficient a block), about a third of a full decode; other formats are
// decoded whole (first page).
func Check(buf []byte, maxPixels int) (Info, error) {
	if err := startup(); err != nil {
		return Info{}, err
	}
	if len(buf) == 0 {
		return Info{}, fmt.Errorf("%w: empty", ErrDecode)
	}
	if err := checkSize(buf); err != nil {
		return Info{}, err
	}
	if isJPEG(buf) {
		return checkJPEG(buf, maxPixels)
	}
	info, err := Probe(buf)
	if err != nil {
		return Info{}, err
	}
	if info.Width*info.Height > maxPixels {
		return info, fmt.Errorf("%w: %dx%d", ErrTooManyPixels, info.Width, info.Height)
	}
	if C.fl_decode_all(unsafe.Pointer(&buf[0]), C.size_t(len(buf))) != 0 {
		return Info{}, fmt.Errorf("%w: %s", ErrDecode, firstLine(lastError()))
	}
	return info, nil
}

func checkJPEG(buf []byte, maxPixels int) (Info, error) {
	var r C.fl_raster
	var msg [200]C.char
	rc := C.fl_jpeg_check((*C.uint8_t)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), C.longlong(maxPixels),
		&r, &msg[0], C.size_t(len(msg)))
	info := Info{Width: int(r.W), Height: int(r.H), Bands: int(r.bands), Pages: 1, Format: "jpeg"}
	switch rc {
	case -1:
		return Info{}, fmt.Errorf("%w: %s", ErrDecode, C.GoString(&msg[0]))
	case 1:
		return info, fmt.Errorf("%w: %dx%d", ErrTooManyPixels, info.Width, info.Height)
	}
	return info, nil
}

// loaderFormat turns "jpegload_buffer" into "jpeg".
func loaderFormat(loader string) string {
	f, _, _ := strings.Cut(loader, "load")
	return f
}

func firstLine(s string) string {
	if s == "" {
		return "unknown format or corrupt data"
	}
	line, _, _ := strings.Cut(s, "\n")
	return line
}
