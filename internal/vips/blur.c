// The Gaussian blur. Its two passes are written out in SSE2, AVX2 and
// AVX-512 (picked at run time) with a plain C tail, all four the same
// arithmetic: each block of values keeps its sum in registers across every
// tap.
#include "kernels.h"

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

// blur_col_avx512 is blur_col_avx2 on 64 bytes at a time; the interleave
// works within each quarter of the register, and the final exchange puts
// the quarters back in order.
__attribute__((target("avx512bw"))) static void blur_col_avx512(const uint8_t *const *rows, uint16_t *t, size_t n, const uint16_t *wt, int r) {
	const __m512i ilo = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), ihi = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
	size_t i = 0;
	for (; i + 64 <= n; i += 64) {
		__m512i w = _mm512_set1_epi16((short)wt[0]);
		__m512i lo = _mm512_mullo_epi16(_mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(rows[0] + i))), w);
		__m512i hi = _mm512_mullo_epi16(_mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(rows[0] + i + 32))), w);
		__m512i pl = _mm512_setzero_si512(), ph = pl;
		for (int k = 1; k <= r; k++) {
			__m512i a = _mm512_loadu_si512((const void *)(rows[k] + i)), b = _mm512_loadu_si512((const void *)(rows[r + k] + i));
			w = _mm512_set1_epi8((char)wt[k]);
			pl = _mm512_add_epi16(pl, _mm512_maddubs_epi16(_mm512_unpacklo_epi8(a, b), w));
			ph = _mm512_add_epi16(ph, _mm512_maddubs_epi16(_mm512_unpackhi_epi8(a, b), w));
		}
		lo = _mm512_add_epi16(lo, _mm512_permutex2var_epi64(pl, ilo, ph));
		hi = _mm512_add_epi16(hi, _mm512_permutex2var_epi64(pl, ihi, ph));
		_mm512_storeu_si512((void *)(t + i), lo);
		_mm512_storeu_si512((void *)(t + i + 32), hi);
	}
	for (; i < n; i++) t[i] = col_px(rows, i, wt, r);
}

__attribute__((target("avx512bw"))) static void blur_row_avx512(const uint16_t *t, uint8_t *q, size_t n, int nb, const uint16_t *wt, int r) {
	__m512i round = _mm512_set1_epi16(128);
	const __m512i order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
	size_t i = 0;
	for (; i + 64 <= n; i += 64) {
		const uint16_t *c = t + (size_t)r * nb + i;
		__m512i s = _mm512_set1_epi16((short)row_start(r)), w = _mm512_set1_epi16((short)wt[0]);
		__m512i lo = _mm512_add_epi16(s, _mm512_mulhi_epu16(_mm512_loadu_si512((const void *)c), w));
		__m512i hi = _mm512_add_epi16(s, _mm512_mulhi_epu16(_mm512_loadu_si512((const void *)(c + 32)), w));
		for (int k = 1; k <= r; k++) {
			const uint16_t *a = c - k * nb, *b = c + k * nb;
			w = _mm512_set1_epi16((short)wt[k]);
			__m512i pl = _mm512_avg_epu16(_mm512_loadu_si512((const void *)a), _mm512_loadu_si512((const void *)b));
			__m512i ph = _mm512_avg_epu16(_mm512_loadu_si512((const void *)(a + 32)), _mm512_loadu_si512((const void *)(b + 32)));
			lo = _mm512_add_epi16(lo, _mm512_mulhi_epu16(pl, w));
			hi = _mm512_add_epi16(hi, _mm512_mulhi_epu16(ph, w));
		}
		lo = _mm512_srli_epi16(_mm512_add_epi16(lo, round), 8);
		hi = _mm512_srli_epi16(_mm512_add_epi16(hi, round), 8);
		_mm512_storeu_si512((void *)(q + i), _mm512_permutexvar_epi64(order, _mm512_packus_epi16(lo, hi)));
	}
	for (; i < n; i++) q[i] = row_px(t, i, nb, wt, r);
}
#endif

static void blur_col(const uint8_t *const *rows, uint16_t *t, size_t n, const uint16_t *wt, int r) {
#ifdef FL_X86
	if (has_avx512())
		blur_col_avx512(rows, t, n, wt, r);
	else if (has_avx2())
		blur_col_avx2(rows, t, n, wt, r);
	else if (fl_isa > FL_ISA_PLAIN)
		blur_col_sse2(rows, t, n, wt, r);
	else
#endif
		for (size_t i = 0; i < n; i++) t[i] = col_px(rows, i, wt, r);
}

static void blur_row(const uint16_t *t, uint8_t *q, size_t n, int nb, const uint16_t *wt, int r) {
#ifdef FL_X86
	if (has_avx512())
		blur_row_avx512(t, q, n, nb, wt, r);
	else if (has_avx2())
		blur_row_avx2(t, q, n, nb, wt, r);
	else if (fl_isa > FL_ISA_PLAIN)
		blur_row_sse2(t, q, n, nb, wt, r);
	else
#endif
		for (size_t i = 0; i < n; i++) q[i] = row_px(t, i, nb, wt, r);
}

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
// so the only extra memory is one row of 16-bit sums. Weights are 8-bit vertically (sums
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
