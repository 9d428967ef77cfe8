/*
 * test_kernels_report.c - the benchmarks' reports from synthetic timings
 * (kernels/smem_common.c, smem_stride.c, smem_pattern.c, transpose.c): the
 * ratio to the baseline, the extra baseline when stride 1 was not asked,
 * bytes per clock, the fit into shared memory, the ceiling and its
 * suspect flag.  No GPU: the timing structs are filled by hand.
 */
#include <stdlib.h>
#include <string.h>

#include "predict.h"
#include "smem_common.h"
#include "test.h"
#include "transpose_report.h"

#define SAMPLES 5

/* Samples around a median: m*0.99, m, m, m*1.01, m*1.02 (median m). */
static void fill_samples(struct gb_samples *s, double m, long work)
{
    const double f[SAMPLES] = {1.01, 0.99, 1.0, 1.02, 1.0};

    s->ms = malloc(SAMPLES * sizeof(double));
    s->count = SAMPLES;
    s->work = work;
    for (int i = 0; i < SAMPLES; i++)
        s->ms[i] = m * f[i];
}

static void smem_timing(struct gb_smem_timing *t, const double *medians, int rows)
{
    memset(t, 0, sizeof(*t));
    t->row_count = rows;
    t->rows = calloc((size_t)rows, sizeof(*t->rows));
    t->busy_cycles = calloc((size_t)rows, sizeof(double));
    t->clock_mhz = calloc((size_t)rows, sizeof(double));
    for (int r = 0; r < rows; r++) {
        fill_samples(&t->rows[r], medians[r], 100);
        /* busy 0.5 ms of each ms of event time at a 1 MHz "clock": the
         * clock is the SM's own, not cycles over event time (2 MHz) */
        t->busy_cycles[r] = 500 * medians[r];
        t->clock_mhz[r] = 1.0;
    }
    t->warp_loads = 1000;
    t->grid = 4;
    t->block = 1024;
    t->blocks_per_sm = 2;
    t->loads_per_iteration = 32;
}

static void device(struct gb_device_info *dev)
{
    memset(dev, 0, sizeof(*dev));
    snprintf(dev->name, sizeof(dev->name), "Test GPU");
    dev->sm_count = 2;
    dev->max_clock_khz = 1000;
    dev->smem_per_block_optin_bytes = 232448;
}

static double field(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) ? v->valuedouble : -999;
}

static void stride_rows(struct gb_smem_row *rows, const long *strides, int count)
{
    long w[GB_WARP_LANES];

    for (int i = 0; i < count; i++) {
        gb_stride_words(strides[i], w);
        gb_smem_row_init(&rows[i], w);
    }
}

/* Stride 1 not asked: rows[0] is the extra baseline, not a row. */
static int test_stride_extra_baseline(void)
{
    const long all[] = {1, 2, 32, 33};
    const double medians[] = {1.0, 2.0, 31.0, 1.0};
    struct gb_smem_row rows[4];
    struct gb_smem_timing t;
    struct gb_device_info dev;
    cJSON *res, *list, *summary, *base;

    device(&dev);
    stride_rows(rows, all, 4);
    smem_timing(&t, medians, 4);
    res = gb_smem_stride_report(all + 1, 3, rows, 1, 0, &t, &dev);
    ASSERT(res != NULL);
    list = cJSON_GetObjectItem(res, "rows");
    ASSERT_EQ(cJSON_GetArraySize(list), 3);
    ASSERT_EQ(field(cJSON_GetArrayItem(list, 0), "stride"), 2);
    ASSERT_EQ(field(cJSON_GetArrayItem(list, 0), "predicted_degree"), 2);
    ASSERT_NEAR(field(cJSON_GetArrayItem(list, 0), "ratio"), 2.0, 1e-12);
    ASSERT_NEAR(field(cJSON_GetArrayItem(list, 1), "ratio"), 31.0, 1e-12);
    ASSERT_NEAR(field(cJSON_GetArrayItem(list, 1), "ratio_to_predicted"), 31.0 / 32, 1e-12);
    ASSERT_EQ(field(cJSON_GetArrayItem(list, 2), "predicted_degree"), 1);
    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 2), "distinct_words")));
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "samples")),
              SAMPLES);
    summary = cJSON_GetObjectItem(res, "summary");
    base = cJSON_GetObjectItem(summary, "baseline");
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(base, "in_rows")));
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(base, "samples")), SAMPLES);
    ASSERT_NEAR(field(summary, "max_ratio_error"), 1.0 / 32, 1e-12);
    cJSON_Delete(res);
    gb_smem_timing_free(&t);
    return 0;
}

/* Bytes per clock: 1000 warp loads x 128 B over 2 SMs and 500 cycles is
 * the full 128 B a clock; the clock is cycles over time. */
static int test_stride_bandwidth(void)
{
    const long strides[] = {4, 1};
    const double medians[] = {4.0, 1.0};
    struct gb_smem_row rows[2];
    struct gb_smem_timing t;
    struct gb_device_info dev;
    cJSON *res, *row, *peak;

    device(&dev);
    stride_rows(rows, strides, 2);
    smem_timing(&t, medians, 2);
    res = gb_smem_stride_report(strides, 2, rows, 0, 1, &t, &dev);
    ASSERT(res != NULL);
    row = cJSON_GetArrayItem(cJSON_GetObjectItem(res, "rows"), 1);
    ASSERT_EQ(field(row, "stride"), 1);
    ASSERT_NEAR(field(row, "ratio"), 1.0, 1e-12);
    ASSERT_NEAR(field(row, "bytes_per_clock_per_sm"), 128.0, 1e-9);
    ASSERT_NEAR(field(row, "sm_clock_mhz_measured"), 1.0, 1e-9);
    /* 128000 bytes in 1 ms */
    ASSERT_NEAR(field(row, "shared_gbps"), 0.128, 1e-12);
    ASSERT_NEAR(field(cJSON_GetArrayItem(cJSON_GetObjectItem(res, "rows"), 0), "ratio"), 4.0,
                1e-12);
    peak = cJSON_GetObjectItem(cJSON_GetObjectItem(res, "summary"), "peak");
    ASSERT_NEAR(field(peak, "baseline_fraction_of_peak"), 1.0, 1e-9);
    ASSERT_NEAR(field(peak, "peak_gbps"), 2 * 128 * 1e6 / 1e9, 1e-12);
    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(res, "summary"), "baseline"), "in_rows")));
    cJSON_Delete(res);
    gb_smem_timing_free(&t);
    return 0;
}

/* Issue 13: the baseline ran at 2% under the conflicted row's clock.
 * ratio_cycles is the ratio of busy cycles and takes the clocks out
 * (15680 cycles over 490 = 32, the prediction exactly) where the time
 * ratio reads 31.36; the row's clock is the one measured on the SM; the
 * summary's check is in cycles, the time error beside it.
 * Every row carries its median's interval and sample count, the
 * precision fields only when a precision was asked, and what NVML saw. */
static int test_stride_cycles(void)
{
    const long strides[] = {1, 32};
    const double medians[] = {1.0, 31.36};
    struct gb_smem_row rows[2];
    struct gb_smem_timing t;
    struct gb_device_info dev;
    cJSON *res, *list, *r0, *r1, *summary, *reasons;

    device(&dev);
    stride_rows(rows, strides, 2);
    smem_timing(&t, medians, 2);
    t.busy_cycles[0] *= 0.98;
    t.clock_mhz[0] = 0.98;
    t.rows[1].precision = 0.02;
    t.rows[1].watch.polls = 3;
    t.rows[1].watch.mem_clock_mhz = 3201;
    t.rows[1].watch.throttle_read = 1;
    t.rows[1].watch.throttle_mask = 0x4;
    res = gb_smem_stride_report(strides, 2, rows, 0, 0, &t, &dev);
    ASSERT(res != NULL);
    list = cJSON_GetObjectItem(res, "rows");
    r0 = cJSON_GetArrayItem(list, 0);
    r1 = cJSON_GetArrayItem(list, 1);
    ASSERT_NEAR(field(r1, "ratio"), 31.36, 1e-9);
    ASSERT_NEAR(field(r1, "ratio_cycles"), 32.0, 1e-9);
    ASSERT_NEAR(field(r1, "ratio_cycles_to_predicted"), 1.0, 1e-9);
    ASSERT_NEAR(field(r0, "ratio_cycles"), 1.0, 1e-12);
    ASSERT_NEAR(field(r0, "sm_clock_mhz_measured"), 0.98, 1e-9);
    summary = cJSON_GetObjectItem(res, "summary");
    ASSERT_NEAR(field(summary, "max_ratio_error"), 0.0, 1e-9);
    ASSERT_NEAR(field(summary, "max_ratio_error_time"), 1 - 31.36 / 32, 1e-9);
    ASSERT(cJSON_IsString(cJSON_GetObjectItem(summary, "ci_method")));
    /* 5 samples: no 95% interval exists, so [min, max] */
    ASSERT_EQ(field(r1, "sample_count"), SAMPLES);
    ASSERT_NEAR(field(r1, "ci_low_ms"), 31.36 * 0.99, 1e-9);
    ASSERT_NEAR(field(r1, "ci_high_ms"), 31.36 * 1.02, 1e-9);
    ASSERT(cJSON_GetObjectItem(r0, "precision_reached") == NULL);
    ASSERT(cJSON_GetObjectItem(r0, "ci_half_width") == NULL);
    ASSERT_NEAR(field(r1, "ci_half_width"), 0.015, 1e-9);
    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(r1, "precision_reached")));
    /* NVML not read for row 0: absent, not zero */
    ASSERT(cJSON_GetObjectItem(r0, "mem_clock_mhz") == NULL);
    ASSERT(cJSON_GetObjectItem(r0, "throttle_reasons") == NULL);
    ASSERT_EQ(field(r1, "mem_clock_mhz"), 3201);
    reasons = cJSON_GetObjectItem(r1, "throttle_reasons");
    ASSERT_EQ(cJSON_GetArraySize(reasons), 1);
    ASSERT_STR_EQ(cJSON_GetArrayItem(reasons, 0)->valuestring, "sw_power_cap");
    cJSON_Delete(res);
    gb_smem_timing_free(&t);
    return 0;
}

static int test_fit(void)
{
    const long strides[] = {1, 1024};
    struct gb_smem_row rows[2];

    stride_rows(rows, strides, 2);
    ASSERT_EQ(gb_smem_fit(rows, 2, 232448), 31 * 1024 + 1);
    ASSERT(!rows[0].compacted && !rows[1].compacted);
    /* a card with 64 KiB per block: the stride-1024 row is compacted */
    stride_rows(rows, strides, 2);
    ASSERT_EQ(gb_smem_fit(rows, 2, 65536), 31 * 32 + 1);
    ASSERT(!rows[0].compacted);
    ASSERT(rows[1].compacted);
    ASSERT_EQ(rows[1].predicted_degree, 32);
    ASSERT_EQ(gb_degree_for_words(rows[1].fitted), 32);
    ASSERT_EQ(gb_smem_fit(rows, 2, 1024), -1);
    return 0;
}

/* The seed's tx * 2 % 32: a broadcast, predicted 1, not 2. */
static int test_pattern_broadcast(void)
{
    long base[GB_WARP_LANES], words[GB_WARP_LANES];
    const double medians[] = {1.0, 1.02};
    struct gb_smem_row rows[2];
    struct gb_smem_timing t;
    struct gb_device_info dev;
    cJSON *res, *row, *banks;

    device(&dev);
    for (int lane = 0; lane < GB_WARP_LANES; lane++)
        words[lane] = lane * 2 % 32;
    gb_stride_words(1, base);
    gb_smem_row_init(&rows[0], base);
    gb_smem_row_init(&rows[1], words);
    smem_timing(&t, medians, 2);
    res = gb_smem_pattern_report(rows, &t, &dev);
    ASSERT(res != NULL);
    row = cJSON_GetArrayItem(cJSON_GetObjectItem(res, "rows"), 0);
    ASSERT_EQ(field(row, "predicted_degree"), 1);
    ASSERT_EQ(field(row, "broadcast_lanes"), 16);
    ASSERT_EQ(field(row, "distinct_words"), 16);
    ASSERT_NEAR(field(row, "ratio"), 1.02, 1e-12);
    banks = cJSON_GetObjectItem(row, "bank_loads");
    ASSERT_EQ(cJSON_GetArraySize(banks), 32);
    ASSERT_EQ(cJSON_GetArrayItem(banks, 0)->valueint, 1);
    ASSERT_EQ(cJSON_GetArrayItem(banks, 1)->valueint, 0);
    ASSERT_EQ(cJSON_GetArrayItem(cJSON_GetObjectItem(row, "words"), 17)->valueint, 2);
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(res, "summary"), "baseline"), "in_rows")));
    cJSON_Delete(res);
    gb_smem_timing_free(&t);
    return 0;
}

static void transpose_timing(struct gb_transpose_timing *t, double memcpy_ms,
                             const double *kernel_ms, int count)
{
    memset(t, 0, sizeof(*t));
    t->count = count;
    t->failed_kernel = -1;
    fill_samples(&t->memcpy_d2d, memcpy_ms, 10);
    t->kernels = calloc((size_t)count, sizeof(*t->kernels));
    t->verify = calloc((size_t)count, sizeof(*t->verify));
    for (int i = 0; i < count; i++)
        fill_samples(&t->kernels[i], kernel_ms[i], 10);
}

static int test_transpose_ceiling(void)
{
    const enum gb_transpose_kernel k[] = {GB_TRANSPOSE_COPY, GB_TRANSPOSE_TILE32,
                                          GB_TRANSPOSE_TILE33};
    const double ms[] = {0.30, 0.50, 0.26};
    struct gb_transpose_timing t;
    cJSON *res, *rows, *summary, *ceiling;
    double bytes = 2.0 * 1024 * 1024 * 4;

    transpose_timing(&t, 0.25, ms, 3);
    res = gb_transpose_report(1024, k, 3, 0, &t);
    ASSERT(res != NULL);
    rows = cJSON_GetObjectItem(res, "rows");
    ASSERT_EQ(cJSON_GetArraySize(rows), 2); /* copy not asked: summary only */
    ASSERT_STR_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 0), "variant")->valuestring,
                  "tile32");
    summary = cJSON_GetObjectItem(res, "summary");
    ceiling = cJSON_GetObjectItem(summary, "ceiling");
    ASSERT_NEAR(field(ceiling, "gbps"), bytes / 0.25e-3 / 1e9, 1e-9);
    ASSERT_STR_EQ(cJSON_GetObjectItem(ceiling, "source")->valuestring,
                  "cudaMemcpy device to device");
    ASSERT_NEAR(field(cJSON_GetArrayItem(rows, 1), "share_of_ceiling"), 0.25 / 0.26, 1e-12);
    ASSERT_NEAR(field(cJSON_GetArrayItem(rows, 0), "share_of_ceiling"), 0.5, 1e-12);
    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 0), "verified")));
    ASSERT_EQ(field(cJSON_GetArrayItem(rows, 0), "predicted_degree"), 32);
    ASSERT_EQ(field(cJSON_GetArrayItem(rows, 1), "predicted_degree"), 1);
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(summary, "ceiling_suspect")));
    ASSERT(cJSON_IsObject(cJSON_GetObjectItem(summary, "copy_kernel")));
    cJSON_Delete(res);
    gb_transpose_timing_free(&t);
    return 0;
}

/* A variant faster than the ceiling is flagged, not clamped. */
static int test_transpose_suspect(void)
{
    const enum gb_transpose_kernel k[] = {GB_TRANSPOSE_COPY, GB_TRANSPOSE_TILE33,
                                          GB_TRANSPOSE_TILE32_SWIZZLE};
    const double ms[] = {0.20, 0.16, 0.21};
    struct gb_transpose_timing t;
    cJSON *res, *rows, *summary, *over;

    transpose_timing(&t, 0.25, ms, 3);
    res = gb_transpose_report(1024, k, 3, 1, &t);
    ASSERT(res != NULL);
    rows = cJSON_GetObjectItem(res, "rows");
    ASSERT_EQ(cJSON_GetArraySize(rows), 3);
    summary = cJSON_GetObjectItem(res, "summary");
    ASSERT_STR_EQ(
        cJSON_GetObjectItem(cJSON_GetObjectItem(summary, "ceiling"), "source")->valuestring,
        "copy kernel");
    ASSERT_NEAR(field(cJSON_GetArrayItem(rows, 0), "share_of_ceiling"), 1.0, 1e-12);
    ASSERT_NEAR(field(cJSON_GetArrayItem(rows, 1), "share_of_ceiling"), 0.20 / 0.16, 1e-12);
    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(summary, "ceiling_suspect")));
    over = cJSON_GetObjectItem(summary, "over_ceiling");
    ASSERT_EQ(cJSON_GetArraySize(over), 1);
    ASSERT_STR_EQ(cJSON_GetArrayItem(over, 0)->valuestring, "tile33");
    ASSERT(cJSON_GetObjectItem(summary, "copy_kernel") == NULL);
    cJSON_Delete(res);
    gb_transpose_timing_free(&t);
    return 0;
}

static int test_tile_degrees(void)
{
    ASSERT_EQ(gb_transpose_tile_degree(GB_TRANSPOSE_TILE32), 32);
    ASSERT_EQ(gb_transpose_tile_degree(GB_TRANSPOSE_TILE33), 1);
    ASSERT_EQ(gb_transpose_tile_degree(GB_TRANSPOSE_TILE32_SWIZZLE), 1);
    ASSERT_EQ(gb_transpose_tile_degree(GB_TRANSPOSE_COPY), 0);
    ASSERT_STR_EQ(gb_transpose_kernel_name(GB_TRANSPOSE_TILE32_SWIZZLE), "tile32_swizzle");
    return 0;
}

TEST_MAIN({"smem_stride: extra baseline", test_stride_extra_baseline},
          {"smem_stride: bandwidth and clock", test_stride_bandwidth},
          {"smem_stride: cycles ratio, interval, watch", test_stride_cycles},
          {"smem: fit into shared memory", test_fit},
          {"smem_pattern: broadcast", test_pattern_broadcast},
          {"transpose: ceiling and shares", test_transpose_ceiling},
          {"transpose: suspect ceiling", test_transpose_suspect},
          {"transpose: tile degrees", test_tile_degrees})
