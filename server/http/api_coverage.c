/*
 * api_coverage.c - GET /coverage?max_age=24h&deep_max_age=7d&host=NAME: every card this
 * daemon knows (its own GPUs, and the cards of its store: its own runs,
 * imported and pulled) against every health benchmark, each cell fresh,
 * stale or never, and every deep check of health_deep against its own
 * window (server/judge/coverage.c judges; store_coverage.c
 * reads).  /metrics prints the same answer as gauges (api_metrics.c), and
 * `gpubench check` reads it, so it stays one read of the per-card tables.
 */
#include "app.h"
#include "cards.h"
#include "coverage.h"
#include "coverage_cache.h"
#include "duration.h"
#include "gpu_pool.h"
#include "handlers.h"
#include "store_coverage.h"
#include "timeutil.h"

/* The most GPUs of a node read from the pool (as /metrics reads them). */
#define COVERAGE_MAX_GPUS 64

/* coverage_query.read_faults: a card's faults as GET /cards reads them
 * (cards_faults: its open critical card events and its confirmed floor
 * alerts), so that `gpubench check` drains on what the card's page shows. */
struct faults_ctx {
    struct store *store;
    int store_rc; /* the first failed read's, for the answer */
};

static int read_faults(void *ctx, const char *uuid, cJSON **faults)
{
    struct faults_ctx *f = ctx;

    f->store_rc = cards_faults(f->store, uuid, faults);
    return f->store_rc == STORE_OK ? 0 : -1;
}

/* The coverage's query for app (its own GPUs into own, room for
 * COVERAGE_MAX_GPUS; its faults read through f). */
static void coverage_query_of(struct app *app, const char *host, long long max_age_s,
                              long long deep_max_age_s, struct coverage_gpu *own,
                              struct faults_ctx *f, struct coverage_query *q)
{
    struct gpu_stat stats[COVERAGE_MAX_GPUS];
    int n = gpu_pool_stats(app->gpus, stats, COVERAGE_MAX_GPUS);

    /* the pool's strings are its own, kept while it runs */
    for (int i = 0; i < n; i++)
        own[i] = (struct coverage_gpu){stats[i].index, stats[i].uuid, stats[i].name};
    *f = (struct faults_ctx){.store = app->store, .store_rc = STORE_OK};
    *q = (struct coverage_query){
        .own_host = app->host,
        .own = own,
        .n_own = n,
        .host = host,
        .now_ms = time_now_unix_ms(),
        .max_age_s = max_age_s,
        .deep_max_age_s = deep_max_age_s,
        .read_faults = read_faults,
        .ctx = f,
    };
}

cJSON *coverage_read(struct app *app, const char *host, long long max_age_s,
                     long long deep_max_age_s, int *store_rc)
{
    struct coverage_gpu own[COVERAGE_MAX_GPUS];
    struct faults_ctx faults;
    struct coverage_query q;
    cJSON *cells = NULL, *out;

    coverage_query_of(app, host, max_age_s, deep_max_age_s, own, &faults, &q);
    *store_rc = store_coverage_cells(app->store, host, &cells);
    if (*store_rc != STORE_OK)
        return NULL;
    out = coverage_build(cells, &q);
    cJSON_Delete(cells);
    *store_rc = faults.store_rc;
    return out;
}

/* The answer from the kept texts (coverage_cache.h), or the error. */
static void coverage_kept(struct app *app, const char *host, long long max_age_s,
                          long long deep_max_age_s, struct http_reply *rep)
{
    struct coverage_gpu own[COVERAGE_MAX_GPUS];
    struct faults_ctx faults;
    struct coverage_query q;
    char *text = NULL;
    size_t len = 0;
    int rc;

    coverage_query_of(app, host, max_age_s, deep_max_age_s, own, &faults, &q);
    rc = coverage_cache_answer(app->coverage, app->store, &q, &text, &len);
    if (rc == STORE_OK) {
        reply_body(rep, 200, "application/json", text, len);
        return;
    }
    /* a card's faults' read says why, where it was that */
    reply_store_error(rep, faults.store_rc != STORE_OK ? faults.store_rc : rc,
                      "the coverage could not be read");
}

void api_coverage_get(struct http_request *req, struct http_reply *rep)
{
    static const char *const query[] = {"max_age", "deep_max_age", "host", NULL};
    const char *max_age = query_get(req, "max_age");
    const char *deep_max_age = query_get(req, "deep_max_age");
    const char *host = query_get(req, "host");
    long long max_age_s = COVERAGE_MAX_AGE_DEFAULT_S;
    int64_t ms = 0, deep_ms = 0;
    cJSON *out;
    int rc;

    if (query_check(req, rep, query) != 0)
        return;
    if (max_age && gb_duration_ms(max_age, &ms) != 0) {
        reply_error(rep, 400, "out_of_bounds", "max_age",
                    "max_age=%.40s: expected " GB_DURATION_EXPECTED, max_age);
        return;
    }
    if (deep_max_age && gb_duration_ms(deep_max_age, &deep_ms) != 0) {
        reply_error(rep, 400, "out_of_bounds", "deep_max_age",
                    "deep_max_age=%.40s: expected a duration such as 7d, 24h or 3600 (seconds)",
                    deep_max_age);
        return;
    }
    /* whole seconds, rounded up: "0.5s" is a window, not none */
    if (max_age)
        max_age_s = (ms + 999) / 1000;
    if (host && host[0] == '\0') {
        reply_error(rep, 400, "out_of_bounds", "host", "host= names a host");
        return;
    }
    if (req->app->coverage) {
        coverage_kept(req->app, host, max_age_s, (deep_ms + 999) / 1000, rep);
        return;
    }
    out = coverage_read(req->app, host, max_age_s, (deep_ms + 999) / 1000, &rc);
    if (out == NULL) {
        if (rc != STORE_OK)
            reply_store_error(rep, rc, "the coverage could not be read");
        else
            reply_error(rep, 500, "internal", "", "out of memory");
        return;
    }
    reply_json(rep, 200, out);
}
