/*
 * card_state.c - see card_state.h.  Faults first: a card with a confirmed
 * fault is degraded however fresh its runs are; only then does the age of
 * its newest valid health run decide between unknown and healthy.
 */
#include "card_state.h"

#include "expect.h"
#include "shift.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double num_of(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItem(o, name);

    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static const char *str_of(const cJSON *o, const char *name)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(o, name));
}

/* The larger unit of each unit a floor is in, for figures past 1000 of
 * it: a drain reason reads "3.1 TB/s < 3.9 TB/s floor", as a person says
 * it, not "3095 GB/s". */
static const struct {
    const char *unit, *larger;
} larger_units[] = {
    {"GB/s", "TB/s"},
    {"TFLOP/s", "PFLOP/s"},
};

/* value and floor in unit as a reader wants them: in the larger unit from
 * 1000 up, no decimals from 100 up, else one decimal, or as many more (up
 * to three) as it takes for the two to read differently. */
static void figures(double value, double floor, const char *unit, char *v, char *f, size_t cap,
                    const char **shown_unit)
{
    *shown_unit = unit ? unit : "";
    for (size_t i = 0; unit && i < sizeof(larger_units) / sizeof(larger_units[0]); i++)
        if (strcmp(unit, larger_units[i].unit) == 0 && floor >= 1000) {
            value /= 1000;
            floor /= 1000;
            *shown_unit = larger_units[i].larger;
        }
    for (int decimals = floor >= 100 ? 0 : 1; decimals <= 3; decimals++) {
        snprintf(v, cap, "%.*f", decimals, value);
        snprintf(f, cap, "%.*f", decimals, floor);
        if (strcmp(v, f) != 0)
            break;
    }
}

void card_check_line(const char *benchmark, const cJSON *check, char *buf, size_t cap)
{
    int ceiling = cJSON_IsNumber(cJSON_GetObjectItem(check, "ceiling"));
    const char *unit;
    char value[32], floor[32];

    /* a deep check's own line names the SM or the address (expect_deep.h) */
    if (str_of(check, "message")) {
        snprintf(buf, cap, "%s", str_of(check, "message"));
        return;
    }
    figures(num_of(check, "value"), num_of(check, ceiling ? "ceiling" : "floor"),
            str_of(check, "unit"), value, floor, sizeof(value), &unit);
    snprintf(buf, cap, "%s %s %s %s %s %s %s %s", benchmark ? benchmark : "?",
             str_of(check, "row") ? str_of(check, "row") : "?", value, unit, ceiling ? ">" : "<",
             floor, unit, ceiling ? "ceiling" : "floor");
}

cJSON *card_floor_fault(const cJSON *alert)
{
    const cJSON *check = cJSON_GetObjectItem(alert, "check");
    const char *bench = str_of(alert, "benchmark"), *row = str_of(alert, "row");
    cJSON *f = cJSON_CreateObject();
    char msg[300];

    if (cJSON_IsObject(check))
        card_check_line(bench, check, msg, sizeof(msg));
    else
        snprintf(msg, sizeof(msg), "%s %s below its floor (confirmed)", bench ? bench : "?",
                 row ? row : "?");
    if (f == NULL || !cJSON_AddStringToObject(f, "kind", "floor") ||
        !cJSON_AddStringToObject(f, "message", msg) ||
        !(str_of(alert, "at") ? cJSON_AddStringToObject(f, "at", str_of(alert, "at"))
                              : cJSON_AddNullToObject(f, "at"))) {
        cJSON_Delete(f);
        return NULL;
    }
    return f;
}

/* The check of row in checks whose "pass" is false, or NULL. */
static const cJSON *failed_check(const cJSON *checks, const char *row)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, checks) {
        const char *r = str_of(c, "row");
        if (r && row && strcmp(r, row) == 0 && cJSON_IsFalse(cJSON_GetObjectItem(c, "pass")))
            return c;
    }
    return NULL;
}

/* Whether alerts has one of benchmark and row. */
static int alerted(const cJSON *alerts, const char *benchmark, const char *row)
{
    const cJSON *a;

    cJSON_ArrayForEach(a, alerts) {
        const char *b = str_of(a, "benchmark"), *r = str_of(a, "row");
        if (b && r && benchmark && row && strcmp(b, benchmark) == 0 && strcmp(r, row) == 0)
            return 1;
    }
    return 0;
}

int card_repeat_faults(const cJSON *pairs, const cJSON *alerts, cJSON *faults)
{
    const cJSON *pair, *c;

    cJSON_ArrayForEach(pair, pairs) {
        const char *bench = str_of(pair, "benchmark"), *at = str_of(pair, "at");
        const cJSON *previous = cJSON_GetObjectItem(pair, "previous_checks");

        cJSON_ArrayForEach(c, cJSON_GetObjectItem(pair, "checks")) {
            const char *row = str_of(c, "row");
            char msg[300];
            cJSON *f;

            /* a wrong result is a fact the first time (expect_deep.h) */
            int exact = cJSON_IsTrue(cJSON_GetObjectItem(c, "exact"));
            if (!cJSON_IsFalse(cJSON_GetObjectItem(c, "pass")) ||
                (!exact && failed_check(previous, row) == NULL) || alerted(alerts, bench, row))
                continue;
            card_check_line(bench, c, msg, sizeof(msg));
            if ((f = cJSON_CreateObject()) == NULL)
                return -1;
            if (!cJSON_AddItemToArray(faults, f)) {
                cJSON_Delete(f);
                return -1;
            }
            if (!cJSON_AddStringToObject(f, "kind", "floor") ||
                !cJSON_AddStringToObject(f, "message", msg) ||
                !(at ? cJSON_AddStringToObject(f, "at", at) : cJSON_AddNullToObject(f, "at")))
                return -1;
        }
    }
    return 0;
}

/* The newest fault (by "at"; RFC 3339 sorts as text), or NULL. */
static const cJSON *newest_fault(const cJSON *faults, int *n)
{
    const cJSON *f, *best = NULL;

    *n = 0;
    cJSON_ArrayForEach(f, faults) {
        const char *at = str_of(f, "at"), *best_at = best ? str_of(best, "at") : NULL;
        (*n)++;
        if (best == NULL || (at && (best_at == NULL || strcmp(at, best_at) > 0)))
            best = f;
    }
    return best;
}

cJSON *card_state_judge(const cJSON *health_runs, const cJSON *faults, int64_t now_ms,
                        int64_t max_age_ms)
{
    const cJSON *run, *newest = NULL, *fault, *c;
    const char *state, *newest_at;
    char reason[400], pending[300] = "";
    int nfaults;
    cJSON *out;

    cJSON_ArrayForEach(run, health_runs) {
        if (newest == NULL || num_of(run, "finished_ms") > num_of(newest, "finished_ms"))
            newest = run;
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(run, "checks"))
            if (pending[0] == '\0' && cJSON_IsFalse(cJSON_GetObjectItem(c, "pass")))
                card_check_line(str_of(run, "benchmark"), c, pending, sizeof(pending));
    }
    newest_at = newest ? str_of(newest, "finished_at") : NULL;
    if ((fault = newest_fault(faults, &nfaults)) != NULL) {
        state = gb_card_state_names[GB_CARD_DEGRADED];
        const char *msg = str_of(fault, "message");
        char more[32] = "";
        /* the rest are on the card's page: its checks, alerts and events */
        if (nfaults > 1)
            snprintf(more, sizeof(more), " (and %d more)", nfaults - 1);
        snprintf(reason, sizeof(reason), "%s%s", msg ? msg : "a fault", more);
    } else if (newest == NULL) {
        state = gb_card_state_names[GB_CARD_UNKNOWN];
        snprintf(reason, sizeof(reason), "no valid health run");
    } else if (now_ms - (int64_t)num_of(newest, "finished_ms") > max_age_ms) {
        state = gb_card_state_names[GB_CARD_UNKNOWN];
        snprintf(reason, sizeof(reason),
                 "no valid health run within %.4gh (the newest ended %s)",
                 (double)max_age_ms / 3600000.0, newest_at ? newest_at : "?");
    } else if (pending[0]) {
        state = gb_card_state_names[GB_CARD_HEALTHY];
        snprintf(reason, sizeof(reason), "%s, once: a rerun confirms it or clears it", pending);
    } else {
        state = gb_card_state_names[GB_CARD_HEALTHY];
        snprintf(reason, sizeof(reason), "its valid health runs within %.4gh met every floor",
                 (double)max_age_ms / 3600000.0);
    }
    if ((out = cJSON_CreateObject()) == NULL || !cJSON_AddStringToObject(out, "state", state) ||
        !cJSON_AddStringToObject(out, "reason", reason) ||
        !(newest_at ? cJSON_AddStringToObject(out, "last_checked_at", newest_at)
                    : cJSON_AddNullToObject(out, "last_checked_at"))) {
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}

int card_learned(const cJSON *model_runs, const char *benchmark, const char *row, int min_cards,
                 double *median, int *n_cards)
{
    int cap = cJSON_GetArraySize(model_runs), n = 0;
    double *v = cap > 0 ? malloc(sizeof(double) * (size_t)cap) : NULL;
    const cJSON *run, *c;

    *median = 0;
    *n_cards = 0;
    if (v == NULL)
        return 0;
    cJSON_ArrayForEach(run, model_runs) {
        const char *b = str_of(run, "benchmark");
        if (b == NULL || benchmark == NULL || strcmp(b, benchmark) != 0)
            continue;
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(run, "checks")) {
            const char *r = str_of(c, "row");
            if (r && row && strcmp(r, row) == 0 &&
                cJSON_IsNumber(cJSON_GetObjectItem(c, "value"))) {
                v[n++] = num_of(c, "value");
                break; /* one value a card */
            }
        }
    }
    *n_cards = n;
    if (n > 0)
        *median = gb_median_inplace(v, n);
    free(v);
    return n >= min_cards && n > 0;
}
