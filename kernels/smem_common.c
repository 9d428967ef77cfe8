/*
 * smem_common.c - the shared-memory benchmarks' common half; see
 * smem_common.h.
 */
#include "smem_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compact.h"
#include "counters_report.h"
#include "predict.h"
#include "report_json.h"

void gb_smem_row_init(struct gb_smem_row *row, const long words[GB_WARP_LANES])
{
    memcpy(row->words, words, sizeof(row->words));
    memcpy(row->fitted, words, sizeof(row->fitted));
    row->compacted = 0;
    row->predicted_degree = gb_degree_for_words(words);
    row->broadcast_lanes = gb_shared_lanes(words);
}

long gb_smem_fit(struct gb_smem_row *rows, int count, long limit_bytes)
{
    long limit_words = limit_bytes / 4, most = 1;

    for (int i = 0; i < count; i++) {
        long need = gb_words_needed(rows[i].fitted);
        if (need > limit_words) {
            need = gb_compact_words(rows[i].words, rows[i].fitted);
            rows[i].compacted = 1;
        }
        if (need > limit_words)
            return -1;
        if (need > most)
            most = need;
    }
    return most;
}

int gb_smem_run(const struct gb_bench_env *env, struct gb_smem_row *rows,
                int count, int baseline_row, const cJSON *params,
                struct gb_smem_timing *t, struct gb_job_error *err)
{
    struct gb_measure_opts opts;
    struct gb_smem_plan plan;
    struct gb_cuda_error cuda;
    int(*words)[GB_WARP_LANES] = NULL;
    long smem_words;
    int rc = -1;

    memset(t, 0, sizeof(*t));
    memset(&cuda, 0, sizeof(cuda));
    if (count < 1 || baseline_row < 0 || baseline_row >= count)
        return gb_job_fail(err, "internal", "smem run without rows or baseline");
    gb_bench_measure_opts(env, params, &opts);
    smem_words = gb_smem_fit(rows, count, env->dev->smem_per_block_optin_bytes);
    if (smem_words < 0) {
        gb_job_fail(err, "unsupported_device",
                    "%s allows %d bytes of shared memory per block; the "
                    "access needs more even compacted",
                    env->dev->name,
                    env->dev->smem_per_block_optin_bytes);
        goto out;
    }
    words = calloc((size_t)count, sizeof(*words));
    if (words == NULL) {
        gb_job_fail(err, "internal", "out of memory");
        goto out;
    }
    for (int i = 0; i < count; i++)
        for (int lane = 0; lane < GB_WARP_LANES; lane++)
            words[i][lane] = (int)rows[i].fitted[lane];
    plan.rows = count;
    plan.words = (const int(*)[GB_WARP_LANES])words;
    plan.smem_words = (int)smem_words;
    plan.baseline_row = baseline_row;
    plan.counters = env->counters;
    env->hooks->total = count * opts.samples;
    if (gb_smem_measure(env->dev->index, &plan, &opts, env->hooks, t, &cuda) != 0) {
        gb_job_fail_cuda(err, &cuda);
        goto out;
    }
    rc = 0;

out:
    free(words);
    return rc;
}

/* Row r's SM clock (MHz, measured on the SM itself: sm_clock.h) and
 * bytes a clock per SM over its median busy cycles. */
static void row_clock(const struct gb_smem_timing *t, int r, int sm_count,
                      double *mhz, double *bytes_per_clock)
{
    double cycles = t->busy_cycles[r];
    double bytes = (double)t->warp_loads * GB_WARP_LOAD_BYTES;

    *mhz = t->clock_mhz[r] > 0 ? t->clock_mhz[r] : NAN;
    *bytes_per_clock = cycles > 0 && sm_count > 0 ? bytes / sm_count / cycles : NAN;
}

/* Warp-wide shared loads in the counter pass's launch of a row: the
 * requests the prediction multiplies. */
static double counter_requests(const struct gb_smem_timing *t)
{
    return (double)t->grid * (t->block / GB_WARP_LANES) * (double)t->counter_work *
           t->loads_per_iteration;
}

cJSON *gb_smem_counters_summary(const struct gb_smem_timing *t, const cJSON *rows)
{
    char launch[256];

    snprintf(launch, sizeof(launch),
             "one launch per row, after the timed samples: %d blocks x %d threads, "
             "%ld iterations x %d loads (a timed sample: %ld iterations); counts are "
             "that launch's, not scaled",
             t->grid, t->block, t->counter_work,
             t->loads_per_iteration, t->row_count > 0 ? t->rows[0].work : 0L);
    return gb_counters_summary(rows, launch);
}

int gb_smem_add_measurement(cJSON *obj, const struct gb_smem_timing *t, int r,
                            int predicted_degree, double baseline_median_ms,
                            int baseline_row, int sm_count)
{
    struct gb_stats st;
    double bytes = (double)t->warp_loads * GB_WARP_LOAD_BYTES;
    double mhz, per_clock, ratio, ratio_cycles;
    double base_cycles = t->busy_cycles[baseline_row];

    if (gb_json_add_timing(obj, &t->rows[r], &st) != 0)
        return -1;
    ratio = baseline_median_ms > 0 ? st.median / baseline_median_ms : NAN;
    row_clock(t, r, sm_count, &mhz, &per_clock);
    /* Busy cycles, counted by the SMs themselves: a row run at another
     * clock than the baseline (1943 against 1979 MHz was seen on an idle
     * H200) no longer bends the ratio, and neither does the launch's
     * fixed cost that the event time holds (~1% of a 1 ms row), so it
     * counts the conflict alone. */
    ratio_cycles = base_cycles > 0 ? t->busy_cycles[r] / base_cycles : NAN;
    gb_json_add_number(obj, "ratio", ratio);
    gb_json_add_number(obj, "ratio_to_predicted",
                       predicted_degree > 0 ? ratio / predicted_degree : NAN);
    gb_json_add_number(obj, "ratio_cycles", ratio_cycles);
    gb_json_add_number(obj, "ratio_cycles_to_predicted",
                       predicted_degree > 0 ? ratio_cycles / predicted_degree : NAN);
    /* the work the row's times are of, so that a row says it by itself
     * (common/work_units.c; the summary's launch keeps it too) */
    gb_json_add_number(obj, "iterations_per_sample", (double)t->rows[r].work);
    gb_json_add_number(obj, "warp_loads_per_sample", (double)t->warp_loads);
    gb_json_add_number(obj, "requested_bytes_per_sample", bytes);
    gb_json_add_number(obj, "shared_gbps", bytes / (st.median * 1e-3) / 1e9);
    gb_json_add_number(obj, "bytes_per_clock_per_sm", per_clock);
    gb_json_add_number(obj, "sm_clock_mhz_measured", mhz);
    if (gb_counters_add_row(obj, t->counters ? &t->counters[r] : NULL, counter_requests(t),
                            predicted_degree) < 0)
        return -1;
    return 0;
}

static cJSON *launch_json(const struct gb_smem_timing *t)
{
    cJSON *o = cJSON_CreateObject();

    if (o == NULL)
        return NULL;
    cJSON_AddNumberToObject(o, "grid", t->grid);
    cJSON_AddNumberToObject(o, "block", t->block);
    cJSON_AddNumberToObject(o, "blocks_per_sm", t->blocks_per_sm);
    cJSON_AddNumberToObject(o, "warps_per_sm", t->blocks_per_sm * t->block / GB_WARP_LANES);
    cJSON_AddNumberToObject(o, "smem_bytes_per_block", t->smem_bytes);
    cJSON_AddNumberToObject(o, "loads_per_iteration", t->loads_per_iteration);
    if (t->row_count > 0)
        cJSON_AddNumberToObject(o, "iterations_per_sample", (double)t->rows[0].work);
    return o;
}

static cJSON *peak_json(const struct gb_smem_timing *t, int baseline_row,
                        const struct gb_device_info *dev, double baseline_median_ms)
{
    cJSON *o = cJSON_CreateObject();
    double mhz, per_clock, peak_gbps, bytes = (double)t->warp_loads * GB_WARP_LOAD_BYTES;
    double max_mhz = dev->max_clock_khz / 1e3;

    if (o == NULL)
        return NULL;
    row_clock(t, baseline_row, dev->sm_count, &mhz, &per_clock);
    peak_gbps = (double)dev->sm_count * GB_SMEM_BYTES_PER_CLOCK * mhz * 1e6 / 1e9;
    cJSON_AddNumberToObject(o, "bytes_per_clock_per_sm", GB_SMEM_BYTES_PER_CLOCK);
    cJSON_AddNumberToObject(o, "sm_count", dev->sm_count);
    gb_json_add_number(o, "sm_clock_mhz", mhz);
    cJSON_AddStringToObject(o, "clock_source",
                            "median over the baseline's samples of the SM clock "
                            "measured on the SM itself: clock64 cycles over "
                            "%globaltimer ns of the same busy span (first block's "
                            "start to last block's end on the SM with the longest "
                            "span); launch and ramp outside it, unlike event time");
    gb_json_add_number(o, "peak_gbps", peak_gbps);
    gb_json_add_number(o, "baseline_gbps", bytes / (baseline_median_ms * 1e-3) / 1e9);
    gb_json_add_number(o, "baseline_bytes_per_clock_per_sm", per_clock);
    gb_json_add_number(o, "baseline_fraction_of_peak", per_clock / GB_SMEM_BYTES_PER_CLOCK);
    gb_json_add_number(o, "max_sm_clock_mhz", max_mhz);
    gb_json_add_number(o, "peak_gbps_at_max_clock",
                       (double)dev->sm_count * GB_SMEM_BYTES_PER_CLOCK * max_mhz * 1e6 / 1e9);
    /* The SM clock cannot exceed its maximum, so this share is the
     * conservative one: it holds whatever clock the card ran at. */
    gb_json_add_number(o, "baseline_fraction_of_peak_at_max_clock",
                       bytes / (baseline_median_ms * 1e-3) /
                           ((double)dev->sm_count * GB_SMEM_BYTES_PER_CLOCK * max_mhz * 1e6));
    return o;
}

cJSON *gb_smem_summary(const struct gb_smem_timing *t, const struct gb_smem_row *rows,
                       int baseline_row, int baseline_in_rows,
                       const struct gb_device_info *dev)
{
    cJSON *summary = cJSON_CreateObject();
    cJSON *baseline = cJSON_CreateObject();
    struct gb_stats st;
    int compacted = 0;

    if (summary == NULL || baseline == NULL)
        goto fail;
    cJSON_AddItemToObject(summary, "baseline", baseline);
    cJSON_AddNumberToObject(baseline, "stride", 1);
    cJSON_AddBoolToObject(baseline, "in_rows", baseline_in_rows);
    cJSON_AddStringToObject(baseline, "note",
                            baseline_in_rows ? "the stride-1 row of this run"
                                             : "stride 1 was not asked for; measured anyway "
                                               "in this run as the ratios' baseline");
    if (gb_json_add_timing(baseline, &t->rows[baseline_row], &st) != 0)
        goto fail;
    cJSON_AddItemToObject(summary, "launch", launch_json(t));
    cJSON_AddItemToObject(summary, "peak", peak_json(t, baseline_row, dev, st.median));
    for (int i = 0; i < t->row_count; i++)
        compacted += rows[i].compacted;
    cJSON_AddNumberToObject(summary, "address_compacted_rows", compacted);
    cJSON_AddStringToObject(summary, "prediction",
                            "conflict degree = the most distinct words any "
                            "bank is asked for (gcd(stride, 32) for a "
                            "stride), computed by common/predict.c before "
                            "the launch");
    cJSON_AddStringToObject(summary, "method",
                            "one kernel for every row (word indices passed "
                            "at run time); volatile 32-bit shared loads, "
                            "every SM full; CUDA events; warm-up; work per "
                            "sample calibrated on the baseline and kept for "
                            "every row; all samples kept");
    return summary;

fail:
    if (summary == NULL)
        cJSON_Delete(baseline);
    cJSON_Delete(summary);
    return NULL;
}

double gb_smem_max_ratio_error(const cJSON *rows, const char *field)
{
    const cJSON *row;
    double worst = 0;

    cJSON_ArrayForEach(row, rows) {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(row, field);
        if (cJSON_IsNumber(r) && fabs(r->valuedouble - 1) > worst)
            worst = fabs(r->valuedouble - 1);
    }
    return worst;
}

int gb_smem_add_summary(cJSON *result, const cJSON *rows_list,
                        const struct gb_smem_timing *t, const struct gb_smem_row *rows,
                        int baseline_row, int baseline_in_rows,
                        const struct gb_device_info *dev)
{
    cJSON *summary = gb_smem_summary(t, rows, baseline_row, baseline_in_rows, dev);

    if (summary == NULL)
        return -1;
    cJSON_AddItemToObject(result, "summary", summary);
    /* The prediction is checked in cycles; the time ratio's error stays
     * beside it. */
    cJSON_AddNumberToObject(summary, "max_ratio_error",
                            gb_smem_max_ratio_error(rows_list, "ratio_cycles_to_predicted"));
    cJSON_AddNumberToObject(summary, "max_ratio_error_time",
                            gb_smem_max_ratio_error(rows_list, "ratio_to_predicted"));
    cJSON_AddStringToObject(summary, "max_ratio_error_basis", "cycles");
    cJSON_AddStringToObject(summary, "ci_method", GB_CI_METHOD);
    cJSON_AddItemToObject(summary, "counters", gb_smem_counters_summary(t, rows_list));
    return 0;
}
