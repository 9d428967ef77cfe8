/*
 * result_fields.c - the table of result-row fields; see result_fields.h.
 *
 * The order is the CSV's column order (and the markdown report's), which
 * scripts rely on: a new field goes at the end of the CSV ones.  Fields a row carries only for the
 * page (no GB_USE_CSV) sit beside the ones they explain.
 */
#include "result_fields.h"
#include "hash.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const smem[] = {"smem_stride", "smem_pattern", NULL};
static const char *const stride[] = {"smem_stride", NULL};
static const char *const transpose[] = {"transpose", NULL};
static const char *const variant[] = {"smem_pattern", "transpose", NULL};
static const char *const gmem[] = {"gmem_stride", NULL};
static const char *const nccl[] = {"nccl_allreduce", NULL};
static const char *const verified_by[] = {"transpose", "nccl_allreduce", NULL};
static const char *const known_answer[] = {"known_answer", NULL};
static const char *const memtest[] = {"memtest", NULL};
static const char *const soak[] = {"soak", NULL};

#define CSV GB_USE_CSV
#define KEY (GB_USE_KEY | GB_USE_CSV)
#define MEDIAN GB_USE_MEDIAN
#define GAUGE GB_USE_GAUGE
#define MENU GB_USE_COMPARE_MENU
#define REPORT GB_USE_REPORT
#define ROW_UNIT GB_USE_ROW_UNIT
#define LATE (GB_USE_CSV | GB_USE_CSV_LATE)

static const struct gb_result_field fields[] = {
    {"stride", GB_FIELD_INT, "words", "Word stride", "word stride", 0, stride, KEY,
     "lane L reads 32-bit word L*stride"},
    {"variant", GB_FIELD_TEXT, "", "Variant", "variant", 0, variant, KEY,
     "the kernel or pattern the row measures"},
    {"pattern", GB_FIELD_TEXT, "", "Pattern", "pattern", 0, NULL, KEY,
     "the access pattern the row measures"},
    {"predicted_degree", GB_FIELD_INT, "", "Predicted degree", "predicted degree", 0, smem,
     CSV | MEDIAN | GAUGE | REPORT, "the bank-conflict degree predicted before the run"},
    {"median_ms", GB_FIELD_NUMBER, "ms", "Median (ms)", "median time", 4, NULL,
     CSV | MEDIAN | GAUGE | MENU | REPORT, "the median sample time"},
    {"min_ms", GB_FIELD_NUMBER, "ms", "Min (ms)", "lowest time", 4, NULL, CSV | GB_USE_LOWEST,
     "the lowest sample time"},
    {"max_ms", GB_FIELD_NUMBER, "ms", "Max (ms)", "highest time", 4, NULL,
     CSV | GB_USE_HIGHEST, "the highest sample time"},
    {"spread", GB_FIELD_NUMBER, "share", "Spread (max−min)/median", "spread", 2, NULL, CSV,
     "(max - min) / median of the samples"},
    {"ratio", GB_FIELD_NUMBER, "x", "Measured ratio (× baseline)", "measured ratio", 3, NULL,
     CSV | MEDIAN | GAUGE | MENU | REPORT,
     "time over the run's own baseline (stride 1, or the copy)"},
    {"gbps", GB_FIELD_NUMBER, "GB/s", "GB/s", "GB/s", 4, transpose,
     CSV | MEDIAN | GAUGE | MENU | REPORT, "bytes read plus written a second"},
    {"share_of_ceiling", GB_FIELD_NUMBER, "share", "Share of copy ceiling",
     "share of copy ceiling", 3, transpose, CSV | MEDIAN | GAUGE | MENU | REPORT,
     "GB/s over the card's copy ceiling measured in the same run"},
    {"verified", GB_FIELD_BOOL, "", "Output verified", "verified", 0, verified_by, CSV,
     "every element of the output was checked"},
    {"bank_conflicts", GB_FIELD_INT, "", "Bank conflicts (counter)", "bank conflicts", 0, NULL,
     CSV | MEDIAN | MENU, "shared-memory bank conflicts the hardware counter read"},
    {"expected_bank_conflicts", GB_FIELD_INT, "", "Conflicts the prediction implies",
     "expected bank conflicts", 0, NULL, 0, "the bank conflicts the prediction implies"},
    {"counters_agree", GB_FIELD_BOOL, "", "Counter agrees (±1%)", "counters agree", 0, NULL, 0,
     "the counter is within 1% of the prediction"},
    {"wavefronts", GB_FIELD_INT, "", "Wavefronts (counter)", "wavefronts", 0, NULL,
     CSV | MEDIAN, "shared-memory wavefronts the hardware counter read"},
    {"ratio_cycles", GB_FIELD_NUMBER, "x", "Cycle ratio (× baseline cycles)", "cycle ratio", 3,
     smem, CSV | MEDIAN | GAUGE, "SM busy cycles over the baseline's busy cycles"},
    {"sm_clock_mhz_measured", GB_FIELD_NUMBER, "MHz", "SM clock (MHz)", "SM clock", 4, smem,
     CSV, "the SM clock measured on the SM during the row"},
    {"mem_clock_mhz", GB_FIELD_NUMBER, "MHz", "Memory clock (MHz)", "memory clock", 4, NULL,
     CSV, "the memory clock NVML read during the row"},
    {"ci_low_ms", GB_FIELD_NUMBER, "ms", "Median's 95% CI low (ms)", "interval low", 4, NULL,
     CSV, "the low end of the median's 95% interval"},
    {"ci_high_ms", GB_FIELD_NUMBER, "ms", "Median's 95% CI high (ms)", "interval high", 4, NULL,
     CSV, "the high end of the median's 95% interval"},
    {"samples", GB_FIELD_SAMPLES, "ms", "Samples", "samples", 0, NULL, CSV,
     "every sample time, in the order taken"},
    /* The rows of the benchmarks measured against a peak. */
    {"label", GB_FIELD_TEXT, "", "Row", "row", 0, NULL, KEY,
     "the row's name: kernel, precision, direction and size, or device pair"},
    {"predicted_sectors", GB_FIELD_INT, "", "Predicted sectors per request",
     "predicted sectors", 0, gmem, CSV | MEDIAN | GAUGE | REPORT,
     "distinct 32-byte sectors a warp request touches, predicted before the run"},
    {"sectors_per_request", GB_FIELD_NUMBER, "", "Sectors per request (counter)",
     "sectors per request", 4, gmem, CSV | MEDIAN,
     "global-memory sectors per request the hardware counters read"},
    {"value", GB_FIELD_NUMBER, "", "Measured", "measured", 4, NULL,
     CSV | MEDIAN | MENU | REPORT | ROW_UNIT,
     "the measured bandwidth, throughput or latency, in the row's unit"},
    {"unit", GB_FIELD_TEXT, "", "Unit", "unit", 0, NULL, CSV, "the unit of value and peak"},
    {"peak", GB_FIELD_NUMBER, "", "Peak", "peak", 4, NULL, CSV | REPORT | ROW_UNIT,
     "the peak value is measured against, in the row's unit (peak_source says whence)"},
    {"share_of_peak", GB_FIELD_NUMBER, "share", "Share of peak", "share of peak", 3, NULL,
     CSV | MEDIAN | GAUGE | MENU | REPORT, "value over peak"},
    /* gmem_stride's second costs, after the columns consumers already
     * know (appended so that no CSV column moves). */
    {"predicted_lines", GB_FIELD_INT, "", "Predicted lines per request", "predicted lines", 0,
     gmem, CSV | MEDIAN,
     "distinct 128-byte lines a warp request touches, predicted before the run"},
    {"lines_per_request", GB_FIELD_NUMBER, "", "Lines per request (counter)",
     "lines per request", 4, gmem, CSV | MEDIAN,
     "the L1's tag lookups per global-memory request the hardware counters read"},
    {"dram_bytes_per_request", GB_FIELD_NUMBER, "", "DRAM bytes per request (counter)",
     "DRAM bytes per request", 1, gmem, CSV,
     "bytes DRAM read per request, the hardware counters say (L2 hits read none)"},
    /* The deep checks (docs/DEEP_CHECKS.md), appended after the
     * CSV's trailing run columns (GB_USE_CSV_LATE). */
    {"mismatches", GB_FIELD_INT, "", "Mismatches", "mismatches", 0, known_answer,
     LATE | GAUGE | REPORT, "results that differed from the host's exact answer in any bit"},
    {"checked", GB_FIELD_INT, "", "Results checked", "results checked", 0, known_answer, LATE,
     "results compared bit for bit with the host's"},
    {"sms_covered", GB_FIELD_INT, "", "SMs covered", "SMs covered", 0, known_answer,
     LATE | REPORT, "SMs that ran at least one block of the kind"},
    {"result_hash", GB_FIELD_TEXT, "", "Result hash", "result hash", 0, known_answer,
     LATE | REPORT | GB_USE_DIGEST,
     "FNV-1a 64 of one launch's results: the same on every good card of a model"},
    {"errors", GB_FIELD_INT, "", "Errors", "errors", 0, memtest, LATE | GAUGE | REPORT,
     "words that read back other than they were written"},
    {"bytes_tested", GB_FIELD_INT, "", "Bytes tested", "bytes tested", 0, memtest, LATE,
     "bytes of the region each pattern wrote and read back"},
    {"share_of_memcpy", GB_FIELD_NUMBER, "share", "Share of memcpy", "share of memcpy", 3,
     memtest, LATE | GAUGE | REPORT, "the pattern's GB/s over the memcpy ceiling of the run"},
    {"sm_clock_mhz", GB_FIELD_NUMBER, "MHz", "SM clock (MHz)", "SM clock", 4, soak,
     LATE | REPORT, "the window's mean SM clock NVML read"},
    {"power_w", GB_FIELD_NUMBER, "W", "Power (W)", "power", 3, soak, LATE | REPORT,
     "the window's mean board power NVML read"},
    {"temperature_c", GB_FIELD_NUMBER, "C", "Temperature (C)", "temperature", 3, soak,
     LATE | REPORT, "the window's mean GPU temperature NVML read"},
    /* nccl_allreduce's bandwidths, as nccl-tests defines them,
     * after the deep checks' (GB_USE_CSV_LATE). */
    {"algbw_gbps", GB_FIELD_NUMBER, "GB/s", "Algorithm bandwidth (GB/s)", "algorithm bandwidth",
     4, nccl, LATE | MEDIAN | REPORT, "bytes / median time of one all-reduce"},
    {"busbw_gbps", GB_FIELD_NUMBER, "GB/s", "Bus bandwidth (GB/s)", "bus bandwidth", 4, nccl,
     LATE | MEDIAN | GAUGE | MENU | REPORT,
     "algorithm bandwidth x 2(n-1)/n for n GPUs (nccl-tests' bus bandwidth)"},
};

#define FIELD_COUNT (sizeof(fields) / sizeof(fields[0]))

/* The fields every row of a benchmark carries, as its kernels report them
 * (kernels/smem_common.c, kernels/perf_report.c) and every run in
 * examples/ has them: what the readers cannot do without (the row's key,
 * its median and samples; the peak rows' unit and value).  An import or a
 * peer's run whose rows lack one is refused (import_check.c).  measured
 * fields are left out of a row that says "available": false (a GEMM with
 * no cuBLAS): it carries only its label, unit and reason.  Test-only
 * benchmarks have no entry: their rows are the test double's. */
static const char *const smem_stride_row[] = {"stride", NULL};
static const char *const variant_row[] = {"variant", NULL};
static const char *const peak_row[] = {"label", "unit", "value", NULL};
static const char *const timed_row[] = {"median_ms", "samples", NULL};
static const char *const known_answer_row[] = {"mismatches", "checked", "sms_covered", NULL};
/* memtest's memcpy row (the ceiling) counts no errors: its pattern only */
static const char *const memtest_row[] = {"pattern", NULL};
static const char *const soak_row[] = {"load", "window", NULL};

static const struct {
    const char *benchmark;
    const char *const *always;   /* in every row */
    const char *const *measured; /* in every row but one with "available": false */
} row_rules[] = {
    {"smem_stride", smem_stride_row, timed_row},
    {"smem_pattern", variant_row, timed_row},
    {"transpose", variant_row, timed_row},
    {"gmem_stride", peak_row, timed_row},
    {"hbm_bandwidth", peak_row, timed_row},
    {"compute_peak", peak_row, timed_row},
    {"pcie_bandwidth", peak_row, timed_row},
    {"p2p_bandwidth", peak_row, timed_row},
    {"nccl_allreduce", peak_row, timed_row},
    /* the deep checks time no samples (docs/DEEP_CHECKS.md) */
    {"known_answer", peak_row, known_answer_row},
    {"memtest", peak_row, memtest_row},
    {"soak", peak_row, soak_row},
};

#define ROW_RULE_COUNT (sizeof(row_rules) / sizeof(row_rules[0]))

static int row_rule(const char *benchmark)
{
    for (size_t i = 0; benchmark && i < ROW_RULE_COUNT; i++)
        if (strcmp(row_rules[i].benchmark, benchmark) == 0)
            return (int)i;
    return -1;
}

int gb_result_rows_known(const char *benchmark)
{
    return row_rule(benchmark) >= 0;
}

/* Whether v (not null) is of type t. */
static int of_type(const cJSON *v, enum gb_field_type t)
{
    const cJSON *x;

    switch (t) {
    case GB_FIELD_NUMBER:
        return cJSON_IsNumber(v);
    case GB_FIELD_INT:
        return cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble);
    case GB_FIELD_TEXT:
        return cJSON_IsString(v);
    case GB_FIELD_BOOL:
        return cJSON_IsBool(v);
    case GB_FIELD_SAMPLES:
        if (!cJSON_IsArray(v))
            return 0;
        cJSON_ArrayForEach(x, v) {
            if (!cJSON_IsNumber(x))
                return 0;
        }
        return 1;
    }
    return 0;
}

/* Row i carries every name of names; 0, or -1 with err naming the first
 * it lacks. */
static int has_all(const char *benchmark, const cJSON *row, int i, const char *const *names,
                   struct gb_error *err)
{
    char path[96];

    for (const char *const *n = names; *n; n++) {
        if (cJSON_GetObjectItemCaseSensitive(row, *n) != NULL)
            continue;
        snprintf(path, sizeof(path), "results.rows[%d].%s", i, *n);
        return gb_error_set(err, "missing_field", path, "%s is missing: every %s row carries it",
                            path, benchmark);
    }
    return 0;
}

/* 1 when v, a value of a field measured in ms, holds a time below zero
 * (a number, or any number of a samples list): no run takes less than no
 * time, and a copied run claiming one is refused. */
static int negative_time(const struct gb_result_field *f, const cJSON *v)
{
    const cJSON *x;

    if (strcmp(f->unit, "ms") != 0)
        return 0;
    if (cJSON_IsNumber(v))
        return v->valuedouble < 0;
    cJSON_ArrayForEach(x, v)
        if (cJSON_IsNumber(x) && x->valuedouble < 0)
            return 1;
    return 0;
}

int gb_result_rows_check(const char *benchmark, const cJSON *rows, struct gb_error *err)
{
    int rule = row_rule(benchmark), i = 0;
    const cJSON *row, *v;
    char path[96];

    if (!cJSON_IsArray(rows))
        return gb_error_set(err, "wrong_type", "results.rows", "results.rows must be an array");
    cJSON_ArrayForEach(row, rows) {
        if (!cJSON_IsObject(row)) {
            snprintf(path, sizeof(path), "results.rows[%d]", i);
            return gb_error_set(err, "wrong_type", path, "%s must be an object", path);
        }
        if (rule >= 0 && has_all(benchmark, row, i, row_rules[rule].always, err) != 0)
            return -1;
        if (rule >= 0 && !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(row, "available")) &&
            has_all(benchmark, row, i, row_rules[rule].measured, err) != 0)
            return -1;
        cJSON_ArrayForEach(v, row) {
            const struct gb_result_field *f = gb_result_field_find(v->string);
            if (f == NULL || cJSON_IsNull(v))
                continue;
            if (of_type(v, f->type)) {
                if (!negative_time(f, v))
                    continue;
                snprintf(path, sizeof(path), "results.rows[%d].%.40s", i, v->string);
                return gb_error_set(err, "out_of_bounds", path,
                                    "%s holds a negative time: no measurement takes less than "
                                    "none",
                                    path);
            }
            snprintf(path, sizeof(path), "results.rows[%d].%.40s", i, v->string);
            return gb_error_set(err, "wrong_type", path, "%s must be %s %s", path,
                                f->type == GB_FIELD_INT ? "an" : "a",
                                f->type == GB_FIELD_SAMPLES ? "array of numbers"
                                                            : gb_field_type_name(f->type));
        }
        i++;
    }
    return 0;
}

int gb_result_field_gauge(const struct gb_result_field *f, char *name, size_t cap,
                          double *scale)
{
    /* Units Prometheus wants in base units: the suffix the field's name
     * ends with, what replaces it, and the factor. */
    static const struct {
        const char *unit, *suffix, *base;
        double scale;
    } bases[] = {
        {"ms", "_ms", "_seconds", 1e-3},
        {"GB/s", "gbps", "bytes_per_second", 1e9},
    };
    size_t n = strlen(f->name);
    int w;

    *scale = 1;
    for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
        size_t k = strlen(bases[i].suffix);
        if (strcmp(f->unit, bases[i].unit) == 0 && n >= k &&
            strcmp(f->name + n - k, bases[i].suffix) == 0) {
            *scale = bases[i].scale;
            w = snprintf(name, cap, "%s%.*s%s", GB_GAUGE_PREFIX, (int)(n - k), f->name,
                         bases[i].base);
            return w < 0 || (size_t)w >= cap ? -1 : 0;
        }
    }
    w = snprintf(name, cap, "%s%s", GB_GAUGE_PREFIX, f->name);
    return w < 0 || (size_t)w >= cap ? -1 : 0;
}

/* The CSV columns not named as their field: a run column of the CSV
 * (api_exports.c) has the field's name. */
static const struct {
    const char *field, *column;
} csv_renamed[] = {
    {"label", "row_label"},
};

const char *gb_result_field_csv_name(const struct gb_result_field *f)
{
    for (size_t i = 0; i < sizeof(csv_renamed) / sizeof(csv_renamed[0]); i++)
        if (strcmp(f->name, csv_renamed[i].field) == 0)
            return csv_renamed[i].column;
    return f->name;
}

const struct gb_result_field *gb_result_field_at(size_t i)
{
    return i < FIELD_COUNT ? &fields[i] : NULL;
}

size_t gb_result_field_count(void)
{
    return FIELD_COUNT;
}

/* The fields by name, for gb_result_field_find: every field of every row
 * of every run read, imported or pulled is looked up (twice a pulled run's
 * row: checked, then digested), so a hub does it thousands of times a
 * second.  An open-addressed table of FNV-1a hashes, filled once
 * (pthread_once), then only read: one hash of the name and, where a slot
 * holds the same hash, one strcmp. */
#define BY_NAME_SLOTS 256 /* a power of two, over twice FIELD_COUNT */
struct by_name_slot {
    uint32_t hash;
    const struct gb_result_field *f; /* NULL: empty */
};
static struct by_name_slot by_name[BY_NAME_SLOTS];
static pthread_once_t by_name_once = PTHREAD_ONCE_INIT;

static void fill_by_name(void)
{
    _Static_assert(BY_NAME_SLOTS >= 2 * FIELD_COUNT, "the table of names is too small");
    for (size_t i = 0; i < FIELD_COUNT; i++) {
        uint32_t h = hash_fnv1a(fields[i].name), at = h;
        while (by_name[at % BY_NAME_SLOTS].f != NULL)
            at++;
        by_name[at % BY_NAME_SLOTS].hash = h;
        by_name[at % BY_NAME_SLOTS].f = &fields[i];
    }
}

const struct gb_result_field *gb_result_field_find(const char *name)
{
    uint32_t h, at;

    if (name == NULL || pthread_once(&by_name_once, fill_by_name) != 0)
        return NULL;
    h = hash_fnv1a(name);
    for (at = h; by_name[at % BY_NAME_SLOTS].f != NULL; at++) {
        const struct by_name_slot *e = &by_name[at % BY_NAME_SLOTS];
        if (e->hash == h && strcmp(e->f->name, name) == 0)
            return e->f;
    }
    return NULL;
}

const char *gb_field_type_name(enum gb_field_type type)
{
    switch (type) {
    case GB_FIELD_NUMBER:
        return "number";
    case GB_FIELD_INT:
        return "integer";
    case GB_FIELD_TEXT:
        return "string";
    case GB_FIELD_BOOL:
        return "boolean";
    case GB_FIELD_SAMPLES:
        return "number[]";
    }
    return "?";
}

static const char *compare_use(unsigned uses)
{
    if (uses & GB_USE_MEDIAN)
        return "median";
    if (uses & GB_USE_LOWEST)
        return "lowest";
    if (uses & GB_USE_HIGHEST)
        return "highest";
    return NULL;
}

/* One field's description; NULL on allocation failure. */
static cJSON *describe(const struct gb_result_field *f)
{
    cJSON *o = cJSON_CreateObject();
    const char *agg = compare_use(f->uses);
    char gauge[96];
    double scale;
    int ok = o != NULL && gb_result_field_gauge(f, gauge, sizeof(gauge), &scale) == 0;

    ok = ok && cJSON_AddStringToObject(o, "name", f->name) &&
         cJSON_AddStringToObject(o, "type", gb_field_type_name(f->type)) &&
         cJSON_AddStringToObject(o, "unit", f->unit) &&
         cJSON_AddStringToObject(o, "label", f->label) &&
         cJSON_AddStringToObject(o, "short_label", f->short_label) &&
         cJSON_AddNumberToObject(o, "digits", f->digits);
    if (ok && f->benchmarks) {
        cJSON *list = cJSON_AddArrayToObject(o, "benchmarks");
        for (const char *const *b = f->benchmarks; ok && *b; b++)
            ok = list && cJSON_AddItemToArray(list, cJSON_CreateString(*b));
    } else if (ok) {
        ok = cJSON_AddNullToObject(o, "benchmarks") != NULL;
    }
    ok = ok && cJSON_AddBoolToObject(o, "key", (f->uses & GB_USE_KEY) != 0) &&
         cJSON_AddBoolToObject(o, "csv", (f->uses & GB_USE_CSV) != 0) &&
         cJSON_AddBoolToObject(o, "csv_late", (f->uses & GB_USE_CSV_LATE) != 0) &&
         (agg ? cJSON_AddStringToObject(o, "compare", agg)
              : cJSON_AddNullToObject(o, "compare")) &&
         ((f->uses & GB_USE_GAUGE) ? cJSON_AddStringToObject(o, "gauge", gauge)
                                   : cJSON_AddNullToObject(o, "gauge")) &&
         cJSON_AddBoolToObject(o, "compare_menu", (f->uses & GB_USE_COMPARE_MENU) != 0) &&
         cJSON_AddBoolToObject(o, "report", (f->uses & GB_USE_REPORT) != 0) &&
         cJSON_AddBoolToObject(o, "row_unit", (f->uses & GB_USE_ROW_UNIT) != 0) &&
         cJSON_AddStringToObject(o, "help", f->help) &&
         ((f->uses & GB_USE_CSV)
              ? cJSON_AddStringToObject(o, "csv_column", gb_result_field_csv_name(f))
              : cJSON_AddNullToObject(o, "csv_column"));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

cJSON *gb_result_fields_describe(void)
{
    cJSON *list = cJSON_CreateArray();

    for (size_t i = 0; list && i < FIELD_COUNT; i++) {
        cJSON *f = describe(&fields[i]);
        if (f == NULL || !cJSON_AddItemToArray(list, f)) {
            cJSON_Delete(f);
            cJSON_Delete(list);
            return NULL;
        }
    }
    return list;
}

/* ---- showing a row: one formatter for the terminal and the report ---- */

void gb_format_number(double x, int digits, char *buf, size_t cap)
{
    int decimals = 0;

    if (digits <= 0) {
        snprintf(buf, cap, "%.15g", x);
        return;
    }
    if (x != 0)
        decimals = digits - 1 - (int)floor(log10(fabs(x)));
    if (decimals < 0)
        decimals = 0;
    snprintf(buf, cap, "%.*f", decimals > 12 ? 12 : decimals, x);
}

void gb_format_ms(double x, int digits, char *buf, size_t cap)
{
    int decimals = x > 0 ? (digits > 0 ? digits : 3) - 1 - (int)floor(log10(x)) : 3;

    if (decimals < 3)
        decimals = 3;
    snprintf(buf, cap, "%.*f", decimals > 12 ? 12 : decimals, x);
}

/* Whether f's cells say its unit by themselves (shares, ratios, row units)
 * or it has none. */
static int unit_in_cells(const struct gb_result_field *f)
{
    return f->unit[0] == '\0' || strcmp(f->unit, "share") == 0 || strcmp(f->unit, "x") == 0 ||
           (f->uses & GB_USE_ROW_UNIT);
}

void gb_result_field_header(const struct gb_result_field *f, enum gb_unit_place place,
                            char *buf, size_t cap)
{
    if (place == GB_UNIT_IN_CELL)
        snprintf(buf, cap, "%s", f->label);
    else if (unit_in_cells(f) || strstr(f->short_label, f->unit) != NULL)
        snprintf(buf, cap, "%s", f->short_label);
    else
        snprintf(buf, cap, "%s (%s)", f->short_label, f->unit);
}

int gb_result_field_format(const struct gb_result_field *f, const cJSON *row,
                           enum gb_unit_place place, char *buf, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItem(row, f->name);
    const char *unit = f->unit;
    char num[64];
    double x;

    if (f->uses & GB_USE_ROW_UNIT) /* value, peak: in the row's own unit */
        unit = cJSON_GetStringValue(cJSON_GetObjectItem(row, "unit"));
    if (unit == NULL)
        unit = "";
    if (cJSON_IsBool(v)) {
        snprintf(buf, cap, "%s", cJSON_IsTrue(v) ? "yes" : "no");
        return 0;
    }
    if (cJSON_IsString(v)) {
        snprintf(buf, cap, "%s", v->valuestring);
        return 0;
    }
    x = cJSON_GetNumberValue(v);
    if (!cJSON_IsNumber(v) || !isfinite(x)) {
        snprintf(buf, cap, "-");
        return -1;
    }
    if (strcmp(unit, "share") == 0) {
        gb_format_number(100 * x, f->digits, num, sizeof(num));
        snprintf(buf, cap, "%s%%", num);
        return 0;
    }
    if (strcmp(unit, "x") == 0) {
        gb_format_number(x, f->digits, num, sizeof(num));
        snprintf(buf, cap, "%s×", num);
        return 0;
    }
    if (strcmp(unit, "ms") == 0)
        gb_format_ms(x, f->digits, num, sizeof(num));
    else
        gb_format_number(x, f->type == GB_FIELD_INT ? 0 : f->digits, num, sizeof(num));
    if (unit[0] && (place == GB_UNIT_IN_CELL || (f->uses & GB_USE_ROW_UNIT)))
        snprintf(buf, cap, "%s %s", num, unit);
    else
        snprintf(buf, cap, "%s", num);
    return 0;
}

const struct gb_result_field *gb_result_rows_key(const cJSON *rows)
{
    for (size_t i = 0; i < gb_result_field_count(); i++) {
        const struct gb_result_field *f = gb_result_field_at(i);
        const cJSON *row;
        if (!(f->uses & GB_USE_KEY))
            continue;
        cJSON_ArrayForEach(row, rows) {
            const cJSON *v = cJSON_GetObjectItem(row, f->name);
            if (v && !cJSON_IsNull(v))
                return f;
        }
    }
    return NULL;
}

static const struct gb_result_matrix result_matrices[] = {
    {"gbps", "bandwidth", "GB/s"},
    {"latency_us", "latency", "us"},
    {"link", "link", NULL},
};

const struct gb_result_matrix *gb_result_matrix_at(size_t i)
{
    return i < sizeof(result_matrices) / sizeof(result_matrices[0]) ? &result_matrices[i] : NULL;
}
