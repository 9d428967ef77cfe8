/*
 * validity.c - see validity.h.  One function a rule, each adding at most one
 * reason; gb_validity_judge runs them in the order of the table below.
 *
 * The noisy bound, from the H200 runs in examples/ (idle card, 20 samples a
 * row, h200_smem_stride*.json, h200_counters_*.json, h200_transpose*.json,
 * h200_smem_pattern*.json: 41 rows):
 *   - the max-min spread of idle rows reaches 4.4% (stride 33, counters run)
 *     and is 2-3% on many rows, each time because of ONE stray sample: the
 *     same rows' middle 80% (10th to 90th percentile) is 0.01%-2.7%, and
 *     their MAD/median at most 0.8%.  A max-min bound tight enough to catch
 *     a shared card would flag idle runs whenever one sample was late.
 *   - the contended run of issue 13 moved the stride-32 MEDIAN by 48% (47.2
 *     against 31.8) with a max-min spread of 59%: another process's kernels
 *     interleave with most samples, not one, so the middle 80% widens too.
 * So a row is noisy when its middle-80% spread passes 10%: almost 4x the
 * worst idle row (2.7%, stride 65), and well under what contention does.
 * With fewer than 5 samples the middle 80% is close to the whole range,
 * which the bound also suits (3 idle samples spread at most 0.5%).  A row
 * without its samples (a digest) is judged on the max-min spread against
 * 25%: a stray sample alone rarely reaches that, a shared card does (59%).
 */
#include "validity.h"

#include "json_build.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROW_SAMPLES 100000

/* Throttle reasons that do not slow a loaded card (kernels/throttle.c):
 * idle, and clocks someone set on purpose. */
static const char *const benign_throttle[] = {
    "gpu_idle", "applications_clocks_setting", "sync_boost",
    "display_clock_setting", NULL};

static const char *const row_key_fields[] = {"stride", "variant", "pattern", "label", NULL};

/* The throttle reason a power-bound row is expected to show (see
 * rule_throttled). */
#define POWER_CAP_REASON "sw_power_cap"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The q-quantile of sorted v[0..n-1], linearly interpolated. */
static double quantile(const double *v, int n, double q)
{
    double pos = q * (n - 1);
    int lo = (int)floor(pos);

    if (lo >= n - 1)
        return v[n - 1];
    return v[lo] + (pos - lo) * (v[lo + 1] - v[lo]);
}

double gb_validity_spread80(double *samples, int n)
{
    double med;

    if (n < 2)
        return -1;
    qsort(samples, (size_t)n, sizeof(double), cmp_double);
    med = quantile(samples, n, 0.5);
    if (!(med > 0))
        return -1;
    return (quantile(samples, n, 0.9) - quantile(samples, n, 0.1)) / med;
}

/* A new reason {"code", "message"} appended to reasons; the caller adds
 * its details to the returned object, owned by reasons (NULL once b has
 * failed, which the jb_* calls on it then ignore). */
static cJSON *add_reason(struct json_build *b, cJSON *reasons, const char *code,
                         const char *message)
{
    cJSON *r = jb_new_object(b);

    jb_string(b, r, "code", code);
    jb_string(b, r, "message", message);
    jb_push(b, reasons, r);
    return jb_failed(b) ? NULL : r;
}

/* The reason code, with number (named name) and the bad rows, when there
 * are bad rows; message is printf'd with the count of bad rows, then
 * number.  bad is consumed. */
static void add_rows_reason(struct json_build *b, cJSON *reasons, cJSON *bad, const char *code,
                            const char *message, const char *name, double number,
                            double shown)
{
    char msg[200];
    cJSON *r;

    if (cJSON_GetArraySize(bad) == 0) {
        cJSON_Delete(bad);
        return;
    }
    snprintf(msg, sizeof(msg), message, cJSON_GetArraySize(bad), shown);
    r = add_reason(b, reasons, code, msg);
    jb_number_or_null(b, r, name, number);
    jb_item(b, r, "rows", bad);
}

/* {"row": i, KEY: value} for a reason's list of rows: a NEW object the
 * caller hands to jb_push (NULL once b has failed). */
static cJSON *row_ref(struct json_build *b, const cJSON *row, int i)
{
    cJSON *ref = jb_new_object(b);

    jb_number(b, ref, "row", i);
    for (const char *const *k = row_key_fields; *k; k++) {
        const cJSON *v = cJSON_GetObjectItem(row, *k);
        if (v) {
            jb_item(b, ref, *k, cJSON_Duplicate(v, 0));
            break;
        }
    }
    return ref;
}

/* Appends {"row": i, KEY: value, name: value} to the list of bad rows. */
static void add_bad_row(struct json_build *b, cJSON *bad, const cJSON *row, int i,
                        const char *name, double value)
{
    cJSON *ref = row_ref(b, row, i);

    jb_number_or_null(b, ref, name, value);
    jb_push(b, bad, ref);
}

static int has_name(const cJSON *names, const char *name)
{
    const cJSON *n;

    cJSON_ArrayForEach(n, names)
        if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
            return 1;
    return 0;
}

static int has_pid(const cJSON *procs, double pid)
{
    const cJSON *p;

    cJSON_ArrayForEach(p, procs) {
        const cJSON *v = cJSON_GetObjectItem(p, "pid");
        if (cJSON_IsNumber(v) && v->valuedouble == pid)
            return 1;
    }
    return 0;
}

/* Whether the quiet wait ran and ended on a quiet card: then what it saw
 * (quiet.found) was gone before timing began (docs/WATCH.md). */
static int wait_outlasted(const cJSON *quiet)
{
    const char *mode = cJSON_GetStringValue(cJSON_GetObjectItem(quiet, "mode"));

    return mode != NULL && strcmp(mode, "wait") == 0 &&
           cJSON_IsFalse(cJSON_GetObjectItem(quiet, "timed_out"));
}

/* contended: another process on the card at the start or between samples.
 * A process a successful wait outlasted does not count, or every run that
 * waited for a quiet card would read contended. */
static void rule_contended(struct json_build *b, const cJSON *watch, const cJSON *rows,
                           cJSON *reasons, cJSON *notes)
{
    const cJSON *quiet = cJSON_GetObjectItem(watch, "quiet");
    const cJSON *lists[2] = {
        cJSON_GetObjectItem(watch, "processes_seen"),
        wait_outlasted(quiet) ? NULL : cJSON_GetObjectItem(quiet, "found")};
    cJSON *procs = jb_new_array(b), *r;
    char msg[256];
    size_t len;
    const cJSON *p;

    (void)rows, (void)notes;
    for (int l = 0; l < 2; l++)
        cJSON_ArrayForEach(p, lists[l]) {
            const cJSON *pid = cJSON_GetObjectItem(p, "pid");
            if (cJSON_IsObject(p) && cJSON_IsNumber(pid) && !has_pid(procs, pid->valuedouble))
                jb_push(b, procs, cJSON_Duplicate(p, 1));
        }
    if (cJSON_GetArraySize(procs) == 0) {
        cJSON_Delete(procs);
        return;
    }
    len = (size_t)snprintf(msg, sizeof(msg), "other processes used the GPU during the run:");
    cJSON_ArrayForEach(p, procs) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(p, "name"));
        if (len < sizeof(msg))
            len += (size_t)snprintf(msg + len, sizeof(msg) - len, " pid %.0f %s",
                                    cJSON_GetObjectItem(p, "pid")->valuedouble,
                                    name ? name : "(name unreadable)");
    }
    r = add_reason(b, reasons, "contended", msg);
    jb_item(b, r, "processes", procs);
}

/* Adds the non-benign names of list to names (deduplicated). */
static void add_slowdowns(struct json_build *b, cJSON *names, const cJSON *list, const char *except)
{
    const cJSON *n;

    cJSON_ArrayForEach(n, list) {
        int benign = 0;
        if (!cJSON_IsString(n) || has_name(names, n->valuestring))
            continue;
        for (const char *const *t = benign_throttle; *t; t++)
            benign |= strcmp(*t, n->valuestring) == 0;
        if (!benign && (except == NULL || strcmp(except, n->valuestring) != 0))
            jb_push(b, names, cJSON_CreateString(n->valuestring));
    }
}

/* throttled: a clock-event reason that slows a loaded card, seen for the
 * run or in any row.
 *
 * Except sw_power_cap on a row the worker marks power_bound (compute_peak's
 * tensor GEMMs): a GEMM at full rate is MEANT to run into the card's power
 * cap, and its sustained rate under the cap is what a lab compares (on the
 * H200 every GEMM row of every compute_peak run showed it, so the rule made
 * every such run invalid).  Those rows give the note power_capped instead.
 * The run-level list is the union of every reading, rows included; the
 * worker also reports what was seen outside any row
 * (throttle_reasons_outside_rows), judged in full.  Without that field
 * (another worker) sw_power_cap in the union is taken to be the
 * power-bound rows' own when they show it. */
static void rule_throttled(struct json_build *b, const cJSON *watch, const cJSON *rows,
                           cJSON *reasons, cJSON *notes)
{
    cJSON *names = jb_new_array(b), *capped = jb_new_array(b), *r;
    const cJSON *row, *n, *outside = cJSON_GetObjectItem(watch, "throttle_reasons_outside_rows");
    char msg[256];
    size_t len;
    int i = 0;

    if (jb_failed(b))
        goto out;
    cJSON_ArrayForEach(row, rows) {
        const cJSON *list = cJSON_GetObjectItem(row, "throttle_reasons");
        int power_bound = cJSON_IsTrue(cJSON_GetObjectItem(row, "power_bound"));
        if (power_bound && has_name(list, POWER_CAP_REASON))
            jb_push(b, capped, row_ref(b, row, i));
        add_slowdowns(b, names, list, power_bound ? POWER_CAP_REASON : NULL);
        i++;
    }
    if (cJSON_IsArray(outside))
        add_slowdowns(b, names, outside, NULL);
    else
        add_slowdowns(b, names, cJSON_GetObjectItem(watch, "throttle_reasons"),
                      cJSON_GetArraySize(capped) > 0 ? POWER_CAP_REASON : NULL);
    if (cJSON_GetArraySize(capped) > 0) {
        snprintf(msg, sizeof(msg),
                 "%d power-bound row(s) (tensor GEMMs at full rate) ran at the card's power "
                 "cap (sw_power_cap), as such rows do: their rate is the rate under this "
                 "card's cap",
                 cJSON_GetArraySize(capped));
        r = add_reason(b, notes, "power_capped", msg);
        jb_item(b, r, "rows", capped); /* owned or deleted */
        capped = NULL;
    }
    if (cJSON_GetArraySize(names) == 0)
        goto out;
    len = (size_t)snprintf(msg, sizeof(msg), "the GPU slowed its clocks during the run:");
    cJSON_ArrayForEach(n, names)
        if (len < sizeof(msg))
            len += (size_t)snprintf(msg + len, sizeof(msg) - len, " %s", n->valuestring);
    r = add_reason(b, reasons, "throttled", msg);
    jb_item(b, r, "reasons", names); /* owned or deleted */
    names = NULL;
out:
    cJSON_Delete(names);
    cJSON_Delete(capped);
}

/* clock_unstable: a row's measured SM clock more than 2% from the median
 * of the run's row clocks. */
static void rule_clock(struct json_build *b, const cJSON *watch, const cJSON *rows,
                       cJSON *reasons, cJSON *notes)
{
    int n = 0, i = 0, cap = cJSON_GetArraySize(rows);
    double *clocks;
    double med;
    cJSON *bad;
    const cJSON *row;

    (void)watch, (void)notes;
    if (cap == 0)
        return;
    if ((clocks = malloc(sizeof(double) * (size_t)cap)) == NULL) {
        jb_fail(b); /* the rule could not be judged: no verdict without it */
        return;
    }
    cJSON_ArrayForEach(row, rows) {
        const cJSON *c = cJSON_GetObjectItem(row, "sm_clock_mhz_measured");
        if (cJSON_IsNumber(c) && c->valuedouble > 0)
            clocks[n++] = c->valuedouble;
    }
    if (n < 2) {
        free(clocks);
        return;
    }
    qsort(clocks, (size_t)n, sizeof(double), cmp_double);
    med = quantile(clocks, n, 0.5);
    free(clocks);
    bad = jb_new_array(b);
    cJSON_ArrayForEach(row, rows) {
        const cJSON *c = cJSON_GetObjectItem(row, "sm_clock_mhz_measured");
        if (cJSON_IsNumber(c) && c->valuedouble > 0 &&
            fabs(c->valuedouble - med) > GB_VALIDITY_CLOCK_TOLERANCE * med)
            add_bad_row(b, bad, row, i, "sm_clock_mhz", c->valuedouble);
        i++;
    }
    add_rows_reason(b, reasons, bad, "clock_unstable",
                    "%d row(s) ran more than 2%% "
                    "away from the run's median SM clock of %.0f MHz",
                    "median_mhz", med, med);
}

static double count_at(const cJSON *ecc, const char *when, const char *kind)
{
    const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(ecc, when), kind);

    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* ecc_errors: the volatile corrected or uncorrected count went up. */
static void rule_ecc(struct json_build *b, const cJSON *watch, const cJSON *rows,
                     cJSON *reasons, cJSON *notes)
{
    static const char *const kinds[] = {"corrected", "uncorrected"};
    const cJSON *ecc = cJSON_GetObjectItem(watch, "ecc_volatile");
    double added[2];
    char msg[160];
    cJSON *r;

    (void)rows, (void)notes;
    if (!cJSON_IsObject(ecc))
        return; /* null: ECC off or unsupported */
    for (int k = 0; k < 2; k++) {
        added[k] = count_at(ecc, "after", kinds[k]) - count_at(ecc, "before", kinds[k]);
        if (!isfinite(added[k]) || added[k] < 0)
            added[k] = 0;
    }
    if (added[0] == 0 && added[1] == 0)
        return;
    snprintf(msg, sizeof(msg),
             "the GPU counted ECC errors during the run: %.0f corrected, %.0f uncorrected",
             added[0], added[1]);
    r = add_reason(b, reasons, "ecc_errors", msg);
    jb_number(b, r, "corrected", added[0]);
    jb_number(b, r, "uncorrected", added[1]);
}

/* The samples of row as numbers (NEW array of *n; NULL when none, and
 * *n -1 when memory ran out). */
static double *row_samples(const cJSON *row, int *n)
{
    const cJSON *list = cJSON_GetObjectItem(row, "samples"), *s;
    int cap = cJSON_GetArraySize(list);
    double *v;

    *n = 0;
    if (!cJSON_IsArray(list) || cap < 2 || cap > MAX_ROW_SAMPLES)
        return NULL;
    v = malloc(sizeof(double) * (size_t)cap);
    if (v == NULL) {
        *n = -1;
        return NULL;
    }
    cJSON_ArrayForEach(s, list)
        if (cJSON_IsNumber(s) && isfinite(s->valuedouble))
            v[(*n)++] = s->valuedouble;
    return v;
}

/* noisy: a row's samples spread past the bound (see the top of the file). */
static void rule_noisy(struct json_build *b, const cJSON *watch, const cJSON *rows,
                       cJSON *reasons, cJSON *notes)
{
    cJSON *bad = jb_new_array(b);
    const cJSON *row;
    int i = 0;

    (void)watch, (void)notes;
    cJSON_ArrayForEach(row, rows) {
        const cJSON *spread = cJSON_GetObjectItem(row, "spread");
        int n;
        double *samples = row_samples(row, &n);
        double s80 = samples ? gb_validity_spread80(samples, n) : -1;

        free(samples);
        if (n < 0)
            jb_fail(b); /* the row could not be judged */
        if (s80 > GB_VALIDITY_NOISY_SPREAD80)
            add_bad_row(b, bad, row, i, "spread80", s80);
        else if (s80 < 0 && cJSON_IsNumber(spread) &&
                 spread->valuedouble > GB_VALIDITY_NOISY_SPREAD)
            add_bad_row(b, bad, row, i, "spread", spread->valuedouble);
        i++;
    }
    add_rows_reason(b, reasons, bad, "noisy",
                    "%d row(s) too noisy: the middle 80%% of samples spread over "
                    "more than %.0f%% of the median",
                    "bound", GB_VALIDITY_NOISY_SPREAD80, GB_VALIDITY_NOISY_SPREAD80 * 100);
}

/* busy_start: the quiet wait ran out before the card was quiet. */
static void rule_busy_start(struct json_build *b, const cJSON *watch, const cJSON *rows,
                            cJSON *reasons, cJSON *notes)
{
    const cJSON *quiet = cJSON_GetObjectItem(watch, "quiet");
    const cJSON *waited = cJSON_GetObjectItem(quiet, "waited_s");
    char msg[160];
    cJSON *r;

    (void)rows, (void)notes;
    if (!cJSON_IsTrue(cJSON_GetObjectItem(quiet, "timed_out")))
        return;
    snprintf(msg, sizeof(msg), "the card was still busy when the quiet wait ran out after %.1f s",
             cJSON_IsNumber(waited) ? waited->valuedouble : 0.0);
    r = add_reason(b, reasons, "busy_start", msg);
    if (cJSON_IsNumber(waited))
        jb_number_or_null(b, r, "waited_s", waited->valuedouble);
}

static int link_number(const cJSON *link, const char *name, double *v)
{
    const cJSON *n = cJSON_GetObjectItem(link, name);

    if (!cJSON_IsNumber(n))
        return 0;
    *v = n->valuedouble;
    return 1;
}

/* unverified (issue 35): a row whose output check failed ("verified":
 * false: p2p's bytes, a transpose's matrix, a GEMM's product not what was
 * sent or expected) did not measure what it says.  Its own reading, judged
 * with or without the watch, wherever the run is judged (here, an import,
 * a pull). */
static void rule_unverified(struct json_build *b, const cJSON *rows, cJSON *reasons)
{
    cJSON *bad = jb_new_array(b), *r;
    const cJSON *row;
    char msg[200];
    int i = 0;

    cJSON_ArrayForEach(row, rows) {
        if (cJSON_IsFalse(cJSON_GetObjectItem(row, "verified")))
            jb_push(b, bad, row_ref(b, row, i));
        i++;
    }
    if (cJSON_GetArraySize(bad) == 0) {
        cJSON_Delete(bad);
        return;
    }
    snprintf(msg, sizeof(msg),
             "%d row(s) failed their output check (verified: false): what they timed is not "
             "what they say",
             cJSON_GetArraySize(bad));
    r = add_reason(b, reasons, "unverified", msg);
    jb_item(b, r, "rows", bad);
}

/* link_degraded (issue 16): the PCIe link NVML reported (meta.link, read
 * by the worker during the transfers, since an idle link trains down to
 * save power) runs below the generation or width it can.  A field the
 * worker could not read is not judged. */
static void rule_link(struct json_build *b, const cJSON *link, cJSON *reasons)
{
    double gc, gm, wc, wm;
    int gen_known, width_known, gen_low, width_low;
    char msg[200];
    cJSON *r;

    if (!cJSON_IsObject(link))
        return;
    gen_known = link_number(link, "gen_current", &gc) && link_number(link, "gen_max", &gm);
    width_known =
        link_number(link, "width_current", &wc) && link_number(link, "width_max", &wm);
    gen_low = gen_known && gc < gm;
    width_low = width_known && wc < wm;
    if (!gen_low && !width_low)
        return;
    if (gen_low && width_low)
        snprintf(msg, sizeof(msg), "the PCIe link ran at gen %g x%g, below its gen %g x%g",
                 gc, wc, gm, wm);
    else if (gen_low)
        snprintf(msg, sizeof(msg), "the PCIe link ran at gen %g, below its gen %g", gc, gm);
    else
        snprintf(msg, sizeof(msg), "the PCIe link ran at x%g, below its x%g", wc, wm);
    r = add_reason(b, reasons, "link_degraded", msg);
    if (gen_known) {
        jb_number_or_null(b, r, "gen_current", gc);
        jb_number_or_null(b, r, "gen_max", gm);
    }
    if (width_known) {
        jb_number_or_null(b, r, "width_current", wc);
        jb_number_or_null(b, r, "width_max", wm);
    }
}

/* The rules: the first three read what NVML saw (meta.watch), so they are
 * skipped when the watch could not read it; the rest read the rows. */
static const struct {
    void (*judge)(struct json_build *b, const cJSON *watch, const cJSON *rows, cJSON *reasons,
                  cJSON *notes);
    int needs_nvml;
} rules[] = {
    {rule_contended, 1},
    {rule_busy_start, 1},
    {rule_throttled, 1},
    {rule_ecc, 1},
    {rule_clock, 0},
    {rule_noisy, 0},
};

/* Moves notes (consumed) into the verdict when there are any; the
 * power_capped note names the cap the run ran under (meta's
 * enforced_power_limit_w, read by the worker), so that runs on cards with
 * different caps are not compared unawares. */
static void add_notes(struct json_build *b, cJSON *out, cJSON *notes, const cJSON *meta)
{
    const cJSON *limit = cJSON_GetObjectItem(meta, "enforced_power_limit_w");
    cJSON *n;

    if (cJSON_GetArraySize(notes) == 0) {
        cJSON_Delete(notes);
        return;
    }
    cJSON_ArrayForEach(n, notes) {
        const char *code = cJSON_GetStringValue(cJSON_GetObjectItem(n, "code"));
        if (code != NULL && strcmp(code, "power_capped") == 0 && cJSON_IsNumber(limit))
            jb_number_or_null(b, n, "enforced_power_limit_w", limit->valuedouble);
    }
    jb_item(b, out, "notes", notes);
}

/* What a deep check (issue 32, docs/DEEP_CHECKS.md) is there to find:
 * the reasons that, in its runs, say something about the card rather than
 * about the measurement.  known_answer and memtest report a wrong answer
 * or a bad word as verified: false, memtest an ECC count that went up, a
 * soak the slowdowns that a sustained load brings; each of these is the
 * run's result, judged by its checks (common/expect.c: a card that
 * computes wrong is degraded at once), not a reason to set the run aside.
 * So they are moved to the notes, and the run stays valid unless
 * something else (another process, a busy start) spoils it. */
static const struct {
    const char *benchmark;
    const char *code;
} own_findings[] = {
    {"known_answer", "unverified"},
    {"memtest", "unverified"},
    {"memtest", "ecc_errors"},
    {"soak", "throttled"},
};

static int own_finding(const char *benchmark, const char *code)
{
    for (size_t i = 0; benchmark && code && i < sizeof(own_findings) / sizeof(own_findings[0]);
         i++)
        if (strcmp(own_findings[i].benchmark, benchmark) == 0 &&
            strcmp(own_findings[i].code, code) == 0)
            return 1;
    return 0;
}

/* Moves the reasons benchmark is there to find from reasons to notes,
 * saying so in their message. */
static void move_findings(struct json_build *b, const char *benchmark, cJSON *reasons,
                          cJSON *notes)
{
    cJSON *r = reasons ? reasons->child : NULL;

    while (r) {
        cJSON *next = r->next;
        const char *code = cJSON_GetStringValue(cJSON_GetObjectItem(r, "code"));
        const char *msg = cJSON_GetStringValue(cJSON_GetObjectItem(r, "message"));
        if (own_finding(benchmark, code)) {
            char text[400];
            const cJSON *names = cJSON_GetObjectItem(r, "reasons");
            const char *only = cJSON_GetArraySize(names) == 1
                                   ? cJSON_GetStringValue(cJSON_GetArrayItem(names, 0))
                                   : NULL;
            /* a soak's GEMM at the card's cap and nothing else: the note
             * compute_peak's GEMM rows get, by its name */
            if (strcmp(code, "throttled") == 0 && only && strcmp(only, POWER_CAP_REASON) == 0) {
                cJSON_DeleteItemFromObjectCaseSensitive(r, "code"); /* code: no longer read */
                jb_string(b, r, "code", "power_capped");
                snprintf(text, sizeof(text),
                         "the load ran at the card's power cap (sw_power_cap), as a GEMM at full "
                         "rate does: a note, not a slowdown");
            } else if (strcmp(code, "unverified") == 0)
                snprintf(text, sizeof(text),
                         "%d row(s) found wrong results (verified: false): what %s is there "
                         "to find, judged by its checks (the card is degraded), not a reason "
                         "to set the run aside",
                         cJSON_GetArraySize(cJSON_GetObjectItem(r, "rows")), benchmark);
            else
                snprintf(text, sizeof(text),
                         "%s (what %s is there to find: judged by its checks, not a reason to "
                         "set the run aside)",
                         msg ? msg : code, benchmark);
            cJSON_DetachItemViaPointer(reasons, r);
            cJSON_DeleteItemFromObjectCaseSensitive(r, "message");
            jb_string(b, r, "message", text);
            jb_push(b, notes, r);
        }
        r = next;
    }
}

cJSON *gb_validity_judge(const cJSON *results, const cJSON *meta)
{
    return gb_validity_judge_benchmark(NULL, results, meta);
}

cJSON *gb_validity_judge_benchmark(const char *benchmark, const cJSON *results,
                                   const cJSON *meta)
{
    const cJSON *watch = cJSON_GetObjectItem(meta, "watch");
    const cJSON *rows = cJSON_GetObjectItem(results, "rows");
    struct json_build b = {0};
    cJSON *out = jb_new_object(&b);
    cJSON *reasons = jb_array(&b, out, "reasons"), *notes = jb_new_array(&b);
    int nvml;

    /* The link is judged with or without the watch: it is its own
     * reading (meta.link), and a degraded link is known bad either way. */
    rule_link(&b, cJSON_GetObjectItem(meta, "link"), reasons);
    /* So is a failed output check: the row's own. */
    rule_unverified(&b, cJSON_IsArray(rows) ? rows : NULL, reasons);
    if (!cJSON_IsObject(watch)) {
        /* Not watched: nothing else to judge it by; treated as valid,
         * shown as unknown. */
        move_findings(&b, benchmark, reasons, notes);
        if (cJSON_GetArraySize(reasons) > 0)
            jb_bool(&b, out, "valid", 0);
        else
            jb_null(&b, out, "valid");
        add_notes(&b, out, notes, meta); /* consumes notes */
        goto done;
    }
    if (!cJSON_IsArray(rows))
        rows = NULL;
    nvml = !cJSON_IsFalse(cJSON_GetObjectItem(watch, "available"));
    for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
        if (nvml || !rules[i].needs_nvml)
            rules[i].judge(&b, watch, rows, reasons, notes);
    move_findings(&b, benchmark, reasons, notes);
    if (cJSON_GetArraySize(reasons) > 0) {
        jb_bool(&b, out, "valid", 0);
    } else if (!nvml) {
        /* The rows look fine but contention and throttling went unseen. */
        const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(watch, "reason"));
        jb_null(&b, out, "valid");
        jb_string(&b, out, "note", why ? why : "the card could not be watched");
    } else {
        jb_bool(&b, out, "valid", 1);
    }
    add_notes(&b, out, notes, meta); /* consumes notes */

done:
    if (jb_failed(&b)) {
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}

int gb_validity_flag(const cJSON *validity)
{
    const cJSON *v = cJSON_GetObjectItem(validity, "valid");

    if (cJSON_IsTrue(v))
        return 1;
    return cJSON_IsFalse(v) ? 0 : -1;
}
