/*
 * report_json.h - the timing fields every row shares, written the same way
 * for every benchmark: median_ms, min_ms, max_ms, mean_ms, spread,
 * ci_low_ms and ci_high_ms (the 95% interval of the median, stats.h),
 * sample_count, with a precision asked ci_half_width and
 * precision_reached, what NVML saw between the samples (mem_clock_mhz,
 * throttle_reasons; absent when not read) and samples (every sample, ms,
 * in the order measured).
 */
#ifndef GPUBENCH_KERNELS_REPORT_JSON_H
#define GPUBENCH_KERNELS_REPORT_JSON_H

#include <cjson/cJSON.h>

#include "gb_kernels.h"
#include "stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Computes the statistics of s into st (when st is not NULL) and adds the
 * timing fields to obj.  Returns 0, or -1 when s has no sample or memory
 * runs out. */
int gb_json_add_timing(cJSON *obj, const struct gb_samples *s, struct gb_stats *st);

/* Adds name: value, or null when value is not finite (a division by a
 * zero time must not print as "inf", which is not JSON). */
void gb_json_add_number(cJSON *obj, const char *name, double value);

#ifdef __cplusplus
}
#endif

#endif
