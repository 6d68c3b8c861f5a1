package vips

/*
#cgo pkg-config: vips
#include <stdlib.h>
#include <string.h>
#include <vips/vips.h>

static void fl_free_copy(VipsImage *im, gpointer data) { g_free(data); }

// fl_decode loads from a C copy of the caller's bytes: the loader reads
// lazily, so the bytes must live as long as the image, which Go memory may
// not. The copy is freed when the loaded image closes. Pixels are brought to
// 8-bit sRGB (plus alpha when present) so every operation after this sees one
// pixel format.
static int fl_decode(const void *buf, size_t len, int sequential, VipsImage **out, char *loader, size_t loaderlen) {
	void *copy = g_malloc(len);
	memcpy(copy, buf, len);
	VipsImage *im = vips_image_new_from_buffer(copy, len, "",
		"access", sequential ? VIPS_ACCESS_SEQUENTIAL : VIPS_ACCESS_RANDOM,
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

static int fl_flip(VipsImage *in, VipsImage **out, int vertical) {
	return vips_flip(in, out, vertical ? VIPS_DIRECTION_VERTICAL : VIPS_DIRECTION_HORIZONTAL, NULL);
}

static int fl_rot(VipsImage *in, VipsImage **out, int quarter) {
	VipsAngle a = quarter == 1 ? VIPS_ANGLE_D90 : quarter == 2 ? VIPS_ANGLE_D180 : VIPS_ANGLE_D270;
	return vips_rot(in, out, a, NULL);
}

static int fl_blur(VipsImage *in, VipsImage **out, double sigma) {
	return vips_gaussblur(in, out, sigma, NULL);
}

static int fl_extract(VipsImage *in, VipsImage **out, int l, int t, int w, int h) {
	return vips_extract_area(in, out, l, t, w, h, NULL);
}

// fl_recomb multiplies every pixel by the n x n matrix m and rounds back to
// 8 bits (recomb works in float; +0.5 before the truncating cast rounds).
static int fl_recomb(VipsImage *in, VipsImage **out, const double *m, int n) {
	VipsImage *mat = vips_image_new_matrix_from_array(n, n, m, n * n);
	if (!mat) return -1;
	VipsImage *t, *u;
	int rc = vips_recomb(in, &t, mat, NULL);
	g_object_unref(mat);
	if (rc) return -1;
	rc = vips_linear1(t, &u, 1.0, 0.5, NULL);
	g_object_unref(t);
	if (rc) return -1;
	rc = vips_cast_uchar(u, out, NULL);
	g_object_unref(u);
	return rc;
}

// fl_maplut maps each band through its own 256-entry table (lut holds
// 256 * bands bytes, band-interleaved like an image row).
static int fl_maplut(VipsImage *in, VipsImage **out, const unsigned char *lut, int bands) {
	VipsImage *l = vips_image_new_from_memory_copy(lut, 256 * bands, 256, 1, bands, VIPS_FORMAT_UCHAR);
	if (!l) return -1;
	int rc = vips_maplut(in, out, l, NULL);
	g_object_unref(l);
	return rc;
}

static int fl_save(VipsImage *in, int format, int quality, void **buf, size_t *len) {
	switch (format) {
	case 1:
		return vips_pngsave_buffer(in, buf, len, "strip", TRUE, "compression", 6, NULL);
	case 2:
		return vips_webpsave_buffer(in, buf, len, "strip", TRUE, "Q", quality, NULL);
	default:
		return vips_jpegsave_buffer(in, buf, len, "strip", TRUE, "Q", quality,
			"subsample_mode", VIPS_FOREIGN_SUBSAMPLE_ON, NULL);
	}
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
	"sync"
	"unsafe"
)

// Image is a decoded (or lazily decodable) 8-bit sRGB image, with an alpha
// band when the source had one. Operations return new Images and leave the
// receiver usable; libvips evaluates the whole chain only when it is encoded,
// so a chain of Images costs one decode and one encode. Close releases the
// libvips reference early; a cleanup releases it otherwise. An Image may be
// used from several goroutines at once: libvips images are immutable.
type Image struct {
	p       *C.VipsImage
	once    sync.Once
	cleanup runtime.Cleanup
}

// Format names an encoding for Encode.
type Format string

// Encodings Encode writes.
const (
	JPEG Format = "jpeg"
	PNG  Format = "png"
	WebP Format = "webp"
)

func wrap(p *C.VipsImage) *Image {
	im := &Image{p: p}
	im.cleanup = runtime.AddCleanup(im, func(p *C.VipsImage) { C.fl_unref(p) }, p)
	return im
}

// Close releases the image. Images derived from it stay valid: libvips keeps
// what they need.
func (im *Image) Close() {
	im.once.Do(func() {
		im.cleanup.Stop()
		C.fl_unref(im.p)
	})
}

// Decode reads buf into an Image and reports its format (jpeg, png, ...).
// Sequential access streams pixels top to bottom and suits chains that never
// look back (horizontal flips, blur, crop, colour changes); rotations and
// vertical flips need random access. A sequential image can be evaluated
// (encoded) only once; a random-access one holds its decoded pixels in memory
// and can feed any number of chains.
func Decode(buf []byte, sequential bool) (*Image, string, error) {
	if err := startup(); err != nil {
		return nil, "", err
	}
	if len(buf) == 0 {
		return nil, "", fmt.Errorf("%w: empty", ErrDecode)
	}
	var out *C.VipsImage
	var loader [64]C.char
	seq := C.int(0)
	if sequential {
		seq = 1
	}
	if C.fl_decode(unsafe.Pointer(&buf[0]), C.size_t(len(buf)), seq, &out, &loader[0], C.size_t(len(loader))) != 0 {
		return nil, "", fmt.Errorf("%w: %s", ErrDecode, firstLine(lastError()))
	}
	return wrap(out), loaderFormat(C.GoString(&loader[0])), nil
}

// Width of the image in pixels.
func (im *Image) Width() int { defer runtime.KeepAlive(im); return int(C.fl_width(im.p)) }

// Height of the image in pixels.
func (im *Image) Height() int { defer runtime.KeepAlive(im); return int(C.fl_height(im.p)) }

// Bands is 3 for RGB and 4 for RGB with alpha.
func (im *Image) Bands() int { defer runtime.KeepAlive(im); return int(C.fl_bands(im.p)) }

// result wraps the output of a libvips call that returned rc.
func (im *Image) result(op string, rc C.int, out *C.VipsImage) (*Image, error) {
	runtime.KeepAlive(im)
	if rc != 0 {
		return nil, fmt.Errorf("libvips %s: %s", op, firstLine(lastError()))
	}
	return wrap(out), nil
}

// Flip mirrors the image left-right, or top-bottom when vertical.
func (im *Image) Flip(vertical bool) (*Image, error) {
	var out *C.VipsImage
	v := C.int(0)
	if vertical {
		v = 1
	}
	return im.result("flip", C.fl_flip(im.p, &out, v), out)
}

// Rot turns the image clockwise by quarter * 90 degrees (quarter 1, 2 or 3).
func (im *Image) Rot(quarter int) (*Image, error) {
	if quarter < 1 || quarter > 3 {
		return nil, fmt.Errorf("libvips rot: quarter %d not in 1..3", quarter)
	}
	var out *C.VipsImage
	return im.result("rot", C.fl_rot(im.p, &out, C.int(quarter)), out)
}

// GaussBlur blurs with a Gaussian of standard deviation sigma pixels.
func (im *Image) GaussBlur(sigma float64) (*Image, error) {
	var out *C.VipsImage
	return im.result("gaussblur", C.fl_blur(im.p, &out, C.double(sigma)), out)
}

// Extract cuts out the w x h window whose top-left corner is (left, top).
func (im *Image) Extract(left, top, w, h int) (*Image, error) {
	var out *C.VipsImage
	return im.result("extract_area", C.fl_extract(im.p, &out, C.int(left), C.int(top), C.int(w), C.int(h)), out)
}

// Recomb multiplies each pixel, as a column of its n = Bands() values, by the
// row-major n x n matrix m, rounding and clamping to 8 bits.
func (im *Image) Recomb(m []float64) (*Image, error) {
	n := im.Bands()
	if len(m) != n*n {
		return nil, fmt.Errorf("libvips recomb: matrix has %d entries, want %d", len(m), n*n)
	}
	var out *C.VipsImage
	rc := C.fl_recomb(im.p, &out, (*C.double)(unsafe.Pointer(&m[0])), C.int(n))
	return im.result("recomb", rc, out)
}

// MapLUT maps every band through its own table: lut holds 256 entries per
// band, interleaved (lut[v*Bands()+b] is the new value of v in band b).
func (im *Image) MapLUT(lut []byte) (*Image, error) {
	n := im.Bands()
	if len(lut) != 256*n {
		return nil, fmt.Errorf("libvips maplut: table has %d entries, want %d", len(lut), 256*n)
	}
	var out *C.VipsImage
	rc := C.fl_maplut(im.p, &out, (*C.uchar)(unsafe.Pointer(&lut[0])), C.int(n))
	return im.result("maplut", rc, out)
}

// Encode runs the chain and writes it in format; quality applies to JPEG and
// WebP. Metadata (EXIF, ICC, XMP) is not carried over.
func (im *Image) Encode(format Format, quality int) ([]byte, error) {
	f := C.int(0)
	switch format {
	case PNG:
		f = 1
	case WebP:
		f = 2
	case JPEG:
	default:
		return nil, fmt.Errorf("libvips encode: unsupported format %q", format)
	}
	var buf unsafe.Pointer
	var n C.size_t
	rc := C.fl_save(im.p, f, C.int(quality), &buf, &n)
	runtime.KeepAlive(im)
	if rc != 0 {
		return nil, fmt.Errorf("libvips %ssave: %s", format, firstLine(lastError()))
	}
	defer C.g_free(C.gpointer(buf))
	return C.GoBytes(buf, C.int(n)), nil
}
