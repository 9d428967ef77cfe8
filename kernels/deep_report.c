/*
 * deep_report.c - the rows and summaries of known_answer, memtest and soak
 * from what their backend measured; see deep_report.h and
 * docs/DEEP_CHECKS.md (the field names are a contract).
 */
#include "deep_report.h"

#include <stdio.h>
#include <string.h>

#include "json_build.h"
#include "throttle.h"

static void hex_field(struct json_build *b, cJSON *o, const char *name, uint64_t v)
{
    char buf[24];

    snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
    jb_string(b, o, name, buf);
}

/* ---- known_answer ----------------------------------------------------- */

static void ka_row(struct json_build *b, cJSON *rows, int kind, const struct gb_ka_result *r)
{
    cJSON *o = jb_new_object(b), *list;
    char hash[20];
    int n = r->log.count < GB_KA_MAX_RECORDS ? (int)r->log.count : GB_KA_MAX_RECORDS;

    jb_push(b, rows, o);
    jb_string(b, o, "label", gb_ka_kind_name(kind));
    jb_string(b, o, "kind", gb_ka_kind_name(kind));
    jb_string(b, o, "unit", "mismatches");
    jb_bool(b, o, "available", r->available);
    jb_number(b, o, "sm_count", r->sm_count);
    if (!r->available) {
        jb_null(b, o, "value");
        jb_string(b, o, "reason", r->reason);
        jb_null(b, o, "verified");
        return;
    }
    jb_number(b, o, "value", (double)r->log.count);
    jb_number(b, o, "mismatches", (double)r->log.count);
    jb_number(b, o, "checked", (double)r->checked);
    if (r->sms_covered >= 0)
        jb_number(b, o, "sms_covered", r->sms_covered);
    else
        jb_null(b, o, "sms_covered");
    jb_number(b, o, "launches", (double)r->launches);
    jb_number(b, o, "seconds", r->seconds);
    jb_number(b, o, "setup_seconds", r->setup_seconds);
    snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)r->hash);
    jb_string(b, o, "result_hash", hash);
    list = jb_array(b, o, "first_mismatches");
    for (int i = 0; i < n; i++) {
        cJSON *m = jb_new_object(b);
        jb_push(b, list, m);
        if (r->log.first[i].sm >= 0)
            jb_number(b, m, "sm", r->log.first[i].sm);
        else
            jb_null(b, m, "sm");
        jb_number(b, m, "element", (double)r->log.first[i].element);
        hex_field(b, m, "expected", r->log.first[i].expected);
        hex_field(b, m, "got", r->log.first[i].got);
    }
    jb_bool(b, o, "verified", r->log.count == 0);
}

cJSON *gb_ka_report(const int *kinds, const struct gb_ka_result *res, int count)
{
    struct json_build b = {0};
    cJSON *result = jb_new_object(&b), *rows, *summary;
    int min_sms = -1, sm_count = 0;
    double spent = 0;
    unsigned long long total = 0;

    rows = jb_array(&b, result, "rows");
    summary = jb_object(&b, result, "summary");
    for (int i = 0; i < count; i++) {
        ka_row(&b, rows, kinds[i], &res[i]);
        total += res[i].log.count;
        spent += res[i].seconds;
        sm_count = res[i].sm_count;
        if (res[i].available && res[i].sms_covered >= 0 &&
            (min_sms < 0 || res[i].sms_covered < min_sms))
            min_sms = res[i].sms_covered;
    }
    jb_number(&b, summary, "mismatches", (double)total);
    if (min_sms >= 0)
        jb_number(&b, summary, "sms_covered", min_sms);
    else
        jb_null(&b, summary, "sms_covered");
    jb_number(&b, summary, "sm_count", sm_count);
    jb_number(&b, summary, "seconds", spent);
    if (jb_failed(&b)) {
        cJSON_Delete(result);
        return NULL;
    }
    return result;
}

/* ---- memtest ---------------------------------------------------------- */

/* The ECC and row-remap counters as DEEP_CHECKS.md names them (null for
 * what NVML did not give). */
static cJSON *ecc_json(struct json_build *b, const struct gb_nvml_health *h, int read)
{
    cJSON *o = jb_new_object(b);
    const char *num[4] = {"volatile_corrected", "volatile_uncorrected",
                          "remapped_rows_correctable", "remapped_rows_uncorrectable"};
    double v[4] = {(double)h->ecc[0][0], (double)h->ecc[0][1], h->remap[0], h->remap[1]};
    int ok[4] = {read && h->ecc_read[0], read && h->ecc_read[0], read && h->remap_read,
                 read && h->remap_read};

    for (int i = 0; i < 4; i++)
        if (ok[i])
            jb_number(b, o, num[i], v[i]);
        else
            jb_null(b, o, num[i]);
    if (read && h->remap_read) {
        jb_bool(b, o, "remap_pending", h->remap[2] != 0);
        jb_bool(b, o, "remap_failure", h->remap[3] != 0);
    } else {
        jb_null(b, o, "remap_pending");
        jb_null(b, o, "remap_failure");
    }
    return o;
}

/* Any counter that rose, or a pending or failed remap that appeared. */
static int ecc_increase(const struct gb_nvml_health *a, const struct gb_nvml_health *z,
                        int read)
{
    if (!read)
        return 0;
    if (a->ecc_read[0] && z->ecc_read[0] &&
        (z->ecc[0][0] > a->ecc[0][0] || z->ecc[0][1] > a->ecc[0][1]))
        return 1;
    return a->remap_read && z->remap_read &&
           (z->remap[0] > a->remap[0] || z->remap[1] > a->remap[1] ||
            (z->remap[2] && !a->remap[2]) || (z->remap[3] && !a->remap[3]));
}

static void mt_row(struct json_build *b, cJSON *rows, const struct gb_memtest_result *m,
                   const struct gb_memtest_pattern_result *p)
{
    cJSON *o = jb_new_object(b), *list;
    double gbps = p->seconds > 0 ? p->bytes_moved / p->seconds / 1e9 : 0;
    int n = p->errors < GB_MT_MAX_RECORDS ? (int)p->errors : GB_MT_MAX_RECORDS;

    jb_push(b, rows, o);
    jb_string(b, o, "label", gb_mt_pattern_name(p->pattern));
    jb_string(b, o, "pattern", gb_mt_pattern_name(p->pattern));
    jb_string(b, o, "unit", "GB/s");
    jb_number(b, o, "value", gbps);
    jb_bool(b, o, "available", 1);
    jb_number(b, o, "bytes_tested", (double)m->bytes_tested);
    jb_number(b, o, "bytes_moved", p->bytes_moved);
    jb_number(b, o, "errors", (double)p->errors);
    list = jb_array(b, o, "first_errors");
    for (int i = 0; i < n; i++) {
        cJSON *e = jb_new_object(b);
        jb_push(b, list, e);
        hex_field(b, e, "address", p->first[i].address);
        hex_field(b, e, "expected", p->first[i].expected);
        hex_field(b, e, "got", p->first[i].got);
    }
    jb_number(b, o, "seconds", p->seconds);
    jb_number_or_null(b, o, "share_of_memcpy", gbps / m->memcpy_gbps);
    jb_bool(b, o, "verified", p->errors == 0);
}

static void memcpy_row(struct json_build *b, cJSON *rows, const struct gb_memtest_result *m)
{
    cJSON *o = jb_new_object(b);

    jb_push(b, rows, o);
    jb_string(b, o, "label", "memcpy");
    jb_string(b, o, "pattern", "memcpy");
    jb_string(b, o, "unit", "GB/s");
    jb_number(b, o, "value", m->memcpy_gbps);
    jb_bool(b, o, "available", 1);
    jb_number(b, o, "bytes", (double)m->memcpy_bytes);
    jb_number(b, o, "share_of_memcpy", 1.0);
    jb_bool(b, o, "verified", 1);
}

cJSON *gb_memtest_report(const struct gb_memtest_result *m, int passes,
                         const struct gb_mt_ecc *ecc)
{
    struct json_build b = {0};
    cJSON *result = jb_new_object(&b), *rows, *summary;
    double seconds = 0;
    unsigned long long errors = 0;

    rows = jb_array(&b, result, "rows");
    summary = jb_object(&b, result, "summary");
    for (int i = 0; i < m->count; i++) {
        mt_row(&b, rows, m, &m->p[i]);
        errors += m->p[i].errors;
        seconds += m->p[i].seconds;
    }
    memcpy_row(&b, rows, m);
    jb_number(&b, summary, "errors", (double)errors);
    jb_number(&b, summary, "bytes_tested", (double)m->bytes_tested);
    jb_number(&b, summary, "share_of_memory",
              m->total_bytes ? (double)m->bytes_tested / (double)m->total_bytes : 0);
    jb_number(&b, summary, "share_of_free",
              m->free_bytes ? (double)m->bytes_tested / (double)m->free_bytes : 0);
    jb_number(&b, summary, "free_bytes", (double)m->free_bytes);
    jb_number(&b, summary, "total_bytes", (double)m->total_bytes);
    jb_number(&b, summary, "chunks", m->chunks);
    jb_number(&b, summary, "memcpy_gbps", m->memcpy_gbps);
    jb_number(&b, summary, "seconds", seconds);
    jb_number(&b, summary, "passes", passes);
    jb_item(&b, summary, "ecc_before", ecc_json(&b, &ecc->before, ecc->read));
    jb_item(&b, summary, "ecc_after", ecc_json(&b, &ecc->after, ecc->read));
    jb_bool(&b, summary, "ecc_increase", ecc_increase(&ecc->before, &ecc->after, ecc->read));
    if (!ecc->read)
        jb_string(&b, summary, "ecc_reason", ecc->reason);
    if (jb_failed(&b)) {
        cJSON_Delete(result);
        return NULL;
    }
    return result;
}

/* ---- soak ------------------------------------------------------------- */

static const char *const load_names[GB_SOAK_LOADS] = {"gemm", "hbm"};
static const char *const load_units[GB_SOAK_LOADS] = {"TFLOP/s", "GB/s"};
static const char *const series_names[GB_SOAK_LOADS] = {"gemm_tflops", "hbm_gbps"};

static void reasons_json(struct json_build *b, cJSON *o, const char *name, int read,
                         unsigned long long mask)
{
    const char *names[16];
    int n;
    cJSON *list;

    if (!read) {
        jb_null(b, o, name);
        return;
    }
    list = jb_array(b, o, name);
    n = gb_throttle_decode(mask, names, 16);
    for (int i = 0; i < n && i < 16; i++)
        jb_push(b, list, cJSON_CreateString(names[i]));
}

static void positive_or_null(struct json_build *b, cJSON *o, const char *name, double v)
{
    if (v >= 0)
        jb_number(b, o, name, v);
    else
        jb_null(b, o, name);
}

static void soak_row(struct json_build *b, cJSON *rows, int load, const char *window,
                     const struct gb_soak_window *w, const struct gb_soak_result *res,
                     int any_read)
{
    cJSON *o = jb_new_object(b);
    char label[48];

    snprintf(label, sizeof(label), "%s %s", load_names[load], window);
    jb_push(b, rows, o);
    jb_string(b, o, "label", label);
    jb_string(b, o, "load", load_names[load]);
    jb_string(b, o, "window", window);
    jb_string(b, o, "unit", load_units[load]);
    jb_bool(b, o, "available", res->available[load]);
    if (!res->available[load]) {
        jb_null(b, o, "value");
        jb_string(b, o, "reason", res->reason[load]);
        jb_null(b, o, "verified");
        return;
    }
    positive_or_null(b, o, "value", w->rate);
    jb_number(b, o, "start_s", w->start);
    jb_number(b, o, "seconds", w->len);
    positive_or_null(b, o, "sm_clock_mhz", w->sm_clock_mhz);
    positive_or_null(b, o, "mem_clock_mhz", w->mem_clock_mhz);
    positive_or_null(b, o, "power_w", w->power_w);
    positive_or_null(b, o, "temperature_c", w->temperature_c);
    reasons_json(b, o, "throttle_reasons", any_read, w->throttle_mask);
    jb_bool(b, o, "verified", 1);
}

static void soak_series(struct json_build *b, cJSON *summary, const struct gb_soak_second *s,
                        int n)
{
    cJSON *list = jb_array(b, summary, "series");

    for (int i = 0; i < n; i++) {
        cJSON *o = jb_new_object(b);
        jb_push(b, list, o);
        jb_number(b, o, "t", i + 1);
        for (int k = 0; k < GB_SOAK_LOADS; k++)
            positive_or_null(b, o, series_names[k], s[i].rate[k]);
        positive_or_null(b, o, "sm_clock_mhz", s[i].sm_clock_mhz);
        positive_or_null(b, o, "mem_clock_mhz", s[i].mem_clock_mhz);
        positive_or_null(b, o, "power_w", s[i].power_w);
        positive_or_null(b, o, "temperature_c", s[i].temperature_c);
        reasons_json(b, o, "throttle_reasons", s[i].throttle_read, s[i].throttle_mask);
    }
}

static void soak_summary(struct json_build *b, cJSON *summary, const struct gb_soak_result *res,
                         const struct gb_soak_second *s, double slow_t, const char *nvml_reason)
{
    cJSON *share = jb_object(b, summary, "sustained_share");
    unsigned long long slow_mask, all = 0;
    int first = gb_soak_first_slowdown(s, res->seconds, &slow_mask), any_read = 0;
    double max_t = -1;
    const char *names[8];

    for (int k = 0; k < GB_SOAK_LOADS; k++) {
        struct gb_soak_window f, l, w;
        if (!res->load[k])
            continue;
        gb_soak_windows(s, res->seconds, k, &f, &l, &w);
        if (res->available[k] && f.rate > 0 && l.rate >= 0)
            jb_number(b, share, load_names[k], l.rate / f.rate);
        else
            jb_null(b, share, load_names[k]);
    }
    for (int i = 0; i < res->seconds; i++) {
        max_t = s[i].temperature_c > max_t ? s[i].temperature_c : max_t;
        any_read |= s[i].throttle_read;
        all |= s[i].throttle_read ? s[i].throttle_mask : 0;
    }
    if (first >= 0) {
        jb_number(b, summary, "first_slowdown_s", first + 1);
        gb_throttle_decode(slow_mask, names, 8);
        jb_string(b, summary, "first_slowdown_reason", names[0]);
    } else {
        jb_null(b, summary, "first_slowdown_s");
        jb_null(b, summary, "first_slowdown_reason");
    }
    positive_or_null(b, summary, "max_temperature_c", max_t);
    positive_or_null(b, summary, "slowdown_temperature_c", slow_t);
    jb_bool(b, summary, "power_capped", (all & GB_SOAK_POWER_CAP_BIT) != 0);
    if (!any_read)
        jb_string(b, summary, "nvml_reason", nvml_reason);
    jb_number(b, summary, "seconds", res->seconds);
    if (res->load[GB_SOAK_GEMM])
        jb_number(b, summary, "gemm_n", res->gemm_n);
    if (res->load[GB_SOAK_HBM])
        jb_number(b, summary, "hbm_bytes_per_triad", res->hbm_bytes);
    soak_series(b, summary, s, res->seconds);
}

cJSON *gb_soak_report(const struct gb_soak_result *res, const struct gb_soak_second *s,
                      double slowdown_temperature_c, const char *nvml_reason)
{
    struct json_build b = {0};
    cJSON *result = jb_new_object(&b), *rows, *summary;
    int any = 0;

    rows = jb_array(&b, result, "rows");
    summary = jb_object(&b, result, "summary");
    for (int i = 0; i < res->seconds; i++)
        any |= s[i].throttle_read;
    for (int k = 0; k < GB_SOAK_LOADS; k++) {
        struct gb_soak_window f, l, w;
        if (!res->load[k])
            continue;
        gb_soak_windows(s, res->seconds, k, &f, &l, &w);
        soak_row(&b, rows, k, "first_10s", &f, res, any);
        soak_row(&b, rows, k, "last_30s", &l, res, any);
        soak_row(&b, rows, k, "worst_10s", &w, res, any);
    }
    soak_summary(&b, summary, res, s, slowdown_temperature_c, nvml_reason);
    if (jb_failed(&b)) {
        cJSON_Delete(result);
        return NULL;
    }
    return result;
}
