package vips

/*
#cgo pkg-config: vips
#include <stdint.h>
#include <math.h>
#include <vips/vips.h>

// Point operations libvips lacks, written as ordinary libvips pipeline stages
// (vips_image_generate) so they stream tile by tile like the built-in ones and
// keep the chain at one decode and one encode.

typedef struct {
	double shift; // hue shift in sextants (degrees / 60)
	int bands;
} fl_hue_params;

// fl_hue_px turns the hue of one RGB pixel the way an HSV hue shift does:
// the largest and smallest channel (HSV value and chroma) stay, only which
// channel holds them and the middle channel's level change.
static inline void fl_hue_px(const VipsPel *p, VipsPel *q, double shift) {
	int r = p[0], g = p[1], b = p[2];
	int mx = r > g ? (r > b ? r : b) : (g > b ? g : b);
	int mn = r < g ? (r < b ? r : b) : (g < b ? g : b);
	int c = mx - mn;
	if (c == 0) {
		q[0] = r; q[1] = g; q[2] = b;
		return;
	}
	double h;
	if (mx == r) h = (double)(g - b) / c;
	else if (mx == g) h = (double)(b - r) / c + 2;
	else h = (double)(r - g) / c + 4;
	h += shift;
	h -= 6 * floor(h / 6);
	int sector = (int)h;
	if (sector > 5) sector = 5;
	double f = h - 2 * floor(h / 2) - 1; // position in the sector pair, -1..1
	int mid = mn + (int)(c * (1 - fabs(f)) + 0.5);
	switch (sector) {
	case 0: q[0] = mx; q[1] = mid; q[2] = mn; break;
	case 1: q[0] = mid; q[1] = mx; q[2] = mn; break;
	case 2: q[0] = mn; q[1] = mx; q[2] = mid; break;
	case 3: q[0] = mn; q[1] = mid; q[2] = mx; break;
	case 4: q[0] = mid; q[1] = mn; q[2] = mx; break;
	default: q[0] = mx; q[1] = mn; q[2] = mid; break;
	}
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
			fl_hue_px(p, q, pr->shift);
			if (pr->bands == 4) q[3] = p[3];
		}
	}
	return 0;
}

typedef struct {
	uint64_t seed, threshold; // a pixel is noise when its hash is below threshold
	int bands, width;
} fl_noise_params;

// fl_mix is splitmix64's finaliser: a pixel's fate depends only on the seed
// and its position, so the output is the same whatever order tiles run in.
static inline uint64_t fl_mix(uint64_t z) {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int fl_noise_gen(VipsRegion *or, void *seq, void *a, void *b, gboolean *stop) {
	VipsRegion *ir = (VipsRegion *)seq;
	const fl_noise_params *pr = (const fl_noise_params *)b;
	const VipsRect *r = &or->valid;
	int lsk = VIPS_REGION_SIZEOF_PEL(or) * r->width;
	if (vips_region_prepare(ir, r)) return -1;
	for (int y = 0; y < r->height; y++) {
		const VipsPel *p = VIPS_REGION_ADDR(ir, r->left, r->top + y);
		VipsPel *q = VIPS_REGION_ADDR(or, r->left, r->top + y);
		memcpy(q, p, lsk);
		uint64_t i = (uint64_t)(r->top + y) * pr->width + r->left;
		for (int x = 0; x < r->width; x++, i++, q += pr->bands) {
			uint64_t h = fl_mix(pr->seed + 0x9e3779b97f4a7c15ULL * (i + 1));
			if (h >= pr->threshold) continue;
			uint64_t v = fl_mix(h);
			q[0] = v; q[1] = v >> 8; q[2] = v >> 16;
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

static int fl_hue(VipsImage *in, VipsImage **out, double degrees) {
	fl_hue_params p = {degrees / 60.0, in->Bands};
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
	uint64_t t = fraction >= 1 ? UINT64_MAX : (uint64_t)(fraction * 18446744073709551616.0);
	fl_noise_params p = {seed, t, in->Bands, in->Xsize};
	return fl_point(in, out, fl_noise_gen, &p, sizeof p);
}
*/
import "C"

// HueShift turns every pixel's hue by degrees, as a shift of H in HSV does:
// value and saturation stay, gray pixels stay gray. Alpha is kept.
func (im *Image) HueShift(degrees float64) (*Image, error) {
	var out *C.VipsImage
	return im.result("hue", C.fl_hue(im.p, &out, C.double(degrees)), out)
}

// Noise replaces a fraction (0..1) of the pixels by random colours. Whether a
// pixel is replaced, and by what, is a hash of seed and the pixel's position,
// so equal seeds give equal images. Alpha is kept.
func (im *Image) Noise(seed uint64, fraction float64) (*Image, error) {
	var out *C.VipsImage
	return im.result("noise", C.fl_noise(im.p, &out, C.uint64_t(seed), C.double(fraction)), out)
}
