/*
 * perf_report.h - the rows of issue 16's benchmarks (I16_CONTRACT.md): each
 * row carries label, value, unit, peak, peak_source and share_of_peak
 * beside the usual timing fields, so the page draws "measured against its
 * peak" without knowing the benchmark.  Pure: ops in, JSON out.
 */
#ifndef GPUBENCH_KERNELS_PERF_REPORT_H
#define GPUBENCH_KERNELS_PERF_REPORT_H

#include <cjson/cJSON.h>

#include "gb_perf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The rate of op (amount per median time) divided by unit_scale (1e9 for
 * GB/s, 1e12 for TFLOP/s); NAN when op has no samples. */
double gb_perf_rate(const struct gb_perf_op *op, double unit_scale);

/* Appends to list a NEW row for op: label, value (the rate, or, with
 * unit "us", the median in microseconds), unit, peak (<= 0: null),
 * peak_source, share_of_peak, and the timing fields; an unavailable op
 * gets value null, available false and its reason.  Returns the row (owned
 * by list) or NULL when out of memory. */
cJSON *gb_perf_add_row(cJSON *list, const struct gb_perf_op *op, const char *unit,
                       double unit_scale, double peak, const char *peak_source);

#ifdef __cplusplus
}
#endif

#endif
