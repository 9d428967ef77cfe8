/*
 * compact.h - fitting a warp's word indices into the shared memory a block
 * may have, without changing what the access measures.
 *
 * Lane L reads word w; what the hardware charges depends only on each
 * word's bank (w % 32) and on which words are equal.  When the largest
 * index does not fit the device's per-block shared memory, each word is
 * moved to row (rank of w / 32 among the rows used) * 32 + w % 32: the
 * same bank, and distinct words stay distinct, so the predicted degree and
 * the broadcasts are unchanged while the array shrinks to at most 32 rows.
 * Pure; unit-tested in tests/unit/test_kernels_verify.c.
 */
#ifndef GPUBENCH_KERNELS_COMPACT_H
#define GPUBENCH_KERNELS_COMPACT_H

#include "predict.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest word index + 1: the 32-bit words an array must hold for words[]
 * (0 if any index is negative). */
long gb_words_needed(const long words[GB_WARP_LANES]);

/* Writes the rank-compacted indices of in[] to out[] (in and out may be
 * the same array).  Returns gb_words_needed(out). */
long gb_compact_words(const long in[GB_WARP_LANES], long out[GB_WARP_LANES]);

#ifdef __cplusplus
}
#endif

#endif
