/*
 * nccl_report.h - nccl_allreduce's rows from its measured ops (pure: ops
 * in, JSON out; nccl_bench.c measures, tests/unit/test_kernels_nccl.c
 * checks the arithmetic).
 */
#ifndef GPUBENCH_KERNELS_NCCL_REPORT_H
#define GPUBENCH_KERNELS_NCCL_REPORT_H

#include <cjson/cJSON.h>

#include "gb_perf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Appends to rows a NEW row for op (sizes bytes of dtype_name over ranks
 * GPUs whose links are link_type, "nvlink", "pcie" or NULL: unknown):
 * gb_perf_add_row's fields (value = bus bandwidth in GB/s, no peak), then
 * bytes, dtype, ranks, elements, link_type, and, when measured, time_us
 * (the median all-reduce), algbw_gbps (bytes / time) and busbw_gbps
 * (algbw x 2(n-1)/n).  Returns the row, or NULL out of memory. */
cJSON *gb_nccl_add_row(cJSON *rows, const struct gb_perf_op *op, long long bytes,
                       const char *dtype_name, int dtype_size, int ranks,
                       const char *link_type);

#ifdef __cplusplus
}
#endif

#endif
