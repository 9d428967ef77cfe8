/*
 * api_verdicts.c - a candidate judged against a baseline, and the baselines
 * that stay:
 *   GET /compare?baseline=SEL&candidate=SEL  (api_compare_get hands over when
 *                      either is given) row verdicts, verdicts.c
 *   POST /baselines    {"name", "runs": [...]}, {"name", "card",
 *                      "benchmark", "since", "until"} or {"name", "like_run",
 *                      "since", "until"} (that run's card and comparability
 *                      key): resolved to its runs now and kept (201; 409
 *                      when the name is taken)
 *   GET /baselines, GET /baselines/NAME, DELETE /baselines/NAME (204)
 *
 * A selector SEL is one of card:UUID, runs:ID,ID,..., label:TEXT,
 * host:NAME, driver:VERSION, or the name of a pinned baseline; since= and
 * until= (an RFC 3339 date, or a date-time in UTC) narrow either group by
 * when its runs were made.  A group takes at most GROUP_MAX_RUNS runs, the
 * newest; a selector's group those of one key, its newest (valid) run's,
 * chosen in SQL, so that no run of another parameter set is read only to
 * be left out (store_select_verdict_runs).  Runs are read as a verdict
 * reads them (results' rows, no meta).  Handlers parse and print; the
 * judging is verdicts.c's.
 */
#include "handlers.h"
#include "json_build.h"
#include "shift.h"
#include "store_baselines.h"
#include "store_verdicts.h"
#include "uuid7.h"
#include "verdicts.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROUP_MAX_RUNS 200
#define BASELINE_MAX_RUNS 1000
#define BASELINE_NAME_MAX 64

/* The selector kinds that are filters of store_select_runs: the prefix and
 * where its value goes. */
enum sel_field {
    SEL_CARD,
    SEL_HOST,
    SEL_LABEL,
    SEL_DRIVER,
};
static const struct {
    const char *prefix;
    enum sel_field field;
} filter_kinds[] = {
    {"card:", SEL_CARD},
    {"host:", SEL_HOST},
    {"label:", SEL_LABEL},
    {"driver:", SEL_DRIVER},
};

/* An RFC 3339 date (YYYY-MM-DD: its first or, with end_of_day, its last
 * millisecond) or a UTC date-time (YYYY-MM-DDTHH:MM:SS[.fff]Z) as the
 * store writes times, into out[32].  0, or -1 when it is neither. */
static int parse_date(const char *text, int end_of_day, char out[32])
{
    int y, mo, d, h = 0, mi = 0, s = 0, ms = 0, used = 0;
    size_t len = strlen(text);

    if (len == 10 && sscanf(text, "%4d-%2d-%2d%n", &y, &mo, &d, &used) == 3 && used == 10) {
        if (end_of_day) {
            h = 23;
            mi = s = 59;
            ms = 999;
        }
    } else if (sscanf(text, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &used) == 6 &&
               used == 19) {
        const char *p = text + 19;
        if (*p == '.') {
            int digits = 0;
            for (p++; isdigit((unsigned char)*p); p++, digits++)
                if (digits < 3)
                    ms = ms * 10 + (*p - '0');
            for (; digits > 0 && digits < 3; digits++)
                ms *= 10;
            if (digits == 0)
                return -1;
        }
        if (strcmp(p, "Z") != 0)
            return -1;
    } else {
        return -1;
    }
    if (y < 0 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 ||
        mi < 0 || mi > 59 || s < 0 || s > 60 || ms < 0 || ms > 999)
        return -1;
    snprintf(out, 32, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", y, mo, d, h, mi, s, ms);
    return 0;
}

/* handlers.h */
int read_dates(struct http_reply *rep, const char *since, const char *until,
               char since_out[32], char until_out[32])
{
    since_out[0] = until_out[0] = '\0';
    if (since && parse_date(since, 0, since_out) != 0) {
        reply_error(rep, 400, "out_of_bounds", "since",
                    "since=%.40s: expected a date (2026-01-31) or a UTC date-time "
                    "(2026-01-31T12:00:00Z)",
                    since);
        return -1;
    }
    if (until && parse_date(until, 1, until_out) != 0) {
        reply_error(rep, 400, "out_of_bounds", "until",
                    "until=%.40s: expected a date (2026-01-31) or a UTC date-time "
                    "(2026-01-31T12:00:00Z)",
                    until);
        return -1;
    }
    return 0;
}

/* The runs with ids (an array of strings) made within the dates, read as
 * a verdict reads them (store_get_verdict_run) into runs.  STORE_OK;
 * STORE_NOT_FOUND when one is missing or not an id (its index in *bad);
 * else the store's failure (for reply_store_error). */
static int load_runs(struct store *store, const cJSON *ids, const char *since,
                     const char *until, cJSON *runs, int *bad)
{
    const cJSON *id;
    int i = 0;

    cJSON_ArrayForEach(id, ids) {
        cJSON *run = NULL;
        const char *made;
        int rc = cJSON_IsString(id) && uuid_is_valid(id->valuestring)
                     ? store_get_verdict_run(store, id->valuestring, &run)
                     : STORE_NOT_FOUND;
        if (rc != STORE_OK) {
            *bad = i;
            return rc;
        }
        made = cJSON_GetStringValue(cJSON_GetObjectItem(run, "created_at"));
        if ((since[0] && (!made || strcmp(made, since) < 0)) ||
            (until[0] && (!made || strcmp(made, until) > 0))) {
            cJSON_Delete(run);
        } else if (!cJSON_AddItemToArray(runs, run)) {
            cJSON_Delete(run);
            return STORE_ERROR;
        }
        i++;
    }
    return STORE_OK;
}

/* The runs selector text picks, into a NEW array *out; *other_key gets the
 * runs of another key a filter selector passed over.  field names the
 * query argument in errors.  0, or -1 answered. */
static int resolve_group(struct http_request *req, struct http_reply *rep, const char *field,
                         const char *text, const char *benchmark, const char *since,
                         const char *until, int include_invalid, cJSON **out, int *other_key)
{
    struct store *store = req->app->store;
    cJSON *ids = NULL, *pinned = NULL, *runs = cJSON_CreateArray();
    int rc = -1, bad = 0, loaded;

    *out = NULL;
    *other_key = 0;
    if (runs == NULL) {
        reply_error(rep, 500, "internal", "", "out of memory");
        return -1;
    }
    if (strncmp(text, "runs:", 5) == 0) {
        struct json_build jb = {0};
        const char *p = text + 5;
        ids = jb_new_array(&jb);
        for (int n = 0; *p && n < GROUP_MAX_RUNS && !jb_failed(&jb); n++) {
            size_t len = strcspn(p, ",");
            char one[40];
            snprintf(one, sizeof(one), "%.*s", (int)(len < 39 ? len : 39), p);
            jb_push(&jb, ids, cJSON_CreateString(one));
            p += len + (p[len] == ',');
        }
        if (jb_failed(&jb)) { /* load_runs answers for NULL ids */
            cJSON_Delete(ids);
            ids = NULL;
        }
    } else {
        struct run_select sel = {.benchmark = benchmark, .since = since, .until = until};

        sel.limit = GROUP_MAX_RUNS;
        size_t k;
        for (k = 0; k < sizeof(filter_kinds) / sizeof(filter_kinds[0]); k++) {
            size_t n = strlen(filter_kinds[k].prefix);
            const char *value = text + n;
            if (strncmp(text, filter_kinds[k].prefix, n) != 0)
                continue;
            if (filter_kinds[k].field == SEL_CARD)
                sel.card = value;
            else if (filter_kinds[k].field == SEL_HOST)
                sel.host = value;
            else if (filter_kinds[k].field == SEL_LABEL)
                sel.label = value;
            else
                sel.driver = value;
            if (!value[0]) {
                reply_error(rep, 400, "out_of_bounds", field, "%s%s: the selector needs a value",
                            field, filter_kinds[k].prefix);
                goto done;
            }
            break;
        }
        if (k < sizeof(filter_kinds) / sizeof(filter_kinds[0])) {
            cJSON_Delete(runs);
            runs = NULL;
            loaded = store_select_verdict_runs(store, &sel, include_invalid, &runs, other_key);
            if (loaded != STORE_OK) {
                reply_store_error(rep, loaded, "the runs could not be read");
                goto done;
            }
            *out = runs; /* read already, of the one key */
            runs = NULL;
            rc = 0;
            goto done;
        } else if ((loaded = store_baseline_get(store, text, &pinned)) == STORE_OK) {
            ids = cJSON_DetachItemFromObject(pinned, "runs");
        } else if (loaded == STORE_NOT_FOUND) {
            reply_error(rep, 404, "not_found", field,
                        "%s=%.64s: no baseline of that name, nor a selector (card:UUID, "
                        "runs:ID,..., label:TEXT, host:NAME, driver:VERSION)",
                        field, text);
            goto done;
        } else {
            reply_store_error(rep, loaded, "the baseline could not be read");
            goto done;
        }
    }
    loaded = ids ? load_runs(store, ids, since, until, runs, &bad) : STORE_ERROR;
    if (loaded == STORE_NOT_FOUND) {
        reply_error(rep, 404, "not_found", field, "%s: no run %.40s", field,
                    cJSON_GetStringValue(cJSON_GetArrayItem(ids, bad)));
        goto done;
    }
    if (loaded != STORE_OK) {
        reply_store_error(rep, loaded, "the runs could not be read");
        goto done;
    }
    *out = runs;
    runs = NULL;
    rc = 0;

done:
    cJSON_Delete(ids);
    cJSON_Delete(pinned);
    cJSON_Delete(runs);
    return rc;
}

/* margin= as a fraction within the bounds; 0, or -1 answered. */
static int read_margin(struct http_request *req, struct http_reply *rep, double *margin)
{
    char expected[80];

    *margin = GB_SHIFT_MARGIN_DEFAULT;
    snprintf(expected, sizeof(expected), "a fraction from %g to %g (0.01 is 1%%)",
             GB_SHIFT_MARGIN_MIN, GB_SHIFT_MARGIN_MAX);
    return query_double(req, rep, "margin", GB_SHIFT_MARGIN_MIN, GB_SHIFT_MARGIN_MAX, expected,
                        margin);
}

void api_compare_verdicts(struct http_request *req, struct http_reply *rep)
{
    static const char *const args[] = {"benchmark", "baseline", "candidate", "margin",
                                       "since", "until", "include_invalid", NULL};
    static const char *const sides[2] = {"baseline", "candidate"};
    const char *bench = query_get(req, "benchmark");
    cJSON *groups[2] = {NULL, NULL}, *out;
    struct verdict_group g[2];
    char since[32], until[32];
    int include_invalid;
    double margin;

    if (query_check(req, rep, args) != 0 ||
        query_bool(req, rep, "include_invalid", &include_invalid) != 0 ||
        read_margin(req, rep, &margin) != 0 ||
        read_dates(rep, query_get(req, "since"), query_get(req, "until"), since, until) != 0)
        return;
    if (bench && !bench[0])
        bench = NULL;
    for (int i = 0; i < 2; i++) {
        g[i].selector = query_get(req, sides[i]);
        if (g[i].selector == NULL || g[i].selector[0] == '\0') {
            reply_error(rep, 400, "missing_field", sides[i],
                        "%s is required with %s (card:UUID, runs:ID,..., label:TEXT, "
                        "host:NAME, driver:VERSION or a baseline's name)",
                        sides[i], sides[1 - i]);
            goto done;
        }
        if (resolve_group(req, rep, sides[i], g[i].selector, bench, since, until,
                          include_invalid == 1, &groups[i], &g[i].other_key_unread) != 0)
            goto done;
        g[i].runs = groups[i];
        /* Without benchmark=, the candidate is read for the baseline's
         * (verdicts_compare's choice too). */
        if (i == 0 && bench == NULL)
            bench = verdicts_benchmark_of(groups[i]);
    }
    out = verdicts_compare(bench, &g[0], &g[1], margin, include_invalid == 1);
    if (out == NULL)
        reply_error(rep, 500, "internal", "", "out of memory");
    else
        reply_json(rep, 200, out);

done:
    cJSON_Delete(groups[0]);
    cJSON_Delete(groups[1]);
}

/* A baseline's name: letters, digits, '.', '_', '-', so that it is never
 * read as a selector (no ':') and sits in a URL as it is. */
static int name_ok(const char *name)
{
    size_t n = strlen(name);

    if (n == 0 || n > BASELINE_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)name[i]) && !strchr("._-", name[i]))
            return 0;
    return 1;
}

/* The body's string field name, or NULL; -1 answered when it is there and
 * not a string. */
static int body_string(struct http_reply *rep, const cJSON *body, const char *name,
                       const char **out)
{
    const cJSON *v = cJSON_GetObjectItem(body, name);

    *out = NULL;
    if (v == NULL)
        return 0;
    if (!cJSON_IsString(v)) {
        reply_error(rep, 400, "wrong_type", name, "%s must be a string", name);
        return -1;
    }
    *out = v->valuestring;
    return 0;
}

/* The run ids a POST /baselines body names, checked; a NEW array, or NULL
 * answered. */
static cJSON *baseline_runs(struct http_request *req, struct http_reply *rep, const cJSON *body)
{
    static const char *const fields[] = {"name", "runs", "card", "benchmark",
                                         "since", "until", "like_run", NULL};
    const cJSON *runs = cJSON_GetObjectItem(body, "runs"), *f;
    const char *card, *bench, *since_text, *until_text, *like;
    char since[32], until[32], field[32];
    cJSON *ids = NULL, *loaded;
    int bad = 0, rc;

    cJSON_ArrayForEach(f, body) {
        int known = 0;
        for (const char *const *k = fields; *k; k++)
            known |= strcmp(f->string, *k) == 0;
        if (!known) {
            reply_error(rep, 400, "unknown_field", f->string,
                        "%.40s: unknown field (expected name, and runs, card with "
                        "benchmark, or like_run; since, until)",
                        f->string);
            return NULL;
        }
    }
    if (body_string(rep, body, "card", &card) != 0 ||
        body_string(rep, body, "benchmark", &bench) != 0 ||
        body_string(rep, body, "since", &since_text) != 0 ||
        body_string(rep, body, "until", &until_text) != 0 ||
        body_string(rep, body, "like_run", &like) != 0 ||
        read_dates(rep, since_text, until_text, since, until) != 0)
        return NULL;
    if ((runs != NULL) + (card != NULL) + (like != NULL) != 1 || (like && bench)) {
        reply_error(rep, 400, runs || card || like ? "out_of_bounds" : "missing_field", "runs",
                    "give one of runs (a list of run ids), card (with benchmark) or like_run "
                    "(a run: its card and key)");
        return NULL;
    }
    if (like) {
        /* a card, its key and a date range: the runs a verdict would
         * compare with that run, and none of another key */
        rc = store_select_like(req->app->store, like, since, until, BASELINE_MAX_RUNS, &ids);
        if (rc != STORE_OK || cJSON_GetArraySize(ids) == 0) {
            cJSON_Delete(ids);
            if (rc != STORE_OK && rc != STORE_NOT_FOUND)
                reply_store_error(rep, rc, "the runs could not be read");
            else
                reply_error(rep, 400, "not_found", "like_run",
                            rc == STORE_NOT_FOUND ? "like_run %.64s: not a done run here"
                                                  : "no done runs like %.64s in that range",
                            like);
            return NULL;
        }
    } else if (runs) {
        if (!cJSON_IsArray(runs) || cJSON_GetArraySize(runs) < 1 ||
            cJSON_GetArraySize(runs) > BASELINE_MAX_RUNS) {
            reply_error(rep, 400, "wrong_type", "runs", "runs must be a list of 1 to %d run ids",
                        BASELINE_MAX_RUNS);
            return NULL;
        }
        ids = cJSON_Duplicate(runs, 1);
    } else {
        struct run_select sel = {.benchmark = bench, .card = card, .since = since};

        sel.until = until;
        sel.limit = BASELINE_MAX_RUNS;
        if (bench == NULL || !bench[0]) {
            reply_error(rep, 400, "missing_field", "benchmark", "benchmark is required with card");
            return NULL;
        }
        rc = store_select_runs(req->app->store, &sel, &ids);
        if (rc != STORE_OK) {
            reply_store_error(rep, rc, "the runs could not be read");
            return NULL;
        }
        if (cJSON_GetArraySize(ids) == 0) {
            cJSON_Delete(ids);
            reply_error(rep, 400, "not_found", "card",
                        "no done runs of %.64s on card %.64s in that range", bench, card);
            return NULL;
        }
    }
    /* Every run named must be here and done: a baseline of nothing would
     * judge nothing. */
    loaded = cJSON_CreateArray();
    rc = ids && loaded ? load_runs(req->app->store, ids, "", "", loaded, &bad) : STORE_ERROR;
    if (rc == STORE_OK)
        cJSON_ArrayForEach(f, loaded) {
            const char *status = cJSON_GetStringValue(cJSON_GetObjectItem(f, "status"));
            if (!status || strcmp(status, "done") != 0) {
                rc = STORE_NOT_FOUND;
                break;
            }
            bad++;
        }
    cJSON_Delete(loaded);
    if (rc != STORE_OK) {
        snprintf(field, sizeof(field), "runs[%d]", bad);
        if (rc == STORE_NOT_FOUND)
            reply_error(rep, 400, "out_of_bounds", field, "%s: not a done run here", field);
        else
            reply_store_error(rep, rc, "the runs could not be read");
        cJSON_Delete(ids);
        return NULL;
    }
    return ids;
}

void api_baselines_post(struct http_request *req, struct http_reply *rep)
{
    cJSON *body = body_json(req, rep), *ids = NULL, *spec = NULL, *out;
    const cJSON *name = cJSON_GetObjectItem(body, "name");
    char *spec_text = NULL, *ids_text = NULL, created[32];
    int rc;

    if (body == NULL)
        return;
    if (!cJSON_IsObject(body)) {
        reply_error(rep, 400, "wrong_type", "", "the body must be a JSON object");
        goto done;
    }
    if (!cJSON_IsString(name) || !name_ok(name->valuestring)) {
        reply_error(rep, 400, name ? "out_of_bounds" : "missing_field", "name",
                    "name: 1 to %d letters, digits, '.', '_' or '-'", BASELINE_NAME_MAX);
        goto done;
    }
    if ((ids = baseline_runs(req, rep, body)) == NULL)
        goto done;
    spec = cJSON_Duplicate(body, 1);
    if (spec)
        cJSON_DeleteItemFromObject(spec, "name");
    spec_text = spec ? cJSON_PrintUnformatted(spec) : NULL;
    ids_text = cJSON_PrintUnformatted(ids);
    if (spec_text == NULL || ids_text == NULL) {
        reply_error(rep, 500, "internal", "", "out of memory");
        goto done;
    }
    rc = store_baseline_insert(req->app->store, name->valuestring, spec_text, ids_text, created);
    if (rc == STORE_CONFLICT) {
        reply_error(rep, 409, "conflict", "name", "a baseline named %.64s exists; delete it first",
                    name->valuestring);
        goto done;
    }
    if (rc == STORE_OK)
        rc = store_baseline_get(req->app->store, name->valuestring, &out);
    if (rc != STORE_OK) {
        reply_store_error(rep, rc == STORE_NOT_FOUND ? STORE_ERROR : rc,
                          "the baseline could not be stored");
        goto done;
    }
    snprintf(rep->location, sizeof(rep->location), "/baselines/%s", name->valuestring);
    reply_json(rep, 201, out);

done:
    free(spec_text);
    free(ids_text);
    cJSON_Delete(spec);
    cJSON_Delete(ids);
    cJSON_Delete(body);
}

void api_baselines_list(struct http_request *req, struct http_reply *rep)
{
    cJSON *list = NULL, *out;
    int rc = store_baseline_get(req->app->store, NULL, &list);

    if (rc != STORE_OK) {
        reply_store_error(rep, rc, "the baselines could not be read");
        return;
    }
    out = cJSON_CreateObject();
    if (out == NULL || !cJSON_AddItemToObject(out, "baselines", list)) {
        cJSON_Delete(out);
        cJSON_Delete(list);
        reply_error(rep, 500, "internal", "", "out of memory listing the baselines");
        return;
    }
    reply_json(rep, 200, out);
}

void api_baselines_get(struct http_request *req, struct http_reply *rep)
{
    cJSON *b = NULL;
    int rc = store_baseline_get(req->app->store, req->arg, &b);

    if (rc == STORE_NOT_FOUND)
        reply_error(rep, 404, "not_found", "", "no baseline %.64s", req->arg);
    else if (rc != STORE_OK)
        reply_store_error(rep, rc, "the baseline could not be read");
    else
        reply_json(rep, 200, b);
}

void api_baselines_delete(struct http_request *req, struct http_reply *rep)
{
    int rc = store_baseline_delete(req->app->store, req->arg);

    if (rc == STORE_NOT_FOUND)
        reply_error(rep, 404, "not_found", "", "no baseline %.64s", req->arg);
    else if (rc != STORE_OK)
        reply_store_error(rep, rc, "the baseline could not be deleted");
    else
        reply_body(rep, 204, NULL, NULL, 0);
}
