/*
 * smem_common.h - what smem_stride and smem_pattern share: preparing the
 * warp accesses (prediction before the launch, the broadcast check, fitting
 * into the device's shared memory), running them through gb_smem_measure,
 * and the fields of their rows and summary.
 *
 * The report functions are pure (a timing in, JSON out), so the ratio and
 * bandwidth arithmetic is unit-tested without a GPU.
 */
#ifndef GPUBENCH_KERNELS_SMEM_COMMON_H
#define GPUBENCH_KERNELS_SMEM_COMMON_H

#include <cjson/cJSON.h>

#include "bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes one conflict-free warp load of 32-bit words delivers, and the
 * bytes an SM's shared memory serves per clock (32 banks x 4 bytes). */
#define GB_WARP_LOAD_BYTES 128
#define GB_SMEM_BYTES_PER_CLOCK 128

struct gb_smem_row {
    long words[GB_WARP_LANES];  /* as asked: lane L reads words[L] */
    long fitted[GB_WARP_LANES]; /* as read on the GPU */
    int compacted;              /* fitted differs from words (compact.h) */
    int predicted_degree;       /* gb_degree_for_words, before any launch */
    int broadcast_lanes;        /* gb_shared_lanes: lanes sharing a word */
};

/* Fills row from words: the prediction and the broadcast count come from
 * common/predict.c; fitted = words until gb_smem_fit says otherwise. */
void gb_smem_row_init(struct gb_smem_row *row, const long words[GB_WARP_LANES]);

/* Rank-compacts every row whose largest word does not fit limit_bytes of
 * shared memory and returns the words the array must hold for all rows
 * (what every launch allocates), or -1 when a row cannot fit even
 * compacted (limit under 4 KiB). */
long gb_smem_fit(struct gb_smem_row *rows, int count, long limit_bytes);

/* Fits rows to env->dev, sets the progress total and times every row with
 * the same work, calibrated on baseline_row.  t is filled even on failure
 * and released with gb_smem_timing_free. */
int gb_smem_run(const struct gb_bench_env *env, struct gb_smem_row *rows,
                int count, int baseline_row, const cJSON *params,
                struct gb_smem_timing *t, struct gb_job_error *err);

/* Adds to obj row r's timing fields (report_json.h) and: ratio (median
 * over baseline_median_ms), ratio_to_predicted, ratio_cycles (the row's
 * median busy cycles over baseline_row's, counted by the SMs: sm_clock.h)
 * and ratio_cycles_to_predicted, warp_loads_per_sample,
 * requested_bytes_per_sample, shared_gbps, bytes_per_clock_per_sm and
 * sm_clock_mhz_measured (the median over the row's samples of the clock
 * measured on the SM: clock64 cycles over %globaltimer ns of the same
 * busy span), and the hardware counters of the row's counter-pass launch
 * beside the counts its prediction implies (gb_counters_add_row; null
 * where not read).  Returns 0 or -1 (out of memory). */
int gb_smem_add_measurement(cJSON *obj, const struct gb_smem_timing *t, int r,
                            int predicted_degree, double baseline_median_ms,
                            int baseline_row, int sm_count);

/* A NEW summary object (caller owns; NULL when out of memory): the
 * baseline (stride 1, with its samples), the launch shape, and the
 * baseline against the peak of SMs x 128 bytes a clock: in bytes per SM
 * cycle (clock64 spans), and in GB/s against the peak at the card's
 * maximum SM clock. */
cJSON *gb_smem_summary(const struct gb_smem_timing *t, const struct gb_smem_row *rows,
                       int baseline_row, int baseline_in_rows,
                       const struct gb_device_info *dev);

/* A NEW summary.counters object over a report's rows (counters_report.h),
 * saying which launch was counted.  NULL when out of memory. */
cJSON *gb_smem_counters_summary(const struct gb_smem_timing *t, const cJSON *rows);

/* The largest |value - 1| of the number field (ratio_to_predicted,
 * ratio_cycles_to_predicted) over the rows array of a report (how far the
 * measurement strays from the prediction). */
double gb_smem_max_ratio_error(const cJSON *rows, const char *field);

/* Adds to result its "summary": gb_smem_summary with the largest ratio
 * error in cycles (max_ratio_error) and in time (max_ratio_error_time),
 * the interval's method and the counters' summary over the report's rows.  0, or -1 when
 * out of memory. */
int gb_smem_add_summary(cJSON *result, const cJSON *rows_list,
                        const struct gb_smem_timing *t, const struct gb_smem_row *rows,
                        int baseline_row, int baseline_in_rows,
                        const struct gb_device_info *dev);

/* The two reports, pure (a timing in, a NEW result object out, NULL when
 * out of memory):
 * smem_stride: one row per asked stride, in the order asked; rows[] holds
 *   the asked strides from first_row on (first_row 1: rows[0] is an extra
 *   stride-1 baseline); baseline_row indexes the stride-1 row.
 * smem_pattern: rows[0] is the stride-1 baseline, rows[1] the pattern. */
cJSON *gb_smem_stride_report(const long *strides, int count,
                             const struct gb_smem_row *rows, int first_row,
                             int baseline_row, const struct gb_smem_timing *t,
                             const struct gb_device_info *dev);
cJSON *gb_smem_pattern_report(const struct gb_smem_row *rows,
                              const struct gb_smem_timing *t,
                              const struct gb_device_info *dev);

#ifdef __cplusplus
}
#endif

#endif
