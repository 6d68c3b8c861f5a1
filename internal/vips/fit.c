// fl_fit_area: the two passes of fitArea (grey.go) in C. In Go they took
// 0.6-1 ms of a 1400x1050 JPEG's ingest (the 350x263 luminance to 240x180),
// a quarter of the import's CPU on top of the decode; the arithmetic is the
// same float32 sums in the same order, so the bytes are the same.
#include "kernels.h"

// The first pass of a 1-band row: sum j is 0 + term 0 + term 1 ... in
// order k, term k the pixel value rowf[ix[k*tw + j]] times wt[k*tw + j],
// every sum the same cn terms (areaWeights pads with zero weights on its
// last pixel, and +0 leaves a sum of non-negative terms as it is). Term k
// of every sum goes before term k+1, so the sums of 8 outputs are one AVX2
// gather, multiply and add a term (a fifth less time than one output at a
// time); the plain C twin makes the same IEEE operations in the same order,
// so both give the same bytes. (gcc does not gather for generic tuning;
// nor may the sums fuse into FMAs, which round once where these round
// twice: neither clone has FMA.)
static void sums_plain(const float *rowf, const float *wt, const int *ix, int cn, size_t row, float *dst) {
	for (size_t j = 0; j < row; j++) dst[j] = 0;
	for (int k = 0; k < cn; k++) {
		const float *f = wt + (size_t)k * row;
		const int *i = ix + (size_t)k * row;
		for (size_t j = 0; j < row; j++) dst[j] += f[j] * rowf[i[j]];
	}
}

#ifdef FL_X86
__attribute__((target("avx2"))) static void sums_avx2(const float *rowf, const float *wt, const int *ix, int cn, size_t row,
						      float *dst) {
	size_t j = 0;
	for (; j + 8 <= row; j += 8) {
		__m256 s = _mm256_setzero_ps();
		for (int k = 0; k < cn; k++) {
			__m256i i = _mm256_loadu_si256((const __m256i *)(ix + (size_t)k * row + j));
			__m256 v = _mm256_i32gather_ps(rowf, i, 4);
			s = _mm256_add_ps(s, _mm256_mul_ps(_mm256_loadu_ps(wt + (size_t)k * row + j), v));
		}
		_mm256_storeu_ps(dst + j, s);
	}
	for (; j < row; j++) {
		float s = 0;
		for (int k = 0; k < cn; k++) s += wt[(size_t)k * row + j] * rowf[ix[(size_t)k * row + j]];
		dst[j] = s;
	}
}
#endif

// v4f is four floats: a pixel's 3 bands (and one lane that is overwritten)
// multiplied and added lane by lane, each lane the IEEE operations of the
// scalar sum in the same order.
typedef float v4f __attribute__((vector_size(16)));

// sums3 is the first pass of a 3-band row: output x is the sum of its cnt[x]
// pixels from off[x] (areaWeights' terms are consecutive pixels from the
// first; the padding after them is left out), 0 + term 0 + term 1 ..., all
// 3 bands in one v4f: half the time of a gather per band. rowf and dst have
// a float to spare at their end.
static void sums3(const float *rowf, const float *cf, const int *off, const int *cnt, int tw, float *dst) {
	for (int x = 0; x < tw; x++) {
		const float *p = rowf + off[x];
		v4f s = {0, 0, 0, 0};
		for (int k = 0; k < cnt[x]; k++, p += 3) {
			v4f v, f = {0, 0, 0, 0};
			memcpy(&v, p, sizeof v);
			f += cf[(size_t)k * tw + x];
			s += f * v;
		}
		memcpy(dst + 3 * x, &s, sizeof s); // the fourth lane is the next output's, written next
	}
}

// sumsN is the first pass of a row of any other number of bands, one sum at
// a time.
static void sumsN(const float *rowf, int bands, const float *cf, const int *off, const int *cnt, int tw, float *dst) {
	for (int x = 0; x < tw; x++)
		for (int b = 0; b < bands; b++) {
			const float *p = rowf + off[x] + b;
			float s = 0;
			for (int k = 0; k < cnt[x]; k++, p += bands) s += cf[(size_t)k * tw + x] * *p;
			dst[x * bands + b] = s;
		}
}

// Input rows are stride bytes apart. The second pass adds, for output row y, its input rows' first-pass sums
// in order k (0 + the first), rows that are consecutive from ridx[y], so
// each input row's first pass runs once, when the first output row that
// takes it comes, into a ring of rn rows: the rows stay in cache, where a
// whole first pass (a megabyte for a 350x263 RGB frame) went out to memory
// and back.
FL_HOT void fl_fit_area(const uint8_t *pix, size_t stride, int w, int h, int bands, int tw, int th,
		const long long *cidx, const float *cf, int cn, const long long *ridx, const float *rf, int rn,
		uint8_t *out) {
	(void)h;
	size_t row = (size_t)tw * bands, in = (size_t)w * bands, rstride = row + 1;
	float *ring = g_malloc(sizeof(float) * rstride * rn), *acc = g_malloc(sizeof(float) * row);
	float *rowf = g_malloc(sizeof(float) * (in + 1));
	int *ix = g_malloc(sizeof(int) * tw * cn), *off = g_malloc(sizeof(int) * tw), *cnt = g_malloc(sizeof(int) * tw);
	for (size_t j = 0; j < (size_t)tw * cn; j++) ix[j] = (int)cidx[j];
	for (int x = 0; x < tw; x++) {
		off[x] = (int)cidx[x] * bands;
		cnt[x] = 0;
		while (cnt[x] < cn && cf[(size_t)cnt[x] * tw + x] != 0) cnt[x]++;
	}
	int avx2 = 0;
#ifdef FL_X86
	avx2 = has_avx2();
#endif
	rowf[in] = 0;
	int next = 0; // the next input row to take through the first pass
	for (int y = 0; y < th; y++) {
		int first = (int)ridx[y], n = 0;
		while (n < rn && rf[(size_t)n * th + y] != 0) n++;
		for (; next < first + n; next++) {
			const uint8_t *src = pix + (size_t)next * stride;
			for (size_t i = 0; i < in; i++) rowf[i] = (float)src[i];
			float *dst = ring + (size_t)(next % rn) * rstride;
			if (bands == 3)
				sums3(rowf, cf, off, cnt, tw, dst);
			else if (bands != 1)
				sumsN(rowf, bands, cf, off, cnt, tw, dst);
#ifdef FL_X86
			else if (avx2)
				sums_avx2(rowf, cf, ix, cn, tw, dst);
#endif
			else
				sums_plain(rowf, cf, ix, cn, tw, dst);
		}
		memset(acc, 0, sizeof(float) * row);
		for (int k = 0; k < n; k++) {
			float f = rf[(size_t)k * th + y];
			const float *v = ring + (size_t)((first + k) % rn) * rstride;
			for (size_t x = 0; x < row; x++) acc[x] += f * v[x];
		}
		uint8_t *d = out + (size_t)y * row;
		for (size_t x = 0; x < row; x++) {
			float s = acc[x] + 0.5f;
			d[x] = (uint8_t)(s < 255 ? s : 255);
		}
	}
	(void)avx2;
	g_free(ring);
	g_free(acc);
	g_free(rowf);
	g_free(ix);
	g_free(off);
	g_free(cnt);
}
