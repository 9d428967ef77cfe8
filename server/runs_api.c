/*
 * runs_api.c - POST /runs, GET /runs, GET /runs/ID, DELETE /runs/ID.
 *
 * A run request is checked whole before anything is stored: the body's
 * fields (unknown ones named), the benchmark, its params against the
 * benchmark table (common/bench_spec.c), the device.  Only then are its
 * runs written, in one transaction, and only after that does the 202 go
 * out; a refused request changes nothing.
 *
 * A suite ("health", common/bench_suite.h) is one run per member on each
 * device named, all under one batch; a benchmark that needs every GPU
 * (all_devices) is made once per request, on the lowest GPU named, and
 * the runners hold the node for it (gpu_hold.h).
 *
 * ?wait=SECONDS suspends the connection (waiters.c) and answers again when
 * the run ends or the time is up.
 */
#include "alerts.h"
#include "bench_spec.h"
#include "dynbuf.h"
#include "gpu_pool.h"
#include "handlers.h"
#include "run_cache.h"
#include "run_filter.h"
#include "run_request.h"
#include "store.h"
#include "timeutil.h"
#include "uuid7.h"
#include "waiters.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BATCH 128
#define MAX_WAIT_S 3600

/* What a waiting request keeps across its suspension. */
struct wait_state {
    struct app *app;
    int n;
    char ids[MAX_BATCH][40];
    char batch[40];
    int64_t deadline_ms;
    int ended_status;      /* the status to answer with once all ended */
    int pending_status;    /* ... and while some have not */
    const char *pending;   /* the id being waited on now */
};

static int run_still_waiting(void *arg)
{
    struct wait_state *ws = arg;
    char status[16];

    if (store_run_status(ws->app->store, ws->pending, status) != STORE_OK)
        return 0;
    return !store_status_final(status);
}

/* The answer for the runs of ws: one run, or a batch of them.  Returns 1
 * when every one of them has ended (its JSON will never change again). */
static int reply_runs(struct http_reply *rep, struct wait_state *ws, int status)
{
    cJSON *body = NULL, *arr = NULL;
    int all_final = 1;

    if (ws->batch[0]) {
        body = cJSON_CreateObject();
        cJSON_AddStringToObject(body, "batch", ws->batch);
        arr = cJSON_AddArrayToObject(body, "runs");
        snprintf(rep->location, sizeof(rep->location), "/runs?batch=%s", ws->batch);
    } else {
        snprintf(rep->location, sizeof(rep->location), "/runs/%s", ws->ids[0]);
    }
    for (int i = 0; i < ws->n; i++) {
        cJSON *run = NULL;
        int rc = store_get_run_raw(ws->app->store, ws->ids[i], &run);
        if (rc != STORE_OK) {
            char what[96];
            cJSON_Delete(body);
            snprintf(what, sizeof(what), "run %s could not be read", ws->ids[i]);
            reply_store_error(rep, rc, what);
            return 0;
        }
        all_final &= store_status_final(cJSON_GetObjectItem(run, "status")->valuestring);
        if (arr)
            cJSON_AddItemToArray(arr, run);
        else
            body = run;
    }
    reply_json(rep, status, body);
    return all_final;
}

/* Answers now if every run has ended or the time is up; otherwise
 * suspends until the next run to watch ends. */
static void answer_or_wait(struct http_request *req, struct http_reply *rep,
                           struct wait_state *ws)
{
    for (;;) {
        char status[16];
        int i, rc;

        for (i = 0; i < ws->n; i++) {
            if (store_run_status(ws->app->store, ws->ids[i], status) != STORE_OK ||
                !store_status_final(status))
                break;
        }
        if (i == ws->n) {
            reply_runs(rep, ws, ws->ended_status);
            return;
        }
        if (time_mono_ms() >= ws->deadline_ms) {
            reply_runs(rep, ws, ws->pending_status);
            return;
        }
        ws->pending = ws->ids[i];
        rc = waiters_wait(ws->app->waiters, ws->pending, req->conn,
                          ws->deadline_ms, run_still_waiting, ws);
        if (rc == 1) {
            rep->suspended = 1;
            return;
        }
        if (rc < 0) {
            reply_runs(rep, ws, ws->pending_status);
            return;
        }
        /* rc == 0: it ended meanwhile; look again. */
    }
}

/* ?wait=SECONDS: 0 when absent; -1 (reply made) when malformed. */
static int parse_wait(struct http_request *req, struct http_reply *rep,
                      double *seconds)
{
    const char *text = query_get(req, "wait");
    char *end;

    *seconds = 0;
    if (text == NULL)
        return 0;
    *seconds = strtod(text, &end);
    if (end == text || *end != '\0' || !isfinite(*seconds) || *seconds < 0 ||
        *seconds > MAX_WAIT_S) {
        reply_error(rep, 400, "out_of_bounds", "wait",
                    "wait=%.40s: expected seconds from 0 to %d", text, MAX_WAIT_S);
        return -1;
    }
    return 0;
}

static int start_wait(struct http_request *req, struct http_reply *rep,
                      struct wait_state *ws, double seconds)
{
    struct wait_state *kept = malloc(sizeof(*kept));

    if (kept == NULL) {
        reply_runs(rep, ws, ws->pending_status);
        return -1;
    }
    *kept = *ws;
    kept->deadline_ms = time_mono_ms() + (int64_t)(seconds * 1000);
    req->state = kept;
    req->free_state = free;
    answer_or_wait(req, rep, kept);
    return 0;
}

/* The device memory check: ask no card for more memory than it has (a
 * tenth kept for the context and the driver).  0, or -1 with the reply
 * made. */
static int check_memory(struct http_reply *rep, const struct run_request *rr,
                        const struct gpu_ref *refs, int n)
{
    for (int p = 0; p < rr->n_parts; p++) {
        double need = gb_params_device_bytes(rr->parts[p].bench, rr->parts[p].params);
        for (int i = 0; i < n; i++) {
            if (refs[i].memory_bytes > 0 && need > 0.9 * refs[i].memory_bytes) {
                reply_error(rep, 400, "out_of_bounds", "params.n",
                            "this %s run needs %.1f GiB of GPU memory; GPU %d (%s) has "
                            "%.1f GiB", rr->parts[p].bench->name, need / 1073741824.0,
                            refs[i].index, refs[i].name, refs[i].memory_bytes / 1073741824.0);
                return -1;
            }
        }
    }
    return 0;
}

/* The GPU of refs with the lowest index: where a run that needs every GPU
 * is queued when the request names them all. */
static int lowest_ref(const struct gpu_ref *refs, int n)
{
    int low = 0;

    for (int i = 1; i < n; i++)
        if (refs[i].index < refs[low].index)
            low = i;
    return low;
}

void runs_post(struct http_request *req, struct http_reply *rep)
{
    static const char *const query[] = {"wait", NULL};
    struct app *app = req->app;
    struct wait_state ws = {.app = app, .ended_status = 200, .pending_status = 202};
    struct gpu_ref refs[MAX_BATCH];
    struct run_new runs[MAX_BATCH];
    struct run_request rr = {0};
    struct gb_error gerr;
    char *params_text[GB_SUITE_MAX_MEMBERS] = {NULL};
    const cJSON *device;
    char err[512];
    double wait_s;
    int n, status, rc, all, low;

    if (req->resumed) {
        answer_or_wait(req, rep, req->state);
        return;
    }
    if (query_check(req, rep, query) != 0 || parse_wait(req, rep, &wait_s) != 0)
        return;
    if (run_request_parse(req->body, req->body_len, app->opt->run_timeout_s,
                          app->opt->test_benchmarks, &rr, &gerr) != 0) {
        reply_error(rep, 400, gerr.code, gerr.field, "%s", gerr.message);
        goto done;
    }
    device = rr.device;
    n = gpu_pool_resolve(app->gpus, device, refs, MAX_BATCH, &status, err, sizeof(err));
    if (n < 0) {
        reply_error(rep, status, status == 503 ? "device_unhealthy" :
                    status == 400 ? "wrong_type" : "no_device", "device", "%s", err);
        if (status == 503)
            rep->retry_after = 30;
        goto done;
    }
    if (check_memory(rep, &rr, refs, n) != 0)
        goto done;
    all = cJSON_IsString(device) && strcmp(device->valuestring, "all") == 0;
    /* A suite, like "all", is one batch: GET /runs?batch=ID lists it. */
    if ((all || rr.suite != NULL) && uuid7_new(ws.batch) != 0) {
        reply_error(rep, 500, "internal", "", "no random bytes for a batch id");
        goto done;
    }
    for (int p = 0; p < rr.n_parts; p++) {
        params_text[p] = cJSON_PrintUnformatted(rr.parts[p].params);
        if (params_text[p] == NULL) {
            reply_error(rep, 500, "internal", "", "out of memory");
            goto done;
        }
    }
    /* Device by device, each device's runs in the suite's order, so that
     * they are queued back to back; a run that needs every GPU
     * (all_devices) is made once, on the lowest GPU, when all are named. */
    low = lowest_ref(refs, n);
    ws.n = 0;
    for (int i = 0; i < n; i++) {
        for (int p = 0; p < rr.n_parts; p++) {
            struct run_new *r = &runs[ws.n];
            if (all && rr.parts[p].bench->all_devices && i != low)
                continue;
            if (ws.n >= MAX_BATCH) {
                reply_error(rep, 400, "out_of_bounds", "device",
                            "this request makes more than %d runs; name fewer devices",
                            MAX_BATCH);
                goto done;
            }
            memset(r, 0, sizeof(*r));
            if (uuid7_new(r->id) != 0) {
                reply_error(rep, 500, "internal", "", "no random bytes for a run id");
                goto done;
            }
            r->benchmark = rr.parts[p].bench->name;
            r->params_json = params_text[p];
            r->label = rr.label;
            r->batch_id = ws.batch[0] ? ws.batch : NULL;
            r->host = app->host;
            r->device_index = refs[i].index;
            r->device_uuid = refs[i].uuid;
            r->device_name = refs[i].name;
            r->timeout_s = rr.timeout_s;
            snprintf(ws.ids[ws.n], sizeof(ws.ids[ws.n]), "%.36s", r->id);
            ws.n++;
        }
    }
    rc = store_insert_runs(app->store, runs, ws.n, app->opt->max_queue);
    if (rc == STORE_FULL) {
        rep->retry_after = 10;
        reply_error(rep, 503, "queue_full", "",
                    "the queue holds its maximum of %d runs; try again later",
                    app->opt->max_queue);
        goto done;
    }
    if (rc != STORE_OK) {
        reply_store_error(rep, rc, "the run could not be stored");
        goto done;
    }
    /* The answer is read back before the runners are woken, so that it
     * shows the run as accepted: queued, with its place in the queue. */
    if (wait_s <= 0)
        reply_runs(rep, &ws, 202);
    for (int i = 0; i < n; i++)
        gpu_pool_wake(app->gpus, refs[i].index);
    if (wait_s > 0)
        start_wait(req, rep, &ws, wait_s);

done:
    for (int p = 0; p < GB_SUITE_MAX_MEMBERS; p++)
        free(params_text[p]);
    run_request_free(&rr);
}

/* Appends "name=value&" with value percent-encoded. */
static void add_query(struct dynbuf *b, const char *name, const char *value)
{
    static const char hex[] = "0123456789ABCDEF";

    if (value == NULL || value[0] == '\0')
        return;
    dynbuf_printf(b, "%s=", name);
    for (const unsigned char *c = (const unsigned char *)value; *c; c++) {
        if ((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
            (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.' || *c == '~')
            dynbuf_add(b, c, 1);
        else
            dynbuf_printf(b, "%%%c%c", hex[*c >> 4], hex[*c & 15]);
    }
    dynbuf_add(b, "&", 1);
}

void runs_list(struct http_request *req, struct http_reply *rep)
{
    static const char *const query[] = {RUN_FILTER_ARGS, "limit", "cursor", NULL};
    struct run_filter f = {
        .cursor = query_get(req, "cursor"),
        .limit = 50,
        .cache = req->app->run_cache,
    };
    const char *limit = query_get(req, "limit");
    char next[40];
    cJSON *runs = NULL, *body;
    struct dynbuf url;
    int rc;

    if (query_check(req, rep, query) != 0 || run_filter_from_query(req, rep, &f) != 0)
        return;
    if (limit) {
        char *end;
        long v = strtol(limit, &end, 10);
        if (end == limit || *end != '\0' || v < 1 || v > 500) {
            reply_error(rep, 400, "out_of_bounds", "limit",
                        "limit=%.20s: expected a whole number from 1 to 500", limit);
            return;
        }
        f.limit = (int)v;
    }
    if (f.cursor && f.cursor[0] && !uuid_is_valid(f.cursor)) {
        reply_error(rep, 400, "bad_cursor", "cursor",
                    "cursor is not one this daemon gave out; use the \"next\" "
                    "URL of the previous page");
        return;
    }
    rc = store_list_runs(req->app->store, &f, &runs, next);
    if (rc != STORE_OK) {
        reply_store_error(rep, rc, "the runs could not be read");
        return;
    }
    body = cJSON_CreateObject();
    cJSON_AddItemToObject(body, "runs", runs);
    if (next[0]) {
        /* Room for every filter at its longest, each byte %-encoded. */
        dynbuf_init(&url, 8 * 3 * RUN_FILTER_VALUE_MAX + 256);
        dynbuf_add(&url, "/runs?", 6);
        add_query(&url, "benchmark", f.benchmark);
        add_query(&url, "device", query_get(req, "device"));
        add_query(&url, "host", f.host);
        add_query(&url, "status", f.status);
        add_query(&url, "label", f.label);
        add_query(&url, "batch", f.batch);
        add_query(&url, "valid", query_get(req, "valid"));
        if (limit)
            add_query(&url, "limit", limit);
        add_query(&url, "cursor", next);
        if (url.len && url.data[url.len - 1] == '&')
            url.data[--url.len] = '\0';
        if (dynbuf_failed(&url)) {
            dynbuf_free(&url);
            cJSON_Delete(body);
            reply_error(rep, 500, "internal", "", "the next page's URL could not be made");
            return;
        }
        cJSON_AddStringToObject(body, "next", url.data ? url.data : "");
        dynbuf_free(&url);
    } else {
        cJSON_AddNullToObject(body, "next");
    }
    reply_json(rep, 200, body);
}

void runs_get(struct http_request *req, struct http_reply *rep)
{
    static const char *const query[] = {"wait", NULL};
    struct wait_state ws = {.app = req->app, .n = 1, .ended_status = 200,
                            .pending_status = 200};
    double wait_s;

    if (req->resumed) {
        answer_or_wait(req, rep, req->state);
        return;
    }
    if (strlen(req->arg) == UUID7_STRLEN + 4 &&
        strcmp(req->arg + UUID7_STRLEN, ".csv") == 0) {
        static const char *const none[] = {NULL};
        char id[UUID7_STRLEN + 1];
        snprintf(id, sizeof(id), "%.36s", req->arg);
        if (query_check(req, rep, none) == 0)
            run_csv(req, rep, id);
        return;
    }
    if (query_check(req, rep, query) != 0 || parse_wait(req, rep, &wait_s) != 0)
        return;
    if (!uuid_is_valid(req->arg)) {
        reply_error(rep, 404, "not_found", "", "no run %.60s (run ids are UUIDs)", req->arg);
        return;
    }
    snprintf(ws.ids[0], sizeof(ws.ids[0]), "%.36s", req->arg);
    if (wait_s > 0) {
        start_wait(req, rep, &ws, wait_s);
    } else {
        /* A run that has ended is answered from the cache of finished
         * runs, and put there the first time. */
        size_t len;
        char *cached = run_cache_get(req->app->run_cache, ws.ids[0], &len);
        if (cached) {
            reply_body(rep, 200, "application/json", cached, len);
            return;
        }
        if (reply_runs(rep, &ws, 200) && rep->status == 200)
            run_cache_put(req->app->run_cache, ws.ids[0], rep->body, rep->len);
    }
    rep->location[0] = '\0';
}

void runs_delete(struct http_request *req, struct http_reply *rep)
{
    static const char *const query[] = {NULL};
    struct wait_state ws = {.app = req->app, .n = 1};
    char status[16];
    int rc;

    if (query_check(req, rep, query) != 0)
        return;
    if (!uuid_is_valid(req->arg)) {
        reply_error(rep, 404, "not_found", "", "no run %.60s", req->arg);
        return;
    }
    rc = store_cancel_run(req->app->store, req->arg, status);
    if (rc == STORE_NOT_FOUND) {
        reply_error(rep, 404, "not_found", "", "no run %s", req->arg);
        return;
    }
    if (rc == STORE_CONFLICT) {
        reply_error(rep, 409, "not_queued", "",
                    "run %s is %s; only a queued run can be cancelled",
                    req->arg, status);
        return;
    }
    if (rc != STORE_OK) {
        reply_store_error(rep, rc, "the run could not be cancelled");
        return;
    }
    alerts_on_unjudged(req->app, req->arg, "was cancelled");
    waiters_notify(req->app->waiters, req->arg);
    snprintf(ws.ids[0], sizeof(ws.ids[0]), "%.36s", req->arg);
    reply_runs(rep, &ws, 200);
    rep->location[0] = '\0';
}
