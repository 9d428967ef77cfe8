/*
 * export_api.c - runs out and in, and side by side:
 *   GET /runs.ndjson   every matching run whole, one JSON object a line
 *   GET /runs.csv      one CSV line per result row (a run with no rows:
 *                      one line with its status and error)
 *   GET /runs/ID.csv   the same for one run (runs_get hands it here)
 *   POST /runs/import  NDJSON back in: checked whole first, then stored in
 *                      one transaction; a run already here is skipped, so
 *                      importing twice changes nothing
 *   GET /compare       one benchmark's runs per card (compare.c)
 *
 * The exports stream: pages of runs are read from the store as the
 * answer is sent, so an export of a large database holds one page in
 * memory, not all of it.
 */
#include "compare.h"
#include "dynbuf.h"
#include "handlers.h"
#include "import_check.h"
#include "store.h"
#include "uuid7.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT_PAGE 200
#define EXPORT_BUFFER_CAP (256 * 1024 * 1024)
#define COMPARE_SCAN 5000
#define IMPORT_MAX_ERRORS 20

static const char *const filter_args[] = {"benchmark", "device", "host", "status",
                                          "label", "batch", "limit", "after_seq", NULL};

enum export_format { EXPORT_NDJSON, EXPORT_CSV };

/* The row fields a CSV line carries, in column order. */
static const char *const csv_row_fields[] = {
    "stride", "variant", "pattern", "predicted_degree", "median_ms", "min_ms",
    "max_ms", "spread", "ratio", "gbps", "share_of_ceiling", "verified",
    "bank_conflicts", "wavefronts", NULL};

static void csv_text(struct dynbuf *b, const char *s)
{
    if (s == NULL)
        return;
    if (strpbrk(s, ",\"\r\n") == NULL) {
        dynbuf_add(b, s, strlen(s));
        return;
    }
    dynbuf_add(b, "\"", 1);
    for (; *s; s++) {
        if (*s == '"')
            dynbuf_add(b, "\"", 1);
        dynbuf_add(b, s, 1);
    }
    dynbuf_add(b, "\"", 1);
}

static void csv_value(struct dynbuf *b, const cJSON *v)
{
    if (cJSON_IsString(v))
        csv_text(b, v->valuestring);
    else if (cJSON_IsNumber(v))
        dynbuf_printf(b, "%.17g", v->valuedouble);
    else if (cJSON_IsBool(v))
        dynbuf_add(b, cJSON_IsTrue(v) ? "true" : "false", cJSON_IsTrue(v) ? 4 : 5);
}

static void csv_header(struct dynbuf *b)
{
    dynbuf_printf(b, "run_id,benchmark,status,host,device_index,device_uuid,"
                     "device_name,label,created_at,finished_at,driver,cuda,"
                     "synthetic,error_code,row");
    for (const char *const *f = csv_row_fields; *f; f++)
        dynbuf_printf(b, ",%s", *f);
    dynbuf_printf(b, ",samples\r\n");
}

/* The run's columns of a CSV line, each a path of up to three names into
 * the run object, in the header's order. */
static const char *const csv_run_paths[][3] = {
    {"id"}, {"benchmark"}, {"status"}, {"host"},
    {"device", "index"}, {"device", "uuid"}, {"device", "name"},
    {"label"}, {"created_at"}, {"finished_at"},
    {"meta", "driver", "nvidia_version"}, {"meta", "cuda", "runtime_version"},
    {"meta", "synthetic"}, {"error", "code"},
};

static void csv_run_prefix(struct dynbuf *b, const cJSON *run)
{
    size_t n = sizeof(csv_run_paths) / sizeof(csv_run_paths[0]);

    for (size_t i = 0; i < n; i++) {
        const cJSON *v = run;
        for (int k = 0; k < 3 && csv_run_paths[i][k]; k++)
            v = cJSON_GetObjectItem(v, csv_run_paths[i][k]);
        csv_value(b, v);
        if (i + 1 < n)
            dynbuf_add(b, ",", 1);
    }
}

/* One line per row of run; samples are ';'-joined in the last column. */
static void csv_run(struct dynbuf *b, const cJSON *run)
{
    const cJSON *rows = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "results"), "rows");
    const cJSON *row;
    int i = 0;

    if (!cJSON_IsArray(rows) || cJSON_GetArraySize(rows) == 0) {
        csv_run_prefix(b, run);
        dynbuf_add(b, ",", 1);
        for (const char *const *f = csv_row_fields; *f; f++)
            dynbuf_add(b, ",", 1);
        dynbuf_add(b, "\r\n", 2);
        return;
    }
    cJSON_ArrayForEach(row, rows) {
        const cJSON *s;
        int first = 1;

        csv_run_prefix(b, run);
        dynbuf_printf(b, ",%d", i++);
        for (const char *const *f = csv_row_fields; *f; f++) {
            dynbuf_add(b, ",", 1);
            csv_value(b, cJSON_GetObjectItem(row, *f));
        }
        dynbuf_add(b, ",", 1);
        cJSON_ArrayForEach(s, cJSON_GetObjectItem(row, "samples")) {
            dynbuf_printf(b, "%s%.9g", first ? "" : ";", s->valuedouble);
            first = 0;
        }
        dynbuf_add(b, "\r\n", 2);
    }
}

static void ndjson_run(struct dynbuf *b, const cJSON *run)
{
    char *text = cJSON_PrintUnformatted(run);

    if (text) {
        dynbuf_add(b, text, strlen(text));
        dynbuf_add(b, "\n", 1);
    }
    free(text);
}

/* The state of one streaming export.  Filter strings are copied: the
 * connection's own go away before the stream ends. */
struct export_stream {
    struct store *store;
    enum export_format format;
    char filters[6][256];
    char cursor[40];
    int by_seq;
    long long after_seq;
    long remaining;
    int finished;
    struct dynbuf pending;
    size_t sent;
};

static void export_free(void *cls)
{
    struct export_stream *x = cls;

    dynbuf_free(&x->pending);
    free(x);
}

/* Reads the next page of runs into x->pending.  -1 on a store error. */
static int export_next_page(struct export_stream *x)
{
    struct run_filter f = {
        .benchmark = x->filters[0], .device = x->filters[1], .host = x->filters[2],
        .status = x->filters[3], .label = x->filters[4], .batch = x->filters[5],
        .cursor = x->cursor[0] && !x->by_seq ? x->cursor : NULL,
        .limit = x->remaining < EXPORT_PAGE ? (int)x->remaining : EXPORT_PAGE,
        .full = 1,
        .by_seq = x->by_seq,
        .after_seq = x->after_seq,
    };
    char next[40];
    cJSON *runs = NULL;
    const cJSON *run;

    if (store_list_runs(x->store, &f, &runs, next) != STORE_OK)
        return -1;
    dynbuf_reset(&x->pending);
    x->sent = 0;
    cJSON_ArrayForEach(run, runs) {
        const cJSON *seq = cJSON_GetObjectItem(run, "seq");
        if (x->by_seq && cJSON_IsNumber(seq))
            x->after_seq = (long long)seq->valuedouble;
        if (x->format == EXPORT_CSV)
            csv_run(&x->pending, run);
        else
            ndjson_run(&x->pending, run);
        x->remaining--;
    }
    cJSON_Delete(runs);
    snprintf(x->cursor, sizeof(x->cursor), "%s", next);
    if (next[0] == '\0' || x->remaining <= 0)
        x->finished = 1;
    return 0;
}

static long export_read(void *cls, char *buf, size_t max)
{
    struct export_stream *x = cls;
    size_t n;

    while (x->sent == x->pending.len) {
        if (x->finished)
            return 0;
        if (export_next_page(x) != 0)
            return -1;
    }
    n = x->pending.len - x->sent;
    if (n > max)
        n = max;
    memcpy(buf, x->pending.data + x->sent, n);
    x->sent += n;
    return (long)n;
}

static void export_runs(struct http_request *req, struct http_reply *rep,
                        enum export_format format)
{
    static const char *const names[6] = {"benchmark", "device", "host",
                                         "status", "label", "batch"};
    const char *limit = query_get(req, "limit");
    const char *after = query_get(req, "after_seq");
    struct export_stream *x;

    if (query_check(req, rep, filter_args) != 0)
        return;
    x = calloc(1, sizeof(*x));
    if (x == NULL) {
        reply_error(rep, 500, "internal", "", "out of memory");
        return;
    }
    x->store = req->app->store;
    x->format = format;
    x->remaining = 1L << 40;
    if (limit) {
        char *end;
        long v = strtol(limit, &end, 10);
        if (end == limit || *end != '\0' || v < 1) {
            free(x);
            reply_error(rep, 400, "out_of_bounds", "limit",
                        "limit=%.20s: expected a whole number of runs, 1 or more", limit);
            return;
        }
        x->remaining = v;
    }
    if (after) {
        char *end;
        long long v = strtoll(after, &end, 10);
        if (end == after || *end != '\0' || v < 0) {
            free(x);
            reply_error(rep, 400, "out_of_bounds", "after_seq",
                        "after_seq=%.20s: expected a whole number, 0 or more", after);
            return;
        }
        x->by_seq = 1;
        x->after_seq = v;
    }
    for (int i = 0; i < 6; i++) {
        const char *v = query_get(req, names[i]);
        snprintf(x->filters[i], sizeof(x->filters[i]), "%s", v ? v : "");
    }
    dynbuf_init(&x->pending, EXPORT_BUFFER_CAP);
    if (format == EXPORT_CSV)
        csv_header(&x->pending);
    rep->status = 200;
    rep->content_type = format == EXPORT_CSV ? "text/csv; charset=utf-8"
                                             : "application/x-ndjson";
    rep->stream = export_read;
    rep->stream_cls = x;
    rep->stream_free = export_free;
}

void runs_ndjson(struct http_request *req, struct http_reply *rep)
{
    export_runs(req, rep, EXPORT_NDJSON);
}

void runs_csv(struct http_request *req, struct http_reply *rep)
{
    export_runs(req, rep, EXPORT_CSV);
}

void run_csv(struct http_request *req, struct http_reply *rep, const char *id)
{
    struct dynbuf b;
    cJSON *run = NULL;
    char *body;
    size_t n;
    int rc = store_get_run(req->app->store, id, &run);

    if (rc != STORE_OK) {
        char what[64];
        snprintf(what, sizeof(what), "run %s", id);
        reply_store_error(rep, rc, what);
        return;
    }
    dynbuf_init(&b, EXPORT_BUFFER_CAP);
    csv_header(&b);
    csv_run(&b, run);
    cJSON_Delete(run);
    body = dynbuf_take(&b, &n);
    reply_body(rep, 200, "text/csv; charset=utf-8", body, n);
}

/* Parses and checks every line first; stores nothing unless all pass. */
void runs_import(struct http_request *req, struct http_reply *rep)
{
    static const char *const no_query[] = {NULL};
    cJSON *runs = NULL, *body;
    const char *p, *end;
    char err[256];
    int line = 0, inserted = 0, existing = 0, rc;

    if (query_check(req, rep, no_query) != 0)
        return;
    if (req->body == NULL) {
        reply_error(rep, 400, "malformed_json", "",
                    "send runs as NDJSON, one run a line, as GET /runs.ndjson gives them");
        return;
    }
    runs = cJSON_CreateArray();
    for (p = req->body, end = req->body + req->body_len; p < end; p = p + strcspn(p, "\n") + 1) {
        size_t len = strcspn(p, "\n");
        const char *q = p;
        cJSON *run;

        line++;
        while (q < p + len && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        if (q == p + len)
            continue;  /* a blank line */
        run = cJSON_ParseWithLength(p, len);
        if (run == NULL) {
            reply_error(rep, 400, "malformed_json", "", "line %d is not valid JSON; "
                        "nothing was imported", line);
            goto done;
        }
        if (import_check_run(run, err, sizeof(err)) != 0) {
            cJSON_Delete(run);
            reply_error(rep, 400, "invalid_run", "", "line %d: %s; nothing was imported",
                        line, err);
            goto done;
        }
        cJSON_AddItemToArray(runs, run);
    }
    rc = store_import_runs(req->app->store, runs, "import", &inserted, &existing);
    if (rc != STORE_OK) {
        reply_store_error(rep, rc, "the runs could not be stored; nothing was imported");
        goto done;
    }
    body = cJSON_CreateObject();
    cJSON_AddNumberToObject(body, "imported", inserted);
    cJSON_AddNumberToObject(body, "already_here", existing);
    reply_json(rep, 200, body);

done:
    cJSON_Delete(runs);
}

static cJSON *rows_from_store(void *store, const char *id)
{
    cJSON *rows = NULL;

    store_run_rows(store, id, &rows);
    return rows;
}

void compare_get(struct http_request *req, struct http_reply *rep)
{
    static const char *const args[] = {"benchmark", "device", "host", "label",
                                       "latest", "runs", NULL};
    const char *bench = query_get(req, "benchmark");
    const char *latest_text = query_get(req, "latest");
    const char *ids = query_get(req, "runs");
    struct run_filter f = {.benchmark = bench, .device = query_get(req, "device"),
                           .host = query_get(req, "host"), .label = query_get(req, "label"),
                           .limit = COMPARE_SCAN};
    cJSON *runs = NULL, *out;
    long latest = 10;
    int rc;

    if (query_check(req, rep, args) != 0)
        return;
    if (bench == NULL || bench[0] == '\0') {
        reply_error(rep, 400, "missing_field", "benchmark",
                    "benchmark is required, e.g. /compare?benchmark=smem_stride");
        return;
    }
    if (latest_text) {
        char *end;
        latest = strtol(latest_text, &end, 10);
        if (end == latest_text || *end != '\0' || latest < 1 || latest > 1000) {
            reply_error(rep, 400, "out_of_bounds", "latest",
                        "latest=%.20s: expected a whole number of runs a card, 1 to 1000",
                        latest_text);
            return;
        }
    }
    if (ids && ids[0]) {
        /* Chosen runs: each read on its own, in the order given. */
        char one[40];
        runs = cJSON_CreateArray();
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
            cJSON_AddItemToArray(runs, run);
            if (cJSON_GetArraySize(runs) > 1000)
                break;
        }
        latest = 1000;
    } else if ((rc = store_compare_runs(req->app->store, &f, &runs)) != STORE_OK) {
        reply_store_error(rep, rc, "the runs could not be read");
        return;
    }
    out = compare_build(bench, runs, (int)latest, rows_from_store, req->app->store);
    cJSON_Delete(runs);
    if (out == NULL) {
        reply_error(rep, 500, "internal", "", "out of memory");
        return;
    }
    reply_json(rep, 200, out);
}
