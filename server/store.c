/*
 * store.c - see store.h.
 *
 * Connections: one writer, which every change goes through (SQLite has one
 * writer at a time anyway), and a few readers, so that reads run beside a
 * write and beside each other (WAL mode).  Each HTTP or runner thread keeps
 * to one reader.  Each connection has its own mutex and keeps its prepared
 * statements (SQLITE_PREPARE_PERSISTENT): a statement is prepared once,
 * then only reset and re-bound.
 *
 * Each function takes its connection's mutex for its whole span, and
 * releases (resets) its statements on one cleanup path, so that no
 * statement holds a read transaction open after the call.
 */
#include "store.h"
#include "compare.h"
#include "dynbuf.h"
#include "log.h"
#include "migrate.h"
#include "run_cache.h"
#include "timeutil.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STORE_READERS 4
#define STMT_CACHE 64

struct cached_stmt {
    const char *sql;      /* a static string: its address is the key */
    sqlite3_stmt *st;
};

struct conn {
    sqlite3 *db;
    pthread_mutex_t lock;
    struct cached_stmt cache[STMT_CACHE];
    int ncache;
};

struct store {
    struct conn writer;
    struct conn readers[STORE_READERS];
    int nreaders;
    unsigned next_reader;  /* under writer.lock */
};

/* The prepared statement for sql on c, prepared on first use.  sql must be
 * a string with static storage.  Returns SQLITE_OK or the prepare error;
 * release the statement with conn_release. */
static int conn_prepare(struct conn *c, const char *sql, sqlite3_stmt **st)
{
    int rc;

    for (int i = 0; i < c->ncache; i++) {
        if (c->cache[i].sql == sql) {
            *st = c->cache[i].st;
            return SQLITE_OK;
        }
    }
    rc = sqlite3_prepare_v3(c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
    if (rc != SQLITE_OK || c->ncache == STMT_CACHE)
        return rc;  /* a full cache still works, only without keeping it */
    c->cache[c->ncache].sql = sql;
    c->cache[c->ncache].st = *st;
    c->ncache++;
    return SQLITE_OK;
}

/* Ends a statement's use: reset (closing its read) and unbound.  A
 * statement that did not fit the cache is finalized instead. */
static void conn_release(struct conn *c, sqlite3_stmt *st)
{
    if (st == NULL)
        return;
    for (int i = 0; i < c->ncache; i++) {
        if (c->cache[i].st == st) {
            sqlite3_reset(st);
            sqlite3_clear_bindings(st);
            return;
        }
    }
    sqlite3_finalize(st);
}

static void conn_close(struct conn *c)
{
    for (int i = 0; i < c->ncache; i++)
        sqlite3_finalize(c->cache[i].st);
    c->ncache = 0;
    if (c->db)
        sqlite3_close(c->db);
    c->db = NULL;
    pthread_mutex_destroy(&c->lock);
}

/* The reader this thread keeps to (chosen round robin on first use). */
static struct conn *reader(struct store *s)
{
    static _Thread_local int mine = -1;

    if (s->nreaders == 0)
        return &s->writer;
    if (mine < 0) {
        pthread_mutex_lock(&s->writer.lock);
        mine = (int)(s->next_reader++ % STORE_READERS);
        pthread_mutex_unlock(&s->writer.lock);
    }
    return &s->readers[mine % s->nreaders];
}

/* The columns every run query selects, in the order run_from_row reads. */
#define RUN_COLUMNS                                                          \
    "r.id, r.benchmark, r.params, r.label, r.batch_id, r.host, "             \
    "r.device_index, r.device_uuid, r.device_name, r.status, r.timeout_s, "  \
    "r.created_at, r.started_at, r.finished_at, r.progress_done, "           \
    "r.progress_total, r.error_code, r.error_message, r.origin, r.final_seq"

enum {
    C_ID, C_BENCHMARK, C_PARAMS, C_LABEL, C_BATCH, C_HOST, C_DEV_INDEX,
    C_DEV_UUID, C_DEV_NAME, C_STATUS, C_TIMEOUT, C_CREATED, C_STARTED,
    C_FINISHED, C_PROG_DONE, C_PROG_TOTAL, C_ERR_CODE, C_ERR_MSG, C_ORIGIN,
    C_SEQ, C_COUNT
};

static const char *col_text(sqlite3_stmt *st, int col)
{
    return (const char *)sqlite3_column_text(st, col);
}

static void add_text_or_null(cJSON *obj, const char *name, const char *v)
{
    if (v)
        cJSON_AddStringToObject(obj, name, v);
    else
        cJSON_AddNullToObject(obj, name);
}

/* Parses a JSON column; a column that does not parse (it never should) is
 * shown as null rather than failing the whole answer. */
static cJSON *json_column(sqlite3_stmt *st, int col)
{
    const char *text = col_text(st, col);
    cJSON *v = text ? cJSON_ParseWithLength(text, (size_t)sqlite3_column_bytes(st, col)) : NULL;

    return v ? v : cJSON_CreateNull();
}

static cJSON *run_from_row(sqlite3_stmt *st)
{
    cJSON *run = cJSON_CreateObject();
    cJSON *device;
    char url[64];

    if (run == NULL)
        return NULL;
    cJSON_AddStringToObject(run, "id", col_text(st, C_ID));
    snprintf(url, sizeof(url), "/runs/%s", col_text(st, C_ID));
    cJSON_AddStringToObject(run, "url", url);
    cJSON_AddStringToObject(run, "benchmark", col_text(st, C_BENCHMARK));
    cJSON_AddItemToObject(run, "params", json_column(st, C_PARAMS));
    add_text_or_null(run, "label", col_text(st, C_LABEL));
    add_text_or_null(run, "batch", col_text(st, C_BATCH));
    cJSON_AddStringToObject(run, "host", col_text(st, C_HOST));
    device = cJSON_AddObjectToObject(run, "device");
    if (sqlite3_column_type(st, C_DEV_INDEX) == SQLITE_NULL)
        cJSON_AddNullToObject(device, "index");
    else
        cJSON_AddNumberToObject(device, "index", sqlite3_column_int(st, C_DEV_INDEX));
    add_text_or_null(device, "uuid", col_text(st, C_DEV_UUID));
    add_text_or_null(device, "name", col_text(st, C_DEV_NAME));
    cJSON_AddStringToObject(run, "status", col_text(st, C_STATUS));
    cJSON_AddNumberToObject(run, "timeout_s", sqlite3_column_int(st, C_TIMEOUT));
    add_text_or_null(run, "created_at", col_text(st, C_CREATED));
    add_text_or_null(run, "started_at", col_text(st, C_STARTED));
    add_text_or_null(run, "finished_at", col_text(st, C_FINISHED));
    if (sqlite3_column_type(st, C_PROG_TOTAL) != SQLITE_NULL) {
        cJSON *p = cJSON_AddObjectToObject(run, "progress");
        cJSON_AddNumberToObject(p, "done", sqlite3_column_double(st, C_PROG_DONE));
        cJSON_AddNumberToObject(p, "total", sqlite3_column_double(st, C_PROG_TOTAL));
    } else {
        cJSON_AddNullToObject(run, "progress");
    }
    if (col_text(st, C_ERR_CODE)) {
        cJSON *e = cJSON_AddObjectToObject(run, "error");
        cJSON_AddStringToObject(e, "code", col_text(st, C_ERR_CODE));
        add_text_or_null(e, "message", col_text(st, C_ERR_MSG));
    } else {
        cJSON_AddNullToObject(run, "error");
    }
    add_text_or_null(run, "origin", col_text(st, C_ORIGIN));
    if (sqlite3_column_type(st, C_SEQ) == SQLITE_NULL)
        cJSON_AddNullToObject(run, "seq");
    else
        cJSON_AddNumberToObject(run, "seq", (double)sqlite3_column_int64(st, C_SEQ));
    return run;
}

static int exec_pragma(sqlite3 *db, const char *sql, char *errbuf, size_t cap)
{
    char *msg = NULL;

    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(errbuf, cap, "%s: %s", sql, msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

/* Opens one connection to path with the settings every one needs. */
static int conn_open(struct conn *c, const char *path, int writer,
                     char *errbuf, size_t cap)
{
    pthread_mutex_init(&c->lock, NULL);
    if (sqlite3_open_v2(path, &c->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                        SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        snprintf(errbuf, cap, "cannot open database %s: %s", path,
                 c->db ? sqlite3_errmsg(c->db) : "out of memory");
        return -1;
    }
    sqlite3_busy_timeout(c->db, 5000);
    if (writer)
        return exec_pragma(c->db, "PRAGMA journal_mode = WAL", errbuf, cap) ||
               exec_pragma(c->db, "PRAGMA synchronous = FULL", errbuf, cap) ||
               exec_pragma(c->db, "PRAGMA foreign_keys = ON", errbuf, cap) ? -1 : 0;
    /* A reader must never write, whatever a bug asks of it. */
    return exec_pragma(c->db, "PRAGMA query_only = 1", errbuf, cap) ? -1 : 0;
}

int store_open(const char *path, struct store **out, char *errbuf, size_t cap)
{
    struct store *s = calloc(1, sizeof(*s));
    int rc = STORE_ERROR;

    *out = NULL;
    if (s == NULL) {
        snprintf(errbuf, cap, "out of memory");
        return STORE_ERROR;
    }
    if (conn_open(&s->writer, path, 1, errbuf, cap) != 0 ||
        migrate_apply(s->writer.db, errbuf, cap) != 0)
        goto done;
    /* Readers only once the schema is there. */
    for (; s->nreaders < STORE_READERS; s->nreaders++)
        if (conn_open(&s->readers[s->nreaders], path, 0, errbuf, cap) != 0) {
            s->nreaders++;  /* so that store_close closes it too */
            goto done;
        }
    rc = STORE_OK;

done:
    if (rc != STORE_OK) {
        store_close(s);
        return rc;
    }
    *out = s;
    return STORE_OK;
}

void store_close(struct store *s)
{
    if (s == NULL)
        return;
    for (int i = 0; i < s->nreaders; i++)
        conn_close(&s->readers[i]);
    conn_close(&s->writer);
    free(s);
}

/* The next number in the order runs become final here (see
 * migrations/0002_fleet.sql); evaluated inside the writing transaction. */
#define NEXT_SEQ "(SELECT coalesce(max(final_seq), 0) + 1 FROM runs)"

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

/* Runs one statement that returns no rows, with up to four text values
 * bound in order (NULL binds SQL NULL); *changes gets the rows changed. */
static int exec_bound(struct conn *c, const char *sql, const char *v1,
                      const char *v2, const char *v3, const char *v4, int *changes)
{
    sqlite3_stmt *st = NULL;
    const char *vals[4] = {v1, v2, v3, v4};
    int rc = STORE_ERROR;
    int nparams;

    if (conn_prepare(c, sql, &st) != SQLITE_OK)
        goto done;
    nparams = sqlite3_bind_parameter_count(st);
    for (int i = 0; i < nparams && i < 4; i++)
        bind_text(st, i + 1, vals[i]);
    if (sqlite3_step(st) != SQLITE_DONE)
        goto done;
    if (changes)
        *changes = sqlite3_changes(c->db);
    rc = STORE_OK;

done:
    if (rc != STORE_OK)
        log_error("store: %s: %s", sql, sqlite3_errmsg(c->db));
    conn_release(c, st);
    return rc;
}

int store_recover(struct store *s, int *count)
{
    struct conn *c = &s->writer;
    char now[32];
    int rc = STORE_OK, changes = 0;

    *count = 0;
    time_now_rfc3339(now, sizeof(now));
    pthread_mutex_lock(&c->lock);
    /* One run at a time, so that each gets its own final_seq. */
    do {
        rc = exec_bound(c,
                        "UPDATE runs SET status = 'failed', finished_at = ?1, "
                        "error_code = 'interrupted', error_message = 'the daemon "
                        "stopped while this run was running; the result was lost', "
                        "final_seq = " NEXT_SEQ " "
                        "WHERE id = (SELECT id FROM runs WHERE status = 'running' "
                        "AND origin IS NULL LIMIT 1)",
                        now, NULL, NULL, NULL, &changes);
        *count += changes;
    } while (rc == STORE_OK && changes > 0);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

static int count_queued(struct conn *c, int device_index, long *depth)
{
    sqlite3_stmt *st = NULL;
    int rc = STORE_ERROR;

    if (conn_prepare(c, "SELECT count(*) FROM runs WHERE status = 'queued' "
                           "AND (?1 < 0 OR device_index = ?1)", &st) != SQLITE_OK)
        goto done;
    sqlite3_bind_int(st, 1, device_index);
    if (sqlite3_step(st) != SQLITE_ROW)
        goto done;
    *depth = sqlite3_column_int64(st, 0);
    rc = STORE_OK;

done:
    conn_release(c, st);
    return rc;
}

int store_queue_depth(struct store *s, int device_index, long *depth)
{
    struct conn *c = reader(s);
    int rc;

    pthread_mutex_lock(&c->lock);
    rc = count_queued(c, device_index, depth);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

static int insert_one(struct conn *c, sqlite3_stmt *st, const struct run_new *r,
                      const char *now)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    bind_text(st, 1, r->id);
    bind_text(st, 2, r->benchmark);
    bind_text(st, 3, r->params_json);
    bind_text(st, 4, r->label);
    bind_text(st, 5, r->batch_id);
    bind_text(st, 6, r->host);
    sqlite3_bind_int(st, 7, r->device_index);
    bind_text(st, 8, r->device_uuid);
    bind_text(st, 9, r->device_name);
    sqlite3_bind_int(st, 10, r->timeout_s);
    bind_text(st, 11, now);
    if (sqlite3_step(st) != SQLITE_DONE) {
        log_error("store: insert run %s: %s", r->id, sqlite3_errmsg(c->db));
        return STORE_ERROR;
    }
    return STORE_OK;
}

int store_insert_runs(struct store *s, const struct run_new *runs, int n,
                      int max_queue)
{
    struct conn *c = &s->writer;
    sqlite3_stmt *st = NULL;
    char now[32];
    long queued = 0;
    int rc = STORE_ERROR;
    int in_tx = 0;

    time_now_rfc3339(now, sizeof(now));
    pthread_mutex_lock(&c->lock);
    if (sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        goto done;
    in_tx = 1;
    if (count_queued(c, -1, &queued) != STORE_OK)
        goto done;
    if (queued + n > max_queue) {
        rc = STORE_FULL;
        goto done;
    }
    if (conn_prepare(c, "INSERT INTO runs (id, benchmark, params, label, "
                           "batch_id, host, device_index, device_uuid, "
                           "device_name, status, timeout_s, created_at) "
                           "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
                           "'queued', ?10, ?11)", &st) != SQLITE_OK)
        goto done;
    for (int i = 0; i < n; i++)
        if (insert_one(c, st, &runs[i], now) != STORE_OK)
            goto done;
    if (sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        goto done;
    in_tx = 0;
    rc = STORE_OK;

done:
    if (rc == STORE_ERROR)
        log_error("store: insert: %s", sqlite3_errmsg(c->db));
    conn_release(c, st);
    if (in_tx)
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

/* Adds queue_position (queued runs), results and meta to a run object. */
static int add_details(struct conn *c, cJSON *run)
{
    const char *id = cJSON_GetObjectItem(run, "id")->valuestring;
    const char *status = cJSON_GetObjectItem(run, "status")->valuestring;
    sqlite3_stmt *st = NULL;
    int rc = STORE_ERROR;

    if (strcmp(status, "queued") == 0) {
        if (conn_prepare(c, "SELECT count(*) FROM runs q, runs r "
                               "WHERE r.id = ?1 AND q.status = 'queued' "
                               "AND q.device_index IS r.device_index "
                               "AND q.rowid <= r.rowid", &st) != SQLITE_OK)
            goto done;
        bind_text(st, 1, id);
        if (sqlite3_step(st) != SQLITE_ROW)
            goto done;
        cJSON_AddNumberToObject(run, "queue_position", sqlite3_column_int(st, 0));
        conn_release(c, st);
        st = NULL;
    } else {
        cJSON_AddNullToObject(run, "queue_position");
    }
    if (conn_prepare(c, "SELECT results, meta FROM run_results WHERE run_id = ?1", &st) != SQLITE_OK)
        goto done;
    bind_text(st, 1, id);
    if (sqlite3_step(st) == SQLITE_ROW) {
        cJSON_AddItemToObject(run, "results", json_column(st, 0));
        cJSON_AddItemToObject(run, "meta", json_column(st, 1));
    } else {
        cJSON_AddNullToObject(run, "results");
        cJSON_AddNullToObject(run, "meta");
    }
    rc = STORE_OK;

done:
    conn_release(c, st);
    return rc;
}

int store_get_run(struct store *s, const char *id, cJSON **out)
{
    struct conn *c = reader(s);
    sqlite3_stmt *st = NULL;
    cJSON *run = NULL;
    int rc = STORE_ERROR;

    *out = NULL;
    pthread_mutex_lock(&c->lock);
    if (conn_prepare(c, "SELECT " RUN_COLUMNS " FROM runs r WHERE r.id = ?1", &st) != SQLITE_OK)
        goto done;
    bind_text(st, 1, id);
    switch (sqlite3_step(st)) {
    case SQLITE_ROW:
        break;
    case SQLITE_DONE:
        rc = STORE_NOT_FOUND;
        goto done;
    default:
        goto done;
    }
    run = run_from_row(st);
    if (run == NULL || add_details(c, run) != STORE_OK)
        goto done;
    *out = run;
    run = NULL;
    rc = STORE_OK;

done:
    if (rc == STORE_ERROR)
        log_error("store: get run: %s", sqlite3_errmsg(c->db));
    cJSON_Delete(run);
    conn_release(c, st);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_run_status(struct store *s, const char *id, char status[16])
{
    struct conn *c = reader(s);
    sqlite3_stmt *st = NULL;
    int rc = STORE_ERROR;

    pthread_mutex_lock(&c->lock);
    if (conn_prepare(c, "SELECT status FROM runs WHERE id = ?1", &st) != SQLITE_OK)
        goto done;
    bind_text(st, 1, id);
    switch (sqlite3_step(st)) {
    case SQLITE_ROW:
        snprintf(status, 16, "%s", col_text(st, 0));
        rc = STORE_OK;
        break;
    case SQLITE_DONE:
        rc = STORE_NOT_FOUND;
        break;
    default:
        break;
    }

done:
    conn_release(c, st);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

/* GET /runs: one SQL text per combination of filters, so that each
 * filter's index serves both the filter and the newest-first order.  The
 * texts are made on first use and kept for the life of the process (the
 * statement caches key on their addresses); values are always bound. */
enum {
    L_BENCH = 1, L_UUID = 2, L_NAME = 4, L_HOST = 8, L_STATUS = 16,
    L_LABEL = 32, L_BATCH = 64, L_CURSOR = 128, L_SEQ = 256, L_FULL = 512,
    L_VARIANTS = 1024
};

static pthread_mutex_t list_sql_lock = PTHREAD_MUTEX_INITIALIZER;
static char *list_sql[L_VARIANTS];

static const char *list_sql_for(unsigned bits)
{
    static const struct { unsigned bit; const char *clause; } clauses[] = {
        {L_BENCH, " AND r.benchmark = ?1"}, {L_UUID, " AND r.device_uuid = ?2"},
        {L_NAME, " AND r.device_name = ?2"}, {L_HOST, " AND r.host = ?3"},
        {L_STATUS, " AND r.status = ?4"}, {L_LABEL, " AND r.label = ?5"},
        {L_BATCH, " AND r.batch_id = ?6"}, {L_CURSOR, " AND r.id < ?7"},
        {L_SEQ, " AND r.final_seq > ?8"},
    };
    struct dynbuf b;

    pthread_mutex_lock(&list_sql_lock);
    if (list_sql[bits] == NULL) {
        dynbuf_init(&b, 4096);
        if (bits & L_FULL)
            dynbuf_printf(&b, "SELECT %s, NULL, res.results, res.meta FROM runs r "
                          "LEFT JOIN run_results res ON res.run_id = r.id WHERE 1",
                          RUN_COLUMNS);
        else
            dynbuf_printf(&b, "SELECT %s, d.summary FROM runs r "
                          "LEFT JOIN run_digests d ON d.run_id = r.id WHERE 1",
                          RUN_COLUMNS);
        for (size_t i = 0; i < sizeof(clauses) / sizeof(clauses[0]); i++)
            if (bits & clauses[i].bit)
                dynbuf_printf(&b, "%s", clauses[i].clause);
        dynbuf_printf(&b, " ORDER BY %s LIMIT ?9",
                      bits & L_SEQ ? "r.final_seq ASC" : "r.id DESC");
        list_sql[bits] = dynbuf_take(&b, NULL);
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

static int status_is_final(const char *status)
{
    return status && (strcmp(status, "done") == 0 || strcmp(status, "failed") == 0 ||
                      strcmp(status, "cancelled") == 0);
}

/* A finished run's list entry, from the cache, as raw JSON; NULL when the
 * run can still change or is not cached yet.  Keys are "l" and the id. */
static cJSON *cached_entry(struct run_cache *cache, sqlite3_stmt *st)
{
    char key[48], *text;
    size_t len;
    cJSON *raw;

    if (!status_is_final(col_text(st, C_STATUS)))
        return NULL;
    snprintf(key, sizeof(key), "l%s", col_text(st, C_ID));
    text = run_cache_get(cache, key, &len);
    if (text == NULL)
        return NULL;
    raw = cJSON_CreateRaw(text);
    free(text);
    return raw;
}

/* Keeps a finished run's list entry for next time and returns it as raw
 * JSON (run is consumed); a run that can still change is returned as is. */
static cJSON *keep_entry(struct run_cache *cache, sqlite3_stmt *st, cJSON *run)
{
    char key[48], *text;
    cJSON *raw;

    if (!status_is_final(col_text(st, C_STATUS)))
        return run;
    text = cJSON_PrintUnformatted(run);
    raw = text ? cJSON_CreateRaw(text) : NULL;
    if (raw == NULL) {
        free(text);
        return run;
    }
    snprintf(key, sizeof(key), "l%s", col_text(st, C_ID));
    run_cache_put(cache, key, text, strlen(text));
    free(text);
    cJSON_Delete(run);
    return raw;
}

int store_list_runs(struct store *s, const struct run_filter *f, cJSON **out,
                    char next_cursor[40])
{
    struct conn *c = reader(s);
    const char *vals[7] = {f->benchmark, f->device, f->host, f->status,
                           f->label, f->batch, f->cursor};
    char last_id[40] = "";
    unsigned bits = 0;
    const char *sql;
    sqlite3_stmt *st = NULL;
    cJSON *runs = cJSON_CreateArray();
    int rc = STORE_ERROR;
    int n = 0, step;

    bits |= given(f->benchmark) ? L_BENCH : 0;
    bits |= given(f->device) ? (is_device_uuid(f->device) ? L_UUID : L_NAME) : 0;
    bits |= given(f->host) ? L_HOST : 0;
    bits |= given(f->status) ? L_STATUS : 0;
    bits |= given(f->label) ? L_LABEL : 0;
    bits |= given(f->batch) ? L_BATCH : 0;
    bits |= given(f->cursor) && !f->by_seq ? L_CURSOR : 0;
    bits |= f->by_seq ? L_SEQ : 0;
    bits |= f->full ? L_FULL : 0;
    sql = list_sql_for(bits);
    *out = NULL;
    next_cursor[0] = '\0';
    pthread_mutex_lock(&c->lock);
    if (runs == NULL || sql == NULL || conn_prepare(c, sql, &st) != SQLITE_OK)
        goto done;
    for (int i = 0; i < 7; i++)
        if (given(vals[i]))
            bind_text(st, i + 1, vals[i]);
    sqlite3_bind_int64(st, 8, f->after_seq);
    /* One more than asked for tells whether another page exists. */
    sqlite3_bind_int(st, 9, f->limit + 1);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        cJSON *run;
        if (n == f->limit) {
            snprintf(next_cursor, 40, "%s", last_id);
            break;
        }
        snprintf(last_id, sizeof(last_id), "%s", col_text(st, C_ID));
        if (!f->full && f->cache && (run = cached_entry(f->cache, st)) != NULL) {
            cJSON_AddItemToArray(runs, run);
            n++;
            continue;
        }
        run = run_from_row(st);
        if (run == NULL)
            goto done;
        if (f->full) {
            cJSON_AddItemToObject(run, "results", json_column(st, C_COUNT + 1));
            cJSON_AddItemToObject(run, "meta", json_column(st, C_COUNT + 2));
        } else if (col_text(st, C_COUNT)) {
            cJSON_AddItemToObject(run, "summary", json_column(st, C_COUNT));
        } else {
            cJSON_AddNullToObject(run, "summary");
        }
        if (!f->full && f->cache)
            run = keep_entry(f->cache, st, run);
        cJSON_AddItemToArray(runs, run);
        n++;
    }
    if (step != SQLITE_ROW && step != SQLITE_DONE)
        goto done;
    *out = runs;
    runs = NULL;
    rc = STORE_OK;

done:
    if (rc != STORE_OK)
        log_error("store: list runs: %s", sqlite3_errmsg(c->db));
    cJSON_Delete(runs);
    conn_release(c, st);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_cancel_run(struct store *s, const char *id, char status[16])
{
    struct conn *c = &s->writer;
    char now[32];
    int changes = 0;
    int rc;

    time_now_rfc3339(now, sizeof(now));
    pthread_mutex_lock(&c->lock);
    rc = exec_bound(c,
                    "UPDATE runs SET status = 'cancelled', finished_at = ?2, "
                    "final_seq = " NEXT_SEQ " WHERE id = ?1 AND status = 'queued'",
                    id, now, NULL, NULL, &changes);
    pthread_mutex_unlock(&c->lock);
    if (rc != STORE_OK)
        return rc;
    if (changes == 1) {
        snprintf(status, 16, "cancelled");
        return STORE_OK;
    }
    rc = store_run_status(s, id, status);
    return rc == STORE_OK ? STORE_CONFLICT : rc;
}

int store_claim_next(struct store *s, int device_index, struct run_job *job)
{
    struct conn *c = &s->writer;
    sqlite3_stmt *st = NULL;
    char now[32];
    int rc = STORE_ERROR;
    int in_tx = 0;

    memset(job, 0, sizeof(*job));
    time_now_rfc3339(now, sizeof(now));
    pthread_mutex_lock(&c->lock);
    if (sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        goto done;
    in_tx = 1;
    if (conn_prepare(c, "SELECT id, benchmark, params, timeout_s FROM runs "
                           "WHERE status = 'queued' AND device_index = ?1 "
                           "ORDER BY rowid LIMIT 1", &st) != SQLITE_OK)
        goto done;
    sqlite3_bind_int(st, 1, device_index);
    switch (sqlite3_step(st)) {
    case SQLITE_ROW:
        break;
    case SQLITE_DONE:
        rc = STORE_NOT_FOUND;
        goto done;
    default:
        goto done;
    }
    snprintf(job->id, sizeof(job->id), "%s", col_text(st, 0));
    snprintf(job->benchmark, sizeof(job->benchmark), "%s", col_text(st, 1));
    job->params_json = strdup(col_text(st, 2));
    job->timeout_s = sqlite3_column_int(st, 3);
    conn_release(c, st);
    st = NULL;
    if (job->params_json == NULL)
        goto done;
    if (exec_bound(c,
                   "UPDATE runs SET status = 'running', started_at = ?2 "
                   "WHERE id = ?1 AND status = 'queued'",
                   job->id, now, NULL, NULL, NULL) != STORE_OK)
        goto done;
    if (sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        goto done;
    in_tx = 0;
    rc = STORE_OK;

done:
    conn_release(c, st);
    if (in_tx)
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_unlock(&c->lock);
    if (rc != STORE_OK)
        store_job_clear(job);
    return rc;
}

void store_job_clear(struct run_job *job)
{
    free(job->params_json);
    memset(job, 0, sizeof(*job));
}

int store_set_progress(struct store *s, const char *id, long done, long total)
{
    struct conn *c = &s->writer;
    sqlite3_stmt *st = NULL;
    int rc = STORE_ERROR;

    pthread_mutex_lock(&c->lock);
    if (conn_prepare(c, "UPDATE runs SET progress_done = ?2, progress_total = ?3 "
                           "WHERE id = ?1 AND status = 'running'", &st) != SQLITE_OK)
        goto done;
    bind_text(st, 1, id);
    sqlite3_bind_int64(st, 2, done);
    sqlite3_bind_int64(st, 3, total);
    if (sqlite3_step(st) != SQLITE_DONE)
        goto done;
    rc = STORE_OK;

done:
    conn_release(c, st);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

/* Writes a finished run's results and meta, with the columns that reads
 * use without parsing them: the summary, the driver and CUDA versions.
 * Inside the caller's transaction. */
/* Removes every "samples" array under item: the lists of samples stay in
 * the rows and the results; a summary for listing does without them. */
static void drop_samples(cJSON *item)
{
    cJSON *child;

    cJSON_DeleteItemFromObjectCaseSensitive(item, "samples");
    cJSON_ArrayForEach(child, item)
        if (cJSON_IsObject(child) || cJSON_IsArray(child))
            drop_samples(child);
}

static int put_results(struct conn *c, const char *id, const char *results,
                       const char *meta)
{
    cJSON *parsed = cJSON_Parse(results);
    cJSON *summary = cJSON_GetObjectItem(parsed, "summary");
    cJSON *rows = cJSON_GetObjectItem(parsed, "rows");
    char *slim = NULL, *digest = NULL;
    int rc;

    if (summary) {
        drop_samples(summary);
        slim = cJSON_PrintUnformatted(summary);
    }
    if (rows) {
        cJSON *d = compare_row_digest(rows);
        digest = d ? cJSON_PrintUnformatted(d) : NULL;
        cJSON_Delete(d);
    }
    cJSON_Delete(parsed);
    rc = exec_bound(c, "INSERT OR REPLACE INTO run_results (run_id, results, meta) "
                       "VALUES (?1, ?2, ?3)", id, results, meta ? meta : "{}", NULL, NULL);
    if (rc == STORE_OK)
        rc = exec_bound(c, "INSERT OR REPLACE INTO run_digests (run_id, summary, rows) "
                           "VALUES (?1, ?2, ?3)", id, slim, digest, NULL, NULL);
    free(slim);
    free(digest);
    if (rc != STORE_OK)
        return STORE_ERROR;
    return exec_bound(c,
                      "UPDATE runs SET "
                      "driver_version = json_extract(?2, '$.driver.nvidia_version'), "
                      "cuda_version = json_extract(?2, '$.cuda.runtime_version') "
                      "WHERE id = ?1",
                      id, meta ? meta : "{}", NULL, NULL, NULL);
}

int store_finish_run(struct store *s, const char *id, const char *status,
                     const char *results_json, const char *meta_json,
                     const char *error_code, const char *error_message)
{
    struct conn *c = &s->writer;
    char now[32];
    int rc = STORE_ERROR;
    int in_tx = 0;

    time_now_rfc3339(now, sizeof(now));
    pthread_mutex_lock(&c->lock);
    if (sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        goto done;
    in_tx = 1;
    if (exec_bound(c,
                   "UPDATE runs SET status = ?2, finished_at = ?3, "
                   "error_code = ?4, final_seq = " NEXT_SEQ " "
                   "WHERE id = ?1 AND status = 'running'",
                   id, status, now, error_code, NULL) != STORE_OK)
        goto done;
    if (error_message &&
        exec_bound(c, "UPDATE runs SET error_message = ?2 WHERE id = ?1",
                   id, error_message, NULL, NULL, NULL) != STORE_OK)
        goto done;
    if (results_json && put_results(c, id, results_json, meta_json) != STORE_OK)
        goto done;
    if (sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        goto done;
    in_tx = 0;
    rc = STORE_OK;

done:
    if (in_tx)
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_requeue_run(struct store *s, const char *id)
{
    struct conn *c = &s->writer;
    int rc;

    pthread_mutex_lock(&c->lock);
    rc = exec_bound(c,
                    "UPDATE runs SET status = 'queued', started_at = NULL, "
                    "progress_done = NULL, progress_total = NULL "
                    "WHERE id = ?1 AND status = 'running'",
                    id, NULL, NULL, NULL, NULL);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

static const char *obj_str(const cJSON *obj, const char *name)
{
    const cJSON *v = cJSON_GetObjectItem(obj, name);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Binds one imported run to the INSERT of store_import_runs. */
static void bind_import(sqlite3_stmt *st, const cJSON *run, const char *origin,
                        const char *params)
{
    const cJSON *device = cJSON_GetObjectItem(run, "device");
    const cJSON *index = cJSON_GetObjectItem(device, "index");
    const cJSON *error = cJSON_GetObjectItem(run, "error");
    const cJSON *timeout = cJSON_GetObjectItem(run, "timeout_s");

    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    bind_text(st, 1, obj_str(run, "id"));
    bind_text(st, 2, obj_str(run, "benchmark"));
    bind_text(st, 3, params);
    bind_text(st, 4, obj_str(run, "label"));
    bind_text(st, 5, obj_str(run, "batch"));
    bind_text(st, 6, obj_str(run, "host"));
    if (cJSON_IsNumber(index))
        sqlite3_bind_int(st, 7, index->valueint);
    bind_text(st, 8, obj_str(device, "uuid"));
    bind_text(st, 9, obj_str(device, "name"));
    bind_text(st, 10, obj_str(run, "status"));
    sqlite3_bind_int(st, 11, cJSON_IsNumber(timeout) ? timeout->valueint : 0);
    bind_text(st, 12, obj_str(run, "created_at"));
    bind_text(st, 13, obj_str(run, "started_at"));
    bind_text(st, 14, obj_str(run, "finished_at"));
    bind_text(st, 15, obj_str(error, "code"));
    bind_text(st, 16, obj_str(error, "message"));
    bind_text(st, 17, obj_str(run, "origin") ? obj_str(run, "origin") : origin);
}

int store_import_runs(struct store *s, const cJSON *runs, const char *origin,
                      int *inserted, int *existing)
{
    struct conn *c = &s->writer;
    sqlite3_stmt *ins = NULL;
    const cJSON *run;
    int rc = STORE_ERROR, in_tx = 0;

    *inserted = *existing = 0;
    pthread_mutex_lock(&c->lock);
    if (sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        goto done;
    in_tx = 1;
    if (conn_prepare(c, "INSERT OR IGNORE INTO runs (id, benchmark, params, "
                           "label, batch_id, host, device_index, device_uuid, "
                           "device_name, status, timeout_s, created_at, "
                           "started_at, finished_at, error_code, error_message, "
                           "origin, final_seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                           "?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
                           NEXT_SEQ ")", &ins) != SQLITE_OK)
        goto done;
    cJSON_ArrayForEach(run, runs) {
        const cJSON *results = cJSON_GetObjectItem(run, "results");
        char *params = cJSON_PrintUnformatted(cJSON_GetObjectItem(run, "params"));
        int step;

        if (params == NULL)
            goto done;
        bind_import(ins, run, origin, params);
        step = sqlite3_step(ins);
        free(params);
        if (step != SQLITE_DONE)
            goto done;
        if (sqlite3_changes(c->db) == 0) {
            (*existing)++;
            continue;
        }
        (*inserted)++;
        if (cJSON_IsObject(results)) {
            char *r = cJSON_PrintUnformatted(results);
            char *m = cJSON_PrintUnformatted(cJSON_GetObjectItem(run, "meta"));
            step = r ? put_results(c, obj_str(run, "id"), r, m) : STORE_ERROR;
            free(r);
            free(m);
            if (step != STORE_OK)
                goto done;
        }
    }
    if (sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        goto done;
    in_tx = 0;
    rc = STORE_OK;

done:
    if (rc != STORE_OK)
        log_error("store: import: %s", sqlite3_errmsg(c->db));
    conn_release(c, ins);
    if (in_tx)
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_compare_runs(struct store *s, const struct run_filter *f, int latest,
                       cJSON **out)
{
    /* The newest scan_limit done runs of the benchmark, numbered within
     * their comparison (the same grouping as compare.c) and kept while the
     * number is within latest; rows come from the digest, without samples. */
    static const char sql[] =
        "WITH recent AS ("
        "  SELECT r.id, r.host, r.device_uuid, r.device_name, r.params, "
        "         r.driver_version, r.cuda_version "
        "  FROM runs r WHERE r.benchmark = ?1 AND r.status = 'done' "
        "  AND (?2 IS NULL OR r.host = ?2) "
        "  AND (?3 IS NULL OR r.device_uuid = ?3 OR r.device_name = ?3) "
        "  AND (?4 IS NULL OR r.label = ?4) "
        "  ORDER BY r.id DESC LIMIT ?5), "
        "ranked AS ("
        "  SELECT *, row_number() OVER (PARTITION BY host, device_uuid, "
        "    device_name, params, driver_version, cuda_version "
        "    ORDER BY id DESC) AS k FROM recent) "
        "SELECT ranked.id, ranked.host, ranked.device_uuid, ranked.device_name, "
        "  ranked.params, ranked.driver_version, ranked.cuda_version, "
        "  coalesce(d.rows, (SELECT json_extract(results, '$.rows') "
        "                    FROM run_results WHERE run_id = ranked.id)) "
        "FROM ranked LEFT JOIN run_digests d ON d.run_id = ranked.id "
        "WHERE ranked.k <= ?6 ORDER BY ranked.id DESC";
    struct conn *c = reader(s);
    sqlite3_stmt *st = NULL;
    cJSON *runs = cJSON_CreateArray();
    int rc = STORE_ERROR, step;

    *out = NULL;
    pthread_mutex_lock(&c->lock);
    if (runs == NULL || conn_prepare(c, sql, &st) != SQLITE_OK)
        goto done;
    bind_text(st, 1, f->benchmark);
    bind_text(st, 2, given(f->host) ? f->host : NULL);
    bind_text(st, 3, given(f->device) ? f->device : NULL);
    bind_text(st, 4, given(f->label) ? f->label : NULL);
    sqlite3_bind_int(st, 5, f->limit);
    sqlite3_bind_int(st, 6, latest);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        /* Shaped like a run of GET /runs/ID, with what compare.c reads. */
        cJSON *run = cJSON_CreateObject();
        cJSON *dev, *meta, *results;
        if (run == NULL)
            goto done;
        cJSON_AddItemToArray(runs, run);
        cJSON_AddStringToObject(run, "id", col_text(st, 0));
        cJSON_AddStringToObject(run, "benchmark", f->benchmark);
        cJSON_AddStringToObject(run, "status", "done");
        add_text_or_null(run, "host", col_text(st, 1));
        dev = cJSON_AddObjectToObject(run, "device");
        add_text_or_null(dev, "uuid", col_text(st, 2));
        add_text_or_null(dev, "name", col_text(st, 3));
        cJSON_AddItemToObject(run, "params", json_column(st, 4));
        meta = cJSON_AddObjectToObject(run, "meta");
        if (col_text(st, 5))
            cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "driver"),
                                    "nvidia_version", col_text(st, 5));
        if (col_text(st, 6))
            cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "cuda"),
                                    "runtime_version", col_text(st, 6));
        results = cJSON_AddObjectToObject(run, "results");
        cJSON_AddItemToObject(results, "rows", json_column(st, 7));
    }
    if (step != SQLITE_DONE)
        goto done;
    *out = runs;
    runs = NULL;
    rc = STORE_OK;

done:
    if (rc != STORE_OK)
        log_error("store: compare: %s", sqlite3_errmsg(c->db));
    cJSON_Delete(runs);
    conn_release(c, st);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_count_by_status(struct store *s, long counts[5])
{
    struct conn *c = reader(s);
    static const char *const names[5] = {"queued", "running", "done", "failed", "cancelled"};
    sqlite3_stmt *st = NULL;
    int rc = STORE_ERROR, step;

    for (int i = 0; i < 5; i++)
        counts[i] = 0;
    pthread_mutex_lock(&c->lock);
    if (conn_prepare(c, "SELECT status, count(*) FROM runs GROUP BY status", &st) != SQLITE_OK)
        goto done;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < 5; i++)
            if (strcmp(col_text(st, 0), names[i]) == 0)
                counts[i] = sqlite3_column_int64(st, 1);
    }
    if (step == SQLITE_DONE)
        rc = STORE_OK;

done:
    conn_release(c, st);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_latest_per_card(struct store *s, cJSON **out)
{
    struct conn *c = reader(s);
    /* SQLite returns the other columns of the row that holds max(id). */
    static const char sql[] =
        "SELECT " RUN_COLUMNS ", res.results, res.meta, max(r.id) "
        "FROM runs r JOIN run_results res ON res.run_id = r.id "
        "WHERE r.status = 'done' "
        "GROUP BY r.benchmark, r.host, r.device_uuid";
    sqlite3_stmt *st = NULL;
    cJSON *runs = cJSON_CreateArray();
    int rc = STORE_ERROR, step;

    *out = NULL;
    pthread_mutex_lock(&c->lock);
    if (runs == NULL || conn_prepare(c, sql, &st) != SQLITE_OK)
        goto done;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        cJSON *run = run_from_row(st);
        if (run == NULL)
            goto done;
        cJSON_AddItemToObject(run, "results", json_column(st, C_COUNT));
        cJSON_AddItemToObject(run, "meta", json_column(st, C_COUNT + 1));
        cJSON_AddItemToArray(runs, run);
    }
    if (step != SQLITE_DONE)
        goto done;
    *out = runs;
    runs = NULL;
    rc = STORE_OK;

done:
    cJSON_Delete(runs);
    conn_release(c, st);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_peer_load(struct store *s, const char *url, struct peer_row *row)
{
    struct conn *c = &s->writer;
    sqlite3_stmt *st = NULL;
    int rc = STORE_ERROR;

    memset(row, 0, sizeof(*row));
    pthread_mutex_lock(&c->lock);
    if (exec_bound(c, "INSERT OR IGNORE INTO peers (url) VALUES (?1)", url,
                   NULL, NULL, NULL, NULL) != STORE_OK ||
        conn_prepare(c, "SELECT cursor, runs_pulled, last_success_at, "
                           "last_error, last_error_at FROM peers WHERE url = ?1", &st) != SQLITE_OK)
        goto done;
    bind_text(st, 1, url);
    if (sqlite3_step(st) != SQLITE_ROW)
        goto done;
    row->cursor = sqlite3_column_int64(st, 0);
    row->runs_pulled = sqlite3_column_int64(st, 1);
    snprintf(row->last_success_at, sizeof(row->last_success_at), "%s",
             col_text(st, 2) ? col_text(st, 2) : "");
    snprintf(row->last_error, sizeof(row->last_error), "%s",
             col_text(st, 3) ? col_text(st, 3) : "");
    snprintf(row->last_error_at, sizeof(row->last_error_at), "%s",
             col_text(st, 4) ? col_text(st, 4) : "");
    rc = STORE_OK;

done:
    conn_release(c, st);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_peer_record(struct store *s, const char *url, long long cursor,
                      long long pulled, const char *error)
{
    struct conn *c = &s->writer;
    sqlite3_stmt *st = NULL;
    char now[32];
    int rc = STORE_ERROR;

    time_now_rfc3339(now, sizeof(now));
    pthread_mutex_lock(&c->lock);
    if (conn_prepare(c, error
                           ? "UPDATE peers SET last_error = ?2, last_error_at = ?3 WHERE url = ?1"
                           : "UPDATE peers SET cursor = ?4, runs_pulled = runs_pulled + ?5, "
                             "last_success_at = ?3 WHERE url = ?1", &st) != SQLITE_OK)
        goto done;
    bind_text(st, 1, url);
    if (error)
        bind_text(st, 2, error);
    bind_text(st, 3, now);
    if (!error) {
        sqlite3_bind_int64(st, 4, cursor);
        sqlite3_bind_int64(st, 5, pulled);
    }
    if (sqlite3_step(st) == SQLITE_DONE)
        rc = STORE_OK;

done:
    conn_release(c, st);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_ping(struct store *s)
{
    long depth;

    return store_queue_depth(s, -1, &depth);
}
