// Kernels that move pixels: flips, right-angle turns, affine maps.
#include "kernels.h"

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

// mirror_plane is mirror_rgb for 1-byte samples (a YCbCr plane), 16 to a
// register (SSSE3).
__attribute__((target("ssse3"))) static int mirror_plane(const uint8_t *p, uint8_t *q, int w) {
	const __m128i rev = _mm_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
	int i = 0;
	for (; 2 * i + 32 <= w; i += 16) {
		size_t l = (size_t)i, r = (size_t)(w - 16 - i);
		__m128i L = _mm_loadu_si128((const __m128i *)(p + l)), R = _mm_loadu_si128((const __m128i *)(p + r));
		_mm_storeu_si128((__m128i *)(q + l), _mm_shuffle_epi8(R, rev));
		_mm_storeu_si128((__m128i *)(q + r), _mm_shuffle_epi8(L, rev));
	}
	return i;
}

// mirror_row reverses the w pixels of a row from p into q, which may be p.
static void mirror_row(const uint8_t *p, uint8_t *q, int w, int nb, const rev3 *rv) {
	int done = 0;
	if (nb == 4 && fl_isa > FL_ISA_PLAIN)
		done = mirror_rgba(p, q, w);
	else if (nb == 3 && has_ssse3())
		done = mirror_rgb(p, q, w, rv);
	else if (nb == 1 && has_ssse3())
		done = mirror_plane(p, q, w);
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

// rot_tile writes the output rows Y0..Y1-1, columns X0..X1-1, of a turn,
// where output (X, Y) is input pixel (x0 + X dxX + Y dxY, y0 + X dyX +
// Y dyY). nb is a constant where it is inlined: RGB pixels move as 4 bytes,
// the fourth the next pixel's first, which that pixel writes over; a tile
// row's last pixel moves exactly its own, and the input's last pixel, whose
// fourth byte is past its memory, is read as 3.
static inline void rot_tile(const fl_raster *in, const fl_raster *out, int X0, int X1, int Y0, int Y1, int x0, int y0,
                            int dxX, int dyX, int dxY, int dyY, int nb) {
	for (int Y = Y0; Y < Y1; Y++) {
		uint8_t *q = row_of(out, Y) + (size_t)X0 * nb;
		const uint8_t *p = row_of(in, y0 + X0 * dyX + Y * dyY) + (size_t)(x0 + X0 * dxX + Y * dxY) * nb;
		ptrdiff_t step = (ptrdiff_t)dyX * (ptrdiff_t)in->stride + (ptrdiff_t)dxX * nb;
		const uint8_t *last = row_of(in, in->h - 1) + (size_t)(in->w - 1) * nb;
		for (int X = X0; X < X1 - 1; X++, q += nb, p += step) {
			if (nb == 1)
				*q = *p;
			else if (nb == 4 || p != last)
				memcpy(q, p, 4);
			else
				memcpy(q, p, 3);
		}
		memcpy(q, p, nb);
	}
}

// fl_rot turns the whole image clockwise by quarter * 90 degrees, in 64 x 64
// tiles so both the rows read and the rows written stay in cache.
void fl_rot(const fl_raster *in, const fl_raster *out, int quarter) {
	int nb = in->bands, W = out->w, H = out->h;
	// Output (X, Y) reads input (x0 + X dxX + Y dxY, y0 + X dyX + Y dyY).
	int x0, y0, dxX, dyX, dxY, dyY;
	switch (quarter) {
	case 1: x0 = 0, y0 = in->h - 1, dxX = 0, dyX = -1, dxY = 1, dyY = 0; break;
	case 2: x0 = in->w - 1, y0 = in->h - 1, dxX = -1, dyX = 0, dxY = 0, dyY = -1; break;
	default: x0 = in->w - 1, y0 = 0, dxX = 0, dyX = 1, dxY = -1, dyY = 0; break;
	}
	for (int ty = 0; ty < H; ty += 64)
	for (int tx = 0; tx < W; tx += 64) {
		int X1 = tx + 64 < W ? tx + 64 : W, Y1 = ty + 64 < H ? ty + 64 : H;
		if (nb == 3)
			rot_tile(in, out, tx, X1, ty, Y1, x0, y0, dxX, dyX, dxY, dyY, 3);
		else if (nb == 1) // a YCbCr plane
			rot_tile(in, out, tx, X1, ty, Y1, x0, y0, dxX, dyX, dxY, dyY, 1);
		else
			rot_tile(in, out, tx, X1, ty, Y1, x0, y0, dxX, dyX, dxY, dyY, 4);
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

// span is an output row of n pixels from q on, the input position (u, v)
// of its first pixel stepping by (du, dv), in 16.16 fixed point; pixels
// [c, d) have some of their neighbourhood in the image and [a, b) all of
// it (the interior; empty, a = b = d, when no pixel has).
typedef struct {
	uint8_t *q;
	int n;
	int64_t u, v, du, dv;
	int a, b, c, d;
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

static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

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
	within(s->u, s->du, 0, (int64_t)(in->w - 1 - (in->bands == 3)) * 65536, &lo, &hi);
	within(s->v, s->dv, 0, (int64_t)(in->h - 1) * 65536, &lo, &hi);
	clamp_range(lo, hi, s->n, a, b);
}

// touching finds the pixels [*a, *b) of s with any of their 2 x 2
// neighbourhood inside the image; the others are the fill.
static inline void touching(const fl_raster *in, const span *s, int *a, int *b) {
	int64_t lo = 0, hi = s->n;
	within(s->u, s->du, -65536, (int64_t)in->w * 65536, &lo, &hi);
	within(s->v, s->dv, -65536, (int64_t)in->h * 65536, &lo, &hi);
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

// lerp2_ssse3 is lerp2 in registers for the pixels at p0 and p0 + stride:
// it reads 8 bytes a row (two pixels and, for RGB, two bytes beyond, which
// interior keeps inside the row) and returns 4 bytes, the pixel first.
__attribute__((target("ssse3"))) static inline uint32_t lerp2_ssse3(const uint8_t *p0, size_t stride, int fx, int fy, __m128i pair, const lerp_tables *t) {
	__m128i tb = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)p0), _mm_loadl_epi64((const __m128i *)(p0 + stride)));
	__m128i col = _mm_maddubs_epi16(tb, t->y[fy]);
	__m128i mix = _mm_madd_epi16(_mm_shuffle_epi8(col, pair), t->x[fx]);
	mix = _mm_srli_epi32(_mm_add_epi32(mix, _mm_set1_epi32(1 << (2 * FRAC - 1))), 2 * FRAC);
	return (uint32_t)_mm_cvtsi128_si32(_mm_shuffle_epi8(mix, t->gather));
}

// span_ssse3_nb is span_plain in SSSE3. It writes 4 bytes a pixel, for RGB
// the next pixel's first, which that pixel then writes over; the last pixel
// writes exactly its own. nb is a constant where it is inlined, so the
// stores are single moves.
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

// span_avx2_nb is span_ssse3_nb with the offsets and fractions of 8
// pixels at a time worked out in 32-bit lanes (where avx2_fits) and read
// back one by one: a tenth off the affine.
__attribute__((target("avx2"))) static inline void span_avx2_nb(const fl_raster *in, const span *s, int a, int b, const lerp_tables *t, int nb) {
	const uint8_t *px = in->px;
	size_t stride = in->stride;
	__m128i pair = nb == 3 ? t->pair3 : t->pair4;
	__m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), mask = _mm256_set1_epi32(ONE - 1);
	__m256i du = _mm256_set1_epi32((int32_t)s->du), dv = _mm256_set1_epi32((int32_t)s->dv);
	__m256i U = _mm256_add_epi32(_mm256_set1_epi32((int32_t)(s->u + a * s->du)), _mm256_mullo_epi32(lane, du));
	__m256i V = _mm256_add_epi32(_mm256_set1_epi32((int32_t)(s->v + a * s->dv)), _mm256_mullo_epi32(lane, dv));
	__m256i du8 = _mm256_slli_epi32(du, 3), dv8 = _mm256_slli_epi32(dv, 3);
	__m256i vstride = _mm256_set1_epi32((int32_t)stride), vnb = _mm256_set1_epi32(nb);
	int32_t off[8] __attribute__((aligned(32))), fx[8] __attribute__((aligned(32))), fy[8] __attribute__((aligned(32)));
	int x = a;
	for (; x + 8 < b; x += 8, U = _mm256_add_epi32(U, du8), V = _mm256_add_epi32(V, dv8)) {
		__m256i o = _mm256_add_epi32(_mm256_mullo_epi32(_mm256_srai_epi32(V, 16), vstride), _mm256_mullo_epi32(_mm256_srai_epi32(U, 16), vnb));
		_mm256_store_si256((__m256i *)off, o);
		_mm256_store_si256((__m256i *)fx, _mm256_and_si256(_mm256_srli_epi32(U, 16 - FRAC), mask));
		_mm256_store_si256((__m256i *)fy, _mm256_and_si256(_mm256_srli_epi32(V, 16 - FRAC), mask));
		__asm__ volatile("" ::: "memory"); // read them back as loads, not lane extracts
		uint8_t *q = s->q + (size_t)x * nb;
		for (int k = 0; k < 8; k++) {
			uint32_t r = lerp2_ssse3(px + off[k], stride, fx[k], fy[k], pair, t);
			memcpy(q + k * nb, &r, 4);
		}
	}
	span_ssse3_nb(in, s, x, b, t, nb);
}

__attribute__((target("avx2"))) static void span_avx2_rgb(const fl_raster *in, const span *s, int a, int b, const lerp_tables *t) {
	span_avx2_nb(in, s, a, b, t, 3);
}

__attribute__((target("avx2"))) static void span_avx2_rgba(const fl_raster *in, const span *s, int a, int b, const lerp_tables *t) {
	span_avx2_nb(in, s, a, b, t, 4);
}

// avx2_fits reports whether the byte offsets of in, its 16.16 positions and
// eight steps of (du, dv) fit 32-bit lanes.
static int avx2_fits(const fl_raster *in, int64_t du, int64_t dv) {
	return in->w < 32768 && in->h < 32768 && (int64_t)in->h * (int64_t)in->stride < INT32_MAX && llabs(du) < (1 << 27) &&
	       llabs(dv) < (1 << 27);
}

__attribute__((target("ssse3"))) static void span_ssse3_rgb(const fl_raster *in, const span *s, int a, int b, const lerp_tables *t) {
	span_ssse3_nb(in, s, a, b, t, 3);
}

__attribute__((target("ssse3"))) static void span_ssse3_rgba(const fl_raster *in, const span *s, int a, int b, const lerp_tables *t) {
	span_ssse3_nb(in, s, a, b, t, 4);
}
#endif

// prefetch_tile asks for what output columns [bx, ex) of a band of rows
// will touch: the output lines, and the input lines in the bounding box of
// where the tile's corners land. Along a tile's rows a turn reads from as
// many input rows, more streams than the hardware prefetcher follows, so
// when the input has left the caches (a busy machine) each line waited for
// memory: fetching the next tile's lines while computing one kept a 17
// degree turn of 1080p at about 3.9 ms where it drifted between 3.6 and 7.
static void prefetch_tile(const fl_raster *in, const span *rows, int nrows, int bx, int ex) {
	int64_t u0 = INT64_MAX, u1 = INT64_MIN, v0 = INT64_MAX, v1 = INT64_MIN;
	const span *corner[2] = {&rows[0], &rows[nrows - 1]};
	int xs[2] = {bx, ex - 1};
	for (int i = 0; i < 4; i++) {
		const span *r = corner[i / 2];
		int64_t u = r->u + xs[i % 2] * r->du, v = r->v + xs[i % 2] * r->dv;
		u0 = u < u0 ? u : u0, u1 = u > u1 ? u : u1, v0 = v < v0 ? v : v0, v1 = v > v1 ? v : v1;
	}
	int nb = in->bands, x0 = clampi(x_of(u0), 0, in->w - 1), x1 = clampi(x_of(u1) + 1, 0, in->w - 1);
	int y0 = clampi(x_of(v0), 0, in->h - 1), y1 = clampi(x_of(v1) + 1, 0, in->h - 1);
	// A map that shrinks a lot reads little of a box much bigger than the
	// tile: no point fetching all of it.
	if ((int64_t)(x1 - x0 + 1) * (y1 - y0 + 1) > (int64_t)16 * nrows * (ex - bx)) y1 = y0 - 1;
	for (int y = y0; y <= y1; y++)
		for (size_t o = (size_t)x0 * nb & ~(size_t)63; o < (size_t)(x1 + 1) * nb; o += 64) __builtin_prefetch(row_of(in, y) + o);
	for (int k = 0; k < nrows; k++)
		for (size_t o = (size_t)bx * nb & ~(size_t)63; o < (size_t)ex * nb; o += 64) __builtin_prefetch(rows[k].q + o, 1);
}

// fl_affine samples the input bilinearly at the inverse image of each output
// pixel centre: output (X, Y) reads input inv * (X + 0.5 - ox, Y + 0.5 - oy)
// + (ix, iy); outside the input is zero (the fill). The output goes in tiles
// of 64 x 64: along a whole row a rotation reads from hundreds of input rows,
// a page each, and down a whole column it writes as many; a tile keeps both
// within what the caches and the TLB hold. Positions step from each row's
// first pixel, and which of a row's pixels are fill, edge or interior is
// worked out once a row, so the interior is sampled without checks.
void fl_affine(const fl_raster *in, const fl_raster *out, const double inv[4], double ix, double iy, double ox, double oy) {
	int64_t du = llround(inv[0] * 65536), dv = llround(inv[2] * 65536);
	int nb = in->bands;
#ifdef FL_X86
	void (*fast)(const fl_raster *, const span *, int, int, const lerp_tables *) = NULL;
	lerp_tables t; // 2 KB: cgo calls C on a thread's own stack
	if (has_avx2() && avx2_fits(in, du, dv))
		fast = nb == 3 ? span_avx2_rgb : span_avx2_rgba;
	else if (has_ssse3())
		fast = nb == 3 ? span_ssse3_rgb : span_ssse3_rgba;
	if (fast) lerp_tables_init(&t);
#endif
	span rows[64]; // the rows of a band of tiles
	for (int by = 0; by < out->h; by += 64) {
		int nrows = out->h - by < 64 ? out->h - by : 64;
		for (int k = 0; k < nrows; k++) {
			// Input position in pixel-centre coordinates (pixel i's centre is i).
			double X = 0.5 - ox, Y = by + k + 0.5 - oy;
			span *s = &rows[k];
			*s = (span){row_of(out, by + k), out->w, llround((inv[0] * X + inv[1] * Y + ix - 0.5) * 65536),
			            llround((inv[2] * X + inv[3] * Y + iy - 0.5) * 65536), du, dv, 0, 0, 0, 0};
			touching(in, s, &s->c, &s->d);
			interior(in, s, &s->a, &s->b);
			if (s->a >= s->b) s->a = s->b = s->d;
		}
		for (int bx = 0; bx < out->w; bx += 64) {
			int ex = out->w - bx < 64 ? out->w : bx + 64;
			if (ex < out->w) prefetch_tile(in, rows, nrows, ex, out->w - ex < 64 ? out->w : ex + 64);
			for (int k = 0; k < nrows; k++) {
				const span *s = &rows[k];
				int c = clampi(s->c, bx, ex), a = clampi(s->a, bx, ex), b = clampi(s->b, bx, ex), d = clampi(s->d, bx, ex);
				memset(s->q + (size_t)bx * nb, 0, (size_t)(c - bx) * nb);
				memset(s->q + (size_t)d * nb, 0, (size_t)(ex - d) * nb);
				span_edges(in, s, c, a);
				span_edges(in, s, b, d);
#ifdef FL_X86
				if (fast) {
					fast(in, s, a, b, &t);
					continue;
				}
#endif
				span_plain(in, s, a, b);
			}
		}
	}
}
