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
	float *tmp = g_malloc0(sizeof(float) * row * h), *acc = g_malloc(sizeof(float) * row);
	for (int y = 0; y < h; y++) {
		const uint8_t *src = pix + (size_t)y * w * bands;
		float *dst = tmp + (size_t)y * row;
		for (int k = 0; k < cn; k++) {
			const long long *idx = cidx + (size_t)k * tw;
			const float *f = cf + (size_t)k * tw;
			if (bands == 1) {
				for (int x = 0; x < tw; x++) dst[x] += f[x] * (float)src[idx[x]];
				continue;
			}
			for (int x = 0; x < tw; x++)
				for (int b = 0; b < bands; b++) dst[x * bands + b] += f[x] * (float)src[idx[x] * bands + b];
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
}
