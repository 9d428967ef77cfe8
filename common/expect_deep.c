/*
 * expect_deep.c - see expect_deep.h.  What the run reports is read as the
 * contract writes it (docs/DEEP_CHECKS.md); a field missing is not judged.
 */
#include "expect_deep.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The reasons a soak's series can show that are findings: a thermal or
 * hardware slowdown (sw_power_cap is the GEMM's cap, a note). */
static const char *const slowdowns[] = {"hw_slowdown", "hw_thermal_slowdown",
                                        "sw_thermal_slowdown", "hw_power_brake_slowdown", NULL};

static const char exact_source[] =
    "exact: compared bit for bit with the host's answer or the word written; any "
    "difference is a fact about the card (docs/DEEP_CHECKS.md), for every card model";

static const char ecc_source[] =
    "exact: the card's ECC counters (volatile corrected and uncorrected, remapped rows) "
    "must not go up while memory is tested";

static const char slowdown_source[] =
    "a thermal or hardware slowdown under sustained load (NVML's throttle reasons "
    "hw_slowdown, hw_thermal_slowdown, sw_thermal_slowdown, hw_power_brake_slowdown) is "
    "a finding for every card model; sw_power_cap, a GEMM at its cap, is a note";

static const char *str_of(const cJSON *o, const char *name)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(o, name));
}

static double num_of(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItem(o, name);

    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

int gb_deep_exact(const char *benchmark)
{
    return benchmark &&
           (strcmp(benchmark, "known_answer") == 0 || strcmp(benchmark, "memtest") == 0);
}

/* A check against a ceiling ({"row", "value", "unit", "ceiling", "source",
 * "pass", "exact", and "message" when it failed}). */
static void push_ceiling(struct json_build *jb, cJSON *out, const char *row, double value,
                         const char *unit, const char *source, int exact, const char *message)
{
    cJSON *c = jb_new_object(jb);

    jb_string(jb, c, "row", row);
    jb_number(jb, c, "value", value);
    jb_string(jb, c, "unit", unit);
    jb_number(jb, c, "ceiling", 0);
    jb_string(jb, c, "source", source);
    jb_bool(jb, c, "pass", value <= 0);
    jb_bool(jb, c, "exact", exact);
    if (value > 0)
        jb_string(jb, c, "message", message);
    jb_push(jb, out, c);
}

/* "on SM 17" or "on SMs 17, 40", from the first mismatches, into buf. */
static void sms_of(const cJSON *first, char *buf, size_t cap)
{
    int sms[16], n = 0;
    size_t len = 0;
    const cJSON *m;

    cJSON_ArrayForEach(m, first) {
        double sm = num_of(m, "sm");
        int seen = 0;
        if (!isfinite(sm))
            continue;
        for (int i = 0; i < n; i++)
            seen |= sms[i] == (int)sm;
        if (!seen && n < 16)
            sms[n++] = (int)sm;
    }
    buf[0] = '\0';
    if (n == 0)
        return;
    len = (size_t)snprintf(buf, cap, " on SM%s", n > 1 ? "s" : "");
    for (int i = 0; i < n && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s %d", i ? "," : "", sms[i]);
}

/* The rise of memtest's ECC counters (ecc_after - ecc_before, each field
 * that both read), with what rose into what; ecc_increase true with
 * nothing readable counts one. */
static double ecc_rise(const cJSON *summary, char *what, size_t cap)
{
    static const char *const counts[] = {"volatile_corrected", "volatile_uncorrected",
                                         "remapped_rows_correctable",
                                         "remapped_rows_uncorrectable", NULL};
    const cJSON *before = cJSON_GetObjectItem(summary, "ecc_before");
    const cJSON *after = cJSON_GetObjectItem(summary, "ecc_after");
    double total = 0;
    size_t len = 0;

    what[0] = '\0';
    for (const char *const *c = counts; *c; c++) {
        double d = num_of(after, *c) - num_of(before, *c);
        if (!(d > 0))
            continue;
        total += d;
        if (len < cap)
            len += (size_t)snprintf(what + len, cap - len, "%s%s +%.0f", len ? ", " : "", *c, d);
    }
    if (total == 0 && cJSON_IsTrue(cJSON_GetObjectItem(summary, "ecc_increase"))) {
        snprintf(what, cap, "ecc_increase");
        total = 1;
    }
    return total;
}

void gb_deep_exact_checks(struct json_build *jb, cJSON *out, const char *benchmark,
                          const cJSON *results)
{
    int known = strcmp(benchmark, "known_answer") == 0;
    const char *count = known ? "mismatches" : "errors";
    const cJSON *summary = cJSON_GetObjectItem(results, "summary"), *row;
    char msg[300], where[160], what[200];

    cJSON_ArrayForEach(row, cJSON_GetObjectItem(results, "rows")) {
        const char *label = str_of(row, "label");
        double n = num_of(row, count);
        if (label == NULL || !isfinite(n) || cJSON_IsFalse(cJSON_GetObjectItem(row, "available")))
            continue; /* a kind that could not run says so in its row */
        if (known) {
            sms_of(cJSON_GetObjectItem(row, "first_mismatches"), where, sizeof(where));
            snprintf(msg, sizeof(msg), "known_answer %s: %.0f mismatch%s%s", label, n,
                     n == 1 ? "" : "es", where);
        } else {
            const char *first =
                str_of(cJSON_GetArrayItem(cJSON_GetObjectItem(row, "first_errors"), 0), "address");
            snprintf(msg, sizeof(msg), "memtest %s: %.0f error%s%s%s", label, n, n == 1 ? "" : "s",
                     first ? ", first at " : "", first ? first : "");
        }
        push_ceiling(jb, out, label, n, count, exact_source, 1, msg);
    }
    if (!known && cJSON_IsObject(summary) &&
        (cJSON_IsObject(cJSON_GetObjectItem(summary, "ecc_after")) ||
         cJSON_IsBool(cJSON_GetObjectItem(summary, "ecc_increase")))) {
        double rise = ecc_rise(summary, what, sizeof(what));
        snprintf(msg, sizeof(msg), "memtest ecc: the ECC counters rose during the test (%s)",
                 what);
        push_ceiling(jb, out, "ecc", rise, "errors", ecc_source, 1, msg);
    }
}

/* Adds {"label", "value", "unit"} to rows when value is a number. */
static cJSON *soak_row(struct json_build *jb, cJSON *rows, const char *label, const cJSON *value,
                       const char *unit)
{
    cJSON *r;

    if (!cJSON_IsNumber(value))
        return NULL;
    r = jb_new_object(jb);
    jb_string(jb, r, "label", label);
    jb_number(jb, r, "value", value->valuedouble);
    jb_string(jb, r, "unit", unit);
    jb_push(jb, rows, r);
    return jb_failed(jb) ? NULL : r;
}

cJSON *gb_deep_soak_rows(const cJSON *results)
{
    const cJSON *summary = cJSON_GetObjectItem(results, "summary");
    const cJSON *share = cJSON_GetObjectItem(summary, "sustained_share");
    const cJSON *slow = cJSON_GetObjectItem(summary, "slowdown_temperature_c");
    struct json_build jb = {0};
    cJSON *rows = jb_new_array(&jb), *t;

    soak_row(&jb, rows, "gemm sustained_share", cJSON_GetObjectItem(share, "gemm"), "share");
    soak_row(&jb, rows, "hbm sustained_share", cJSON_GetObjectItem(share, "hbm"), "share");
    t = soak_row(&jb, rows, "max_temperature_c", cJSON_GetObjectItem(summary, "max_temperature_c"),
                 "C");
    if (t && cJSON_IsNumber(slow))
        jb_number(&jb, t, "slowdown_temperature_c", slow->valuedouble);
    if (jb_failed(&jb)) {
        cJSON_Delete(rows);
        return NULL;
    }
    return rows;
}

static const char *slowdown_named(const char *name)
{
    for (const char *const *s = slowdowns; name && *s; s++)
        if (strcmp(name, *s) == 0)
            return *s;
    return NULL;
}

/* Whether reasons hold a slowdown; *which gets its name. */
static int is_slowdown(const cJSON *reasons, const char **which)
{
    const cJSON *r;

    cJSON_ArrayForEach(r, reasons)
        if (slowdown_named(cJSON_GetStringValue(r))) {
            *which = slowdown_named(cJSON_GetStringValue(r));
            return 1;
        }
    return 0;
}

void gb_deep_soak_slowdown(struct json_build *jb, cJSON *out, const cJSON *results)
{
    const cJSON *summary = cJSON_GetObjectItem(results, "summary");
    const cJSON *series = cJSON_GetObjectItem(summary, "series"), *e;
    const char *reason = str_of(summary, "first_slowdown_reason"), *seen = NULL;
    double first = num_of(summary, "first_slowdown_s"), seconds = 0;
    char msg[300];

    if (!cJSON_IsArray(series) && cJSON_GetObjectItem(summary, "first_slowdown_reason") == NULL)
        return; /* nothing to judge it by */
    cJSON_ArrayForEach(e, series)
        seconds += is_slowdown(cJSON_GetObjectItem(e, "throttle_reasons"), &seen);
    if (seconds == 0 && slowdown_named(reason))
        seconds = 1; /* a summary without a series */
    snprintf(msg, sizeof(msg), "soak: %s from %.0f s (%.0f s of slowdown)",
             reason ? reason : seen ? seen
                                    : "a slowdown",
             isfinite(first) ? first : 0, seconds);
    push_ceiling(jb, out, "slowdown", seconds, "s", slowdown_source, 0, msg);
}
