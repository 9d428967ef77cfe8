/*
 * api_runs.c - POST /runs, GET /runs, GET /runs/ID, DELETE /runs/ID.
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
 * the run ends or the time is up; at shutdown, at once with 202 and the
 * runs as they stand (a running run's waiter once the pool has ended it
 * or put it back, within --shutdown-grace: runs_close_waits).
 *
 * The handlers parse and print: accepting, cancelling, waiting and the
 * cache of finished runs are the runs layer's (runs.c), whose failures
 * (enum runs_rc) are turned into HTTP answers here, in one table.  The
 * API's URLs are made here too (Location, the next page; a run's own is
 * runs_url's).
 */
#include "counted.h"
#include "dynbuf.h"
#include "handlers.h"
#include "json_build.h"
#include "run_filter.h"
#include "run_request.h"
#include "runs.h"
#include "store.h"
#include "store_runs.h"
#include "timeutil.h"
#include "uuid7.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WAIT_S 3600
#define MAX_WAIT_TEXT "seconds from 0 to 3600" /* MAX_WAIT_S's, for a 400 */

/* What a waiting request keeps across its suspension. */
struct wait_state {
    struct app *app;
    struct run_set set;
    int64_t deadline_ms;
    int ended_status;   /* the status to answer with once all ended */
    int pending_status; /* ... and while some have not */
};

/* The runs layer's failure (runs.h) as an HTTP answer. */
static void reply_runs_error(struct http_reply *rep, const struct runs_error *err)
{
    static const struct {
        int status;
        const char *code;
        int retry_after;
    } map[] = {
        [RUNS_BAD_DEVICE] = {400, "wrong_type", 0},
        [RUNS_NO_DEVICE] = {409, "no_device", 0},
        [RUNS_DEVICE_UNHEALTHY] = {503, "device_unhealthy", 30},
        [RUNS_TOO_LARGE] = {400, "out_of_bounds", 0},
        [RUNS_TOO_FEW_GPUS] = {409, "too_few_gpus", 0},
        [RUNS_QUEUE_FULL] = {503, "queue_full", 10},
        [RUNS_NOT_FOUND] = {404, "not_found", 0},
        [RUNS_NOT_QUEUED] = {409, "not_queued", 0},
        [RUNS_INTERNAL] = {500, "internal", 0},
    };

    if (err->rc == RUNS_STORE) {
        reply_store_error(rep, err->store_rc, err->message);
        return;
    }
    if (err->rc <= RUNS_OK || err->rc >= (int)(sizeof(map) / sizeof(map[0])) ||
        map[err->rc].code == NULL) {
        reply_error(rep, 500, "internal", "", "%s", err->message);
        return;
    }
    rep->retry_after = map[err->rc].retry_after;
    reply_error(rep, map[err->rc].status, map[err->rc].code, err->field, "%s", err->message);
}

/* A suite's "left_out": [{benchmark, reason}], when it left any out. */
static void add_left_out(struct json_build *jb, cJSON *body, const struct run_set *set)
{
    cJSON *list = set->n_left_out ? jb_array(jb, body, "left_out") : NULL;

    for (int i = 0; list && i < set->n_left_out && !jb_failed(jb); i++) {
        cJSON *o = jb_new_object(jb);

        jb_push(jb, list, o); /* list's now, or deleted */
        jb_string(jb, o, "benchmark", set->left_out[i].benchmark);
        jb_string(jb, o, "reason", set->left_out[i].reason);
    }
}

/* Answers with runs (runs_read's array, taken): one run, or a batch. */
static void reply_set(struct http_reply *rep, const struct run_set *set, cJSON *runs,
                      int status)
{
    struct json_build jb = {0};
    cJSON *body;

    if (set->batch[0]) {
        body = jb_new_object(&jb);
        jb_string(&jb, body, "batch", set->batch);
        jb_item(&jb, body, "runs", runs); /* body's now, or deleted */
        add_left_out(&jb, body, set);
        if (jb_failed(&jb)) { /* reply_json answers 500, out of memory */
            cJSON_Delete(body);
            body = NULL;
        }
        snprintf(rep->location, sizeof(rep->location), "/runs?batch=%s", set->batch);
    } else {
        body = cJSON_DetachItemFromArray(runs, 0);
        cJSON_Delete(runs);
        runs_url(set->ids[0], rep->location, sizeof(rep->location));
    }
    reply_json(rep, status, body);
}

/* Reads and answers the runs of ws; returns 1 when every one of them has
 * ended (its JSON will never change again). */
static int reply_runs(struct http_reply *rep, struct wait_state *ws, int status)
{
    struct runs_error err;
    cJSON *runs = NULL;
    int all_final = 0;

    if (runs_read(ws->app->runs, &ws->set, &runs, &all_final, &err) != RUNS_OK) {
        reply_runs_error(rep, &err);
        return 0;
    }
    reply_set(rep, &ws->set, runs, status);
    return all_final;
}

/* Answers now if every run has ended, the time is up or the daemon is
 * stopping; otherwise suspends until the next run to watch ends.  Each
 * look moves on to a later run or answers: a run that reads as not ended
 * but cannot be waited for (it cannot be read) is answered as it stands,
 * never looked at again and again. */
static void answer_or_wait(struct http_request *req, struct http_reply *rep,
                           struct wait_state *ws)
{
    int ended = -1; /* the run the last look saw end */

    for (;;) {
        int i = runs_first_unfinished(ws->app->runs, &ws->set);

        if (i == ws->set.n) {
            reply_runs(rep, ws, ws->ended_status);
            return;
        }
        if (i == ended || time_mono_ms() >= ws->deadline_ms) {
            reply_runs(rep, ws, ws->pending_status);
            return;
        }
        switch (runs_wait(ws->app->runs, ws->set.ids[i], req->conn, ws->deadline_ms)) {
        case WAITERS_PARKED:
            rep->suspended = 1;
            return;
        case WAITERS_ENDED: /* it ended meanwhile; look again */
            ended = i;
            break;
        case WAITERS_CLOSING:
            /* The daemon is stopping: the runs as they stand, not ended
             * (a run put back in the queue at shutdown reads queued). */
            reply_runs(rep, ws, 202);
            return;
        case WAITERS_FAILED:
            reply_runs(rep, ws, ws->pending_status);
            return;
        }
    }
}

/* ?wait=SECONDS: 0 when absent; -1 (reply made) when malformed. */
static int parse_wait(struct http_request *req, struct http_reply *rep, double *seconds)
{
    *seconds = 0;
    return query_double(req, rep, "wait", 0, MAX_WAIT_S, MAX_WAIT_TEXT, seconds);
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

void api_runs_post(struct http_request *req, struct http_reply *rep)
{
    static const char *const query[] = {"wait", NULL};
    struct app *app = req->app;
    struct wait_state ws = {.app = app, .ended_status = 200, .pending_status = 202};
    struct run_request rr = {0};
    struct runs_error err;
    struct gb_error gerr;
    cJSON *accepted = NULL;
    double wait_s;

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
    /* Without a wait the answer is the runs as accepted (read before the
     * runners are woken); with one, as they stand when it ends. */
    if (runs_accept(app->runs, &rr, &ws.set, wait_s > 0 ? NULL : &accepted, &err) != RUNS_OK) {
        reply_runs_error(rep, &err);
        goto done;
    }
    if (wait_s > 0)
        start_wait(req, rep, &ws, wait_s);
    else
        reply_set(rep, &ws.set, accepted, 202);

done:
    run_request_free(&rr);
}

/* Appends "name=value&" with value percent-encoded (libcurl's escape:
 * all but letters, digits and -._~).  A value that cannot be encoded
 * fails the buffer, so the caller answers 500 rather than a wrong link. */
static void add_query(struct dynbuf *b, const char *name, const char *value)
{
    char *escaped;

    if (value == NULL || value[0] == '\0')
        return;
    escaped = curl_easy_escape(NULL, value, 0);
    if (escaped == NULL) {
        b->failed = 1;
        return;
    }
    (void)!dynbuf_printf(b, "%s=%s&", name, escaped);
    curl_free(escaped);
}

/* The most a list page's text may take: 500 runs' entries, each a run
 * with its summary, many times over. */
#define LIST_PAGE_CAP (32 * 1024 * 1024)

/* The next page's URL: this page's filters and limit, and cursor next,
 * percent-encoded, as a JSON string appended to body. */
static void add_next_url(struct dynbuf *body, struct http_request *req,
                         const struct run_filter *f, const char *next)
{
    const char *limit = query_get(req, "limit");
    struct dynbuf url;
    char *quoted = NULL;
    cJSON *s = NULL;

    /* Room for every filter at its longest, each byte %-encoded. */
    dynbuf_init(&url, 8 * 3 * RUN_FILTER_VALUE_MAX + 256);
    (void)!dynbuf_add(&url, "/runs?", 6);
    add_query(&url, "benchmark", f->benchmark);
    add_query(&url, "device", query_get(req, "device"));
    add_query(&url, "host", f->host);
    add_query(&url, "status", f->status);
    add_query(&url, "label", f->label);
    add_query(&url, "batch", f->batch);
    add_query(&url, "valid", query_get(req, "valid"));
    if (limit)
        add_query(&url, "limit", limit);
    add_query(&url, "cursor", next);
    if (url.len && url.data[url.len - 1] == '&')
        url.data[--url.len] = '\0';
    if (!dynbuf_failed(&url) && (s = cJSON_CreateString(url.data ? url.data : "")) != NULL &&
        (quoted = cJSON_PrintUnformatted(s)) != NULL)
        (void)!dynbuf_add(body, quoted, strlen(quoted));
    else
        body->failed = 1;
    free(quoted);
    cJSON_Delete(s);
    dynbuf_free(&url);
}

/* GET /runs: the page is text from the start (runs_page: finished runs'
 * entries as kept, printed once), never a tree of every run; its weak
 * ETag is the store's state and the query, so a page that has not changed
 * is answered 304 without a read, and, to another client, with the page
 * kept under that ETag (runs_page_kept). */
void api_runs_list(struct http_request *req, struct http_reply *rep)
{
    static const char *const query[] = {RUN_FILTER_ARGS, "limit", "cursor", NULL};
    struct run_filter f = {
        .cursor = query_get(req, "cursor"),
        .limit = 50,
    };
    char next[40], state[STORE_STATE_TAG];
    struct dynbuf body;
    struct runs_error err;
    size_t len;
    const char *kept;
    char *text;
    void *hold;

    if (query_check(req, rep, query) != 0 || run_filter_from_query(req, rep, &f) != 0)
        return;
    if (query_int(req, rep, "limit", 1, 500, "a whole number from 1 to 500", &f.limit) != 0)
        return;
    if (f.cursor && f.cursor[0] && !uuid_is_valid(f.cursor)) {
        reply_error(rep, 400, "bad_cursor", "cursor",
                    "cursor is not one this daemon gave out; use the \"next\" "
                    "URL of the previous page");
        return;
    }
    store_state_tag(req->app->store, state);
    if (reply_state_etag(req, rep, state))
        return;
    /* Unchanged since a page was made: that page, as made, not copied. */
    if ((kept = runs_page_kept(req->app->runs, rep->etag, &len, &hold)) != NULL) {
        reply_held(rep, 200, "application/json", kept, len, counted_release, hold);
        return;
    }
    dynbuf_init(&body, LIST_PAGE_CAP);
    (void)!dynbuf_add(&body, "{\"runs\":", 8);
    if (runs_page(req->app->runs, &f, &body, next, &err) != RUNS_OK) {
        dynbuf_free(&body);
        reply_runs_error(rep, &err);
        return;
    }
    (void)!dynbuf_add(&body, ",\"next\":", 8);
    if (next[0])
        add_next_url(&body, req, &f, next);
    else
        (void)!dynbuf_add(&body, "null", 4);
    (void)!dynbuf_add(&body, "}\n", 2);
    text = dynbuf_failed(&body) ? NULL : dynbuf_take(&body, &len);
    dynbuf_free(&body);
    if (text == NULL) {
        reply_error(rep, 500, "internal", "", "the page could not be made (out of memory)");
        return;
    }
    runs_page_keep(req->app->runs, rep->etag, text, len);
    reply_body(rep, 200, "application/json", text, len);
}

/* GET /runs/ID?wait=S: parks the request until the run ends or S passes. */
static void run_wait(struct http_request *req, struct http_reply *rep, double wait_s)
{
    struct wait_state ws = {
        .app = req->app,
        .set = {.n = 1},
        .ended_status = 200,
        .pending_status = 200,
    };

    snprintf(ws.set.ids[0], sizeof(ws.set.ids[0]), "%.36s", req->arg);
    start_wait(req, rep, &ws, wait_s);
    rep->location[0] = '\0';
}

/* The strong ETag of a run's text: its hash, quoted, in 16 hex digits. */
static void run_etag(char out[19], uint64_t tag)
{
    static const char hex[] = "0123456789abcdef";

    out[0] = '"';
    for (int i = 0; i < 16; i++)
        out[1 + i] = hex[(tag >> (60 - 4 * i)) & 0xf];
    out[17] = '"';
    out[18] = '\0';
}

/* GET /runs/ID: an ended run's text is sent from the run cache as kept,
 * without a copy (reply_held), with the ETag kept beside it: the path
 * costs a lookup, no tree, no print (bench/http/run.sh). */
void api_runs_get(struct http_request *req, struct http_reply *rep)
{
    static const char *const query[] = {"wait", NULL};
    struct runs_error err;
    double wait_s;
    const char *text;
    char etag[19];
    uint64_t tag;
    size_t len;
    void *hold;

    if (req->resumed) {
        answer_or_wait(req, rep, req->state);
        return;
    }
    if (query_check(req, rep, query) != 0 || parse_wait(req, rep, &wait_s) != 0)
        return;
    if (!uuid_is_valid(req->arg)) {
        reply_error(rep, 404, "not_found", "", "no run %.60s (run ids are UUIDs)", req->arg);
        return;
    }
    if (wait_s > 0) {
        run_wait(req, rep, wait_s);
        return;
    }
    if (runs_get_text(req->app->runs, req->arg, &text, &len, &tag, &hold, &err) != RUNS_OK) {
        reply_runs_error(rep, &err);
        return;
    }
    if (hold)
        reply_held(rep, 200, "application/json", text, len, counted_release, hold);
    else
        reply_body(rep, 200, "application/json", (char *)text, len);
    /* A strong ETag, the hash of the bytes: it changes whenever the run's
     * answer does (a status, a verdict, a damaged column). */
    run_etag(etag, tag);
    reply_etag(req, rep, etag);
}

void api_runs_delete(struct http_request *req, struct http_reply *rep)
{
    static const char *const query[] = {NULL};
    struct wait_state ws = {.app = req->app, .set = {.n = 1}};
    struct runs_error err;
    char status[16];

    if (query_check(req, rep, query) != 0)
        return;
    if (!uuid_is_valid(req->arg)) {
        reply_error(rep, 404, "not_found", "", "no run %.60s", req->arg);
        return;
    }
    if (runs_cancel(req->app->runs, req->arg, status, &err) != RUNS_OK) {
        reply_runs_error(rep, &err);
        return;
    }
    snprintf(ws.set.ids[0], sizeof(ws.set.ids[0]), "%.36s", req->arg);
    reply_runs(rep, &ws, 200);
    rep->location[0] = '\0';
}
