/*
 * table.c - human tables for `run`; see table.h.
 */
#include "table.h"
#include "bench_table.h"

#include <math.h>
#include <string.h>

static double num(const cJSON *obj, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *obj, const char *name)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, name));
    return s ? s : "?";
}

static const cJSON *obj(const cJSON *o, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(o, name);
}

/* What the worker saw of other processes on the card (meta.watch). */
static void print_watch(FILE *out, const cJSON *watch)
{
    const cJSON *quiet = obj(watch, "quiet"), *seen = obj(watch, "processes_seen"), *p;

    if (!cJSON_IsTrue(obj(watch, "available"))) {
        fprintf(out, "card not watched: %s\n", str(watch, "reason"));
        return;
    }
    if (cJSON_IsTrue(obj(quiet, "timed_out")))
        fprintf(out, "WARNING: the card did not become quiet in %.0f s; measured anyway\n",
                num(quiet, "waited_s"));
    cJSON_ArrayForEach(p, seen)
        fprintf(out, "WARNING: another process shared the card: pid %g %s\n", num(p, "pid"),
                str(p, "name"));
}

/* Card, driver, CUDA, build, and the clock flag: the context a number
 * needs to mean anything. */
static void print_header(FILE *out, const cJSON *meta)
{
    const cJSON *driver = obj(meta, "driver"), *cuda = obj(meta, "cuda");
    const cJSON *build = obj(meta, "build"), *dev = obj(meta, "device");
    const cJSON *before = obj(meta, "state_before"), *after = obj(meta, "state_after");
    const cJSON *version = obj(driver, "nvidia_version");

    fprintf(out, "%s (%s, %g SMs), driver %s, CUDA %s (runtime %s), nvcc %s for sm %s\n",
            str(dev, "name"), str(dev, "pci_bus_id"), num(dev, "sm_count"),
            cJSON_IsString(version) ? version->valuestring : "unknown",
            str(cuda, "driver_version"), str(cuda, "runtime_version"),
            str(build, "nvcc_version"), str(build, "architectures"));
    if (cJSON_IsTrue(obj(before, "available")))
        fprintf(out, "SM clock %g MHz during the first sample, %g MHz during the last; "
                     "%g C; power limit %g W\n",
                num(before, "sm_clock_mhz"), num(after, "sm_clock_mhz"),
                num(after, "temperature_c"), num(after, "power_limit_w"));
    else
        fprintf(out, "card state not read: %s\n", str(before, "reason"));
    print_watch(out, obj(meta, "watch"));
    if (cJSON_IsTrue(obj(meta, "clock_dropped")))
        fprintf(out, "WARNING: the SM clock fell during the run; the rows mix two clocks\n");
}

/* The counter columns of a row: measured bank conflicts, the count the
 * prediction implies, and whether they agree; dashes where not read. */
#define COUNTER_HEADER "%14s %14s %6s"
static void print_counter_cells(FILE *out, const cJSON *row)
{
    const cJSON *agree = obj(row, "counters_agree");

    if (!cJSON_IsBool(agree)) {
        fprintf(out, " %14s %14.0f %6s", "-", num(row, "expected_bank_conflicts"), "-");
        return;
    }
    fprintf(out, " %14.0f %14.0f %6s", num(row, "bank_conflicts"),
            num(row, "expected_bank_conflicts"), cJSON_IsTrue(agree) ? "yes" : "NO");
}

/* Which launch was counted, or why nothing was. */
static void print_counters_note(FILE *out, const cJSON *summary, const cJSON *meta)
{
    const cJSON *c = obj(summary, "counters"), *m = obj(meta, "counters");

    if (!cJSON_IsTrue(obj(c, "read"))) {
        fprintf(out, "hardware counters not read: %s\n", str(m, "reason"));
        return;
    }
    fprintf(out, "hardware counters (CUPTI, %g replay passes): %s; %g of %g rows agree "
                 "with the prediction within %g%%\n",
            num(m, "passes"), str(c, "launch"),
            num(c, "rows_agreeing"), num(c, "rows"), 100 * num(m, "agree_tolerance"));
}

static void print_smem_rows(FILE *out, const cJSON *rows, int by_stride)
{
    const cJSON *row;

    fprintf(out, "%-12s %9s %12s %21s %7s %8s %9s " COUNTER_HEADER "\n",
            by_stride ? "Word stride" : "Pattern", "Predicted", "Median time",
            "Min .. max (ms)", "Ratio", "Cycles", "Cyc/pred", "Bank confl.", "Expected",
            "Agree");
    cJSON_ArrayForEach(row, rows) {
        char key[32];
        if (by_stride)
            snprintf(key, sizeof(key), "%g", num(row, "stride"));
        else
            snprintf(key, sizeof(key), "%g bcast", num(row, "broadcast_lanes"));
        fprintf(out, "%-12s %9g %9.3f ms %9.3f .. %-9.3f %7.2f %8.3f %9.4f", key,
                num(row, "predicted_degree"), num(row, "median_ms"), num(row, "min_ms"),
                num(row, "max_ms"), num(row, "ratio"), num(row, "ratio_cycles"),
                num(row, "ratio_cycles_to_predicted"));
        print_counter_cells(out, row);
        fprintf(out, "%s\n", cJSON_IsTrue(obj(row, "address_compacted")) ? "  (compacted)" : "");
    }
}

static void print_smem_summary(FILE *out, const cJSON *summary)
{
    const cJSON *base = obj(summary, "baseline"), *peak = obj(summary, "peak");
    const cJSON *launch = obj(summary, "launch");

    fprintf(out, "\nbaseline (stride 1%s): median %.3f ms, %.0f GB/s = %.1f%% of the "
                 "%.0f GB/s peak at the %.0f MHz maximum clock (%g SMs x 128 B a clock); "
                 "%.1f B a clock per SM measured in SM cycles\n",
            cJSON_IsTrue(obj(base, "in_rows")) ? "" : ", measured in addition",
            num(base, "median_ms"), num(peak, "baseline_gbps"),
            100 * num(peak, "baseline_fraction_of_peak_at_max_clock"),
            num(peak, "peak_gbps_at_max_clock"), num(peak, "max_sm_clock_mhz"),
            num(peak, "sm_count"), num(peak, "baseline_bytes_per_clock_per_sm"));
    fprintf(out, "launch: %g blocks x %g threads (%g warps per SM), %g iterations x %g "
                 "loads per sample; largest |cycle ratio/predicted - 1| = %.4f\n",
            num(launch, "grid"), num(launch, "block"), num(launch, "warps_per_sm"),
            num(launch, "iterations_per_sample"), num(launch, "loads_per_iteration"),
            num(summary, "max_ratio_error"));
}

static void print_transpose(FILE *out, const cJSON *result)
{
    const cJSON *summary = obj(result, "summary"), *ceiling = obj(summary, "ceiling");
    const cJSON *row;

    fprintf(out, "%-16s %10s %10s %26s %9s " COUNTER_HEADER "\n", "Kernel", "Time", "GB/s",
            "Share of the copy ceiling", "Verified", "Bank confl.", "Expected", "Agree");
    cJSON_ArrayForEach(row, obj(result, "rows")) {
        fprintf(out, "%-16s %7.3f ms %10.1f %25.1f%% %9s", str(row, "variant"),
                num(row, "median_ms"), num(row, "gbps"),
                100 * num(row, "share_of_ceiling"),
                cJSON_IsTrue(obj(row, "verified")) ? "yes" : "NO");
        print_counter_cells(out, row);
        fprintf(out, "\n");
    }
    fprintf(out, "\n%g x %g floats, %.0f MB moved a launch; copy ceiling %.1f GB/s "
                 "(%s; cudaMemcpy %.1f, copy kernel %.1f)\n",
            num(summary, "n"), num(summary, "n"), num(summary, "bytes_per_launch") / 1e6,
            num(ceiling, "gbps"), str(ceiling, "source"), num(ceiling, "memcpy_gbps"),
            num(ceiling, "copy_kernel_gbps"));
    if (cJSON_IsTrue(obj(summary, "ceiling_suspect")))
        fprintf(out, "WARNING: a variant beat the copy ceiling, so the ceiling is wrong "
                     "(over_ceiling lists which)\n");
}

void gb_table_smem_stride(FILE *out, const cJSON *result)
{
    print_smem_rows(out, obj(result, "rows"), 1);
    print_smem_summary(out, obj(result, "summary"));
}

void gb_table_smem_pattern(FILE *out, const cJSON *result)
{
    print_smem_rows(out, obj(result, "rows"), 0);
    print_smem_summary(out, obj(result, "summary"));
}

void gb_table_transpose(FILE *out, const cJSON *result)
{
    print_transpose(out, result);
}

/* Rows measured against a peak (the issue-16 benchmarks): name, value,
 * peak and share, whatever the unit. */
void gb_table_peaks(FILE *out, const cJSON *result)
{
    const cJSON *row;

    fprintf(out, "%-32s %12s %12s %-8s %8s %9s\n", "row", "measured", "peak", "unit", "share",
            "median");
    cJSON_ArrayForEach(row, obj(result, "rows")) {
        double peak = num(row, "peak"), share = num(row, "share_of_peak");
        fprintf(out, "%-32.32s %12.4g ", str(row, "label"), num(row, "value"));
        if (isnan(peak))
            fprintf(out, "%12s ", "-");
        else
            fprintf(out, "%12.4g ", peak);
        fprintf(out, "%-8.8s ", str(row, "unit"));
        if (isnan(share))
            fprintf(out, "%8s ", "-");
        else
            fprintf(out, "%7.1f%% ", 100 * share);
        fprintf(out, "%6.3f ms\n", num(row, "median_ms"));
    }
}

void gb_table_deep(FILE *out, const cJSON *result)
{
    const cJSON *row, *summary = obj(result, "summary");
    static const char *const totals[] = {"mismatches", "sms_covered", "sm_count", "errors",
                                         "share_of_memory", "memcpy_gbps", "max_temperature_c",
                                         "first_slowdown_s", "seconds"};

    fprintf(out, "%-24s %12s %-10s %s\n", "row", "value", "unit", "verified");
    cJSON_ArrayForEach(row, obj(result, "rows")) {
        const cJSON *v = obj(row, "verified");
        fprintf(out, "%-24.24s %12.6g %-10.10s %s\n", str(row, "label"), num(row, "value"),
                str(row, "unit"),
                cJSON_IsTrue(v) ? "yes" : cJSON_IsFalse(v) ? "NO"
                                                           : str(row, "reason"));
    }
    for (size_t i = 0; i < sizeof(totals) / sizeof(totals[0]); i++)
        if (cJSON_IsNumber(obj(summary, totals[i])))
            fprintf(out, "%s: %.6g\n", totals[i], num(summary, totals[i]));
}

void gb_print_table(FILE *out, const char *benchmark, const cJSON *result,
                    const cJSON *meta)
{
    const struct gb_bench_impl *impl = gb_bench_impl_find(benchmark);

    print_header(out, meta);
    fprintf(out, "\n");
    if (impl && impl->print)
        impl->print(out, result);
    print_counters_note(out, obj(result, "summary"), meta);
}
