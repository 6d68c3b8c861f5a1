// Shared by the kernels of raster.h (geometry.c, blur.c, colour.c,
// raster.c): the hot loops are written so gcc vectorises them, and the
// hottest are compiled for AVX2 too (FL_HOT), picked at load time; where
// gcc cannot, they are written out in SSE2, SSSE3, AVX2 or AVX-512 (FL_X86),
// picked at run time up to fl_isa, each with a plain C twin that gives the
// same bytes.
#ifndef FL_KERNELS_H
#define FL_KERNELS_H

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

#ifdef FL_X86
static inline int has_ssse3(void) { return fl_isa >= FL_ISA_SSSE3 && __builtin_cpu_supports("ssse3"); }
static inline int has_avx2(void) { return fl_isa >= FL_ISA_AVX2 && __builtin_cpu_supports("avx2"); }
static inline int has_avx512(void) { return fl_isa >= FL_ISA_AVX512 && __builtin_cpu_supports("avx512bw"); }
#endif

static inline uint8_t *row_of(const fl_raster *r, int y) { return r->px + (size_t)y * r->stride; }

#endif
