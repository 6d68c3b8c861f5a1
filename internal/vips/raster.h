// Rasters: decoded 8-bit RGB or RGBA pixels in plain memory, and the kernels
// augment's chains run on them. See raster.go for why they exist beside
// libvips images.
#ifndef FL_RASTER_H
#define FL_RASTER_H

#include <stddef.h>
#include <stdint.h>

// fl_raster is a W x H image of which the window (x, y, w, h) is in memory.
// A chain that ends in a crop only needs part of its source; the window lets
// the decoder skip the rest. Kernels work on the window; those that move
// pixels across the whole image (right-angle turns, rotation, shear) need the
// window to be the whole image.
typedef struct {
	uint8_t *px;   // pixel (x, y), the window's top-left
	size_t stride; // bytes from one row to the next
	int bands;     // 3 (RGB) or 4 (RGBA, not premultiplied)
	int W, H;      // the whole image
	int x, y, w, h;
} fl_raster;

// Kernels read in and write out, which may share memory (in == out) for
// the point operations and flips. The caller sizes out.
void fl_flip(const fl_raster *in, const fl_raster *out, int vertical);
void fl_rot(const fl_raster *in, const fl_raster *out, int quarter);
void fl_affine(const fl_raster *in, const fl_raster *out, const double inv[4], double ix, double iy, double ox, double oy);
int fl_blur(const fl_raster *in, const fl_raster *out, double sigma, int radius);
void fl_recomb(const fl_raster *in, const fl_raster *out, const int16_t m[9]);
void fl_lut(const fl_raster *in, const fl_raster *out, const uint8_t lut[256]);
void fl_hue(const fl_raster *in, const fl_raster *out, double degrees);
void fl_noise(const fl_raster *in, const fl_raster *out, uint64_t seed, double fraction);
void fl_copy(const fl_raster *in, const fl_raster *out);
void fl_flatten(const fl_raster *in, uint8_t *rgb, int row);

// fl_isa is the widest instruction set the written-out kernels may use. A
// machine takes the widest it has; tests lower it to hold every twin (plain
// C, SSE2/SSSE3, AVX2, AVX-512) to the same bytes on one machine. Set it
// only while no kernel runs.
enum { FL_ISA_PLAIN, FL_ISA_SSSE3, FL_ISA_AVX2, FL_ISA_AVX512 };
extern int fl_isa;

// JPEG through libjpeg-turbo (jpeg.c). fl_jpeg_header fills W, H and bands
// (3) and returns 1 when the file is a JPEG fl_jpeg_decode can read (2 when
// it is also YCbCr 4:2:0, which fl_jpeg_decode_ycc reads), 0 when it is a
// JPEG in a colour space it cannot (CMYK: libvips reads those), -1 with err
// set when it is not a readable JPEG.
int fl_jpeg_header(const uint8_t *buf, size_t len, fl_raster *out, char *err, size_t errlen);
// fl_jpeg_decode decodes the window out->x, y, w, h set by the caller into
// memory it allocates with g_try_malloc (*mem, for g_free), each row
// mirrored left-right when mirror is set (the window stays as given).
int fl_jpeg_decode(const uint8_t *buf, size_t len, fl_raster *out, int mirror, uint8_t **mem, char *err, size_t errlen);
// fl_jpeg_check reads a JPEG's header and, when it has at most max_pixels
// pixels, all of its scan data (see jpeg.c): 0 readable, 1 over the limit,
// -1 with err set when not readable.
int fl_jpeg_check(const uint8_t *buf, size_t len, long long max_pixels, fl_raster *out, char *err, size_t errlen);
// fl_jpeg_scaled decodes a JPEG scaled down by its DCT, as luminance or RGB
// (see jpeg.c).
int fl_jpeg_scaled(const uint8_t *buf, size_t len, int size, int rgb, long long max_pixels, fl_raster *hdr, uint8_t **pix,
		   int *w, int *h, char *err, size_t errlen);
// fl_jpeg_scaled_ycc is fl_jpeg_scaled that may keep the planes of a
// luminance decode for a thumbnail of thumb pixels (planes, in *ycc; see
// jpeg.c).
int fl_jpeg_scaled_ycc(const uint8_t *buf, size_t len, int size, int rgb, int thumb, long long max_pixels, fl_raster *hdr,
		       uint8_t **pix, fl_raster planes[3], uint8_t **ycc, int *w, int *h, char *err, size_t errlen);
// fl_jpeg_encode writes the whole raster (window = image) as a baseline
// 4:2:0 JPEG into the room bytes at into, or, when it does not fit (or
// room is 0), into memory it mallocs: *dst is into or that memory (free
// it).
int fl_jpeg_encode(const fl_raster *in, int quality, uint8_t *into, size_t room, uint8_t **dst, unsigned long *dstlen, char *err, size_t errlen);

// The YCbCr 4:2:0 planes of a JPEG (jpeg.c), each a 1-band raster: luma
// W x H, chroma (W + 1) / 2 x (H + 1) / 2. fl_jpeg_decode_ycc decodes the
// first rows rows (at most all; the work and memory go in whole strips of
// 16) of the three planes into memory it allocates (mem[k], for g_free),
// each row mirrored when mirror is set; it returns 1 for a JPEG laid out
// otherwise. fl_jpeg_encode_ycc writes three whole planes as a baseline
// 4:2:0 JPEG, where fl_jpeg_encode would.
int fl_jpeg_decode_ycc(const uint8_t *buf, size_t len, int rows, int mirror, fl_raster planes[3], uint8_t *mem[3], char *err, size_t errlen);
int fl_jpeg_encode_ycc(const fl_raster planes[3], int quality, uint8_t *into, size_t room, uint8_t **dst, unsigned long *dstlen, char *err, size_t errlen);

#endif
