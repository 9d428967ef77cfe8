/*
 * api_exports.c - runs out (POST /runs/import, api_import.c, takes the
 * NDJSON back in):
 *   GET /runs.ndjson   every matching run whole, one JSON object a line
 *   GET /runs.csv      one CSV line per result row (a run with no rows:
 *                      one line with its status and error)
 *   GET /runs/ID.csv   the same for one run
 *
 * The exports stream: pages of runs are read from the store as the
 * answer is sent, so an export of a large database holds one page in
 * memory, not all of it.  A page is bounded by count and by bytes
 * (PEER_PAGE_BYTES of results).  With after_seq (what a peer pulls, see
 * peers.h) the answer itself is one such page: it ends after the run that
 * takes it past PEER_PAGE_BYTES, and the client asks again after the last
 * seq it got.
 *
 * A run the store serves marked damaged (some of its stored JSON no longer
 * parses, store_row.c) is exported as it is served: its NDJSON line has
 * "damaged": true and "damaged_columns", its CSV lines name them in the
 * last column, damaged; the export goes on past it.
 *
 * An export's weak ETag is the store's state and its query (reply_state_etag):
 * If-None-Match with it answers 304 while nothing was written since.
 *
 * An export never ends short and clean: a run that cannot be printed
 * within the buffer's cap, or a store error, ends the stream with a last
 * line that says why and then without the chunked body's end, so that the
 * client (curl: "transfer closed with outstanding read data") sees an
 * error rather than a whole-looking file.
 */
#include "dynbuf.h"
#include "handlers.h"
#include "json_build.h"
#include "log.h"
#include "peers.h"
#include "result_fields.h"
#include "run_filter.h"
#include "runs.h"
#include "store_runs.h"
#include "uuid7.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT_PAGE 200
/* The most one page of an export may take once printed: a page is cut
 * after PEER_PAGE_BYTES of results, and a run's CSV repeats its columns on
 * every result row, so this leaves room for that page and its largest run
 * several times over.  A page that does not fit ends the export with an
 * error. */
#define EXPORT_BUFFER_CAP (64 * 1024 * 1024)

#define SEQ_PAGE_DEFAULT 200 /* runs in an after_seq page without limit */

static const char *const filter_args[] = {RUN_FILTER_ARGS, "limit", "after_seq", NULL};

enum export_format {
    EXPORT_NDJSON,
    EXPORT_CSV,
};

static void csv_text(struct dynbuf *b, const char *s)
{
    if (s == NULL)
        return;
    if (strpbrk(s, ",\"\r\n") == NULL) {
        (void)!dynbuf_add(b, s, strlen(s));
        return;
    }
    (void)!dynbuf_add(b, "\"", 1);
    for (; *s; s++) {
        if (*s == '"')
            (void)!dynbuf_add(b, "\"", 1);
        (void)!dynbuf_add(b, s, 1);
    }
    (void)!dynbuf_add(b, "\"", 1);
}

static void csv_value(struct dynbuf *b, const cJSON *v)
{
    if (cJSON_IsString(v))
        csv_text(b, v->valuestring);
    else if (cJSON_IsNumber(v))
        (void)!dynbuf_printf(b, "%.17g", v->valuedouble);
    else if (cJSON_IsBool(v))
        (void)!dynbuf_add(b, cJSON_IsTrue(v) ? "true" : "false", cJSON_IsTrue(v) ? 4 : 5);
}

/* checks_failed: how many of a health run's checks missed their floor;
 * empty where none was judged (no checks, or a card model without floors). */
static void csv_checks_failed(struct dynbuf *b, const cJSON *run)
{
    const cJSON *c;
    int judged = 0, failed = 0;

    cJSON_ArrayForEach(c, cJSON_GetObjectItem(run, "checks")) {
        const cJSON *pass = cJSON_GetObjectItem(c, "pass");
        judged += cJSON_IsBool(pass);
        failed += cJSON_IsFalse(pass);
    }
    if (judged)
        (void)!dynbuf_printf(b, "%d", failed);
}

/* damaged: the run's damaged columns, ';'-joined; empty for a whole run. */
static void csv_damaged(struct dynbuf *b, const cJSON *run)
{
    const cJSON *c;
    int first = 1;

    cJSON_ArrayForEach(c, cJSON_GetObjectItem(run, "damaged_columns")) {
        if (!first)
            (void)!dynbuf_add(b, ";", 1);
        csv_text(b, cJSON_GetStringValue(c));
        first = 0;
    }
}

/* The run's columns of a CSV line: the column's name and a path of up to
 * three names into the run object, or the function that prints a value
 * made from the run (no path).  After them come validity_reasons and
 * row (csv_header), then the row's fields under their CSV names
 * (common/result_fields.c: the row's label is row_label, so that every
 * column's name is unique and this label stays the run's, as in GET /runs),
 * then the run's columns marked after_rows: new columns go at the end, so
 * that a reader of the older header finds its columns where they were. */
static const struct {
    const char *column;
    const char *path[3];
    int after_rows;
    void (*print)(struct dynbuf *b, const cJSON *run);
} csv_run_columns[] = {
    {"run_id", {"id"}, 0, NULL},
    {"benchmark", {"benchmark"}, 0, NULL},
    {"status", {"status"}, 0, NULL},
    {"host", {"host"}, 0, NULL},
    {"device_index", {"device", "index"}, 0, NULL},
    {"device_uuid", {"device", "uuid"}, 0, NULL},
    {"device_name", {"device", "name"}, 0, NULL},
    {"label", {"label"}, 0, NULL},
    {"created_at", {"created_at"}, 0, NULL},
    {"finished_at", {"finished_at"}, 0, NULL},
    {"driver", {"meta", "driver", "nvidia_version"}, 0, NULL},
    {"cuda", {"meta", "cuda", "runtime_version"}, 0, NULL},
    {"synthetic", {"meta", "synthetic"}, 0, NULL},
    {"error_code", {"error", "code"}, 0, NULL},
    {"valid", {"validity", "valid"}, 0, NULL},
    {"method", {"method"}, 1, NULL},
    {"checks_failed", {NULL}, 1, csv_checks_failed},
    {"damaged", {NULL}, 1, csv_damaged},
};

#define CSV_RUN_COLUMNS (sizeof(csv_run_columns) / sizeof(csv_run_columns[0]))

/* Whether f is a CSV column of the row's fields (late 0) or of those
 * after the run's trailing columns (late 1: GB_USE_CSV_LATE). */
static int csv_field(const struct gb_result_field *f, int late)
{
    return (f->uses & GB_USE_CSV) && !(f->uses & GB_USE_CSV_LATE) == !late;
}

/* 0, or -1 when b refused it. */
static int csv_header(struct dynbuf *b)
{
    for (size_t i = 0; i < CSV_RUN_COLUMNS; i++)
        if (!csv_run_columns[i].after_rows)
            (void)!dynbuf_printf(b, "%s,", csv_run_columns[i].column);
    (void)!dynbuf_printf(b, "validity_reasons,row");
    for (int late = 0; late < 2; late++) {
        for (size_t i = 0; i < gb_result_field_count(); i++)
            if (csv_field(gb_result_field_at(i), late))
                (void)!dynbuf_printf(b, ",%s", gb_result_field_csv_name(gb_result_field_at(i)));
        for (size_t i = 0; i < CSV_RUN_COLUMNS && !late; i++)
            if (csv_run_columns[i].after_rows)
                (void)!dynbuf_printf(b, ",%s", csv_run_columns[i].column);
    }
    (void)!dynbuf_add(b, "\r\n", 2);
    return dynbuf_failed(b) ? -1 : 0;
}

/* The verdict's reason codes, ';'-joined (validity_reasons). */
static void csv_reason_codes(struct dynbuf *b, const cJSON *run)
{
    const cJSON *reasons = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "validity"), "reasons");
    const cJSON *r;
    int first = 1;

    cJSON_ArrayForEach(r, reasons) {
        const char *code = cJSON_GetStringValue(cJSON_GetObjectItem(r, "code"));
        if (code == NULL)
            continue;
        if (!first)
            (void)!dynbuf_add(b, ";", 1);
        csv_text(b, code);
        first = 0;
    }
}

/* The run's value of column i. */
static void csv_run_value(struct dynbuf *b, const cJSON *run, size_t i)
{
    const cJSON *v = run;

    if (csv_run_columns[i].print) {
        csv_run_columns[i].print(b, run);
        return;
    }
    for (int k = 0; k < 3 && csv_run_columns[i].path[k]; k++)
        v = cJSON_GetObjectItem(v, csv_run_columns[i].path[k]);
    csv_value(b, v);
}

static void csv_run_prefix(struct dynbuf *b, const cJSON *run)
{
    for (size_t i = 0; i < CSV_RUN_COLUMNS; i++) {
        if (csv_run_columns[i].after_rows)
            continue;
        csv_run_value(b, run, i);
        (void)!dynbuf_add(b, ",", 1);
    }
    csv_reason_codes(b, run);
}

/* The run's columns after the row's fields, each after a comma. */
static void csv_run_suffix(struct dynbuf *b, const cJSON *run)
{
    for (size_t i = 0; i < CSV_RUN_COLUMNS; i++) {
        if (!csv_run_columns[i].after_rows)
            continue;
        (void)!dynbuf_add(b, ",", 1);
        csv_run_value(b, run, i);
    }
}

/* The row's CSV fields (common/result_fields.c) of late (csv_field),
 * each after a comma; a list of samples is ';'-joined.  row NULL: every
 * one empty. */
static void csv_row_fields(struct dynbuf *b, const cJSON *row, int late)
{
    for (size_t i = 0; i < gb_result_field_count(); i++) {
        const struct gb_result_field *f = gb_result_field_at(i);
        const cJSON *v = cJSON_GetObjectItem(row, f->name);
        const cJSON *s;
        int first = 1;

        if (!csv_field(f, late))
            continue;
        (void)!dynbuf_add(b, ",", 1);
        if (f->type != GB_FIELD_SAMPLES) {
            csv_value(b, v);
            continue;
        }
        cJSON_ArrayForEach(s, v) {
            (void)!dynbuf_printf(b, "%s%.9g", first ? "" : ";", s->valuedouble);
            first = 0;
        }
    }
}

/* One line per row of run.  0, or -1 when b refused some of it. */
static int csv_run(struct dynbuf *b, const cJSON *run)
{
    const cJSON *rows = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "results"), "rows");
    const cJSON *row;
    int i = 0;

    if (!cJSON_IsArray(rows) || cJSON_GetArraySize(rows) == 0) {
        csv_run_prefix(b, run);
        (void)!dynbuf_add(b, ",", 1);
        csv_row_fields(b, NULL, 0);
        csv_run_suffix(b, run);
        csv_row_fields(b, NULL, 1);
        (void)!dynbuf_add(b, "\r\n", 2);
        return dynbuf_failed(b) ? -1 : 0;
    }
    cJSON_ArrayForEach(row, rows) {
        csv_run_prefix(b, run);
        (void)!dynbuf_printf(b, ",%d", i++);
        csv_row_fields(b, row, 0);
        csv_run_suffix(b, run);
        csv_row_fields(b, row, 1);
        (void)!dynbuf_add(b, "\r\n", 2);
    }
    return dynbuf_failed(b) ? -1 : 0;
}

/* The run as one line.  0, or -1 when it could not be printed whole. */
static int ndjson_run(struct dynbuf *b, const cJSON *run)
{
    char *text = cJSON_PrintUnformatted(run);
    int rc = -1;

    if (text && dynbuf_add(b, text, strlen(text)) == 0 && dynbuf_add(b, "\n", 1) == 0)
        rc = 0;

    free(text);
    return rc;
}

/* The state of one streaming export.  Filter strings are copied: the
 * connection's own go away before the stream ends. */
struct export_stream {
    struct store *store;
    enum export_format format;
    char filters[6][RUN_FILTER_VALUE_MAX + 1];
    int by_device_index;
    int device_index;
    char cursor[40];
    int by_seq;
    long long after_seq;
    int valid; /* run_filter.valid */
    long remaining;
    size_t answer_bytes; /* after_seq: the answer ends once past this */
    size_t made;         /* bytes of runs made so far */
    int finished;
    int failed; /* pending ends with the error line */
    struct dynbuf pending;
    size_t sent;
};

static void export_free(void *cls)
{
    struct export_stream *x = cls;

    dynbuf_free(&x->pending);
    free(x);
}

/* Ends the export with an error: pending keeps its whole lines up to
 * keep, then one line that says why (a JSON error object, or a CSV line
 * starting with '#'); once that is sent the stream ends with an error. */
static void export_fail(struct export_stream *x, size_t keep, const char *why)
{
    struct json_build jb = {0};
    cJSON *line = jb_new_object(&jb);
    cJSON *error = jb_object(&jb, line, "error");
    char *text;
    int said;

    dynbuf_truncate(&x->pending, keep);
    jb_string(&jb, error, "code", "export_failed");
    jb_string(&jb, error, "message", why);
    text = jb_failed(&jb) ? NULL : cJSON_PrintUnformatted(line);
    if (x->format == EXPORT_CSV)
        said = dynbuf_printf(&x->pending, "# export failed: %s\r\n", why) == 0;
    else
        said = text && dynbuf_printf(&x->pending, "%s\n", text) == 0;
    /* the stream ends with an error either way; without the line, only
     * the log says why */
    if (!said)
        log_warn("export failed: %s (and the line saying so could not be made)", why);
    free(text);
    cJSON_Delete(line);
    x->failed = 1;
    x->finished = 1;
}

/* Reads the next page of runs into x->pending; an error ends the export
 * (export_fail). */
static void export_next_page(struct export_stream *x)
{
    struct run_filter f = {
        .benchmark = x->filters[0],
        .device = x->filters[1],
        .host = x->filters[2],
        .status = x->filters[3],
        .label = x->filters[4],
        .batch = x->filters[5],
        .by_device_index = x->by_device_index,
        .device_index = x->device_index,
        .cursor = x->cursor[0] && !x->by_seq ? x->cursor : NULL,
        .limit = x->remaining < EXPORT_PAGE ? (int)x->remaining : EXPORT_PAGE,
        .max_bytes = PEER_PAGE_BYTES,
        .full = 1,
        .by_seq = x->by_seq,
        .after_seq = x->after_seq,
        .valid = x->valid,
    };
    char next[40], why[200];
    cJSON *runs = NULL;
    cJSON *run;

    dynbuf_reset(&x->pending);
    x->sent = 0;
    if (store_list_runs(x->store, &f, &runs, next) != STORE_OK) {
        export_fail(x, 0, "the runs could not be read from the database");
        return;
    }
    cJSON_ArrayForEach(run, runs) {
        const cJSON *seq = cJSON_GetObjectItem(run, "seq");
        size_t mark = x->pending.len;
        int rc;
        /* each line a run as the API shows it, with its "url" */
        if (x->format != EXPORT_CSV && runs_add_url(run) != 0) {
            export_fail(x, mark, "out of memory");
            cJSON_Delete(runs);
            return;
        }
        rc = x->format == EXPORT_CSV ? csv_run(&x->pending, run) : ndjson_run(&x->pending, run);
        if (rc != 0) {
            snprintf(why, sizeof(why), "run %.40s could not be exported: with the "
                                       "runs before it, it is over the export's %d MiB buffer",
                     cJSON_GetStringValue(cJSON_GetObjectItem(run, "id")),
                     EXPORT_BUFFER_CAP / (1024 * 1024));
            export_fail(x, mark, why);
            cJSON_Delete(runs);
            return;
        }
        if (x->by_seq && cJSON_IsNumber(seq))
            x->after_seq = (long long)seq->valuedouble;
        x->remaining--;
        x->made += x->pending.len - mark;
        if (x->answer_bytes && x->made >= x->answer_bytes) {
            x->finished = 1;
            break;
        }
    }
    cJSON_Delete(runs);
    snprintf(x->cursor, sizeof(x->cursor), "%s", next);
    if (next[0] == '\0' || x->remaining <= 0)
        x->finished = 1;
}

static long export_read(void *cls, char *buf, size_t max)
{
    struct export_stream *x = cls;
    size_t n;

    while (x->sent == x->pending.len) {
        if (x->failed)
            return -1;
        if (x->finished)
            return 0;
        export_next_page(x);
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
    const char *after = query_get(req, "after_seq");
    long long remaining = 1LL << 40, after_seq = 0;
    struct run_filter f = {0};
    struct export_stream *x;
    char state[STORE_STATE_TAG];

    if (query_check(req, rep, filter_args) != 0 || run_filter_from_query(req, rep, &f) != 0)
        return;
    /* The store's state before the first page is read: an export that has
     * not changed is answered 304 without reading it again. */
    store_state_tag(req->app->store, state);
    if (reply_state_etag(req, rep, state))
        return;
    x = calloc(1, sizeof(*x));
    if (x == NULL) {
        reply_error(rep, 500, "internal", "", "out of memory");
        return;
    }
    x->store = req->app->store;
    x->format = format;
    x->valid = f.valid;
    if (query_long(req, rep, "limit", 1, LLONG_MAX, "a whole number of runs, 1 or more",
                   &remaining) != 0 ||
        query_long(req, rep, "after_seq", 0, LLONG_MAX, "a whole number, 0 or more",
                   &after_seq) != 0) {
        free(x);
        return;
    }
    /* a page by seq is of SEQ_PAGE_DEFAULT runs unless limit says (README,
     * OpenAPI); a whole export has no count */
    if (after && query_get(req, "limit") == NULL)
        remaining = SEQ_PAGE_DEFAULT;
    x->remaining = (long)remaining;
    if (after) {
        x->by_seq = 1;
        x->after_seq = after_seq;
        x->answer_bytes = PEER_PAGE_BYTES;
    }
    {
        const char *vals[6] = {f.benchmark, f.device, f.host, f.status, f.label, f.batch};
        for (int i = 0; i < 6; i++)
            snprintf(x->filters[i], sizeof(x->filters[i]), "%s", vals[i] ? vals[i] : "");
    }
    x->by_device_index = f.by_device_index;
    x->device_index = f.device_index;
    dynbuf_init(&x->pending, EXPORT_BUFFER_CAP);
    if (format == EXPORT_CSV && csv_header(&x->pending) != 0) {
        export_free(x);
        reply_error(rep, 500, "internal", "", "out of memory");
        return;
    }
    rep->status = 200;
    rep->content_type = format == EXPORT_CSV ? "text/csv; charset=utf-8"
                                             : "application/x-ndjson";
    rep->stream = export_read;
    rep->stream_cls = x;
    rep->stream_free = export_free;
}

void api_runs_ndjson(struct http_request *req, struct http_reply *rep)
{
    export_runs(req, rep, EXPORT_NDJSON);
}

void api_runs_csv(struct http_request *req, struct http_reply *rep)
{
    export_runs(req, rep, EXPORT_CSV);
}

void api_run_csv(struct http_request *req, struct http_reply *rep)
{
    static const char *const none[] = {NULL};
    const char *id = req->arg;
    struct dynbuf b;
    cJSON *run = NULL;
    char *body;
    size_t n;
    int rc;

    if (query_check(req, rep, none) != 0)
        return;
    if (!uuid_is_valid(id)) {
        reply_error(rep, 404, "not_found", "", "no run %.60s.csv (run ids are UUIDs)", id);
        return;
    }
    rc = store_get_run(req->app->store, id, &run);
    if (rc != STORE_OK) {
        char what[64];
        snprintf(what, sizeof(what), "run %.40s", id);
        reply_store_error(rep, rc, what);
        return;
    }
    dynbuf_init(&b, EXPORT_BUFFER_CAP);
    rc = csv_header(&b) == 0 && csv_run(&b, run) == 0 ? 0 : -1;
    cJSON_Delete(run);
    body = rc == 0 ? dynbuf_take(&b, &n) : NULL;
    dynbuf_free(&b);
    if (body == NULL) {
        reply_error(rep, 500, "internal", "", "run %s could not be exported: it is over "
                                              "the export's %d MiB buffer",
                    id, EXPORT_BUFFER_CAP / (1024 * 1024));
        return;
    }
    reply_body(rep, 200, "text/csv; charset=utf-8", body, n);
}
