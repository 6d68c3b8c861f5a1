// Kernels that change colours: recomb, LUT, hue, noise, alpha flattening.
#include "kernels.h"

static inline uint8_t clamp8(int32_t v) { return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v; }

#ifdef FL_X86
// rgb16 holds the byte shuffles between 16 RGB pixels (48 bytes, three
// registers) and their three planes: plane[c] is the OR of in[i] shuffled
// by split[c][i], and out[o] the OR of plane[c] shuffled by join[o][c].
typedef struct {
	__m128i split[3][3], join[3][3];
} rgb16;

static void rgb16_init(rgb16 *m) {
	uint8_t split[3][3][16], join[3][3][16];
	memset(split, 0x80, sizeof split); // pshufb writes 0 for a set high bit
	memset(join, 0x80, sizeof join);
	for (int k = 0; k < 48; k++) {
		split[k % 3][k / 16][k / 3] = (uint8_t)(k % 16);
		join[k / 16][k % 3][k % 16] = (uint8_t)(k / 3);
	}
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++) {
			m->split[i][j] = _mm_loadu_si128((const __m128i *)split[i][j]);
			m->join[i][j] = _mm_loadu_si128((const __m128i *)join[i][j]);
		}
}

__attribute__((target("avx2"))) static inline __m128i shuffle3(const __m128i v[3], const __m128i m[3]) {
	return _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(v[0], m[0]), _mm_shuffle_epi8(v[1], m[1])), _mm_shuffle_epi8(v[2], m[2]));
}

// load16 reads 16 RGB pixels at p as three planes of 16-bit lanes.
__attribute__((target("avx2"))) static inline void load16(const uint8_t *p, const rgb16 *sh, __m256i c[3]) {
	__m128i in[3];
	for (int k = 0; k < 3; k++) in[k] = _mm_loadu_si128((const __m128i *)p + k);
	for (int k = 0; k < 3; k++) c[k] = _mm256_cvtepu8_epi16(shuffle3(in, sh->split[k]));
}

// store16 writes three planes of 16 pixels, 16-bit lanes clamped to 0..255,
// as RGB at q.
__attribute__((target("avx2"))) static inline void store16(uint8_t *q, const rgb16 *sh, const __m256i c[3]) {
	__m128i plane[3];
	for (int k = 0; k < 3; k++) plane[k] = _mm_packus_epi16(_mm256_castsi256_si128(c[k]), _mm256_extracti128_si256(c[k], 1));
	for (int k = 0; k < 3; k++) _mm_storeu_si128((__m128i *)q + k, shuffle3(plane, sh->join[k]));
}

// rgb32 holds the byte permutes between 32 RGB pixels (96 bytes) and
// their three planes: split[c] picks plane c's bytes from the first 64
// and the next 32; join[o] picks the o-th 64 bytes of pixels from the
// planes R and G (one register) and B (another).
typedef struct {
	__m512i split[3], join[2];
} rgb32;

__attribute__((target("avx512bw"))) static void rgb32_init(rgb32 *m) {
	uint8_t split[3][64] = {{0}}, join[2][64] = {{0}};
	for (int k = 0; k < 32; k++)
		for (int c = 0; c < 3; c++) split[c][k] = (uint8_t)(3 * k + c);
	for (int i = 0; i < 96; i++) join[i / 64][i % 64] = (uint8_t)(32 * (i % 3) + i / 3);
	for (int c = 0; c < 3; c++) m->split[c] = _mm512_loadu_si512((const void *)split[c]);
	for (int o = 0; o < 2; o++) m->join[o] = _mm512_loadu_si512((const void *)join[o]);
}

// load32 reads 32 RGB pixels at p as three planes of 16-bit lanes.
__attribute__((target("avx512bw,avx512vbmi"))) static inline void load32(const uint8_t *p, const rgb32 *m, __m512i c[3]) {
	__m512i lo = _mm512_loadu_si512((const void *)p), hi = _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(p + 64)));
	for (int k = 0; k < 3; k++) c[k] = _mm512_cvtepu8_epi16(_mm512_castsi512_si256(_mm512_permutex2var_epi8(lo, m->split[k], hi)));
}

// store32 writes three planes of 32 pixels, 16-bit lanes clamped to
// 0..255, as RGB at q.
__attribute__((target("avx512bw,avx512vbmi"))) static inline void store32(uint8_t *q, const rgb32 *m, const __m512i c[3]) {
	__m256i b[3];
	for (int k = 0; k < 3; k++) b[k] = _mm512_cvtusepi16_epi8(_mm512_max_epi16(c[k], _mm512_setzero_si512()));
	__m512i rg = _mm512_inserti64x4(_mm512_castsi256_si512(b[0]), b[1], 1), bb = _mm512_castsi256_si512(b[2]);
	_mm512_storeu_si512((void *)q, _mm512_permutex2var_epi8(rg, m->join[0], bb));
	_mm256_storeu_si256((__m256i *)(q + 64), _mm512_castsi512_si256(_mm512_permutex2var_epi8(rg, m->join[1], bb)));
}

static int has_vbmi(void) { return has_avx512() && __builtin_cpu_supports("avx512vbmi"); }
#endif

// recomb_row is fl_recomb on n pixels of nb bands (constant where inlined,
// so the loop vectorises); in place too, as each pixel only reads itself.
static inline void recomb_row(const uint8_t *p, uint8_t *q, int n, const int16_t *m, int nb) {
	int32_t m0 = m[0], m1 = m[1], m2 = m[2], m3 = m[3], m4 = m[4], m5 = m[5], m6 = m[6], m7 = m[7], m8 = m[8];
#pragma GCC ivdep
	for (int x = 0; x < n; x++) {
		const uint8_t *a = p + (size_t)x * nb;
		uint8_t *o = q + (size_t)x * nb;
		int32_t r = a[0], g = a[1], b = a[2];
		o[0] = clamp8((m0 * r + m1 * g + m2 * b + 2048) >> 12);
		o[1] = clamp8((m3 * r + m4 * g + m5 * b + 2048) >> 12);
		o[2] = clamp8((m6 * r + m7 * g + m8 * b + 2048) >> 12);
		if (nb == 4) o[3] = a[3];
	}
}

static inline void recomb_rows(const fl_raster *in, const fl_raster *out, const int16_t m[9], int nb) {
	for (int y = 0; y < in->h; y++) recomb_row(row_of(in, y), row_of(out, y), in->w, m, nb);
}

#ifdef FL_X86
// recomb_row_avx2 is recomb_row on RGB, 16 pixels at a time: each output
// channel is two pmaddwd, red with green and blue with the rounding.
__attribute__((target("avx2"))) static void recomb_row_avx2(const uint8_t *p, uint8_t *q, int n, const int16_t *m, const rgb16 *sh) {
	__m256i one = _mm256_set1_epi16(1), w[3][2];
	for (int c = 0; c < 3; c++) {
		w[c][0] = _mm256_set1_epi32((int32_t)((uint32_t)(uint16_t)m[3 * c + 1] << 16 | (uint16_t)m[3 * c]));
		w[c][1] = _mm256_set1_epi32((int32_t)(2048u << 16 | (uint16_t)m[3 * c + 2]));
	}
	int x = 0;
	for (; x + 16 <= n; x += 16) {
		__m256i rgb[3], o[3];
		load16(p + 3 * x, sh, rgb);
		__m256i rg[2] = {_mm256_unpacklo_epi16(rgb[0], rgb[1]), _mm256_unpackhi_epi16(rgb[0], rgb[1])};
		__m256i b1[2] = {_mm256_unpacklo_epi16(rgb[2], one), _mm256_unpackhi_epi16(rgb[2], one)};
		for (int c = 0; c < 3; c++) {
			__m256i s[2];
			for (int h = 0; h < 2; h++)
				s[h] = _mm256_srai_epi32(_mm256_add_epi32(_mm256_madd_epi16(rg[h], w[c][0]), _mm256_madd_epi16(b1[h], w[c][1])), 12);
			o[c] = _mm256_packs_epi32(s[0], s[1]); // in order again: the unpacks and packs pair up per half
		}
		store16(q + 3 * x, sh, o);
	}
	recomb_row(p + 3 * x, q + 3 * x, n - x, m, 3);
}

// recomb_row_avx512 is recomb_row_avx2 on 32 pixels at a time.
__attribute__((target("avx512bw,avx512vbmi"))) static void recomb_row_avx512(const uint8_t *p, uint8_t *q, int n, const int16_t *m, const rgb32 *sh) {
	__m512i one = _mm512_set1_epi16(1), w[3][2];
	for (int c = 0; c < 3; c++) {
		w[c][0] = _mm512_set1_epi32((int32_t)((uint32_t)(uint16_t)m[3 * c + 1] << 16 | (uint16_t)m[3 * c]));
		w[c][1] = _mm512_set1_epi32((int32_t)(2048u << 16 | (uint16_t)m[3 * c + 2]));
	}
	int x = 0;
	for (; x + 32 <= n; x += 32) {
		__m512i rgb[3], o[3];
		load32(p + 3 * x, sh, rgb);
		__m512i rg[2] = {_mm512_unpacklo_epi16(rgb[0], rgb[1]), _mm512_unpackhi_epi16(rgb[0], rgb[1])};
		__m512i b1[2] = {_mm512_unpacklo_epi16(rgb[2], one), _mm512_unpackhi_epi16(rgb[2], one)};
		for (int c = 0; c < 3; c++) {
			__m512i s[2];
			for (int h = 0; h < 2; h++)
				s[h] = _mm512_srai_epi32(_mm512_add_epi32(_mm512_madd_epi16(rg[h], w[c][0]), _mm512_madd_epi16(b1[h], w[c][1])), 12);
			o[c] = _mm512_packs_epi32(s[0], s[1]);
		}
		store32(q + 3 * x, sh, o);
	}
	recomb_row(p + 3 * x, q + 3 * x, n - x, m, 3);
}
#endif

FL_HOT static void recomb_rgb(const fl_raster *in, const fl_raster *out, const int16_t m[9]) {
#ifdef FL_X86
	if (has_vbmi()) {
		rgb32 sh;
		rgb32_init(&sh);
		for (int y = 0; y < in->h; y++) recomb_row_avx512(row_of(in, y), row_of(out, y), in->w, m, &sh);
		return;
	}
	if (has_avx2()) {
		rgb16 sh;
		rgb16_init(&sh);
		for (int y = 0; y < in->h; y++) recomb_row_avx2(row_of(in, y), row_of(out, y), in->w, m, &sh);
		return;
	}
#endif
	recomb_rows(in, out, m, 3);
}

FL_HOT static void recomb_rgba(const fl_raster *in, const fl_raster *out, const int16_t m[9]) { recomb_rows(in, out, m, 4); }

// fl_recomb multiplies each pixel's colour by the 3 x 3 matrix m (4.12
// fixed point), rounding and clamping; alpha is kept.
void fl_recomb(const fl_raster *in, const fl_raster *out, const int16_t m[9]) { (in->bands == 3 ? recomb_rgb : recomb_rgba)(in, out, m); }

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

#ifdef FL_X86
// hue_px16 is hue_px on 16 pixels.
__attribute__((target("avx2"))) static inline __m256i hue_px16(__m256i mx, __m256i C, __m256i P, int o) {
	__m256i z = _mm256_setzero_si256(), turn = _mm256_mullo_epi16(C, _mm256_set1_epi16(6));
	__m256i t = _mm256_sub_epi16(P, _mm256_mullo_epi16(C, _mm256_set1_epi16((short)(6 - o))));
	t = _mm256_add_epi16(t, _mm256_and_si256(_mm256_cmpgt_epi16(z, t), turn));
	__m256i d = _mm256_min_epi16(t, _mm256_sub_epi16(_mm256_slli_epi16(C, 2), t));
	d = _mm256_max_epi16(z, _mm256_min_epi16(C, d));
	return _mm256_sub_epi16(mx, _mm256_srli_epi16(_mm256_add_epi16(d, _mm256_set1_epi16(8)), 4));
}

// hue_row_avx2 is hue_row on RGB, 16 pixels at a time in 16-bit lanes,
// the same arithmetic; the last pixels go to hue_row.
__attribute__((target("avx2"))) static void hue_row_avx2(const uint8_t *p, uint8_t *q, int n, int16_t whole, uint16_t frac, const rgb16 *m) {
	__m256i vwhole = _mm256_set1_epi16(whole), vfrac = _mm256_set1_epi16((short)frac), z = _mm256_setzero_si256();
	int x = 0;
	for (; x + 16 <= n; x += 16) {
		__m256i rgb[3];
		load16(p + 3 * x, m, rgb);
		__m256i r = rgb[0], g = rgb[1], b = rgb[2];
		__m256i mx = _mm256_max_epi16(r, _mm256_max_epi16(g, b)), c = _mm256_sub_epi16(mx, _mm256_min_epi16(r, _mm256_min_epi16(g, b)));
		__m256i c2 = _mm256_add_epi16(c, c), c6 = _mm256_mullo_epi16(c, _mm256_set1_epi16(6));
		__m256i H = _mm256_add_epi16(_mm256_sub_epi16(r, g), _mm256_add_epi16(c2, c2));               // r - g + 4c
		H = _mm256_blendv_epi8(H, _mm256_add_epi16(_mm256_sub_epi16(b, r), c2), _mm256_cmpeq_epi16(mx, g)); // b - r + 2c
		H = _mm256_blendv_epi8(H, _mm256_sub_epi16(g, b), _mm256_cmpeq_epi16(mx, r));                     // g - b
		H = _mm256_add_epi16(_mm256_add_epi16(H, _mm256_mullo_epi16(vwhole, c)), _mm256_and_si256(_mm256_cmpgt_epi16(z, H), c6));
		H = _mm256_sub_epi16(H, _mm256_andnot_si256(_mm256_cmpgt_epi16(c6, H), c6));
		__m256i C = _mm256_slli_epi16(c, 4), C6 = _mm256_slli_epi16(c6, 4);
		__m256i P = _mm256_add_epi16(_mm256_slli_epi16(H, 4), _mm256_mulhi_epu16(vfrac, C));
		P = _mm256_sub_epi16(P, _mm256_andnot_si256(_mm256_cmpgt_epi16(C6, P), C6));
		__m256i o[3] = {hue_px16(mx, C, P, 5), hue_px16(mx, C, P, 3), hue_px16(mx, C, P, 1)};
		store16(q + 3 * x, m, o);
	}
	hue_row(p + 3 * x, q + 3 * x, n - x, whole, frac, 3);
}
#endif

#ifdef FL_X86
// hue_px32 is hue_px on 32 pixels.
__attribute__((target("avx512bw,avx512vbmi"))) static inline __m512i hue_px32(__m512i mx, __m512i C, __m512i P, int o) {
	__m512i z = _mm512_setzero_si512(), turn = _mm512_mullo_epi16(C, _mm512_set1_epi16(6));
	__m512i t = _mm512_sub_epi16(P, _mm512_mullo_epi16(C, _mm512_set1_epi16((short)(6 - o))));
	t = _mm512_mask_add_epi16(t, _mm512_cmplt_epi16_mask(t, z), t, turn);
	__m512i d = _mm512_min_epi16(t, _mm512_sub_epi16(_mm512_slli_epi16(C, 2), t));
	d = _mm512_max_epi16(z, _mm512_min_epi16(C, d));
	return _mm512_sub_epi16(mx, _mm512_srli_epi16(_mm512_add_epi16(d, _mm512_set1_epi16(8)), 4));
}

// hue_row_avx512 is hue_row_avx2 on 32 pixels at a time, with masks for
// the choices.
__attribute__((target("avx512bw,avx512vbmi"))) static void hue_row_avx512(const uint8_t *p, uint8_t *q, int n, int16_t whole, uint16_t frac, const rgb32 *m) {
	__m512i vwhole = _mm512_set1_epi16(whole), vfrac = _mm512_set1_epi16((short)frac), z = _mm512_setzero_si512();
	int x = 0;
	for (; x + 32 <= n; x += 32) {
		__m512i rgb[3];
		load32(p + 3 * x, m, rgb);
		__m512i r = rgb[0], g = rgb[1], b = rgb[2];
		__m512i mx = _mm512_max_epi16(r, _mm512_max_epi16(g, b)), c = _mm512_sub_epi16(mx, _mm512_min_epi16(r, _mm512_min_epi16(g, b)));
		__m512i c2 = _mm512_add_epi16(c, c), c6 = _mm512_mullo_epi16(c, _mm512_set1_epi16(6));
		__m512i H = _mm512_add_epi16(_mm512_sub_epi16(r, g), _mm512_add_epi16(c2, c2));                            // r - g + 4c
		H = _mm512_mask_blend_epi16(_mm512_cmpeq_epi16_mask(mx, g), H, _mm512_add_epi16(_mm512_sub_epi16(b, r), c2)); // b - r + 2c
		H = _mm512_mask_blend_epi16(_mm512_cmpeq_epi16_mask(mx, r), H, _mm512_sub_epi16(g, b));                       // g - b
		__mmask32 neg = _mm512_cmplt_epi16_mask(H, z);
		H = _mm512_mask_add_epi16(_mm512_add_epi16(H, _mm512_mullo_epi16(vwhole, c)), neg, _mm512_add_epi16(H, _mm512_mullo_epi16(vwhole, c)), c6);
		H = _mm512_mask_sub_epi16(H, _mm512_cmpge_epi16_mask(H, c6), H, c6);
		__m512i C = _mm512_slli_epi16(c, 4), C6 = _mm512_slli_epi16(c6, 4);
		__m512i P = _mm512_add_epi16(_mm512_slli_epi16(H, 4), _mm512_mulhi_epu16(vfrac, C));
		P = _mm512_mask_sub_epi16(P, _mm512_cmpge_epi16_mask(P, C6), P, C6);
		__m512i o[3] = {hue_px32(mx, C, P, 5), hue_px32(mx, C, P, 3), hue_px32(mx, C, P, 1)};
		store32(q + 3 * x, m, o);
	}
	hue_row(p + 3 * x, q + 3 * x, n - x, whole, frac, 3);
}
#endif

FL_HOT static void hue_rgb(const fl_raster *in, const fl_raster *out, int16_t whole, uint16_t frac) {
#ifdef FL_X86
	if (has_vbmi()) {
		rgb32 m;
		rgb32_init(&m);
		for (int y = 0; y < in->h; y++) hue_row_avx512(row_of(in, y), row_of(out, y), in->w, whole, frac, &m);
		return;
	}
	if (has_avx2()) {
		rgb16 m;
		rgb16_init(&m);
		for (int y = 0; y < in->h; y++) hue_row_avx2(row_of(in, y), row_of(out, y), in->w, whole, frac, &m);
		return;
	}
#endif
	hue_rows(in, out, whole, frac, 3);
}
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

// gaps draws geometric gaps: the number of clean pixels before the next
// noisy one, floor(log u / log(1 - p)) for u uniform in (0, 1] in 2^-40
// steps, from the top 40 bits of a random draw (the low 24 are the noisy
// pixel's colour). A gap g below GAPS is the count of thresholds
// (1 - p)^(k + 1) at or above u; first holds that count at the top of each
// of BUCKETS slices of u, so a draw starts from its slice's count and
// rarely steps further. Only gaps of GAPS or more take a logarithm.
enum { GAPS = 64, BUCKETS = 4096, BUCKET_BITS = 28 };
typedef struct {
	uint64_t below[GAPS]; // (1 - p)^(g + 1), in 2^-40
	uint8_t first[BUCKETS];
	double logq;
} gaps;

static void gaps_init(gaps *g, double fraction) {
	g->logq = log1p(-fraction);
	for (int k = 0; k < GAPS; k++) g->below[k] = (uint64_t)floor(exp(g->logq * (k + 1)) * 0x1.0p40);
	int k = GAPS; // thresholds fall as k grows, and their count as u does
	for (int b = 0; b < BUCKETS; b++) {
		uint64_t top = (uint64_t)(b + 1) << BUCKET_BITS;
		while (k > 0 && g->below[k - 1] < top) k--;
		g->first[b] = (uint8_t)k;
	}
}

static inline int64_t next_gap(const gaps *g, uint64_t r) {
	uint64_t u = (r >> 24) + 1; // 1 .. 2^40
	int k = g->first[(u - 1) >> BUCKET_BITS];
	while (k < GAPS && g->below[k] >= u) k++;
	if (k < GAPS) return k;
	double gap = floor(log((double)u * 0x1.0p-40) / g->logq);
	return gap < INT32_MAX ? (int64_t)gap : INT32_MAX; // past any row, for tiny fractions
}

// fl_noise gives each pixel, with probability fraction, uniform random colour
// channels. Each row of the whole image has its own random stream seeded by
// (seed, row), walked from the image's first column by geometric gaps from one
// noisy pixel to the next: the work is proportional to the noisy pixels, and a
// pixel's fate depends only on the seed, its row and its column, whatever
// window is in memory. Alpha is kept.
void fl_noise(const fl_raster *in, const fl_raster *out, uint64_t seed, double fraction) {
	int nb = in->bands, all = fraction >= 1;
	int64_t left = in->x, right = (int64_t)in->x + in->w;
	fl_copy(in, out);
	if (fraction <= 0) return;
	gaps g;
	if (!all) gaps_init(&g, fraction);
	for (int y = 0; y < in->h; y++) {
		uint8_t *q = row_of(out, y); // column x is at q + nb * (x - left)
		uint64_t s = mix(seed ^ mix((uint64_t)(in->y + y) + 1));
		for (int64_t x = -1;;) {
			uint64_t v = next_rand(&s);
			if (all) {
				x++;
			} else {
				int64_t gap = next_gap(&g, v);
				if (gap >= in->W) break;
				x += gap + 1;
			}
			if (x >= right) break;
			if (x >= left) {
				uint8_t *px = q + nb * (x - left);
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
