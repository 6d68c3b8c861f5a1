package vips

/*
#cgo pkg-config: vips
#cgo LDFLAGS: -lm
#cgo CFLAGS: -O3
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <vips/vips.h>

// Point operations libvips lacks, written as ordinary libvips pipeline stages
// (vips_image_generate) so they stream tile by tile like the built-in ones and
// keep the chain at one decode and one encode.

typedef struct {
	float shift;       // hue shift in sextants (degrees / 60), in [0, 6)
	float recip[256];  // 1/c, so the per-pixel work has no division
	int bands;
} fl_hue_params;

static inline float fl_clamp01(float v) { return v < 0 ? 0 : v > 1 ? 1 : v; }

// fl_channel is one channel of HSV-to-RGB: k places the channel on the hue
// circle (in sextants, 0..6); the channel is the value mx less a share of the
// chroma c that depends on how far the hue is from the channel's own.
static inline int fl_channel(float k, int mx, int c) {
	if (k >= 6) k -= 6;
	float t = k < 4 - k ? k : 4 - k;
	return mx - (int)(c * fl_clamp01(t) + 0.5f);
}

// fl_hue_px turns the hue of one RGB pixel the way an HSV hue shift does:
// HSV value (largest channel) and chroma (largest less smallest) stay. The
// code avoids data-dependent branches, which mispredict on real images.
static inline void fl_hue_px(const VipsPel *p, VipsPel *q, const fl_hue_params *pr) {
	int r = p[0], g = p[1], b = p[2];
	int mx = MAX(r, MAX(g, b)), mn = MIN(r, MIN(g, b));
	int c = mx - mn;
	int num = mx == r ? g - b + 6 * c : mx == g ? b - r + 2 * c : r - g + 4 * c;
	float h = num * pr->recip[c] + pr->shift; // in [0, 13); gray (c 0) gives any h
	if (h >= 6) h -= 6;
	if (h >= 6) h -= 6;
	q[0] = fl_channel(h + 5, mx, c);
	q[1] = fl_channel(h + 3, mx, c);
	q[2] = fl_channel(h + 1, mx, c);
}

static int fl_hue_gen(VipsRegion *or, void *seq, void *a, void *b, gboolean *stop) {
	VipsRegion *ir = (VipsRegion *)seq;
	const fl_hue_params *pr = (const fl_hue_params *)b;
	const VipsRect *r = &or->valid;
	if (vips_region_prepare(ir, r)) return -1;
	for (int y = 0; y < r->height; y++) {
		const VipsPel *p = VIPS_REGION_ADDR(ir, r->left, r->top + y);
		VipsPel *q = VIPS_REGION_ADDR(or, r->left, r->top + y);
		for (int x = 0; x < r->width; x++, p += pr->bands, q += pr->bands) {
			fl_hue_px(p, q, pr);
			if (pr->bands == 4) q[3] = p[3];
		}
	}
	return 0;
}

typedef struct {
	uint64_t seed;
	double logq; // log(1 - p): gaps between noisy pixels are geometric
	int all;     // p >= 1: every pixel
	int bands, width;
} fl_noise_params;

// fl_mix is splitmix64's finaliser.
static inline uint64_t fl_mix(uint64_t z) {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t fl_next(uint64_t *s) { return fl_mix(*s += 0x9e3779b97f4a7c15ULL); }

// fl_noise_gen walks each row from its first pixel with a random stream
// seeded by (seed, row), jumping from one noisy pixel to the next by
// geometric gaps: the work is proportional to the noisy pixels, and a
// pixel's fate depends only on the seed and its row, whatever tiles run.
static int fl_noise_gen(VipsRegion *or, void *seq, void *a, void *b, gboolean *stop) {
	VipsRegion *ir = (VipsRegion *)seq;
	const fl_noise_params *pr = (const fl_noise_params *)b;
	const VipsRect *r = &or->valid;
	int nb = pr->bands, right = r->left + r->width;
	if (vips_region_prepare(ir, r)) return -1;
	for (int y = 0; y < r->height; y++) {
		const VipsPel *p = VIPS_REGION_ADDR(ir, r->left, r->top + y);
		VipsPel *q = VIPS_REGION_ADDR(or, r->left, r->top + y);
		memcpy(q, p, (size_t)nb * r->width);
		q -= (size_t)nb * r->left; // so q + nb*x addresses column x
		uint64_t s = fl_mix(pr->seed ^ fl_mix((uint64_t)(r->top + y) + 1));
		for (int64_t x = -1;;) {
			if (pr->all) {
				x++;
			} else {
				double u = ((fl_next(&s) >> 11) + 1) * 0x1.0p-53; // (0, 1]
				double gap = floor(log(u) / pr->logq);
				if (gap >= pr->width) break;
				x += (int64_t)gap + 1;
			}
			if (x >= right) break;
			uint64_t v = fl_next(&s);
			if (x >= r->left) {
				VipsPel *px = q + nb * x;
				px[0] = v; px[1] = v >> 8; px[2] = v >> 16;
			}
		}
	}
	return 0;
}

// fl_point makes out a pipeline stage computing gen over in. params (size
// bytes) are copied into memory owned by out; out holds a reference to in.
static int fl_point(VipsImage *in, VipsImage **out, VipsGenerateFn gen, const void *params, size_t size) {
	if (vips_check_uncoded("framelake", in) || vips_check_format("framelake", in, VIPS_FORMAT_UCHAR) ||
			vips_image_pio_input(in))
		return -1;
	VipsImage *o = vips_image_new();
	if (vips_image_pipelinev(o, VIPS_DEMAND_STYLE_THINSTRIP, in, NULL)) {
		g_object_unref(o);
		return -1;
	}
	void *p = vips_malloc(VIPS_OBJECT(o), size);
	memcpy(p, params, size);
	g_object_ref(in);
	vips_object_local(o, in);
	if (vips_image_generate(o, vips_start_one, gen, vips_stop_one, in, p)) {
		g_object_unref(o);
		return -1;
	}
	*out = o;
	return 0;
}

typedef struct {
	VipsImage *in;        // in memory, so any pixel can be read directly
	double ia, ib, ic, id; // inverse matrix
	double ix, iy, ox, oy; // input point (ix, iy) lands on output (ox, oy)
	int bands;
} fl_affine_params;

// fl_tap reads one input pixel's band, zero outside the image (the fill).
static inline int fl_tap(const VipsImage *in, const VipsPel *base, size_t lsk, int x, int y, int band) {
	if (x < 0 || y < 0 || x >= in->Xsize || y >= in->Ysize) return 0;
	return base[(size_t)y * lsk + (size_t)x * in->Bands + band];
}

// fl_affine_gen samples the input bilinearly at the inverse image of each
// output pixel centre, stepping along the row in 16.16 fixed point.
static int fl_affine_gen(VipsRegion *or, void *seq, void *a, void *b, gboolean *stop) {
	const fl_affine_params *pr = (const fl_affine_params *)b;
	const VipsImage *in = pr->in;
	const VipsPel *base = (const VipsPel *)in->data;
	size_t lsk = VIPS_IMAGE_SIZEOF_LINE(in);
	const VipsRect *r = &or->valid;
	int nb = pr->bands, w = in->Xsize, h = in->Ysize;
	int64_t du = llround(pr->ia * 65536), dv = llround(pr->ic * 65536);
	// Walk the region in columns of 64 pixels: along a whole row a rotation
	// reads from hundreds of input rows, one page each, and stalls on cache
	// and TLB misses; a narrow column keeps its input within a few pages.
	for (int bx = 0; bx < r->width; bx += 64)
	for (int y = 0; y < r->height; y++) {
		int bw = MIN(64, r->width - bx);
		VipsPel *q = VIPS_REGION_ADDR(or, r->left + bx, r->top + y);
		double X = r->left + bx + 0.5 - pr->ox, Y = r->top + y + 0.5 - pr->oy;
		// Input position in pixel-centre coordinates (pixel i's centre is i).
		int64_t u = llround((pr->ia * X + pr->ib * Y + pr->ix - 0.5) * 65536);
		int64_t v = llround((pr->ic * X + pr->id * Y + pr->iy - 0.5) * 65536);
		for (int x = 0; x < bw; x++, u += du, v += dv, q += nb) {
			int x0 = (int)(u >> 16), y0 = (int)(v >> 16);
			int fx = (int)((u >> 8) & 255), fy = (int)((v >> 8) & 255);
			int w00 = (256 - fx) * (256 - fy), w01 = fx * (256 - fy);
			int w10 = (256 - fx) * fy, w11 = fx * fy; // sum 65536
			if (x0 >= 0 && y0 >= 0 && x0 + 1 < w && y0 + 1 < h) {
				const VipsPel *p0 = base + (size_t)y0 * lsk + (size_t)x0 * nb, *p1 = p0 + lsk;
				q[0] = (p0[0] * w00 + p0[nb] * w01 + p1[0] * w10 + p1[nb] * w11 + 32768) >> 16;
				q[1] = (p0[1] * w00 + p0[nb + 1] * w01 + p1[1] * w10 + p1[nb + 1] * w11 + 32768) >> 16;
				q[2] = (p0[2] * w00 + p0[nb + 2] * w01 + p1[2] * w10 + p1[nb + 2] * w11 + 32768) >> 16;
				if (nb == 4)
					q[3] = (p0[3] * w00 + p0[7] * w01 + p1[3] * w10 + p1[7] * w11 + 32768) >> 16;
			} else if (x0 < -1 || y0 < -1 || x0 >= w || y0 >= h) {
				memset(q, 0, nb);
			} else {
				for (int k = 0; k < nb; k++)
					q[k] = (fl_tap(in, base, lsk, x0, y0, k) * w00 + fl_tap(in, base, lsk, x0 + 1, y0, k) * w01 +
						fl_tap(in, base, lsk, x0, y0 + 1, k) * w10 + fl_tap(in, base, lsk, x0 + 1, y0 + 1, k) * w11 +
						32768) >> 16;
			}
		}
	}
	return 0;
}

// fl_affine maps in through [a b; c d] onto an ow x oh canvas (see Affine).
// The input is brought into memory once, as libvips' own rotations do,
// because an output strip reads from a tall slanted band of it.
static int fl_affine(VipsImage *in, VipsImage **out, double a, double b, double c, double d,
		double ix, double iy, double ox, double oy, int ow, int oh) {
	double det = a * d - b * c;
	if (fabs(det) < 1e-9) {
		vips_error("framelake", "affine: singular matrix");
		return -1;
	}
	if (vips_check_uncoded("framelake", in) || vips_check_format("framelake", in, VIPS_FORMAT_UCHAR))
		return -1;
	if (in->Bands != 3 && in->Bands != 4) {
		vips_error("framelake", "affine: %d bands, want 3 or 4", in->Bands);
		return -1;
	}
	VipsImage *m = vips_image_copy_memory(in);
	if (!m) return -1;
	VipsImage *o = vips_image_new();
	if (vips_image_pipelinev(o, VIPS_DEMAND_STYLE_ANY, m, NULL)) {
		g_object_unref(o);
		g_object_unref(m);
		return -1;
	}
	vips_object_local(o, m);
	o->Xsize = ow;
	o->Ysize = oh;
	fl_affine_params p = {m, d / det, -b / det, -c / det, a / det, ix, iy, ox, oy, m->Bands};
	void *pp = vips_malloc(VIPS_OBJECT(o), sizeof p);
	memcpy(pp, &p, sizeof p);
	if (vips_image_generate(o, NULL, fl_affine_gen, NULL, m, pp)) {
		g_object_unref(o);
		return -1;
	}
	*out = o;
	return 0;
}

static int fl_hue(VipsImage *in, VipsImage **out, double degrees) {
	fl_hue_params p;
	double s = fmod(degrees / 60.0, 6.0);
	p.shift = s < 0 ? s + 6 : s;
	if (p.shift >= 6) p.shift = 0;
	p.recip[0] = 0;
	for (int i = 1; i < 256; i++) p.recip[i] = 1.0f / i;
	p.bands = in->Bands;
	if (in->Bands != 3 && in->Bands != 4) {
		vips_error("framelake", "hue: %d bands, want 3 or 4", in->Bands);
		return -1;
	}
	return fl_point(in, out, fl_hue_gen, &p, sizeof p);
}

static int fl_noise(VipsImage *in, VipsImage **out, uint64_t seed, double fraction) {
	if (in->Bands != 3 && in->Bands != 4) {
		vips_error("framelake", "noise: %d bands, want 3 or 4", in->Bands);
		return -1;
	}
	if (fraction <= 0) return vips_copy(in, out, NULL);
	fl_noise_params p = {seed, log1p(-fraction), fraction >= 1, in->Bands, in->Xsize};
	return fl_point(in, out, fl_noise_gen, &p, sizeof p);
}
*/
import "C"

// Affine maps the image through the matrix [a b; c d] onto a w x h canvas:
// an input point (x, y), in pixel-edge coordinates (pixel i covers [i, i+1)),
// lands at (a(x-ix) + b(y-iy) + ox, c(x-ix) + d(y-iy) + oy). Interpolation is
// bilinear in 8-bit fixed point; uncovered output is zero in every band
// (black, and transparent when there is alpha; colour is not premultiplied,
// so edges of transparent images darken slightly).
func (im *Image) Affine(a, b, c, d, ix, iy, ox, oy float64, w, h int) (*Image, error) {
	var out *C.VipsImage
	rc := C.fl_affine(im.p, &out, C.double(a), C.double(b), C.double(c), C.double(d),
		C.double(ix), C.double(iy), C.double(ox), C.double(oy), C.int(w), C.int(h))
	return im.result("affine", rc, out)
}

// HueShift turns every pixel's hue by degrees, as a shift of H in HSV does:
// value and saturation stay, gray pixels stay gray. Alpha is kept.
func (im *Image) HueShift(degrees float64) (*Image, error) {
	var out *C.VipsImage
	return im.result("hue", C.fl_hue(im.p, &out, C.double(degrees)), out)
}

// Noise replaces each pixel, with probability fraction (0..1), by a colour
// with uniform random channels. Which pixels and which colours depends only
// on seed and the pixel's row and column, so equal seeds give equal images
// whatever order libvips computes tiles in. Alpha is kept.
func (im *Image) Noise(seed uint64, fraction float64) (*Image, error) {
	var out *C.VipsImage
	return im.result("noise", C.fl_noise(im.p, &out, C.uint64_t(seed), C.double(fraction)), out)
}
