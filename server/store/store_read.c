/*
 * store_read.c - the reads: one run, a page of runs (one SQL text per
 * combination of filters, so an index serves both filter and order), the
 * runs of a comparison, counts for /metrics.  On the thread's reader
 * connection.  See store_runs.h.
 */
#include "store_internal.h"
#include "store_queue.h"
#include "store_runs.h"
#include "dynbuf.h"
#include "json_build.h"
#include "log.h"
#include "migrate.h"
#include "timeutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GET /runs: one SQL text per combination of filters, so that each
 * filter's index serves both the filter and the newest-first order.  The
 * texts are made on first use and kept for the life of the process (the
 * statement caches key on their addresses); values are always bound. */
enum {
    L_BENCH = 1,
    L_UUID = 2,
    L_NAME = 4,
    L_HOST = 8,
    L_STATUS = 16,
    L_LABEL = 32,
    L_BATCH = 64,
    L_CURSOR = 128,
    L_SEQ = 256,
    L_FULL = 512,
    L_VALID = 1024,
    L_INVALID = 2048,
    L_INDEX = 4096,
    L_VARIANTS = 8192
};

static pthread_mutex_t list_sql_lock = PTHREAD_MUTEX_INITIALIZER;
static char *list_sql[L_VARIANTS];

/* Adds queue_position (queued runs), results and meta to a run object;
 * results and meta as raw items when raw (only to be printed).  On q, a
 * query nested in the one that read the run's row: that row's statement
 * stays open, so that the details are read in the same snapshot (a run
 * read as queued is counted in the queue it was in).  A stored value that
 * is not JSON (json_valid: raw answers print the text as it is) is null
 * and the run marked damaged; b fails when memory ran out. */
static int add_details(struct store_query *q, struct json_build *b, cJSON *run, int raw)
{
    const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(run, "id"));
    const char *status = cJSON_GetStringValue(cJSON_GetObjectItem(run, "status"));
    int step;

    if (id == NULL || status == NULL)
        return STORE_ERROR; /* never: store_run_from_row adds both or fails */
    if (run_status_parse(status) == RUN_QUEUED) {
        if (store_query_prepare(q, "SELECT count(*) FROM runs q, runs r "
                                   "WHERE r.id = ?1 AND q.status = 'queued' "
                                   "AND q.device_index IS r.device_index "
                                   "AND " STORE_QUEUE_NOT_AFTER("q", "r")) != STORE_OK)
            return STORE_ERROR;
        store_bind_text(q, 1, id);
        if (store_query_step(q) != STORE_STEP_ROW)
            return STORE_ERROR;
        jb_number(b, run, "queue_position", sqlite3_column_int(q->st, 0));
    } else {
        jb_null(b, run, "queue_position");
    }
    if (store_query_prepare(q, "SELECT results, meta, json_valid(results), json_valid(meta) "
                               "FROM run_results WHERE run_id = ?1") != STORE_OK)
        return STORE_ERROR;
    store_bind_text(q, 1, id);
    /* Only "no row" means no results: a step that failed (a damaged page)
     * is an error, never a done run shown with results null. */
    if ((step = store_query_one(q)) == STORE_OK) {
        store_add_json(b, run, "results", q->st, 0, 2, raw);
        store_add_json(b, run, "meta", q->st, 1, 3, raw);
    } else if (step == STORE_NOT_FOUND) {
        jb_null(b, run, "results");
        jb_null(b, run, "meta");
    } else {
        return STORE_ERROR;
    }
    /* The verdicts it got at its end (run_verdicts.h); null: not judged
     * (not done here, stored before them, or imported). */
    if (store_query_prepare(q, "SELECT verdicts, json_valid(verdicts) FROM run_verdicts "
                               "WHERE run_id = ?1") != STORE_OK)
        return STORE_ERROR;
    store_bind_text(q, 1, id);
    if ((step = store_query_one(q)) == STORE_NOT_FOUND) {
        jb_null(b, run, "verdicts");
        return STORE_OK;
    }
    if (step != STORE_OK)
        return STORE_ERROR;
    store_add_json(b, run, "verdicts", q->st, 0, 1, raw);
    return STORE_OK;
}

static int get_run(struct store *s, const char *id, int raw, cJSON **out)
{
    struct json_build b = {0};
    struct store_query q, details;
    cJSON *run = NULL;
    int rc = STORE_ERROR, step;

    *out = NULL;
    store_query_begin(&q, store_reader(s), "read a run");
    if (store_query_prepare(&q, "SELECT " RUN_COLUMNS " FROM runs r WHERE r.id = ?1") != STORE_OK)
        goto done;
    store_bind_text(&q, 1, id);
    if ((step = store_query_one(&q)) != STORE_OK) {
        rc = step;
        goto done;
    }
    if ((run = store_run_from_row(q.st)) == NULL)
        goto done;
    store_query_nest(&details, &q);
    if (store_query_end(&details, add_details(&details, &b, run, raw)) != STORE_OK ||
        jb_failed(&b))
        goto done;
    *out = run;
    run = NULL;
    rc = STORE_OK;

done:
    cJSON_Delete(run);
    return store_query_end(&q, rc);
}

int store_get_run(struct store *s, const char *id, cJSON **out)
{
    return get_run(s, id, 0, out);
}

int store_get_run_raw(struct store *s, const char *id, cJSON **out)
{
    return get_run(s, id, 1, out);
}

int store_run_status(struct store *s, const char *id, char status[16])
{
    struct store_query q;
    int rc = STORE_ERROR;

    store_query_begin(&q, store_reader(s), "read a run's status");
    if (store_query_prepare(&q, "SELECT status FROM runs WHERE id = ?1") != STORE_OK)
        goto done;
    store_bind_text(&q, 1, id);
    if ((rc = store_query_one(&q)) == STORE_OK)
        snprintf(status, 16, "%s", store_col_text(q.st, 0));

done:
    return store_query_end(&q, rc);
}

static const char *list_sql_for(unsigned bits)
{
    static const struct {
        unsigned bit;
        const char *clause;
    } clauses[] = {
        {L_BENCH, " AND r.benchmark = ?1"},
        {L_UUID, " AND r.device_uuid = ?2"},
        {L_NAME, " AND r.device_name = ?2"},
        {L_INDEX, " AND r.device_index = ?10"},
        {L_HOST, " AND r.host = ?3"},
        {L_STATUS, " AND r.status = ?4"},
        {L_LABEL, " AND r.label = ?5"},
        {L_BATCH, " AND r.batch_id = ?6"},
        {L_CURSOR, " AND r.id < ?7"},
        {L_SEQ, " AND r.final_seq > ?8"},
        /* Valid or not judged (null) / judged invalid: runs_by_valid. */
        {L_VALID, " AND r.valid IS NOT 0"},
        {L_INVALID, " AND r.valid = 0"},
    };
    struct dynbuf b;

    pthread_mutex_lock(&list_sql_lock);
    if (list_sql[bits] == NULL) {
        dynbuf_init(&b, 4096);
        if (bits & L_FULL)
            (void)!dynbuf_printf(&b, "SELECT %s, NULL, res.results, res.meta, NULL, "
                                     "json_valid(res.results), json_valid(res.meta) FROM runs r "
                                     "LEFT JOIN run_results res ON res.run_id = r.id WHERE 1",
                                 RUN_COLUMNS);
        else
            (void)!dynbuf_printf(&b, "SELECT %s, d.summary, NULL, NULL, "
                                     "json_valid(d.summary) FROM runs r "
                                     "LEFT JOIN run_digests d ON d.run_id = r.id WHERE 1",
                                 RUN_COLUMNS);
        for (size_t i = 0; i < sizeof(clauses) / sizeof(clauses[0]); i++)
            if (bits & clauses[i].bit)
                (void)!dynbuf_printf(&b, "%s", clauses[i].clause);
        (void)!dynbuf_printf(&b, " ORDER BY %s LIMIT ?9",
                             bits & L_SEQ ? "r.final_seq ASC" : "r.id DESC");
        /* a text cut short is no query: NULL, as when memory ran out */
        if (!dynbuf_failed(&b))
            list_sql[bits] = dynbuf_take(&b, NULL);
        dynbuf_free(&b);
    }
    pthread_mutex_unlock(&list_sql_lock);
    return list_sql[bits];
}

static int given(const char *v)
{
    return v != NULL && v[0] != '\0';
}

/* A device filter is a UUID ("GPU-...", "MIG-...") or a card's name. */
static int is_device_uuid(const char *v)
{
    return strncmp(v, "GPU-", 4) == 0 || strncmp(v, "MIG-", 4) == 0;
}

int store_status_final(const char *status)
{
    return run_status_is_final(status);
}

int store_list_runs(struct store *s, const struct run_filter *f,
                    const struct store_entries *entries, cJSON **out, char next_cursor[40])
{
    struct store_query q;
    const char *vals[7] = {f->benchmark, f->device, f->host, f->status,
                           f->label, f->batch, f->cursor};
    struct json_build b = {0};
    char last_id[40] = "";
    size_t bytes = 0;
    unsigned bits = 0;
    const char *sql;
    cJSON *runs = jb_new_array(&b);
    int rc = STORE_ERROR;
    int n = 0, step, final;

    bits |= given(f->benchmark) ? L_BENCH : 0;
    bits |= given(f->device) ? (is_device_uuid(f->device) ? L_UUID : L_NAME) : 0;
    bits |= f->by_device_index ? L_INDEX : 0;
    bits |= given(f->host) ? L_HOST : 0;
    bits |= given(f->status) ? L_STATUS : 0;
    bits |= given(f->label) ? L_LABEL : 0;
    bits |= given(f->batch) ? L_BATCH : 0;
    bits |= given(f->cursor) && !f->by_seq ? L_CURSOR : 0;
    bits |= f->by_seq ? L_SEQ : 0;
    bits |= f->full ? L_FULL : 0;
    bits |= f->valid == RUN_VALID_TRUE ? L_VALID : f->valid == RUN_VALID_FALSE ? L_INVALID
                                                                               : 0;
    sql = list_sql_for(bits);
    *out = NULL;
    next_cursor[0] = '\0';
    store_query_begin(&q, store_reader(s), "list runs");
    if (runs == NULL || sql == NULL || store_query_prepare(&q, sql) != STORE_OK)
        goto done;
    for (int i = 0; i < 7; i++)
        if (given(vals[i]))
            store_bind_text(&q, i + 1, vals[i]);
    store_bind_int64(&q, 8, f->after_seq);
    if (f->by_device_index)
        store_bind_int64(&q, 10, f->device_index);
    /* One more than asked for tells whether another page exists. */
    store_bind_int64(&q, 9, (sqlite3_int64)f->limit + 1);
    while ((step = store_query_step(&q)) == STORE_STEP_ROW) {
        sqlite3_stmt *st = q.st;
        cJSON *run;
        if (n == f->limit) {
            snprintf(next_cursor, 40, "%s", last_id);
            break;
        }
        snprintf(last_id, sizeof(last_id), "%s", store_col_text(st, C_ID));
        final = store_status_final(store_col_text(st, C_STATUS));
        if (!f->full && entries && final &&
            (run = entries->get(entries->ctx, store_col_text(st, C_ID))) != NULL) {
            jb_push(&b, runs, run);
            n++;
            continue;
        }
        run = store_run_from_row(st);
        if (run == NULL)
            goto done;
        /* A damaged value is null and the run marked (store_row.c): the
         * page goes on past it. */
        if (f->full) {
            store_add_json(&b, run, "results", st, C_COUNT + 1, C_COUNT + 4, 0);
            store_add_json(&b, run, "meta", st, C_COUNT + 2, C_COUNT + 5, 0);
            bytes += (size_t)sqlite3_column_bytes(st, C_COUNT + 1) +
                     (size_t)sqlite3_column_bytes(st, C_COUNT + 2);
        } else {
            store_add_json(&b, run, "summary", st, C_COUNT, C_COUNT + 3, 1);
        }
        if (jb_failed(&b)) {
            cJSON_Delete(run);
            goto done;
        }
        if (!f->full && entries && final &&
            (run = entries->keep(entries->ctx, store_col_text(st, C_ID), run)) == NULL)
            goto done;
        jb_push(&b, runs, run);
        n++;
        if (f->full && f->max_bytes && bytes >= f->max_bytes) {
            /* Over the byte budget: the page ends here, and the next one
             * (perhaps empty) follows this run. */
            snprintf(next_cursor, 40, "%s", last_id);
            step = STORE_STEP_DONE;
            break;
        }
    }
    if ((step != STORE_STEP_ROW && step != STORE_STEP_DONE) || jb_failed(&b))
        goto done;
    *out = runs;
    runs = NULL;
    rc = STORE_OK;

done:
    cJSON_Delete(runs);
    return store_query_end(&q, rc);
}

int store_compare_runs(struct store *s, const struct run_filter *f, cJSON **out)
{
    /* Only the columns that decide a run's comparison: compare.c groups
     * these and reads the rows (store_run_rows) of the few it keeps. */
    static const char sql[] =
        "SELECT r.id, r.host, r.device_uuid, r.device_name, r.params, "
        "       r.driver_version, r.cuda_version, r.valid, r.method, r.build "
        "FROM runs r WHERE r.benchmark = ?1 AND r.status = 'done' "
        "AND (?2 IS NULL OR r.host = ?2) "
        "AND (?3 IS NULL OR r.device_uuid = ?3 OR r.device_name = ?3) "
        "AND (?4 IS NULL OR r.label = ?4) "
        "ORDER BY r.id DESC LIMIT ?5";
    struct store_query q;
    struct json_build b = {0};
    cJSON *runs = jb_new_array(&b);
    int rc = STORE_ERROR, step;

    *out = NULL;
    store_query_begin(&q, store_reader(s), "read runs to compare");
    if (runs == NULL || store_query_prepare(&q, sql) != STORE_OK)
        goto done;
    store_bind_text(&q, 1, f->benchmark);
    store_bind_text(&q, 2, given(f->host) ? f->host : NULL);
    store_bind_text(&q, 3, given(f->device) ? f->device : NULL);
    store_bind_text(&q, 4, given(f->label) ? f->label : NULL);
    store_bind_int64(&q, 5, f->limit);
    while ((step = store_query_step(&q)) == STORE_STEP_ROW) {
        /* Shaped like a run of GET /runs/ID, with what compare.c reads. */
        sqlite3_stmt *st = q.st;
        cJSON *run = jb_new_object(&b);
        cJSON *dev, *meta, *validity;

        jb_push(&b, runs, run);
        jb_string(&b, run, "id", store_col_text(st, 0));
        jb_string(&b, run, "benchmark", f->benchmark);
        jb_string(&b, run, "status", run_status_names[RUN_DONE]);
        jb_string(&b, run, "host", store_col_text(st, 1));
        dev = jb_object(&b, run, "device");
        jb_string(&b, dev, "uuid", store_col_text(st, 2));
        jb_string(&b, dev, "name", store_col_text(st, 3));
        jb_item(&b, run, "params", store_column_item(&b, st, 4, 1));
        meta = jb_object(&b, run, "meta");
        if (store_col_text(st, 5))
            jb_string(&b, jb_object(&b, meta, "driver"), "nvidia_version", store_col_text(st, 5));
        if (store_col_text(st, 6))
            jb_string(&b, jb_object(&b, meta, "cuda"), "runtime_version", store_col_text(st, 6));
        /* Only the verdict's valid: compare.c leaves invalid runs out. */
        validity = jb_object(&b, run, "validity");
        if (sqlite3_column_type(st, 7) == SQLITE_NULL)
            jb_null(&b, validity, "valid");
        else
            jb_bool(&b, validity, "valid", sqlite3_column_int(st, 7));
        /* The method, and the build that stands for an unknown one. */
        if (sqlite3_column_type(st, 8) == SQLITE_NULL)
            jb_null(&b, run, "method");
        else
            jb_number(&b, run, "method", (double)sqlite3_column_int64(st, 8));
        if (store_col_text(st, 9))
            jb_string(&b, jb_object(&b, meta, "build"), "git_commit", store_col_text(st, 9));
        if (jb_failed(&b))
            goto done;
    }
    if (step != STORE_STEP_DONE)
        goto done;
    *out = runs;
    runs = NULL;
    rc = STORE_OK;

done:
    cJSON_Delete(runs);
    return store_query_end(&q, rc);
}

int store_run_rows(struct store *s, const char *id, cJSON **rows)
{
    static const char sql[] =
        "SELECT coalesce((SELECT rows FROM run_digests WHERE run_id = ?1), "
        "  (SELECT json_extract(results, '$.rows') FROM run_results WHERE run_id = ?1))";
    struct store_query q;
    int rc = STORE_ERROR;

    *rows = NULL;
    store_query_begin(&q, store_reader(s), "read a run's rows");
    if (store_query_prepare(&q, sql) != STORE_OK)
        goto done;
    store_bind_text(&q, 1, id);
    if (store_query_step(&q) != STORE_STEP_ROW)
        goto done;
    if (store_col_text(q.st, 0) == NULL) {
        rc = STORE_NOT_FOUND;
        goto done;
    }
    *rows = store_json_column(q.st, 0);
    rc = *rows ? STORE_OK : STORE_ERROR;

done:
    return store_query_end(&q, rc);
}

int store_count_by_status(struct store *s, long counts[RUN_STATUS_COUNT])
{
    struct store_query q;
    int rc = STORE_ERROR, step;

    for (int i = 0; i < RUN_STATUS_COUNT; i++)
        counts[i] = 0;
    store_query_begin(&q, store_reader(s), "count runs by status");
    if (store_query_prepare(&q, "SELECT status, count(*) FROM runs GROUP BY status") != STORE_OK)
        goto done;
    while ((step = store_query_step(&q)) == STORE_STEP_ROW) {
        int i = run_status_parse(store_col_text(q.st, 0));

        if (i >= 0)
            counts[i] = sqlite3_column_int64(q.st, 1);
    }
    if (step == STORE_STEP_DONE)
        rc = STORE_OK;

done:
    return store_query_end(&q, rc);
}

int store_latest_per_card(struct store *s, const char *own_host, cJSON **out)
{
    struct store_query q;
    /* latest_by_card is kept as runs finish (store_put_results), so this
     * reads one row a card and benchmark, whatever the number of runs;
     * own_host reads those measured here (origin NULL, under that host), a
     * text of its own so that each keeps its plan. */
#define LATEST_PER_CARD                                                                 \
    "SELECT " RUN_COLUMNS ", coalesce(d.rows, (SELECT json_extract(results, '$.rows') " \
    "                         FROM run_results WHERE run_id = r.id)) "                  \
    "FROM latest_by_card l JOIN runs r ON r.id = l.run_id "                             \
    "LEFT JOIN run_digests d ON d.run_id = r.id"
    static const char every[] = LATEST_PER_CARD;
    /* through latest_by_card_by_host: a hub of 8,000 peers' cards reads
     * only its own host's rows */
    static const char own[] = LATEST_PER_CARD " WHERE l.host = ?1 AND r.origin IS NULL";
#undef LATEST_PER_CARD
    const char *sql = own_host ? own : every;
    struct json_build b = {0};
    cJSON *runs = jb_new_array(&b);
    int rc = STORE_ERROR, step;

    *out = NULL;
    store_query_begin(&q, store_reader(s), "read the latest run of each card");
    if (runs == NULL || store_query_prepare(&q, sql) != STORE_OK)
        goto done;
    if (own_host)
        store_bind_text(&q, 1, own_host);
    while ((step = store_query_step(&q)) == STORE_STEP_ROW) {
        cJSON *run = store_run_from_row(q.st);

        if (run == NULL)
            goto done;
        jb_push(&b, runs, run);
        jb_item(&b, jb_object(&b, run, "results"), "rows", store_json_column(q.st, C_COUNT));
        if (jb_failed(&b))
            goto done;
    }
    if (step != STORE_STEP_DONE)
        goto done;
    *out = runs;
    runs = NULL;
    rc = STORE_OK;

done:
    cJSON_Delete(runs);
    return store_query_end(&q, rc);
}
