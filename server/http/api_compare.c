/*
 * api_compare.c - GET /compare: one benchmark's runs per card, or the runs
 * named by runs=, side by side (compare.c builds the answer); with
 * baseline= and candidate=, row verdicts (api_verdicts.c).
 */
#include "compare.h"
#include "handlers.h"
#include "run_filter.h"
#include "store_runs.h"
#include "uuid7.h"

#include <stdio.h>
#include <string.h>

#define COMPARE_SCAN 5000

static cJSON *rows_from_store(void *store, const char *id)
{
    cJSON *rows = NULL;

    store_run_rows(store, id, &rows);
    return rows;
}

void api_compare_get(struct http_request *req, struct http_reply *rep)
{
    static const char *const args[] = {"benchmark", "device", "host", "label",
                                       "latest", "runs", "include_invalid", NULL};
    const char *bench = query_get(req, "benchmark");
    const char *ids = query_get(req, "runs");
    struct run_filter f = {
        .benchmark = bench,
        .device = query_get(req, "device"),
        .host = query_get(req, "host"),
        .label = query_get(req, "label"),
        .limit = COMPARE_SCAN,
    };
    cJSON *runs = NULL, *out;
    long long latest = 10;
    int include_invalid, rc;

    if (query_benchmark(req, rep) != 0)
        return;
    /* Two groups judged row by row: api_verdicts.c. */
    if (query_get(req, "baseline") || query_get(req, "candidate")) {
        api_compare_verdicts(req, rep);
        return;
    }
    if (query_check(req, rep, args) != 0 ||
        query_bool(req, rep, "include_invalid", &include_invalid) != 0)
        return;
    if (bench == NULL || bench[0] == '\0') {
        reply_error(rep, 400, "missing_field", "benchmark",
                    "benchmark is required, e.g. /compare?benchmark=smem_stride");
        return;
    }
    if (query_long(req, rep, "latest", 1, 1000, "a whole number of runs a card, 1 to 1000",
                   &latest) != 0)
        return;
    if (ids && ids[0]) {
        /* Chosen runs: each read on its own, in the order given. */
        char one[40];
        int n = 0;

        if ((runs = cJSON_CreateArray()) == NULL) {
            reply_error(rep, 500, "internal", "", "out of memory");
            return;
        }
        for (const char *p = ids; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
            size_t len = strcspn(p, ",");
            cJSON *run = NULL;
            snprintf(one, sizeof(one), "%.*s", (int)(len < 39 ? len : 39), p);
            rc = uuid_is_valid(one) ? store_get_run(req->app->store, one, &run)
                                    : STORE_NOT_FOUND;
            if (rc == STORE_NOT_FOUND) {
                cJSON_Delete(runs);
                reply_error(rep, 404, "not_found", "runs", "no run %.40s", one);
                return;
            }
            if (rc != STORE_OK) {
                cJSON_Delete(runs);
                reply_store_error(rep, rc, "the runs could not be read");
                return;
            }
            if (!cJSON_AddItemToArray(runs, run)) {
                cJSON_Delete(run);
                cJSON_Delete(runs);
                reply_error(rep, 500, "internal", "", "out of memory");
                return;
            }
            if (++n > 1000) /* counted: cJSON_GetArraySize walks the list */
                break;
        }
        latest = 1000;
    } else if ((rc = store_compare_runs(req->app->store, &f, &runs)) != STORE_OK) {
        reply_store_error(rep, rc, "the runs could not be read");
        return;
    }
    out = compare_build(bench, runs, (int)latest, include_invalid == 1,
                        rows_from_store, req->app->store);
    cJSON_Delete(runs);
    /* how many runs a card were used at most (the page shows it) */
    if (out != NULL && !(ids && ids[0]) &&
        !cJSON_AddNumberToObject(out, "latest", (double)latest)) {
        cJSON_Delete(out);
        out = NULL;
    }
    if (out == NULL) {
        cJSON_Delete(out);
        reply_error(rep, 500, "internal", "", "out of memory");
        return;
    }
    reply_json(rep, 200, out);
}
