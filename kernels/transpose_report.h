/*
 * transpose_report.h - the transpose benchmark's pure half: names, the
 * predicted conflict degree of each tile's column read, and the result
 * object built from a timing (ceiling, shares, the suspect-ceiling flag).
 * Unit-tested without a GPU in tests/unit/test_kernels_report.c.
 */
#ifndef GPUBENCH_KERNELS_TRANSPOSE_REPORT_H
#define GPUBENCH_KERNELS_TRANSPOSE_REPORT_H

#include <cjson/cJSON.h>

#include "bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "copy", "tile32", "tile33", "tile32_swizzle" (static strings). */
const char *gb_transpose_kernel_name(enum gb_transpose_kernel k);

/* The conflict degree of the tile's column read, by common/predict.c:
 * 32 for tile32, 1 for tile33 and tile32_swizzle, 0 for copy (no tile). */
int gb_transpose_tile_degree(enum gb_transpose_kernel k);

/* The warp requests of the tile's column read in one launch of k on an
 * n x n matrix: n^2 / 32 for the tiled kernels, 0 for copy (no tile). */
double gb_transpose_tile_requests(enum gb_transpose_kernel k, long long n);

/* A NEW result object (caller owns; NULL when out of memory or when
 * kernels[] lacks the copy kernel) from a complete timing: one row per
 * kernel (the copy kernel only when copy_in_rows), shares of the ceiling
 * max(memcpy, copy kernel), summary.ceiling_suspect when any share > 1;
 * each row's hardware counters from t->counters (NULL: not read) beside
 * the counts its prediction implies. */
cJSON *gb_transpose_report(int n, const enum gb_transpose_kernel *kernels, int count,
                           int copy_in_rows, const struct gb_transpose_timing *t);

#ifdef __cplusplus
}
#endif

#endif
