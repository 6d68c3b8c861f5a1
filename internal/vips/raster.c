// The kernels of raster.h. Every loop is written so gcc vectorises it (no
// data-dependent branches in the inner loops of blur, flips and turns), and
// the hot ones are compiled for AVX2 too, picked at load time.
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "raster.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FL_HOT __attribute__((target_clones("avx2", "default")))
#define FL_X86 1
#include <immintrin.h>
#else
#define FL_HOT
#endif

static inline uint8_t *row_of(const fl_raster *r, int y) { return r->px + (size_t)y * r->stride; }

void fl_copy(const fl_raster *in, const fl_raster *out) {
	if (in->px == out->px) return;
	for (int y = 0; y < in->h; y++) memcpy(row_of(out, y), row_of(in, y), (size_t)in->w * in->bands);
}

static void swap_rows(uint8_t *a, uint8_t *b, size_t n) {
	uint8_t tmp[4096];
	for (size_t o = 0; o < n; o += sizeof tmp) {
		size_t k = n - o < sizeof tmp ? n - o : sizeof tmp;
		memcpy(tmp, a + o, k);
		memcpy(a + o, b + o, k);
		memcpy(b + o, tmp, k);
	}
}

// mirror_ends reverses the pixels i..j of a row (nb bytes each) from p into
// q, which may be p, by trading the two ends' pixels.
static void mirror_ends(const uint8_t *p, uint8_t *q, int i, int j, int nb) {
	for (; i < j; i++, j--) {
		uint8_t a[4], b[4];
		memcpy(a, p + (size_t)i * nb, nb);
		memcpy(b, p + (size_t)j * nb, nb);
		memcpy(q + (size_t)i * nb, b, nb);
		memcpy(q + (size_t)j * nb, a, nb);
	}
	if (i == j) memmove(q + (size_t)i * nb, p + (size_t)i * nb, nb);
}

#ifdef FL_X86
// rev3 holds the byte shuffles that reverse 16 RGB pixels (48 bytes, three
// registers): out[o] is the OR of in[i] shuffled by m[o][i].
typedef struct {
	__m128i m[3][3];
} rev3;

static void rev3_init(rev3 *rv) {
	uint8_t b[3][3][16];
	memset(b, 0x80, sizeof b); // pshufb writes 0 for a set high bit
	for (int k = 0; k < 48; k++) {
		int src = 3 * (15 - k / 3) + k % 3;
		b[k / 16][src / 16][k % 16] = (uint8_t)(src % 16);
	}
	for (int o = 0; o < 3; o++)
		for (int i = 0; i < 3; i++) rv->m[o][i] = _mm_loadu_si128((const __m128i *)b[o][i]);
}

__attribute__((target("ssse3"))) static inline void rev16_rgb(const __m128i in[3], __m128i out[3], const rev3 *rv) {
	for (int o = 0; o < 3; o++)
		out[o] = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(in[0], rv->m[o][0]), _mm_shuffle_epi8(in[1], rv->m[o][1])),
		                      _mm_shuffle_epi8(in[2], rv->m[o][2]));
}

// mirror_rgb trades blocks of 16 pixels between the ends of the row, each
// reversed in registers (SSSE3), and returns how many pixels it did at each
// end.
__attribute__((target("ssse3"))) static int mirror_rgb(const uint8_t *p, uint8_t *q, int w, const rev3 *rv) {
	int i = 0;
	for (; 2 * i + 32 <= w; i += 16) {
		size_t l = (size_t)3 * i, r = (size_t)3 * (w - 16 - i);
		__m128i L[3], R[3], oL[3], oR[3];
		for (int k = 0; k < 3; k++) {
			L[k] = _mm_loadu_si128((const __m128i *)(p + l) + k);
			R[k] = _mm_loadu_si128((const __m128i *)(p + r) + k);
		}
		rev16_rgb(L, oL, rv);
		rev16_rgb(R, oR, rv);
		for (int k = 0; k < 3; k++) {
			_mm_storeu_si128((__m128i *)(q + l) + k, oR[k]);
			_mm_storeu_si128((__m128i *)(q + r) + k, oL[k]);
		}
	}
	return i;
}

// mirror_rgba is mirror_rgb for 4-byte pixels, 4 to a register (SSE2).
static int mirror_rgba(const uint8_t *p, uint8_t *q, int w) {
	int i = 0;
	for (; 2 * i + 8 <= w; i += 4) {
		size_t l = (size_t)4 * i, r = (size_t)4 * (w - 4 - i);
		__m128i L = _mm_loadu_si128((const __m128i *)(p + l)), R = _mm_loadu_si128((const __m128i *)(p + r));
		_mm_storeu_si128((__m128i *)(q + l), _mm_shuffle_epi32(R, 0x1B));
		_mm_storeu_si128((__m128i *)(q + r), _mm_shuffle_epi32(L, 0x1B));
	}
	return i;
}

// mirror_row reverses the w pixels of a row from p into q, which may be p.
static void mirror_row(const uint8_t *p, uint8_t *q, int w, int nb, const rev3 *rv) {
	int done = 0;
	if (nb == 4)
		done = mirror_rgba(p, q, w);
	else if (__builtin_cpu_supports("ssse3"))
		done = mirror_rgb(p, q, w, rv);
	mirror_ends(p, q, done, w - 1 - done, nb);
}
#else
typedef int rev3;
static void rev3_init(rev3 *rv) { (void)rv; }
static void mirror_row(const uint8_t *p, uint8_t *q, int w, int nb, const rev3 *rv) { mirror_ends(p, q, 0, w - 1, nb); }
#endif

void fl_flip(const fl_raster *in, const fl_raster *out, int vertical) {
	size_t n = (size_t)in->w * in->bands;
	if (!vertical) {
		rev3 rv;
		rev3_init(&rv);
		for (int y = 0; y < in->h; y++) mirror_row(row_of(in, y), row_of(out, y), in->w, in->bands, &rv);
	} else if (in->px == out->px) {
		for (int y = 0; y < in->h / 2; y++) swap_rows(row_of(out, y), row_of(out, in->h - 1 - y), n);
	} else {
		for (int y = 0; y < in->h; y++) memcpy(row_of(out, y), row_of(in, in->h - 1 - y), n);
	}
}

// fl_rot turns the whole image clockwise by quarter * 90 degrees, in 64 x 64
// tiles so both the rows read and the rows written stay in cache.
void fl_rot(const fl_raster *in, const fl_raster *out, int quarter) {
	int nb = in->bands, W = out->w, H = out->h;
	for (int ty = 0; ty < H; ty += 64)
	for (int tx = 0; tx < W; tx += 64) {
		for (int Y = ty; Y < ty + 64 && Y < H; Y++) {
			uint8_t *q = row_of(out, Y) + (size_t)tx * nb;
			for (int X = tx; X < tx + 64 && X < W; X++, q += nb) {
				int x, y; // the input pixel that lands on (X, Y)
				switch (quarter) {
				case 1: x = Y, y = in->h - 1 - X; break;
				case 2: x = in->w - 1 - X, y = in->h - 1 - Y; break;
				default: x = in->w - 1 - Y, y = X; break;
				}
				memcpy(q, row_of(in, y) + (size_t)x * nb, nb);
			}
		}
	}
}

// Bilinear sampling works in 1/64 of a pixel (OpenCV's warpAffine uses
// 1/32), so a vertical mix of two bytes fits the signed bytes pmaddubsw
// multiplies by.
enum { FRAC = 6, ONE = 1 << FRAC };

// lerp2 is the bilinear mix of the nb-band pixels at p0, p0 + nb (top)
// and p1, p1 + nb (bottom) with fractions fx, fy of ONE: vertically, then
// horizontally, rounded. lerp2_ssse3 is the same arithmetic in registers,
// bit for bit, so outputs do not depend on the machine.
static inline void lerp2(const uint8_t *p0, const uint8_t *p1, int fx, int fy, uint8_t *q, int nb) {
	for (int k = 0; k < nb; k++) {
		int l = p0[k] * (ONE - fy) + p1[k] * fy, r = p0[nb + k] * (ONE - fy) + p1[nb + k] * fy;
		q[k] = (uint8_t)((l * (ONE - fx) + r * fx + (1 << (2 * FRAC - 1))) >> (2 * FRAC));
	}
}

// lerp_at samples one output pixel anywhere: the 2 x 2 neighbourhood of
// (x0, y0), zero outside the image (the fill).
static inline void lerp_at(const fl_raster *in, int x0, int y0, int fx, int fy, uint8_t *q, int nb) {
	if (x0 < -1 || y0 < -1 || x0 >= in->w || y0 >= in->h) {
		memset(q, 0, nb);
		return;
	}
	uint8_t p[16] = {0};
	for (int j = 0; j < 2; j++)
		for (int i = 0; i < 2; i++)
			if (x0 + i >= 0 && x0 + i < in->w && y0 + j >= 0 && y0 + j < in->h)
				memcpy(p + (j * 2 + i) * nb, row_of(in, y0 + j) + (size_t)(x0 + i) * nb, nb);
	lerp2(p, p + 2 * nb, fx, fy, q, nb);
}

// span is a run of n output pixels from q on, the input position (u, v)
// stepping by (du, dv), in 16.16 fixed point.
typedef struct {
	uint8_t *q;
	int n;
	int64_t u, v, du, dv;
} span;

static inline int x_of(int64_t u) { return (int)(u >> 16); }
static inline int frac_of(int64_t u) { return (int)(u >> (16 - FRAC)) & (ONE - 1); }

// span_edges samples pixels [a, b) of s one by one, anywhere; nb is a
// constant where it is inlined.
static inline void span_edges_nb(const fl_raster *in, const span *s, int a, int b, int nb) {
	for (int x = a; x < b; x++) {
		int64_t u = s->u + x * s->du, v = s->v + x * s->dv;
		lerp_at(in, x_of(u), x_of(v), frac_of(u), frac_of(v), s->q + (size_t)x * nb, nb);
	}
}

static void span_edges(const fl_raster *in, const span *s, int a, int b) {
	if (in->bands == 3)
		span_edges_nb(in, s, a, b, 3);
	else
		span_edges_nb(in, s, a, b, 4);
}

// floor_div and ceil_div divide rounding down and up, for any signs.
static inline int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
static inline int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

// within narrows [*a, *b) to the x where lo <= u + x du < hi.
static inline void within(int64_t u, int64_t du, int64_t lo, int64_t hi, int64_t *a, int64_t *b) {
	if (du == 0) {
		if (u < lo || u >= hi) *b = *a;
		return;
	}
	int64_t first = du > 0 ? ceil_div(lo - u, du) : ceil_div(hi - 1 - u, du);
	int64_t last = du > 0 ? floor_div(hi - 1 - u, du) : floor_div(lo - u, du);
	if (first > *a) *a = first;
	if (last + 1 < *b) *b = last + 1;
}

// clamp_range stores [lo, hi) within [0, n), empty where hi <= lo.
static inline void clamp_range(int64_t lo, int64_t hi, int n, int *a, int *b) {
	if (lo > n) lo = n;
	if (hi < lo) hi = lo;
	*a = (int)lo;
	*b = (int)hi;
}

// interior finds the pixels [*a, *b) of s whose whole 2 x 2 neighbourhood,
// read as 8 bytes a row for RGB, lies inside the image: they need no checks.
static inline void interior(const fl_raster *in, const span *s, int *a, int *b) {
	int64_t lo = 0, hi = s->n;
	within(s->u, s->du, 0, (int64_t)(in->w - 1 - (in->bands == 3)) << 16, &lo, &hi);
	within(s->v, s->dv, 0, (int64_t)(in->h - 1) << 16, &lo, &hi);
	clamp_range(lo, hi, s->n, a, b);
}

// touching finds the pixels [*a, *b) of s with any of their 2 x 2
// neighbourhood inside the image; the others are the fill.
static inline void touching(const fl_raster *in, const span *s, int *a, int *b) {
	int64_t lo = 0, hi = s->n;
	within(s->u, s->du, -((int64_t)1 << 16), (int64_t)in->w << 16, &lo, &hi);
	within(s->v, s->dv, -((int64_t)1 << 16), (int64_t)in->h << 16, &lo, &hi);
	clamp_range(lo, hi, s->n, a, b);
}

// span_plain samples the interior pixels [a, b) of s with lerp2.
static inline void span_plain(const fl_raster *in, const span *s, int a, int b) {
	int nb = in->bands;
	for (int x = a; x < b; x++) {
		int64_t u = s->u + x * s->du, v = s->v + x * s->dv;
		const uint8_t *p0 = row_of(in, x_of(v)) + (size_t)x_of(u) * nb;
		lerp2(p0, p0 + in->stride, frac_of(u), frac_of(v), s->q + (size_t)x * nb, nb);
	}
}

#ifdef FL_X86
// lerp_tables are the byte pairs (ONE - fy, fy) that pmaddubsw multiplies
// interleaved top and bottom bytes by, the word pairs (ONE - fx, fx) that
// pmaddwd multiplies left and right by, and the shuffles that pair each
// left band with its right one (RGB or RGBA) and gather the results.
typedef struct {
	__m128i y[ONE], x[ONE], pair3, pair4, gather;
} lerp_tables;

static void lerp_tables_init(lerp_tables *t) {
	for (int f = 0; f < ONE; f++) {
		t->y[f] = _mm_set1_epi16((short)((f << 8) | (ONE - f)));
		t->x[f] = _mm_set1_epi32((f << 16) | (ONE - f));
	}
	// Words: left band k is word k, right band k is word nb + k.
	t->pair3 = _mm_setr_epi8(0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11, 4, 5, 10, 11);
	t->pair4 = _mm_setr_epi8(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15);
	t->gather = _mm_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
}

// span_ssse3 is span_plain in SSSE3: it reads 8 bytes a row (two pixels
// and, for RGB, two bytes beyond, which interior keeps inside the row) and
// writes 4 bytes a pixel, for RGB the next pixel's first, which that pixel
// then writes over; the last pixel writes exactly its own. nb is a constant
// where it is inlined, so the stores are single moves.
__attribute__((target("ssse3"))) static inline uint32_t lerp2_ssse3(const uint8_t *p0, size_t stride, int fx, int fy, __m128i pair, const lerp_tables *t) {
	__m128i tb = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)p0), _mm_loadl_epi64((const __m128i *)(p0 + stride)));
	__m128i col = _mm_maddubs_epi16(tb, t->y[fy]);
	__m128i mix = _mm_madd_epi16(_mm_shuffle_epi8(col, pair), t->x[fx]);
	mix = _mm_srli_epi32(_mm_add_epi32(mix, _mm_set1_epi32(1 << (2 * FRAC - 1))), 2 * FRAC);
	return (uint32_t)_mm_cvtsi128_si32(_mm_shuffle_epi8(mix, t->gather));
}

__attribute__((target("ssse3"))) static inline void span_ssse3_nb(const fl_raster *in, const span *s, int a, int b, const lerp_tables *t, int nb) {
	if (a >= b) return;
	size_t stride = in->stride;
	const uint8_t *px = in->px;
	__m128i pair = nb == 3 ? t->pair3 : t->pair4;
	int64_t u = s->u + a * s->du, v = s->v + a * s->dv, du = s->du, dv = s->dv;
	uint8_t *q = s->q + (size_t)a * nb;
	for (int x = a; x < b - 1; x++, u += du, v += dv, q += nb) {
		uint32_t o = lerp2_ssse3(px + (size_t)x_of(v) * stride + (size_t)x_of(u) * nb, stride, frac_of(u), frac_of(v), pair, t);
		memcpy(q, &o, 4);
	}
	uint32_t o = lerp2_ssse3(px + (size_t)x_of(v) * stride + (size_t)x_of(u) * nb, stride, frac_of(u), frac_of(v), pair, t);
	memcpy(q, &o, nb);
}

__attribute__((target("ssse3"))) static void span_ssse3_rgb(const fl_raster *in, const span *s, int a, int b, const lerp_tables *t) {
	span_ssse3_nb(in, s, a, b, t, 3);
}

__attribute__((target("ssse3"))) static void span_ssse3_rgba(const fl_raster *in, const span *s, int a, int b, const lerp_tables *t) {
	span_ssse3_nb(in, s, a, b, t, 4);
}
#endif

// fl_affine samples the input bilinearly at the inverse image of each output
// pixel centre: output (X, Y) reads input inv * (X + 0.5 - ox, Y + 0.5 - oy)
// + (ix, iy); outside the input is zero (the fill). The output goes in tiles
// of 64 x 64: along a whole row a rotation reads from hundreds of input rows,
// a page each, and down a whole column it writes as many; a tile keeps both
// within what the caches and the TLB hold. Within a tile row, the pixels
// whose neighbourhood is inside the input are found first and sampled
// without checks.
void fl_affine(const fl_raster *in, const fl_raster *out, const double inv[4], double ix, double iy, double ox, double oy) {
	int64_t du = llround(inv[0] * 65536), dv = llround(inv[2] * 65536);
	int nb = in->bands;
	void (*fast)(const fl_raster *, const span *, int, int, const lerp_tables *) = NULL;
#ifdef FL_X86
	lerp_tables t; // 2 KB: cgo calls C on a thread's own stack
	if (__builtin_cpu_supports("ssse3")) fast = nb == 3 ? span_ssse3_rgb : span_ssse3_rgba;
	if (fast) lerp_tables_init(&t);
#endif
	for (int by = 0; by < out->h; by += 64)
	for (int bx = 0; bx < out->w; bx += 64)
	for (int y = by; y < by + 64 && y < out->h; y++) {
		double X = bx + 0.5 - ox, Y = y + 0.5 - oy;
		// Input position in pixel-centre coordinates (pixel i's centre is i).
		span s = {row_of(out, y) + (size_t)bx * nb, out->w - bx < 64 ? out->w - bx : 64,
		          llround((inv[0] * X + inv[1] * Y + ix - 0.5) * 65536), llround((inv[2] * X + inv[3] * Y + iy - 0.5) * 65536), du, dv};
		int c, d, a, b; // [c, d) touch the image, [a, b) lie inside it
		touching(in, &s, &c, &d);
		interior(in, &s, &a, &b);
		if (a >= b) a = b = d;
		memset(s.q, 0, (size_t)c * nb);
		memset(s.q + (size_t)d * nb, 0, (size_t)(s.n - d) * nb);
		span_edges(in, &s, c, a);
		span_edges(in, &s, b, d);
#ifdef FL_X86
		if (fast) {
			fast(in, &s, a, b, &t);
			continue;
		}
#endif
		span_plain(in, &s, a, b);
	}
}

// The blur's two passes are written out in SSE2 and AVX2 (picked at run
// time) with a scalar tail, all three the same arithmetic: each block of
// values keeps its sum in registers across every tap.

// col_px is the vertical filter of value i: rows[0] is the centre row,
// rows[k] and rows[r + k] are k above and k below; 8-bit weights sum to
// 256, so the result is the value times 256, exact in 16 bits.
static inline uint16_t col_px(const uint8_t *const *rows, size_t i, const uint16_t *wt, int r) {
	uint16_t s = (uint16_t)(wt[0] * rows[0][i]);
	for (int k = 1; k <= r; k++) s += (uint16_t)(wt[k] * (rows[k][i] + rows[r + k][i]));
	return s;
}

// row_px is the horizontal filter of value i of t, whose values are pixel
// values times 256 with r * nb of replicated edge on each side. The pairs
// k left and k right are averaged first (pavgw), so each pair costs one
// multiply; wt[0] weighs the centre and wt[k] the pair k, 16-bit weights
// summing to 65535 (a pair's is twice a tap's), taking the high half of each
// product (pmulhuw). The high halves lose about half a unit each, which the
// sum starts by giving back; then it is rounded to 8 bits.
static inline uint16_t row_start(int r) { return (uint16_t)((r + 2) / 2); }

static inline uint8_t row_px(const uint16_t *t, size_t i, int nb, const uint16_t *wt, int r) {
	const uint16_t *c = t + (size_t)r * nb + i;
	uint16_t s = row_start(r) + (uint16_t)((c[0] * (uint32_t)wt[0]) >> 16);
	for (int k = 1; k <= r; k++) {
		uint32_t pair = ((uint32_t)c[-k * nb] + c[k * nb] + 1) >> 1;
		s += (uint16_t)((pair * wt[k]) >> 16);
	}
	return (uint8_t)((s + 128) >> 8);
}

#ifdef FL_X86
static void blur_col_sse2(const uint8_t *const *rows, uint16_t *t, size_t n, const uint16_t *wt, int r) {
	__m128i z = _mm_setzero_si128();
	size_t i = 0;
	for (; i + 16 <= n; i += 16) {
		__m128i c = _mm_loadu_si128((const __m128i *)(rows[0] + i)), w = _mm_set1_epi16((short)wt[0]);
		__m128i lo = _mm_mullo_epi16(_mm_unpacklo_epi8(c, z), w), hi = _mm_mullo_epi16(_mm_unpackhi_epi8(c, z), w);
		for (int k = 1; k <= r; k++) {
			__m128i a = _mm_loadu_si128((const __m128i *)(rows[k] + i)), b = _mm_loadu_si128((const __m128i *)(rows[r + k] + i));
			w = _mm_set1_epi16((short)wt[k]);
			lo = _mm_add_epi16(lo, _mm_mullo_epi16(_mm_add_epi16(_mm_unpacklo_epi8(a, z), _mm_unpacklo_epi8(b, z)), w));
			hi = _mm_add_epi16(hi, _mm_mullo_epi16(_mm_add_epi16(_mm_unpackhi_epi8(a, z), _mm_unpackhi_epi8(b, z)), w));
		}
		_mm_storeu_si128((__m128i *)(t + i), lo);
		_mm_storeu_si128((__m128i *)(t + i + 8), hi);
	}
	for (; i < n; i++) t[i] = col_px(rows, i, wt, r);
}

static void blur_row_sse2(const uint16_t *t, uint8_t *q, size_t n, int nb, const uint16_t *wt, int r) {
	__m128i round = _mm_set1_epi16(128);
	size_t i = 0;
	for (; i + 16 <= n; i += 16) {
		const uint16_t *c = t + (size_t)r * nb + i;
		__m128i s = _mm_set1_epi16((short)row_start(r)), w = _mm_set1_epi16((short)wt[0]);
		__m128i lo = _mm_add_epi16(s, _mm_mulhi_epu16(_mm_loadu_si128((const __m128i *)c), w));
		__m128i hi = _mm_add_epi16(s, _mm_mulhi_epu16(_mm_loadu_si128((const __m128i *)(c + 8)), w));
		for (int k = 1; k <= r; k++) {
			const uint16_t *a = c - k * nb, *b = c + k * nb;
			w = _mm_set1_epi16((short)wt[k]);
			__m128i pl = _mm_avg_epu16(_mm_loadu_si128((const __m128i *)a), _mm_loadu_si128((const __m128i *)b));
			__m128i ph = _mm_avg_epu16(_mm_loadu_si128((const __m128i *)(a + 8)), _mm_loadu_si128((const __m128i *)(b + 8)));
			lo = _mm_add_epi16(lo, _mm_mulhi_epu16(pl, w));
			hi = _mm_add_epi16(hi, _mm_mulhi_epu16(ph, w));
		}
		lo = _mm_srli_epi16(_mm_add_epi16(lo, round), 8);
		hi = _mm_srli_epi16(_mm_add_epi16(hi, round), 8);
		_mm_storeu_si128((__m128i *)(q + i), _mm_packus_epi16(lo, hi));
	}
	for (; i < n; i++) q[i] = row_px(t, i, nb, wt, r);
}

// blur_col_avx2 multiplies each pair's bytes, interleaved, by the weight
// twice in one pmaddubsw: pair weights never pass 62 (at sigma 0.93), so
// two bytes times one stay below 32768. The interleave works within each
// half of the register, so the pair sums come in the order 0-7, 16-23 and
// 8-15, 24-31; one exchange of halves at the end restores it.
__attribute__((target("avx2"))) static void blur_col_avx2(const uint8_t *const *rows, uint16_t *t, size_t n, const uint16_t *wt, int r) {
	size_t i = 0;
	for (; i + 32 <= n; i += 32) {
		__m256i w = _mm256_set1_epi16((short)wt[0]);
		__m256i lo = _mm256_mullo_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(rows[0] + i))), w);
		__m256i hi = _mm256_mullo_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(rows[0] + i + 16))), w);
		__m256i pl = _mm256_setzero_si256(), ph = pl;
		for (int k = 1; k <= r; k++) {
			__m256i a = _mm256_loadu_si256((const __m256i *)(rows[k] + i)), b = _mm256_loadu_si256((const __m256i *)(rows[r + k] + i));
			w = _mm256_set1_epi8((char)wt[k]);
			pl = _mm256_add_epi16(pl, _mm256_maddubs_epi16(_mm256_unpacklo_epi8(a, b), w));
			ph = _mm256_add_epi16(ph, _mm256_maddubs_epi16(_mm256_unpackhi_epi8(a, b), w));
		}
		lo = _mm256_add_epi16(lo, _mm256_permute2x128_si256(pl, ph, 0x20));
		hi = _mm256_add_epi16(hi, _mm256_permute2x128_si256(pl, ph, 0x31));
		_mm256_storeu_si256((__m256i *)(t + i), lo);
		_mm256_storeu_si256((__m256i *)(t + i + 16), hi);
	}
	for (; i < n; i++) t[i] = col_px(rows, i, wt, r);
}

__attribute__((target("avx2"))) static void blur_row_avx2(const uint16_t *t, uint8_t *q, size_t n, int nb, const uint16_t *wt, int r) {
	__m256i round = _mm256_set1_epi16(128);
	size_t i = 0;
	for (; i + 32 <= n; i += 32) {
		const uint16_t *c = t + (size_t)r * nb + i;
		__m256i s = _mm256_set1_epi16((short)row_start(r)), w = _mm256_set1_epi16((short)wt[0]);
		__m256i lo = _mm256_add_epi16(s, _mm256_mulhi_epu16(_mm256_loadu_si256((const __m256i *)c), w));
		__m256i hi = _mm256_add_epi16(s, _mm256_mulhi_epu16(_mm256_loadu_si256((const __m256i *)(c + 16)), w));
		for (int k = 1; k <= r; k++) {
			const uint16_t *a = c - k * nb, *b = c + k * nb;
			w = _mm256_set1_epi16((short)wt[k]);
			__m256i pl = _mm256_avg_epu16(_mm256_loadu_si256((const __m256i *)a), _mm256_loadu_si256((const __m256i *)b));
			__m256i ph = _mm256_avg_epu16(_mm256_loadu_si256((const __m256i *)(a + 16)), _mm256_loadu_si256((const __m256i *)(b + 16)));
			lo = _mm256_add_epi16(lo, _mm256_mulhi_epu16(pl, w));
			hi = _mm256_add_epi16(hi, _mm256_mulhi_epu16(ph, w));
		}
		lo = _mm256_srli_epi16(_mm256_add_epi16(lo, round), 8);
		hi = _mm256_srli_epi16(_mm256_add_epi16(hi, round), 8);
		// packus works within 128-bit lanes; the permute puts them in order.
		_mm256_storeu_si256((__m256i *)(q + i), _mm256_permute4x64_epi64(_mm256_packus_epi16(lo, hi), 0xD8));
	}
	for (; i < n; i++) q[i] = row_px(t, i, nb, wt, r);
}

static int have_avx2(void) { return __builtin_cpu_supports("avx2"); }

static void blur_col(const uint8_t *const *rows, uint16_t *t, size_t n, const uint16_t *wt, int r) {
	(have_avx2() ? blur_col_avx2 : blur_col_sse2)(rows, t, n, wt, r);
}

static void blur_row(const uint16_t *t, uint8_t *q, size_t n, int nb, const uint16_t *wt, int r) {
	(have_avx2() ? blur_row_avx2 : blur_row_sse2)(t, q, n, nb, wt, r);
}
#else
static void blur_col(const uint8_t *const *rows, uint16_t *t, size_t n, const uint16_t *wt, int r) {
	for (size_t i = 0; i < n; i++) t[i] = col_px(rows, i, wt, r);
}

static void blur_row(const uint16_t *t, uint8_t *q, size_t n, int nb, const uint16_t *wt, int r) {
	for (size_t i = 0; i < n; i++) q[i] = row_px(t, i, nb, wt, r);
}
#endif

// weights quantises the Gaussian of sigma, cut at r, to integers summing to
// one (whole): the centre takes what rounding the others leaves.
static void weights(uint16_t *wt, double sigma, int r, int whole) {
	double sum = 1;
	for (int k = 1; k <= r; k++) sum += 2 * exp(-(double)k * k / (2 * sigma * sigma));
	int rest = 0;
	for (int k = 1; k <= r; k++)
		rest += 2 * (wt[k] = (uint16_t)lround(exp(-(double)k * k / (2 * sigma * sigma)) / sum * whole));
	wt[0] = (uint16_t)(whole - rest);
}

// fl_blur convolves the window with a Gaussian of standard deviation sigma
// cut at radius r, separably, edges replicated: each output row is the
// vertical pass over 2r + 1 input rows, then the horizontal pass over that,
// so the only extra memory is two rows. Weights are 8-bit vertically (sums
// stay exact in 16 bits, twice the lanes of 32) and 16-bit horizontally.
// Sums of at most 255 << 8 leave room for the rounding.
int fl_blur(const fl_raster *in, const fl_raster *out, double sigma, int r) {
	int nb = in->bands, w = in->w, h = in->h;
	size_t n = (size_t)w * nb, padded = n + 2 * (size_t)r * nb;
	uint16_t *wv = g_try_malloc(sizeof(uint16_t) * (r + 1)), *wh = g_try_malloc(sizeof(uint16_t) * (r + 1));
	uint16_t *t = g_try_malloc(sizeof(uint16_t) * padded);
	const uint8_t **rows = g_try_malloc(sizeof(uint8_t *) * (2 * r + 1));
	int rc = -1;
	if (!wv || !wh || !t || !rows) goto done;
	weights(wv, sigma, r, 256);
	weights(wh, sigma, r, 65535);
	for (int k = 1; k <= r; k++) wh[k] *= 2; // a pair's weight, on its average
	for (int y = 0; y < h; y++) {
		rows[0] = row_of(in, y);
		for (int k = 1; k <= r; k++) {
			rows[k] = row_of(in, y - k < 0 ? 0 : y - k);
			rows[r + k] = row_of(in, y + k >= h ? h - 1 : y + k);
		}
		uint16_t *c = t + (size_t)r * nb;
		blur_col(rows, c, n, wv, r);
		for (int k = 0; k < r; k++) {
			memcpy(t + (size_t)k * nb, c, nb * sizeof *t);
			memcpy(c + n + (size_t)k * nb, c + n - nb, nb * sizeof *t);
		}
		blur_row(t, row_of(out, y), n, nb, wh, r);
	}
	rc = 0;
done:
	g_free(wv);
	g_free(wh);
	g_free(t);
	g_free(rows);
	return rc;
}

static inline uint8_t clamp8(int32_t v) { return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v; }

// recomb_row is fl_recomb on n pixels of nb bands (constant where inlined,
// so the loop vectorises); in place too, as each pixel only reads itself.
static inline void recomb_row(const uint8_t *p, uint8_t *q, int n, const int32_t *m, int nb) {
	int32_t m0 = m[0], m1 = m[1], m2 = m[2], m3 = m[3], m4 = m[4], m5 = m[5], m6 = m[6], m7 = m[7], m8 = m[8];
#pragma GCC ivdep
	for (int x = 0; x < n; x++) {
		const uint8_t *a = p + (size_t)x * nb;
		uint8_t *o = q + (size_t)x * nb;
		int32_t r = a[0], g = a[1], b = a[2];
		o[0] = clamp8((m0 * r + m1 * g + m2 * b + 32768) >> 16);
		o[1] = clamp8((m3 * r + m4 * g + m5 * b + 32768) >> 16);
		o[2] = clamp8((m6 * r + m7 * g + m8 * b + 32768) >> 16);
		if (nb == 4) o[3] = a[3];
	}
}

static inline void recomb_rows(const fl_raster *in, const fl_raster *out, const int32_t m[9], int nb) {
	for (int y = 0; y < in->h; y++) recomb_row(row_of(in, y), row_of(out, y), in->w, m, nb);
}

FL_HOT static void recomb_rgb(const fl_raster *in, const fl_raster *out, const int32_t m[9]) { recomb_rows(in, out, m, 3); }
FL_HOT static void recomb_rgba(const fl_raster *in, const fl_raster *out, const int32_t m[9]) { recomb_rows(in, out, m, 4); }

// fl_recomb multiplies each pixel's colour by the 3 x 3 matrix m (16.16
// fixed point), rounding and clamping; alpha is kept.
void fl_recomb(const fl_raster *in, const fl_raster *out, const int32_t m[9]) { (in->bands == 3 ? recomb_rgb : recomb_rgba)(in, out, m); }

// fl_lut maps the colour bands through lut; alpha is kept.
void fl_lut(const fl_raster *in, const fl_raster *out, const uint8_t lut[256]) {
	int nb = in->bands;
	for (int y = 0; y < in->h; y++) {
		const uint8_t *p = row_of(in, y);
		uint8_t *q = row_of(out, y);
		for (int x = 0; x < in->w; x++, p += nb, q += nb) {
			q[0] = lut[p[0]], q[1] = lut[p[1]], q[2] = lut[p[2]];
			if (nb == 4) q[3] = p[3];
		}
	}
}

static inline int16_t smax(int16_t a, int16_t b) { return a > b ? a : b; }
static inline int16_t smin(int16_t a, int16_t b) { return a < b ? a : b; }

// The hue shift works in 16-bit lanes: positions on the hue circle are in
// 1/16 of a level of the pixel's own chroma c, so a whole turn, 6c, stays
// below 2^15.

// hue_px is one channel of the HSV colour with value mx, chroma C and hue P
// (both in 1/16 levels), the channel offset by o sextants: value less
// chroma times how far the hue is from the channel's own sextants.
static inline uint8_t hue_px(int16_t mx, int16_t C, int16_t P, int o) {
	int16_t t = (int16_t)(P - (6 - o) * C); // P + o C, less a turn
	t = (int16_t)(t < 0 ? t + 6 * C : t);
	int16_t d = smax(0, smin(C, smin(t, (int16_t)(4 * C - t))));
	return (uint8_t)(mx - ((d + 8) >> 4));
}

// hue_row shifts n pixels of nb bands (a constant where inlined, so the
// loop has no branch and vectorises) by whole sextants and frac/65536 of
// one. In place (p == q) too, each pixel only reads itself.
static inline void hue_row(const uint8_t *p, uint8_t *q, int n, int16_t whole, uint16_t frac, int nb) {
#pragma GCC ivdep
	for (int x = 0; x < n; x++) {
		const uint8_t *a = p + (size_t)x * nb;
		int16_t r = a[0], g = a[1], b = a[2];
		int16_t mx = smax(r, smax(g, b)), c = (int16_t)(mx - smin(r, smin(g, b))), C = (int16_t)(c << 4);
		int16_t H = (int16_t)(mx == r ? g - b : mx == g ? b - r + 2 * c : r - g + 4 * c); // in -c..5c
		H = (int16_t)(H + whole * c + (H < 0 ? 6 * c : 0));                                 // below 11c
		H = (int16_t)(H >= 6 * c ? H - 6 * c : H);
		int16_t P = (int16_t)((H << 4) + (uint16_t)(((uint32_t)frac * (uint16_t)C) >> 16)); // pmulhuw
		P = (int16_t)(P >= 6 * C ? P - 6 * C : P);
		uint8_t *o = q + (size_t)x * nb;
		o[0] = hue_px(mx, C, P, 5), o[1] = hue_px(mx, C, P, 3), o[2] = hue_px(mx, C, P, 1);
		if (nb == 4) o[3] = a[3];
	}
}

// hue_rows runs hue_row over the rows of in, nb bands each. One function
// for each band count: compiled together, the RGBA loop slows the RGB one
// by a quarter.
static inline void hue_rows(const fl_raster *in, const fl_raster *out, int16_t whole, uint16_t frac, int nb) {
	for (int y = 0; y < in->h; y++) hue_row(row_of(in, y), row_of(out, y), in->w, whole, frac, nb);
}

FL_HOT static void hue_rgb(const fl_raster *in, const fl_raster *out, int16_t whole, uint16_t frac) { hue_rows(in, out, whole, frac, 3); }
FL_HOT static void hue_rgba(const fl_raster *in, const fl_raster *out, int16_t whole, uint16_t frac) { hue_rows(in, out, whole, frac, 4); }

// fl_hue turns each pixel's hue the way an HSV hue shift does: value (the
// largest channel) and chroma (largest less smallest) stay; gray stays gray.
// In integers without division: the hue is measured in units of the
// pixel's own chroma, so the shift scales by it.
void fl_hue(const fl_raster *in, const fl_raster *out, double degrees) {
	double s = fmod(degrees / 60.0, 6.0);
	int32_t shift = (int32_t)lround((s < 0 ? s + 6 : s) * 65536) % (6 << 16);
	(in->bands == 3 ? hue_rgb : hue_rgba)(in, out, (int16_t)(shift >> 16), (uint16_t)(shift & 0xffff));
}

// mix is splitmix64's finaliser.
static inline uint64_t mix(uint64_t z) {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t next_rand(uint64_t *s) { return mix(*s += 0x9e3779b97f4a7c15ULL); }

// fl_noise gives each pixel, with probability fraction, uniform random colour
// channels. Each row of the whole image has its own random stream seeded by
// (seed, row), walked from the image's first column by geometric gaps from one
// noisy pixel to the next: the work is proportional to the noisy pixels, and a
// pixel's fate depends only on the seed, its row and its column, whatever
// window is in memory. Alpha is kept.
void fl_noise(const fl_raster *in, const fl_raster *out, uint64_t seed, double fraction) {
	int nb = in->bands, all = fraction >= 1;
	int64_t left = in->x, right = (int64_t)in->x + in->w;
	double logq = log1p(-fraction);
	fl_copy(in, out);
	if (fraction <= 0) return;
	for (int y = 0; y < in->h; y++) {
		uint8_t *q = row_of(out, y) - (size_t)nb * in->x; // q + nb * x addresses column x
		uint64_t s = mix(seed ^ mix((uint64_t)(in->y + y) + 1));
		for (int64_t x = -1;;) {
			if (all) {
				x++;
			} else {
				double u = ((next_rand(&s) >> 11) + 1) * 0x1.0p-53; // (0, 1]
				double gap = floor(log(u) / logq);
				if (gap >= in->W) break;
				x += (int64_t)gap + 1;
			}
			if (x >= right) break;
			uint64_t v = next_rand(&s);
			if (x >= left) {
				uint8_t *px = q + nb * x;
				px[0] = v, px[1] = v >> 8, px[2] = v >> 16;
			}
		}
	}
}

// fl_flatten writes row y of in as RGB laid over white, as thumbnails are,
// for encoders without alpha.
void fl_flatten(const fl_raster *in, uint8_t *rgb, int y) {
	const uint8_t *p = row_of(in, y);
	for (int x = 0; x < in->w; x++, p += 4, rgb += 3)
		for (int k = 0; k < 3; k++) rgb[k] = (uint8_t)((p[k] * p[3] + 255 * (255 - p[3]) + 127) / 255);
}
