// Kernels of raster.h that are neither geometry (geometry.c), blur
// (blur.c) nor colour (colour.c).
#include "kernels.h"

int fl_isa = FL_ISA_AVX512;

void fl_copy(const fl_raster *in, const fl_raster *out) {
	if (in->px == out->px) return;
	for (int y = 0; y < in->h; y++) memcpy(row_of(out, y), row_of(in, y), (size_t)in->w * in->bands);
}
