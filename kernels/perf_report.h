/*
 * perf_report.h - the rows of the memory, compute and link benchmarks (I16_CONTRACT.md): each
 * row carries label, value, unit, peak, peak_source and share_of_peak
 * beside the usual timing fields, so the page draws "measured against its
 * peak" without knowing the benchmark.  Pure: ops in, JSON out.
 */
#ifndef GPUBENCH_KERNELS_PERF_REPORT_H
#define GPUBENCH_KERNELS_PERF_REPORT_H

#include <cjson/cJSON.h>

#include "gb_perf.h"
#include "job_error.h"

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

/* The frame every benchmark's result has: *result = {"rows": [],
 * "summary": {}}, *rows and *summary pointing into it.  Returns 0, or -1
 * out of memory (what was built stays in *result for gb_perf_result_end). */
int gb_perf_result_begin(cJSON **result, cJSON **rows, cJSON **summary);

/* What every summary closes with: ci_method (GB_CI_METHOD) and the
 * benchmark's method sentence. */
void gb_perf_summary_closing(cJSON *summary, const char *method);

/* The end of every benchmark: frees the samples of ops[0..count); with rc
 * GB_PERF_OOM names "out of memory building the result" in err; on any
 * failure drops *result.  Returns 0, or -1 (err filled). */
#define GB_PERF_OOM (-2)
int gb_perf_result_end(int rc, cJSON **result, struct gb_perf_op *ops, int count,
                       struct gb_job_error *err);

#ifdef __cplusplus
}
#endif

#endif
