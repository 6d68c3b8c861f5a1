// fl_fit_area: the two passes of fitArea (grey.go) in C. In Go they took
// 0.6-1 ms of a 1400x1050 JPEG's ingest (the 350x263 luminance to 240x180),
// a quarter of the import's CPU on top of the decode; the arithmetic is the
// same float32 sums in the same order, so the bytes are the same.
#include "kernels.h"

// The passes add term k of every output before term k+1 (see fitArea); a
// term's index and weight for output j are at [k*m + j] of cidx/cf (columns,
// m = tw) and ridx/rf (rows, m = th). The float rows are allocated here,
// not by Go: a quarter megabyte zeroed and collected per image cost the
// Go runtime about what the sums cost.
FL_HOT void fl_fit_area(const uint8_t *pix, int w, int h, int bands, int tw, int th,
		const long long *cidx, const float *cf, int cn, const long long *ridx, const float *rf, int rn,
		uint8_t *out) {
	size_t row = (size_t)tw * bands;
	float *tmp = g_malloc(sizeof(float) * row * h), *acc = g_malloc(sizeof(float) * row);
	// A 3-band output's terms are consecutive pixels from its first on
	// (areaWeights), then padding of weight 0 at the end, which adds
	// nothing to a sum of non-negative terms: the sums walk the pixels from
	// the first and stop before the padding, with no index a term.
	size_t *off = NULL;
	int *cnt = NULL;
	if (bands == 3) {
		off = g_malloc(sizeof(size_t) * tw), cnt = g_malloc(sizeof(int) * tw);
		for (int x = 0; x < tw; x++) {
			off[x] = (size_t)cidx[x] * 3;
			cnt[x] = 0;
			while (cnt[x] < cn && cf[(size_t)cnt[x] * tw + x] != 0) cnt[x]++;
		}
	}
	// The first pass sums each output in a register, its terms in order k
	// (0 + the first term is that term, as the first form's sums began):
	// the same additions as adding term k of every output before term k+1
	// into memory, without loading and storing every partial sum.
	for (int y = 0; y < h; y++) {
		const uint8_t *src = pix + (size_t)y * w * bands;
		float *dst = tmp + (size_t)y * row;
		if (bands == 1) {
			for (int x = 0; x < tw; x++) {
				float s = 0;
				for (int k = 0; k < cn; k++) s += cf[(size_t)k * tw + x] * (float)src[cidx[(size_t)k * tw + x]];
				dst[x] = s;
			}
		} else if (bands == 3) {
			for (int x = 0; x < tw; x++) {
				const uint8_t *p = src + off[x];
				float s0 = 0, s1 = 0, s2 = 0;
				for (int k = 0; k < cnt[x]; k++, p += 3) {
					float f = cf[(size_t)k * tw + x];
					s0 += f * (float)p[0];
					s1 += f * (float)p[1];
					s2 += f * (float)p[2];
				}
				dst[3 * x] = s0, dst[3 * x + 1] = s1, dst[3 * x + 2] = s2;
			}
		} else {
			for (int x = 0; x < tw; x++)
				for (int b = 0; b < bands; b++) {
					float s = 0;
					for (int k = 0; k < cn; k++)
						s += cf[(size_t)k * tw + x] * (float)src[cidx[(size_t)k * tw + x] * bands + b];
					dst[x * bands + b] = s;
				}
		}
	}
	for (int y = 0; y < th; y++) {
		memset(acc, 0, sizeof(float) * row);
		for (int k = 0; k < rn; k++) {
			float f = rf[(size_t)k * th + y];
			if (f == 0) break; // padding
			const float *v = tmp + (size_t)ridx[(size_t)k * th + y] * row;
			for (size_t x = 0; x < row; x++) acc[x] += f * v[x];
		}
		uint8_t *d = out + (size_t)y * row;
		for (size_t x = 0; x < row; x++) {
			float s = acc[x] + 0.5f;
			d[x] = (uint8_t)(s < 255 ? s : 255);
		}
	}
	g_free(tmp);
	g_free(acc);
	g_free(off);
	g_free(cnt);
}
