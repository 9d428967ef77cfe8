/*
 * perf_bench.c - gmem_stride, hbm_bandwidth, compute_peak and
 * pcie_bandwidth: parameters in, the prediction or peak made before the
 * launch, the backend's ops measured (gb_perf.h), rows and summary out
 * (I16_CONTRACT.md).  p2p_bandwidth is in p2p_bench.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "counters_report.h"
#include "gb_perf.h"
#include "hook_tap.h"
#include "peaks.h"
#include "perf_report.h"
#include "predict.h"
#include "report_json.h"
#include "rounds.h"
#include "stats.h"

#define MAX_ROWS 64

static int param_int(const cJSON *params, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(params, name);

    return cJSON_IsNumber(v) ? (int)v->valuedouble : 0;
}

/* Runs the backend's answer through the usual failures: -1 a CUDA error,
 * 1 an output that failed its check (first op with mismatches). */
static int measured(int rc, const struct gb_cuda_error *cuda, const struct gb_perf_op *ops,
                    int count, struct gb_job_error *err)
{
    if (rc < 0)
        return gb_job_fail_cuda(err, cuda);
    for (int i = 0; rc > 0 && i < count; i++)
        if (ops[i].mismatches != 0)
            return gb_job_fail(err, "verification_failed",
                               "%s: %lld of %lld output elements are wrong or never written "
                               "(largest error %g)",
                               ops[i].label, ops[i].mismatches,
                               ops[i].checked, ops[i].max_error);
    return rc > 0 ? gb_job_fail(err, "verification_failed", "an output failed its check") : 0;
}

static long long round_up_pow2(long long v)
{
    long long p = 1;

    while (p < v)
        p <<= 1;
    return p;
}

/* ---- gmem_stride ----------------------------------------------------- */

int gb_bench_gmem_stride(const struct gb_bench_env *env, const cJSON *params,
                         cJSON **result, struct gb_job_error *err)
{
    struct gb_perf_op ops[MAX_ROWS];
    struct gb_measure_opts opts;
    struct gb_cuda_error cuda;
    long strides[MAX_ROWS];
    long long footprint;
    int count, rc = -1, base = -1, mib = param_int(params, "footprint_mib");
    int fetch = param_int(params, "l2_fetch_bytes"), fetch_used = 0;
    cJSON *list, *summary;

    *result = NULL;
    memset(ops, 0, sizeof(ops));
    memset(&cuda, 0, sizeof(cuda));
    count = gb_bench_long_list(params, "strides", strides, MAX_ROWS - 1);
    if (count < 1)
        return gb_job_fail(err, "invalid_params", "params.strides is missing");
    for (int i = 0; i < count; i++)
        base = strides[i] == 1 ? i : base;
    if (base < 0) { /* the ratio's baseline, measured first */
        memmove(strides + 1, strides, sizeof(long) * (size_t)count);
        strides[0] = 1;
        base = 0;
        count++;
    }
    footprint = round_up_pow2(mib > 0 ? (long long)mib << 20 : 4LL * env->dev->l2_bytes);
    if (footprint < 1 << 20)
        footprint = 1 << 20;
    if ((double)footprint > 0.8 * (double)env->dev->memory_bytes)
        return gb_job_fail(err, "invalid_params", "footprint of %lld MiB does not fit %s",
                           footprint >> 20, env->dev->name);
    for (int i = 0; i < count; i++) {
        snprintf(ops[i].label, sizeof(ops[i].label), "stride %ld", strides[i]);
        ops[i].src = ops[i].dst = -1;
    }
    gb_bench_measure_opts(env, params, &opts);
    env->hooks->total = count * opts.samples;
    if (measured(gb_gmem_stride_measure(env->dev->index, strides, count, footprint, fetch,
                                        &fetch_used, env->counters, &opts, env->hooks, ops,
                                        &cuda),
                 &cuda, ops, count, err) != 0)
        goto out;
    rc = GB_PERF_OOM; /* until the result is whole */
    if (gb_perf_result_begin(result, &list, &summary) != 0)
        goto out;
    for (int i = 0; i < count; i++) {
        int predicted = gb_sectors_for_stride(strides[i]);
        int lines = gb_lines_for_stride(strides[i]);
        const struct gb_counter_values *cv = &ops[i].counters;
        double ratio = gb_perf_rate(&ops[base], 1) / gb_perf_rate(&ops[i], 1) *
                       (ops[i].amount / ops[base].amount);
        cJSON *o = gb_perf_add_row(list, &ops[i], "GB/s", 1e9, 0,
                                   "none: the requested bytes over time; the prediction is "
                                   "in sectors (common/predict.c)");
        if (o == NULL)
            goto out;
        cJSON_AddNumberToObject(o, "stride", (double)strides[i]);
        cJSON_AddNumberToObject(o, "predicted_sectors", predicted);
        cJSON_AddNumberToObject(o, "predicted_lines", lines);
        gb_json_add_number(o, "predicted_ratio", predicted / (double)gb_sectors_for_stride(1));
        gb_json_add_number(o, "ratio", ratio);
        if (cv->read && cv->v[GB_CM_GLD_REQUESTS] > 0) {
            gb_json_add_number(o, "sectors_per_request",
                               cv->v[GB_CM_GLD_SECTORS] / cv->v[GB_CM_GLD_REQUESTS]);
            cJSON_AddNumberToObject(o, "sectors_per_request_predicted", predicted);
            gb_json_add_number(o, "global_load_requests", cv->v[GB_CM_GLD_REQUESTS]);
            gb_json_add_number(o, "global_load_sectors", cv->v[GB_CM_GLD_SECTORS]);
            cJSON_AddNumberToObject(o, "expected_global_load_requests",
                                    (double)ops[i].counter_requests);
            cJSON_AddBoolToObject(o, "counters_agree",
                                  fabs(cv->v[GB_CM_GLD_SECTORS] / cv->v[GB_CM_GLD_REQUESTS] -
                                       predicted) < 0.01 * predicted);
            /* What the time follows beyond the sectors (kernels/README.md):
             * the lines looked up, and the bytes DRAM really read (a miss
             * fetches l2_fetch_granularity_bytes; L2 hits read none). */
            gb_json_add_number(o, "lines_per_request",
                               cv->v[GB_CM_GLD_SETS] / cv->v[GB_CM_GLD_REQUESTS]);
            gb_json_add_number(o, "dram_bytes_per_request",
                               cv->v[GB_CM_DRAM_READ] / cv->v[GB_CM_GLD_REQUESTS]);
        } else {
            cJSON_AddNullToObject(o, "sectors_per_request");
            cJSON_AddNullToObject(o, "sectors_per_request_predicted");
        }
    }
    cJSON_AddNumberToObject(summary, "footprint_bytes", (double)footprint);
    cJSON_AddNumberToObject(summary, "l2_bytes", env->dev->l2_bytes);
    cJSON_AddBoolToObject(summary, "l2_resident", footprint <= env->dev->l2_bytes);
    cJSON_AddNumberToObject(summary, "l2_fetch_granularity_bytes", fetch_used);
    gb_perf_summary_closing(summary,
                            "lane L of each warp request reads 32-bit word base + L*stride, "
                            "base 128-byte aligned, the requests sweeping the footprint; 8 "
                            "independent loads a thread a loop trip; every thread's sum "
                            "checked on the host; ratio = time per requested byte over "
                            "stride 1's; counters (l1tex__t_sectors, l1tex__t_set_accesses "
                            "and l1tex__t_requests _pipe_lsu_mem_global_op_ld.sum, "
                            "dram__bytes_read.sum) from one launch of 16 trips after the "
                            "timed samples; the L2 fetching l2_fetch_granularity_bytes from "
                            "DRAM a miss");
    rc = 0;
out:
    return gb_perf_result_end(rc, result, ops, MAX_ROWS, err);
}

/* ---- hbm_bandwidth --------------------------------------------------- */

int gb_bench_hbm_bandwidth(const struct gb_bench_env *env, const cJSON *params,
                           cJSON **result, struct gb_job_error *err)
{
    struct gb_perf_op ops[GB_HBM_OPS];
    struct gb_measure_opts opts;
    struct gb_cuda_error cuda;
    long long l2x4 = 4LL * env->dev->l2_bytes, bytes;
    int mib = param_int(params, "array_mib"), rc = -1;
    double dram, ceiling;
    char source[200];
    cJSON *list, *summary;

    *result = NULL;
    memset(ops, 0, sizeof(ops));
    memset(&cuda, 0, sizeof(cuda));
    bytes = mib > 0 ? (long long)mib << 20 : (l2x4 > (1LL << 30) ? l2x4 : 1LL << 30);
    if (bytes < l2x4)
        return gb_job_fail(err, "invalid_params",
                           "array_mib %d is under 4x the L2 (%d MiB on %s): the L2 would "
                           "serve part of it",
                           mib, (int)(l2x4 >> 20), env->dev->name);
    if (3.0 * (double)bytes > 0.8 * (double)env->dev->memory_bytes)
        return gb_job_fail(err, "invalid_params", "three %d MiB arrays do not fit %s",
                           (int)(bytes >> 20), env->dev->name);
    gb_bench_measure_opts(env, params, &opts);
    env->hooks->total = GB_HBM_OPS * opts.samples;
    if (measured(gb_hbm_measure(env->dev->index, bytes / 8, &opts, env->hooks, ops, &cuda),
                 &cuda, ops, GB_HBM_OPS, err) != 0)
        goto out;
    dram = gb_dram_peak_gbps(env->dev->max_mem_clock_khz, env->dev->bus_width_bits);
    ceiling = gb_perf_rate(&ops[GB_HBM_OPS - 1], 1e9);
    snprintf(source, sizeof(source),
             "DRAM peak: cudaDevAttrMemoryClockRate %d kHz x cudaDevAttrGlobalMemoryBusWidth "
             "%d bits / 8 x 2 (double data rate)",
             env->dev->max_mem_clock_khz, env->dev->bus_width_bits);
    rc = GB_PERF_OOM; /* until the result is whole */
    if (gb_perf_result_begin(result, &list, &summary) != 0)
        goto out;
    for (int i = 0; i < GB_HBM_OPS; i++) {
        cJSON *o = gb_perf_add_row(list, &ops[i], "GB/s", 1e9, dram, source);
        if (o == NULL)
            goto out;
        cJSON_AddStringToObject(o, "kernel", ops[i].label);
        cJSON_AddNumberToObject(o, "bytes_moved", ops[i].amount);
        gb_json_add_number(o, "share_of_memcpy", gb_perf_rate(&ops[i], 1e9) / ceiling);
    }
    gb_json_add_number(summary, "dram_peak_gbps", dram);
    cJSON_AddStringToObject(summary, "dram_peak_source", source);
    gb_json_add_number(summary, "memcpy_ceiling_gbps", ceiling);
    cJSON_AddNumberToObject(summary, "array_bytes", (double)bytes);
    cJSON_AddNumberToObject(summary, "l2_bytes", env->dev->l2_bytes);
    gb_perf_summary_closing(summary,
                            "STREAM on doubles: copy c=a, scale c=3a, add c=a+b, triad c=a+3b "
                            "(fma); bytes counted as STREAM does (2 or 3 arrays a launch); "
                            "each output poisoned and every element checked bit for bit; a "
                            "sample is a CUDA graph of calibrated launches; memcpy is a "
                            "device-to-device cudaMemcpy of one array, read plus written");
    rc = 0;
out:
    return gb_perf_result_end(rc, result, ops, GB_HBM_OPS, err);
}

/* ---- compute_peak ---------------------------------------------------- */

/* The SM clock NVML reports while each row's timed launches run (read in
 * the in-flight hook, kept by the between hook for the row whose samples
 * it belongs to: rows are told apart by their samples' address), and the
 * power limit the driver enforced meanwhile.  cuBLAS's kernels record no
 * clock of their own, so for the GEMM rows this is the clock they ran at;
 * for the FMA rows it stands beside the clock measured on the SM. */
struct clock_watch {
    const struct gb_bench_env *env;
    const struct gb_perf_op *ops;
    int count, cap;
    double pending; /* read during the sample in flight; 0: none */
    double *mhz;    /* count x cap readings, row i's from i * cap */
    int reads[GB_COMPUTE_KIND_COUNT];
    double limit_w;   /* 0: not read */
    char reason[256]; /* why a reading failed */
};

static void clock_in_flight(void *arg)
{
    struct clock_watch *cw = arg;
    const char *pci = cw->env->dev->pci_bus_id;

    cw->pending = 0;
    if (cw->env->nvml == NULL ||
        gb_nvml_sm_clock(cw->env->nvml, pci, &cw->pending, cw->reason, sizeof(cw->reason)) != 0)
        return;
    if (cw->limit_w <= 0 &&
        gb_nvml_enforced_power_limit(cw->env->nvml, pci, &cw->limit_w, cw->reason,
                                     sizeof(cw->reason)) != 0)
        cw->limit_w = 0;
}

static void clock_between(void *arg, struct gb_samples *row)
{
    struct clock_watch *cw = arg;

    for (int i = 0; i < cw->count && cw->pending > 0; i++)
        if (&cw->ops[i].s == row && cw->reads[i] < cw->cap)
            cw->mhz[i * cw->cap + cw->reads[i]++] = cw->pending;
    cw->pending = 0;
}

/* Row i's NVML clock: median and lowest reading; 0 when none. */
static void clock_of_row(struct clock_watch *cw, int i, double *median, double *lowest)
{
    double *v = cw->mhz + i * cw->cap;
    int n = cw->reads[i];
    struct gb_stats st;

    *median = *lowest = 0;
    if (n < 1 || gb_stats_compute(v, n, &st) != 0)
        return;
    *median = st.median;
    *lowest = st.min;
}

/* The GEMM row's clock fields: the NVML clock during the row and the
 * dense tensor peak at it, beside the peak at boost. */
static void add_row_clock(cJSON *o, struct clock_watch *cw, int i, int tensor, double value,
                          const struct gb_arch_peaks *arch, enum gb_compute_kind kind)
{
    double median, lowest, at_clock;

    clock_of_row(cw, i, &median, &lowest);
    cJSON_AddBoolToObject(o, "power_bound", tensor);
    if (median <= 0) {
        cJSON_AddNullToObject(o, "sm_clock_mhz_nvml");
        if (tensor)
            cJSON_AddNullToObject(o, "share_of_peak_at_clock");
        cJSON_AddStringToObject(o, "sm_clock_nvml_reason",
                                cw->env->nvml ? cw->reason : cw->env->nvml_reason);
        return;
    }
    gb_json_add_number(o, "sm_clock_mhz_nvml", median);
    gb_json_add_number(o, "sm_clock_mhz_nvml_min", lowest);
    cJSON_AddNumberToObject(o, "sm_clock_nvml_reads", cw->reads[i]);
    if (!tensor)
        return;
    at_clock = gb_compute_peak_tflops(arch, kind, cw->env->dev->sm_count, median);
    gb_json_add_number(o, "peak_at_clock", at_clock);
    gb_json_add_number(o, "share_of_peak_at_clock", at_clock > 0 ? value / at_clock : NAN);
}

/* The peak's sentence of row kind at clock (MHz). */
static void compute_source(char *out, size_t cap, const struct gb_bench_env *env,
                           const struct gb_arch_peaks *arch, int kind, double clock)
{
    int tensor = kind >= GB_GEMM_BF16;

    if (arch == NULL) {
        snprintf(out, cap, "no figures for compute capability %d.%d in common/peaks.c",
                 env->dev->cc_major, env->dev->cc_minor);
        return;
    }
    snprintf(out, cap, "%d SMs x %.0f FLOP/clock/SM (%s%s) x %.1f MHz (%s); %s",
             env->dev->sm_count, arch->flops_per_clock_per_sm[kind],
             tensor ? "dense tensor" : "FMA lanes x 2", kind == GB_FP16X2_FMA ? " x 2 halves" : "",
             clock,
             tensor ? "the card's maximum SM clock, cudaDevAttrClockRate"
                    : "SM clock measured on the SM during the row",
             arch->source);
}

int gb_bench_compute_peak(const struct gb_bench_env *env, const cJSON *params,
                          cJSON **result, struct gb_job_error *err)
{
    struct gb_perf_op ops[GB_COMPUTE_KIND_COUNT];
    const struct gb_arch_peaks *arch = gb_arch_peaks_find(env->dev->cc_major,
                                                          env->dev->cc_minor);
    const cJSON *kinds_json = cJSON_GetObjectItemCaseSensitive(params, "kinds"), *k;
    struct gb_measure_opts opts;
    struct gb_cuda_error cuda;
    struct clock_watch cw;
    struct gb_hook_tap tap;
    int kinds[GB_COMPUTE_KIND_COUNT], count = 0, rc = -1;
    cJSON *list, *summary;

    *result = NULL;
    memset(ops, 0, sizeof(ops));
    memset(&cuda, 0, sizeof(cuda));
    memset(&cw, 0, sizeof(cw));
    cJSON_ArrayForEach(k, kinds_json)
        for (int i = 0; cJSON_IsString(k) && i < GB_COMPUTE_KIND_COUNT; i++)
            if (strcmp(k->valuestring, gb_compute_kind_name((enum gb_compute_kind)i)) == 0 &&
                count < GB_COMPUTE_KIND_COUNT)
                kinds[count++] = i;
    gb_bench_measure_opts(env, params, &opts);
    env->hooks->total = count * opts.samples;
    cw.env = env;
    cw.ops = ops;
    cw.count = count;
    cw.cap = gb_rounds_capacity(&opts);
    snprintf(cw.reason, sizeof(cw.reason), "no timed sample was read");
    cw.mhz = calloc((size_t)(count > 0 ? count : 1) * (size_t)cw.cap, sizeof(double));
    if (cw.mhz == NULL) {
        rc = GB_PERF_OOM;
        goto out;
    }
    gb_hook_tap_init(&tap, env->hooks, clock_in_flight, clock_between, &cw);
    rc = gb_compute_measure(env->dev->index, kinds, count, param_int(params, "gemm_n"), &opts,
                            &tap.hooks, ops, &cuda);
    gb_hook_tap_finish(&tap);
    if (measured(rc, &cuda, ops, count, err) != 0) {
        rc = -1;
        goto out;
    }
    rc = GB_PERF_OOM; /* until the result is whole */
    if (gb_perf_result_begin(result, &list, &summary) != 0)
        goto out;
    /* The cap the rows ran under, so that cards with different caps are
     * not compared unawares (common/validity.c names it in its note). */
    if (cw.limit_w > 0) {
        gb_json_add_number(env->meta_extra, "enforced_power_limit_w", cw.limit_w);
        gb_json_add_number(summary, "enforced_power_limit_w", cw.limit_w);
    } else {
        cJSON_AddNullToObject(env->meta_extra, "enforced_power_limit_w");
        cJSON_AddNullToObject(summary, "enforced_power_limit_w");
    }
    for (int i = 0; i < count; i++) {
        int tensor = kinds[i] >= GB_GEMM_BF16;
        /* FMA rows: at the clock measured on the SM during the row; GEMM
         * rows (cuBLAS's kernels record no clock): at the card's maximum
         * SM clock, cudaDevAttrClockRate, i.e. at boost, and beside it at
         * the clock NVML read during the row (share_of_peak_at_clock). */
        double clock = tensor ? env->dev->max_clock_khz / 1e3 : ops[i].clock_mhz;
        double peak = gb_compute_peak_tflops(arch, (enum gb_compute_kind)kinds[i],
                                             env->dev->sm_count, clock);
        char source[640];
        cJSON *o;

        compute_source(source, sizeof(source), env, arch, kinds[i], clock);
        o = gb_perf_add_row(list, &ops[i], "TFLOP/s", 1e12, peak, source);
        if (o == NULL)
            goto out;
        cJSON_AddStringToObject(o, "kind", ops[i].label);
        if (ops[i].clock_mhz > 0)
            gb_json_add_number(o, "sm_clock_mhz_measured", ops[i].clock_mhz);
        else
            cJSON_AddNullToObject(o, "sm_clock_mhz_measured");
        gb_json_add_number(o, "max_relative_error", ops[i].max_error);
        add_row_clock(o, &cw, i, tensor, gb_perf_rate(&ops[i], 1e12), arch,
                      (enum gb_compute_kind)kinds[i]);
        if (tensor && ops[i].available) {
            /* Beside the peak at boost: the datasheet's dense figure (the
             * same per-clock rate at the clock NVIDIA quotes it at). */
            double quoted = gb_compute_peak_tflops(arch, (enum gb_compute_kind)kinds[i],
                                                   env->dev->sm_count,
                                                   arch ? arch->quoted_tensor_clock_mhz : 0);
            cJSON_AddNumberToObject(o, "gemm_n", param_int(params, "gemm_n"));
            gb_json_add_number(o, "datasheet_peak", quoted);
            gb_json_add_number(o, "share_of_datasheet_peak",
                               quoted > 0 ? gb_perf_rate(&ops[i], 1e12) / quoted : NAN);
        }
    }
    gb_perf_summary_closing(summary,
                            "FMA rows: 8 independent chains x = x*0.75 + 0.25 a thread, 256 "
                            "FMAs a loop trip, every SM full; the SM clock from clock64 over "
                            "%globaltimer of each block's loop; every thread's sum checked "
                            "against the host's recurrence in double. GEMM rows: cublasGemmEx "
                            "n x n x n, column-major, FP32 output (TF32: "
                            "CUBLAS_COMPUTE_32F_FAST_TF32), inputs random in [0.25, 1), every "
                            "element checked against an FP32 reference on the GPU (relative "
                            "5e-4; TF32 2e-3); power_bound: a GEMM at full rate runs into the "
                            "card's power cap by design; sm_clock_mhz_nvml: NVML's SM clock "
                            "read while each timed sample ran (median; _min the lowest)");
    rc = 0;
out:
    free(cw.mhz);
    return gb_perf_result_end(rc, result, ops, GB_COMPUTE_KIND_COUNT, err);
}

/* ---- pcie_bandwidth -------------------------------------------------- */

/* The link as NVML reports it, read while the timed transfers run (an
 * idle link trains down): the tap's in-flight call. */
struct link_watch {
    const struct gb_bench_env *env;
    int read, link[4];
    char reason[256];
};

static void link_in_flight(void *arg)
{
    struct link_watch *lw = arg;
    int now[4];

    if (gb_nvml_pcie_link(lw->env->nvml, lw->env->dev->pci_bus_id, now, lw->reason,
                          sizeof(lw->reason)) != 0)
        return;
    /* The highest current generation and width seen under load. */
    if (!lw->read || now[0] > lw->link[0] || now[1] > lw->link[1])
        memcpy(lw->link, now, sizeof(now));
    lw->read = 1;
}

static cJSON *link_json(const struct link_watch *lw, double *predicted)
{
    cJSON *o = cJSON_CreateObject();
    const struct gb_pcie_gen *g;

    *predicted = 0;
    if (o == NULL)
        return NULL;
    if (!lw->read) {
        cJSON_AddBoolToObject(o, "available", 0);
        cJSON_AddStringToObject(o, "reason", lw->env->nvml ? lw->reason : lw->env->nvml_reason);
        return o;
    }
    *predicted = gb_pcie_link_gbps(lw->link[0], lw->link[1]);
    g = gb_pcie_gen_find(lw->link[0]);
    cJSON_AddBoolToObject(o, "available", 1);
    cJSON_AddNumberToObject(o, "gen_current", lw->link[0]);
    cJSON_AddNumberToObject(o, "gen_max", lw->link[2]);
    cJSON_AddNumberToObject(o, "width_current", lw->link[1]);
    cJSON_AddNumberToObject(o, "width_max", lw->link[3]);
    gb_json_add_number(o, "predicted_gbps", *predicted);
    gb_json_add_number(o, "predicted_gbps_at_max", gb_pcie_link_gbps(lw->link[2], lw->link[3]));
    cJSON_AddStringToObject(o, "read_during",
                            "the timed transfers (NVML nvmlDeviceGetCurrPcieLink*, the "
                            "highest seen); idle links train down to save power");
    cJSON_AddStringToObject(o, "predicted_source",
                            g ? g->source : "unknown generation: no prediction");
    return o;
}

int gb_bench_pcie_bandwidth(const struct gb_bench_env *env, const cJSON *params,
                            cJSON **result, struct gb_job_error *err)
{
    static const char *const modes[4] = {"h2d pinned", "d2h pinned", "h2d pageable",
                                         "d2h pageable"};
    struct gb_perf_op ops[4 * 16];
    int op_mode[4 * 16], op_size[4 * 16];
    long long sizes[16];
    long kib[16];
    struct gb_measure_opts opts;
    struct gb_cuda_error cuda;
    struct link_watch lw;
    struct gb_hook_tap tap;
    int count, rc = -1, memories = 0, n_ops = 0;
    double predicted;
    const cJSON *mem;
    cJSON *list, *summary, *link, *meta_link;
    char source[320];

    *result = NULL;
    memset(ops, 0, sizeof(ops));
    memset(&cuda, 0, sizeof(cuda));
    memset(&lw, 0, sizeof(lw));
    count = gb_bench_long_list(params, "sizes_kib", kib, 16);
    if (count < 1)
        return gb_job_fail(err, "invalid_params", "params.sizes_kib is missing");
    cJSON_ArrayForEach(mem, cJSON_GetObjectItemCaseSensitive(params, "memory")) {
        const char *name = cJSON_GetStringValue(mem);
        memories |= name && strcmp(name, "pinned") == 0     ? GB_PCIE_PINNED
                    : name && strcmp(name, "pageable") == 0 ? GB_PCIE_PAGEABLE
                                                            : 0;
    }
    if (memories == 0)
        return gb_job_fail(err, "invalid_params", "params.memory names no host memory");
    for (int i = 0; i < count; i++) {
        sizes[i] = (long long)kib[i] << 10;
        for (int m = 0; m < 4; m++) {
            struct gb_perf_op *op = &ops[n_ops];
            if (!gb_pcie_mode_on(memories, m))
                continue;
            op_mode[n_ops] = m;
            op_size[n_ops++] = i;
            if (kib[i] >= 1024)
                snprintf(op->label, sizeof(op->label), "%s %ld MiB", modes[m], kib[i] >> 10);
            else
                snprintf(op->label, sizeof(op->label), "%s %ld KiB", modes[m], kib[i]);
        }
    }
    lw.env = env;
    snprintf(lw.reason, sizeof(lw.reason), "no transfer was timed");
    gb_bench_measure_opts(env, params, &opts);
    env->hooks->total = n_ops * opts.samples;
    gb_hook_tap_init(&tap, env->hooks, link_in_flight, NULL, &lw);
    rc = gb_pcie_measure(env->dev->index, sizes, count, memories, &opts, &tap.hooks, ops, &cuda);
    gb_hook_tap_finish(&tap);
    if (measured(rc, &cuda, ops, n_ops, err) != 0) {
        rc = -1;
        goto out;
    }
    rc = GB_PERF_OOM; /* until the result is whole */
    link = link_json(&lw, &predicted);
    meta_link = link ? cJSON_Duplicate(link, 1) : NULL;
    if (meta_link == NULL || !cJSON_AddItemToObject(env->meta_extra, "link", meta_link)) {
        cJSON_Delete(link);
        cJSON_Delete(meta_link);
        goto out;
    }
    snprintf(source, sizeof(source),
             "PCIe gen %d x%d as NVML read it during the transfers: GT/s x lanes x encoding / "
             "8 (%s)",
             lw.link[0], lw.link[1],
             gb_pcie_gen_find(lw.link[0]) ? gb_pcie_gen_find(lw.link[0])->source : "-");
    if (gb_perf_result_begin(result, &list, &summary) != 0 ||
        !cJSON_AddItemToObject(summary, "link", link)) {
        cJSON_Delete(link);
        goto out;
    }
    for (int i = 0; i < n_ops; i++) {
        cJSON *o = gb_perf_add_row(list, &ops[i], "GB/s", 1e9, predicted, source);
        if (o == NULL)
            goto out;
        cJSON_AddStringToObject(o, "direction", op_mode[i] % 2 == 0 ? "h2d" : "d2h");
        cJSON_AddStringToObject(o, "memory", op_mode[i] < 2 ? "pinned" : "pageable");
        cJSON_AddNumberToObject(o, "bytes", (double)sizes[op_size[i]]);
    }
    gb_perf_summary_closing(summary,
                            "cudaMemcpyAsync of one size back to back on one stream, CUDA "
                            "events around a calibrated number of copies; pinned: "
                            "cudaHostAlloc, pageable: malloc; every byte of one copy checked "
                            "(destination poisoned first)");
    rc = 0;
out:
    return gb_perf_result_end(rc, result, ops, 4 * 16, err);
}
