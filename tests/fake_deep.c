/*
 * fake_deep.c - see fake_deep.h.  One builder a benchmark; what a mode
 * plants is decided in the builder that draws the row it lands in.
 */
#include "fake_deep.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_MEMCPY_GBPS 4150.0
#define FAKE_SLOWDOWN_C 88.0
#define FAKE_POWER_CAP_W 700.0
#define FAKE_PLANTED_MISMATCHES 3
#define FAKE_PLANTED_ERRORS 2

int fake_deep_knows(const char *bench)
{
    return strcmp(bench, "known_answer") == 0 || strcmp(bench, "memtest") == 0 ||
           strcmp(bench, "soak") == 0;
}

static double param_num(const cJSON *params, const char *name, double fallback)
{
    const cJSON *v = cJSON_GetObjectItem(params, name);

    return cJSON_IsNumber(v) ? v->valuedouble : fallback;
}

/* FNV-1a 64 of text, as the contract's result_hash (16 hex digits). */
static void fnv_hex(const char *text, char out[17])
{
    uint64_t h = 1469598103934665603ULL;

    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        h ^= *p;
        h *= 1099511628211ULL;
    }
    snprintf(out, 17, "%016" PRIx64, h);
}

/* The value after prefix in mode ("mismatch_sm=17" -> "17"), or NULL. */
static const char *planted(const char *mode, const char *prefix)
{
    size_t n = strlen(prefix);

    return strncmp(mode, prefix, n) == 0 ? mode + n : NULL;
}

static cJSON *known_answer(const cJSON *params, const char *mode, int sm_count)
{
    const char *sm_text = planted(mode, "mismatch_sm=");
    int bad_sm = sm_text ? atoi(sm_text) : -1, first = 1;
    double seconds = param_num(params, "seconds", 20);
    const cJSON *kind;
    cJSON *result = cJSON_CreateObject(), *rows = cJSON_AddArrayToObject(result, "rows");
    cJSON *summary = cJSON_AddObjectToObject(result, "summary");
    int total = 0, kinds = cJSON_GetArraySize(cJSON_GetObjectItem(params, "kinds"));

    if (bad_sm >= sm_count)
        bad_sm = sm_count - 1;
    cJSON_ArrayForEach(kind, cJSON_GetObjectItem(params, "kinds")) {
        const char *k = kind->valuestring;
        int bad = first && bad_sm >= 0, mismatches = bad ? FAKE_PLANTED_MISMATCHES : 0;
        /* a GEMM kind checks fewer, larger results than an FMA chain */
        double launches = seconds / (kinds > 0 ? kinds : 1) * 50;
        double per_launch = strstr(k, "bf16") ? 1 << 20 : (double)sm_count * 4 * 256 * 32;
        cJSON *row = cJSON_CreateObject(), *list;
        char hash_in[64], hash[17];

        snprintf(hash_in, sizeof(hash_in), "%s%s", k, bad ? " on a card that computes wrong" : "");
        fnv_hex(hash_in, hash);
        cJSON_AddStringToObject(row, "label", k);
        cJSON_AddStringToObject(row, "kind", k);
        cJSON_AddStringToObject(row, "unit", "mismatches");
        cJSON_AddNumberToObject(row, "value", mismatches);
        cJSON_AddBoolToObject(row, "available", 1);
        cJSON_AddNumberToObject(row, "checked", (double)(long long)(launches * per_launch));
        cJSON_AddNumberToObject(row, "mismatches", mismatches);
        cJSON_AddNumberToObject(row, "sms_covered", sm_count);
        cJSON_AddNumberToObject(row, "sm_count", sm_count);
        cJSON_AddNumberToObject(row, "launches", (double)(long long)launches);
        cJSON_AddStringToObject(row, "result_hash", hash);
        list = cJSON_AddArrayToObject(row, "first_mismatches");
        for (int i = 0; i < mismatches; i++) {
            cJSON *m = cJSON_CreateObject();
            char got[24];
            cJSON_AddNumberToObject(m, "sm", bad_sm);
            cJSON_AddNumberToObject(m, "element", 4096.0 * bad_sm + 17 * i);
            cJSON_AddStringToObject(m, "expected", "0x3f8ccccd");
            snprintf(got, sizeof(got), "0x3f8ccc%02x", 0xcd ^ (1 << i));
            cJSON_AddStringToObject(m, "got", got);
            cJSON_AddItemToArray(list, m);
        }
        cJSON_AddBoolToObject(row, "verified", mismatches == 0);
        cJSON_AddItemToArray(rows, row);
        total += mismatches;
        first = 0;
    }
    cJSON_AddNumberToObject(summary, "mismatches", total);
    cJSON_AddNumberToObject(summary, "sms_covered", sm_count);
    cJSON_AddNumberToObject(summary, "sm_count", sm_count);
    cJSON_AddNumberToObject(summary, "seconds", seconds);
    return result;
}

/* The ECC counters as the contract has them; corrected as given. */
static cJSON *ecc_object(double corrected)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "volatile_corrected", corrected);
    cJSON_AddNumberToObject(o, "volatile_uncorrected", 0);
    cJSON_AddNumberToObject(o, "remapped_rows_correctable", 0);
    cJSON_AddNumberToObject(o, "remapped_rows_uncorrectable", 0);
    cJSON_AddBoolToObject(o, "remap_pending", 0);
    cJSON_AddBoolToObject(o, "remap_failure", 0);
    return o;
}

/* One memtest row: rate is the share of the memcpy ceiling it ran at. */
static cJSON *memtest_row(const char *pattern, double bytes, double share, int errors,
                          const char *first_address)
{
    double gbps = FAKE_MEMCPY_GBPS * share;
    cJSON *row = cJSON_CreateObject(), *list;

    cJSON_AddStringToObject(row, "label", pattern);
    cJSON_AddStringToObject(row, "pattern", pattern);
    cJSON_AddStringToObject(row, "unit", "GB/s");
    cJSON_AddNumberToObject(row, "value", gbps);
    cJSON_AddBoolToObject(row, "available", 1);
    cJSON_AddNumberToObject(row, "bytes_tested", bytes);
    cJSON_AddNumberToObject(row, "errors", errors);
    list = cJSON_AddArrayToObject(row, "first_errors");
    for (int i = 0; i < errors; i++) {
        cJSON *e = cJSON_CreateObject();
        char addr[32];
        snprintf(addr, sizeof(addr), "0x%llx", strtoull(first_address, NULL, 0) + 8ULL * 4096 * i);
        cJSON_AddStringToObject(e, "address", addr);
        cJSON_AddStringToObject(e, "expected", "0x0000000000010000");
        cJSON_AddStringToObject(e, "got", "0x0000000000010004");
        cJSON_AddItemToArray(list, e);
    }
    /* a pattern writes the region and reads it back: two passes of bytes */
    cJSON_AddNumberToObject(row, "seconds", 2 * bytes / (gbps * 1e9));
    cJSON_AddNumberToObject(row, "share_of_memcpy", share);
    cJSON_AddBoolToObject(row, "verified", errors == 0);
    return row;
}

static cJSON *memtest(const cJSON *params, const char *mode, double total)
{
    static const struct {
        const char *pattern;
        double share; /* of the memcpy ceiling */
    } shares[] = {{"inversions", 0.86}, {"walking", 0.81}, {"address", 0.84}, {"random", 0.74}};
    const char *address = planted(mode, "memtest_error=");
    double free_bytes = 0.97 * total, bytes = param_num(params, "fraction", 0.9) * free_bytes;
    double passes = param_num(params, "passes", 1);
    int errors = 0, ecc = strcmp(mode, "memtest_ecc") == 0;
    const cJSON *p;
    cJSON *result = cJSON_CreateObject(), *rows = cJSON_AddArrayToObject(result, "rows");
    cJSON *summary = cJSON_AddObjectToObject(result, "summary");

    bytes = (double)((long long)(bytes / 8) * 8);
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(params, "patterns")) {
        double share = 0.8;
        int e = address && strcmp(p->valuestring, "walking") == 0 ? FAKE_PLANTED_ERRORS : 0;
        for (size_t i = 0; i < sizeof(shares) / sizeof(shares[0]); i++)
            if (strcmp(shares[i].pattern, p->valuestring) == 0)
                share = shares[i].share;
        cJSON_AddItemToArray(rows, memtest_row(p->valuestring, bytes, share, e,
                                               address ? address : "0"));
        errors += e;
    }
    cJSON_AddItemToArray(rows, memtest_row("memcpy", bytes, 1.0, 0, "0"));
    cJSON_AddNumberToObject(summary, "errors", errors * passes);
    cJSON_AddNumberToObject(summary, "bytes_tested", bytes);
    cJSON_AddNumberToObject(summary, "share_of_memory", bytes / total);
    cJSON_AddNumberToObject(summary, "free_bytes", free_bytes);
    cJSON_AddNumberToObject(summary, "total_bytes", total);
    cJSON_AddNumberToObject(summary, "memcpy_gbps", FAKE_MEMCPY_GBPS);
    cJSON_AddItemToObject(summary, "ecc_before", ecc_object(0));
    cJSON_AddItemToObject(summary, "ecc_after", ecc_object(ecc ? 1 : 0));
    cJSON_AddBoolToObject(summary, "ecc_increase", ecc);
    return result;
}

/* One second of a soak: what NVML and the loads' counters said at t. */
struct soak_second {
    double gemm, hbm, sm_mhz, mem_mhz, power, temp;
    int capped, thermal;
};

static struct soak_second soak_at(int t, int hot, int gemm_on, int hbm_on)
{
    struct soak_second s;
    /* warms from 45 C towards 71 C (hot: past 88 C, then held there) */
    double temp = 45 + (hot ? 46 : 26) * (1 - 1 / (1 + t / 20.0));
    int thermal = hot && t >= 60;

    s.temp = thermal && temp < 89 ? 89 : temp;
    s.thermal = thermal;
    s.capped = gemm_on;
    s.sm_mhz = thermal ? 1410 : gemm_on ? 1755
                                        : 1980;
    s.mem_mhz = 3201;
    s.power = gemm_on ? FAKE_POWER_CAP_W - (t % 3) : 540 + (t % 5);
    s.gemm = gemm_on ? (thermal ? 0.8 : 1.0) * (741 - 0.02 * t) : 0;
    s.hbm = hbm_on ? (thermal ? 0.9 : 1.0) * (4050 - 0.1 * t) : 0;
    return s;
}

static cJSON *reasons_of(const struct soak_second *s)
{
    cJSON *r = cJSON_CreateArray();

    if (s->capped)
        cJSON_AddItemToArray(r, cJSON_CreateString("sw_power_cap"));
    if (s->thermal)
        cJSON_AddItemToArray(r, cJSON_CreateString("hw_thermal_slowdown"));
    return r;
}

/* The mean of field over seconds [from, to) of series. */
static double window_mean(const struct soak_second *series, int from, int to, size_t offset)
{
    double sum = 0;

    for (int t = from; t < to; t++)
        sum += *(const double *)((const char *)&series[t] + offset);
    return to > from ? sum / (to - from) : 0;
}

/* The start of the 10 s window of series[0..n) with the lowest mean of
 * field. */
static int worst_window(const struct soak_second *series, int n, size_t offset)
{
    int best = 0;

    for (int t = 1; t + 10 <= n; t++)
        if (window_mean(series, t, t + 10, offset) < window_mean(series, best, best + 10, offset))
            best = t;
    return best;
}

static void soak_row(cJSON *rows, const struct soak_second *series, const char *load,
                     const char *window, int from, int to)
{
    int gemm = strcmp(load, "gemm") == 0;
    size_t field = gemm ? offsetof(struct soak_second, gemm) : offsetof(struct soak_second, hbm);
    cJSON *row = cJSON_CreateObject(), *reasons;
    char label[48];
    int capped = 0, thermal = 0;

    snprintf(label, sizeof(label), "%s %s", load, window);
    cJSON_AddStringToObject(row, "label", label);
    cJSON_AddStringToObject(row, "load", load);
    cJSON_AddStringToObject(row, "window", window);
    cJSON_AddStringToObject(row, "unit", gemm ? "TFLOP/s" : "GB/s");
    cJSON_AddNumberToObject(row, "value", window_mean(series, from, to, field));
    cJSON_AddBoolToObject(row, "available", 1);
    cJSON_AddNumberToObject(row, "sm_clock_mhz",
                            window_mean(series, from, to, offsetof(struct soak_second, sm_mhz)));
    cJSON_AddNumberToObject(row, "mem_clock_mhz",
                            window_mean(series, from, to, offsetof(struct soak_second, mem_mhz)));
    cJSON_AddNumberToObject(row, "power_w",
                            window_mean(series, from, to, offsetof(struct soak_second, power)));
    cJSON_AddNumberToObject(row, "temperature_c",
                            window_mean(series, from, to, offsetof(struct soak_second, temp)));
    for (int t = from; t < to; t++) {
        capped |= series[t].capped;
        thermal |= series[t].thermal;
    }
    reasons = cJSON_AddArrayToObject(row, "throttle_reasons");
    if (capped)
        cJSON_AddItemToArray(reasons, cJSON_CreateString("sw_power_cap"));
    if (thermal)
        cJSON_AddItemToArray(reasons, cJSON_CreateString("hw_thermal_slowdown"));
    cJSON_AddItemToArray(rows, row);
}

static cJSON *soak(const cJSON *params, const char *mode)
{
    const char *load = cJSON_GetStringValue(cJSON_GetObjectItem(params, "load"));
    int n = (int)param_num(params, "seconds", 120), hot = strcmp(mode, "soak_thermal") == 0;
    int gemm_on = load == NULL || strcmp(load, "hbm") != 0;
    int hbm_on = load == NULL || strcmp(load, "gemm") != 0;
    struct soak_second *series = calloc((size_t)(n > 0 ? n : 1), sizeof(*series));
    cJSON *result = cJSON_CreateObject(), *rows = cJSON_AddArrayToObject(result, "rows");
    cJSON *summary = cJSON_AddObjectToObject(result, "summary"), *share, *list;
    double max_temp = 0;
    int first_slowdown = -1;

    if (series == NULL || n < 10) {
        free(series);
        cJSON_Delete(result);
        return NULL;
    }
    for (int t = 0; t < n; t++) {
        series[t] = soak_at(t, hot, gemm_on, hbm_on);
        if (series[t].temp > max_temp)
            max_temp = series[t].temp;
        if (series[t].thermal && first_slowdown < 0)
            first_slowdown = t;
    }
    share = cJSON_AddObjectToObject(summary, "sustained_share");
    for (int l = 0; l < 2; l++) {
        const char *name = l == 0 ? "gemm" : "hbm";
        size_t field =
            l == 0 ? offsetof(struct soak_second, gemm) : offsetof(struct soak_second, hbm);
        int worst = worst_window(series, n, field), last = n >= 30 ? n - 30 : 0;
        if (!(l == 0 ? gemm_on : hbm_on)) {
            cJSON_AddNullToObject(share, name);
            continue;
        }
        soak_row(rows, series, name, "first_10s", 0, 10);
        soak_row(rows, series, name, "last_30s", last, n);
        soak_row(rows, series, name, "worst_10s", worst, worst + 10);
        cJSON_AddNumberToObject(share, name,
                                window_mean(series, last, n, field) /
                                    window_mean(series, 0, 10, field));
    }
    if (first_slowdown >= 0) {
        cJSON_AddNumberToObject(summary, "first_slowdown_s", first_slowdown);
        cJSON_AddStringToObject(summary, "first_slowdown_reason", "hw_thermal_slowdown");
    } else {
        cJSON_AddNullToObject(summary, "first_slowdown_s");
        cJSON_AddNullToObject(summary, "first_slowdown_reason");
    }
    cJSON_AddNumberToObject(summary, "max_temperature_c", (int)(max_temp + 0.5));
    cJSON_AddNumberToObject(summary, "slowdown_temperature_c", FAKE_SLOWDOWN_C);
    cJSON_AddBoolToObject(summary, "power_capped", gemm_on);
    cJSON_AddNumberToObject(summary, "seconds", n);
    list = cJSON_AddArrayToObject(summary, "series");
    for (int t = 0; t < n; t++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "t", t + 1);
        if (gemm_on)
            cJSON_AddNumberToObject(e, "gemm_tflops", series[t].gemm);
        else
            cJSON_AddNullToObject(e, "gemm_tflops");
        if (hbm_on)
            cJSON_AddNumberToObject(e, "hbm_gbps", series[t].hbm);
        else
            cJSON_AddNullToObject(e, "hbm_gbps");
        cJSON_AddNumberToObject(e, "sm_clock_mhz", series[t].sm_mhz);
        cJSON_AddNumberToObject(e, "mem_clock_mhz", series[t].mem_mhz);
        cJSON_AddNumberToObject(e, "power_w", series[t].power);
        cJSON_AddNumberToObject(e, "temperature_c", (int)(series[t].temp + 0.5));
        cJSON_AddItemToObject(e, "throttle_reasons", reasons_of(&series[t]));
        cJSON_AddItemToArray(list, e);
    }
    free(series);
    return result;
}

cJSON *fake_deep_result(const char *bench, const cJSON *params, const char *mode,
                        double memory_bytes, int sm_count)
{
    if (strcmp(bench, "known_answer") == 0)
        return known_answer(params, mode, sm_count);
    if (strcmp(bench, "memtest") == 0)
        return memtest(params, mode, memory_bytes);
    if (strcmp(bench, "soak") == 0)
        return soak(params, mode);
    return NULL;
}
