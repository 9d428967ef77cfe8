/*
 * store.c - see store.h; this file holds the connections and what the
 * store's other files share (store_internal.h): store_queue.c moves runs
 * through their lives, store_read.c answers the reads, store_fleet.c stores
 * runs made elsewhere and the peers' state.
 *
 * Connections: one writer, which every change goes through (SQLite has one
 * writer at a time anyway), and a few readers, so that reads run beside a
 * write and beside each other (WAL mode).  Each HTTP or runner thread keeps
 * to one reader.  Each connection has its own mutex and keeps its prepared
 * statements (SQLITE_PREPARE_PERSISTENT): a statement is prepared once,
 * then only reset and re-bound.
 *
 * Each function runs its statements through one struct store_query
 * (store_internal.h), which takes its connection's mutex for the
 * function's whole span and, on one cleanup path (store_query_end), maps a
 * failure through store_fail, releases (resets) the statement, rolls back
 * what was not committed and unlocks: no statement holds a read
 * transaction open after the call.  Values are bound by their type.
 */
#include "store_internal.h"
#include "store_functions.h"
#include "store_queue.h"
#include "store_runs.h"
#include "dynbuf.h"
#include "log.h"
#include "migrate.h"
#include "run_cache.h"
#include "timeutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Set by the row helpers when a value this store wrote as JSON no longer
 * parses (a damaged page SQLite cannot tell from data), and read back by
 * store_fail on the same thread within the same store call: the helpers
 * see only the statement, not its connection. */
static _Thread_local int damaged_value;

void store_note_damaged_value(void)
{
    damaged_value = 1;
}

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
        return rc; /* a full cache still works, only without keeping it */
    c->cache[c->ncache].sql = sql;
    c->cache[c->ncache].st = *st;
    c->ncache++;
    return SQLITE_OK;
}

/* Ends a statement's use: reset (closing its read) and unbound.  A
 * statement that did not fit the cache is finalized instead.  A failed
 * statement's reset leaves its error on the connection. */
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

void store_query_begin(struct store_query *q, struct conn *c, const char *what)
{
    memset(q, 0, sizeof(*q));
    q->c = c;
    q->what = what;
    pthread_mutex_lock(&c->lock);
}

void store_query_nest(struct store_query *q, struct store_query *outer)
{
    memset(q, 0, sizeof(*q));
    q->c = outer->c;
    q->what = outer->what;
    q->nested = 1;
}

int store_query_prepare(struct store_query *q, const char *sql)
{
    conn_release(q->c, q->st);
    q->st = NULL;
    q->bind_failed = 0;
    return conn_prepare(q->c, sql, &q->st) == SQLITE_OK ? STORE_OK : STORE_ERROR;
}

int store_query_transaction(struct store_query *q)
{
    if (sqlite3_exec(q->c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return STORE_ERROR;
    q->in_tx = 1;
    return STORE_OK;
}

int store_query_commit(struct store_query *q)
{
    if (sqlite3_exec(q->c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        return STORE_ERROR;
    q->in_tx = 0;
    return STORE_OK;
}

/* Notes a refused bind (SQLite keeps its error on the connection). */
static void bound(struct store_query *q, int sqlite_rc)
{
    if (sqlite_rc != SQLITE_OK)
        q->bind_failed = 1;
}

void store_bind_text(struct store_query *q, int i, const char *v)
{
    if (v == NULL)
        store_bind_null(q, i);
    else
        bound(q, sqlite3_bind_text(q->st, i, v, -1, SQLITE_TRANSIENT));
}

void store_bind_int64(struct store_query *q, int i, sqlite3_int64 v)
{
    bound(q, sqlite3_bind_int64(q->st, i, v));
}

void store_bind_double(struct store_query *q, int i, double v)
{
    if (!isfinite(v))
        store_bind_null(q, i);
    else
        bound(q, sqlite3_bind_double(q->st, i, v));
}

void store_bind_null(struct store_query *q, int i)
{
    bound(q, sqlite3_bind_null(q->st, i));
}

int store_query_step(struct store_query *q)
{
    if (q->st == NULL || q->bind_failed)
        return STORE_ERROR;
    switch (sqlite3_step(q->st)) {
    case SQLITE_ROW:
        return STORE_STEP_ROW;
    case SQLITE_DONE:
        return STORE_STEP_DONE;
    default:
        return STORE_ERROR;
    }
}

int store_query_one(struct store_query *q)
{
    switch (store_query_step(q)) {
    case STORE_STEP_ROW:
        return STORE_OK;
    case STORE_STEP_DONE:
        return STORE_NOT_FOUND;
    default:
        return STORE_ERROR;
    }
}

int store_query_exec(struct store_query *q, int *changes)
{
    if (store_query_step(q) != STORE_STEP_DONE)
        return STORE_ERROR;
    if (changes)
        *changes = sqlite3_changes(q->c->db);
    return STORE_OK;
}

int store_query_run_values(struct store_query *q, const char *sql, int *changes,
                           const struct store_value *values, int n)
{
    if (store_query_prepare(q, sql) != STORE_OK)
        return STORE_ERROR;
    for (int i = 0; i < n; i++) {
        if (values[i].type == STORE_VALUE_INT)
            store_bind_int64(q, i + 1, values[i].i);
        else
            store_bind_text(q, i + 1, values[i].text);
    }
    return store_query_exec(q, changes);
}

/* Whether the error on db says the file is damaged: SQLite's own word
 * for it, or a JSON function refusing a value (this store only writes JSON
 * it has parsed, so one that no longer parses was damaged on disk). */
static int error_is_damage(sqlite3 *db)
{
    int code = sqlite3_extended_errcode(db);

    if (store_rc_from_sqlite(code, 0) == STORE_CORRUPT)
        return 1;
    return (code & 0xff) == SQLITE_ERROR && strstr(sqlite3_errmsg(db), "malformed JSON") != NULL;
}

int store_query_end(struct store_query *q, int rc)
{
    struct conn *c = q->c;

    if (q->nested) {
        /* The outer query's end maps the failure, after this statement is
         * released, and releasing it resets the connection's error: a
         * damaged page met here would reach store_fail as a plain error
         * (500 internal where it must say database_corrupt), so it is
         * noted now. */
        if (rc == STORE_ERROR && error_is_damage(c->db))
            store_note_damaged_value();
        conn_release(c, q->st);
        q->st = NULL;
        return rc;
    }
    if (rc == STORE_ERROR)
        rc = store_fail(c, q->what);
    else if (rc == STORE_OK && !q->in_tx)
        store_wrote(c);
    conn_release(c, q->st);
    q->st = NULL;
    if (q->in_tx)
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
    q->in_tx = 0;
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_rc_from_sqlite(int sqlite_rc, int sys_errno)
{
    switch (sqlite_rc & 0xff) {
    case SQLITE_FULL:
        return STORE_NO_SPACE;
    case SQLITE_IOERR:
        /* A write, a sync or a growth of the shared-memory file that the
         * filesystem refused for want of room (or quota). */
        return sys_errno == ENOSPC || sys_errno == EDQUOT ? STORE_NO_SPACE
                                                          : STORE_ERROR;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        return STORE_CORRUPT;
    default:
        return STORE_ERROR;
    }
}

const char *store_rc_words(int rc)
{
    switch (rc) {
    case STORE_OK:
        return "ok";
    case STORE_NOT_FOUND:
        return "not found";
    case STORE_CONFLICT:
        return "the run is not in a state that allows it";
    case STORE_FULL:
        return "the queue is full";
    case STORE_NO_SPACE:
        return "the disk holding the database is full";
    case STORE_CORRUPT:
        return "the database file is damaged";
    default:
        return "the database refused it (see the daemon's log)";
    }
}

/* The file behind c, for messages: which database, when --db is a
 * default or one of several daemons' on a host. */
static const char *store_file_name(struct conn *c)
{
    const char *f = c->db ? sqlite3_db_filename(c->db, "main") : NULL;

    return f && f[0] ? f : "(in memory)";
}

int store_fail(struct conn *c, const char *what)
{
    struct store *s = c->owner;
    int code = sqlite3_extended_errcode(c->db);
    int sys = sqlite3_system_errno(c->db);
    int rc = code == SQLITE_OK ? STORE_ERROR : store_rc_from_sqlite(code, sys);
    const char *msg = code == SQLITE_OK ? "out of memory" : sqlite3_errmsg(c->db);

    if (damaged_value || (code != SQLITE_OK && rc == STORE_ERROR && error_is_damage(c->db))) {
        damaged_value = 0;
        rc = STORE_CORRUPT;
        msg = "a JSON value stored by this daemon no longer parses (a damaged page)";
    }
    int first = 1;
    char now[32];
    const char *advice = "";

    if (rc == STORE_NO_SPACE || rc == STORE_CORRUPT) {
        time_now_rfc3339(now, sizeof(now));
        pthread_mutex_lock(&s->health_lock);
        first = rc == STORE_NO_SPACE ? !s->health.no_space : !s->health.corrupt;
        if (rc == STORE_NO_SPACE)
            s->health.no_space = 1;
        else
            s->health.corrupt = 1;
        if (first) {
            snprintf(s->health.message, sizeof(s->health.message), "%s: %s", what, msg);
            snprintf(s->health.since, sizeof(s->health.since), "%s", now);
        }
        pthread_mutex_unlock(&s->health_lock);
    }
    if (rc == STORE_NO_SPACE)
        advice = "; writes are refused (507) until space is freed";
    else if (rc == STORE_CORRUPT)
        advice = "; the database is damaged: stop the daemon and run gpubenchd --check-db";
    /* A full disk is said once when it starts (a runner retries every
     * second); every other failure each time. */
    if (first || rc != STORE_NO_SPACE)
        log_error("database %s: %s: %s (SQLite code %d, errno %d)%s", store_file_name(c), what,
                  msg, code, sys, advice);
    return rc;
}

void store_wrote(struct conn *c)
{
    struct store *s = c->owner;
    sqlite3_int64 total = sqlite3_total_changes64(c->db);
    int was_full;

    if (total == c->changes_seen)
        return; /* nothing reached the disk: it proves nothing */
    c->changes_seen = total;
    pthread_mutex_lock(&s->health_lock);
    was_full = s->health.no_space;
    s->health.no_space = 0;
    if (was_full && !s->health.corrupt)
        s->health.message[0] = s->health.since[0] = '\0';
    pthread_mutex_unlock(&s->health_lock);
    if (was_full)
        log_info("store: writes succeed again (there is space on the disk)");
}

const char *const store_check_words[] = {
    [STORE_CHECK_PENDING] = "pending",
    [STORE_CHECK_OK] = "ok",
    [STORE_CHECK_DAMAGED] = "damaged",
    [STORE_CHECK_FAILED] = "failed",
};

void store_health_get(struct store *s, struct store_health *h)
{
    pthread_mutex_lock(&s->health_lock);
    *h = s->health;
    pthread_mutex_unlock(&s->health_lock);
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
struct conn *store_reader(struct store *s)
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

const char *store_col_text(sqlite3_stmt *st, int col)
{
    return (const char *)sqlite3_column_text(st, col);
}

void store_add_text_or_null(cJSON *obj, const char *name, const char *v)
{
    if (v)
        cJSON_AddStringToObject(obj, name, v);
    else
        cJSON_AddNullToObject(obj, name);
}

/* 1 when a column that holds a value could not be read: SQLite answers
 * NULL for it (out of memory, or a damaged page it had to follow), which
 * must not pass for a NULL that was stored. */
static int column_failed(sqlite3_stmt *st, int col, const char *text)
{
    return text == NULL && sqlite3_column_type(st, col) != SQLITE_NULL;
}

/* Parses a JSON column; a column that does not parse (it never should) is
 * shown as null rather than failing the whole answer. */
cJSON *store_json_column(sqlite3_stmt *st, int col)
{
    const char *text = store_col_text(st, col);
    cJSON *v = text ? cJSON_ParseWithLength(text, (size_t)sqlite3_column_bytes(st, col)) : NULL;

    if (column_failed(st, col, text))
        return NULL;
    if (text && v == NULL) {
        store_note_damaged_value();
        return NULL;
    }
    return v ? v : cJSON_CreateNull();
}

cJSON *store_raw_column(sqlite3_stmt *st, int col)
{
    const char *text = store_col_text(st, col);
    cJSON *v = text ? cJSON_CreateRaw(text) : NULL;

    if (column_failed(st, col, text))
        return NULL;
    return v ? v : cJSON_CreateNull();
}

cJSON *store_run_from_row(sqlite3_stmt *st)
{
    cJSON *run = cJSON_CreateObject();
    cJSON *device, *params;

    if (run == NULL)
        return NULL;
    for (int col = 0; col < C_COUNT; col++) {
        if (column_failed(st, col, store_col_text(st, col))) {
            cJSON_Delete(run);
            return NULL; /* the caller's store_fail says why */
        }
    }
    cJSON_AddStringToObject(run, "id", store_col_text(st, C_ID));
    cJSON_AddStringToObject(run, "benchmark", store_col_text(st, C_BENCHMARK));
    /* Params are written by this store, as JSON: kept as text, they are
     * printed as they are, not parsed and printed again. */
    params = store_raw_column(st, C_PARAMS);
    if (params == NULL) {
        cJSON_Delete(run);
        return NULL;
    }
    cJSON_AddItemToObject(run, "params", params);
    store_add_text_or_null(run, "label", store_col_text(st, C_LABEL));
    store_add_text_or_null(run, "batch", store_col_text(st, C_BATCH));
    cJSON_AddStringToObject(run, "host", store_col_text(st, C_HOST));
    device = cJSON_AddObjectToObject(run, "device");
    if (sqlite3_column_type(st, C_DEV_INDEX) == SQLITE_NULL)
        cJSON_AddNullToObject(device, "index");
    else
        cJSON_AddNumberToObject(device, "index", sqlite3_column_int(st, C_DEV_INDEX));
    store_add_text_or_null(device, "uuid", store_col_text(st, C_DEV_UUID));
    store_add_text_or_null(device, "name", store_col_text(st, C_DEV_NAME));
    cJSON_AddStringToObject(run, "status", store_col_text(st, C_STATUS));
    cJSON_AddNumberToObject(run, "timeout_s", sqlite3_column_int(st, C_TIMEOUT));
    store_add_text_or_null(run, "created_at", store_col_text(st, C_CREATED));
    store_add_text_or_null(run, "started_at", store_col_text(st, C_STARTED));
    store_add_text_or_null(run, "finished_at", store_col_text(st, C_FINISHED));
    if (sqlite3_column_type(st, C_PROG_TOTAL) != SQLITE_NULL) {
        cJSON *p = cJSON_AddObjectToObject(run, "progress");
        cJSON_AddNumberToObject(p, "done", sqlite3_column_double(st, C_PROG_DONE));
        cJSON_AddNumberToObject(p, "total", sqlite3_column_double(st, C_PROG_TOTAL));
        store_add_text_or_null(p, "message", store_col_text(st, C_PROG_MESSAGE));
    } else {
        cJSON_AddNullToObject(run, "progress");
    }
    if (store_col_text(st, C_ERR_CODE)) {
        cJSON *e = cJSON_AddObjectToObject(run, "error");
        cJSON_AddStringToObject(e, "code", store_col_text(st, C_ERR_CODE));
        store_add_text_or_null(e, "message", store_col_text(st, C_ERR_MSG));
    } else {
        cJSON_AddNullToObject(run, "error");
    }
    store_add_text_or_null(run, "origin", store_col_text(st, C_ORIGIN));
    /* A confirming run (issue 14) names the run it repeats. */
    store_add_text_or_null(run, "confirms", store_col_text(st, C_CONFIRMS));
    /* The method version it was measured by (bench_spec.h); null where
     * it cannot be known (gpubench 0.1.0). */
    if (sqlite3_column_type(st, C_METHOD) == SQLITE_NULL)
        cJSON_AddNullToObject(run, "method");
    else
        cJSON_AddNumberToObject(run, "method", (double)sqlite3_column_int64(st, C_METHOD));
    if (sqlite3_column_type(st, C_SEQ) == SQLITE_NULL)
        cJSON_AddNullToObject(run, "seq");
    else
        cJSON_AddNumberToObject(run, "seq", (double)sqlite3_column_int64(st, C_SEQ));
    /* The verdict (migrations/0004_validity.sql); a run not judged (not
     * finished, or stored before verdicts) is unknown. */
    if (store_col_text(st, C_VALIDITY))
        cJSON_AddItemToObject(run, "validity", store_json_column(st, C_VALIDITY));
    else
        cJSON_AddNullToObject(cJSON_AddObjectToObject(run, "validity"), "valid");
    /* Its checks against its card model's floors (migrations/0012_checks.sql):
     * null where its benchmark has none or it is not done. */
    if (store_col_text(st, C_CHECKS))
        cJSON_AddItemToObject(run, "checks", store_json_column(st, C_CHECKS));
    else
        cJSON_AddNullToObject(run, "checks");
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
static int conn_open(struct store *s, struct conn *c, const char *path,
                     int writer, char *errbuf, size_t cap)
{
    c->owner = s;
    pthread_mutex_init(&c->lock, NULL);
    if (sqlite3_open_v2(path, &c->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                            SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        snprintf(errbuf, cap, "cannot open database %s: %s", path,
                 c->db ? sqlite3_errmsg(c->db) : "out of memory");
        return -1;
    }
    sqlite3_busy_timeout(c->db, 5000);
    if (store_functions_register(c->db) != 0) {
        snprintf(errbuf, cap, "cannot register the key's SQL functions: %s",
                 sqlite3_errmsg(c->db));
        return -1;
    }
    if (writer)
        return exec_pragma(c->db, "PRAGMA journal_mode = WAL", errbuf, cap) ||
                       exec_pragma(c->db, "PRAGMA synchronous = FULL", errbuf, cap) ||
                       exec_pragma(c->db, "PRAGMA foreign_keys = ON", errbuf, cap)
                   ? -1
                   : 0;
    /* A reader must never write, whatever a bug asks of it. */
    return exec_pragma(c->db, "PRAGMA query_only = 1", errbuf, cap) ? -1 : 0;
}

/* Puts path in front of errbuf unless it is there already: "file is not a
 * database" alone does not say which file (--db, or a default). */
static void name_the_file(const char *path, char *errbuf, size_t cap)
{
    char why[1024];

    if (strstr(errbuf, path) != NULL)
        return;
    snprintf(why, sizeof(why), "%s", errbuf);
    snprintf(errbuf, cap, "database %s: %s", path, why);
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
    pthread_mutex_init(&s->health_lock, NULL);
    if (conn_open(s, &s->writer, path, 1, errbuf, cap) != 0 ||
        migrate_apply(s->writer.db, errbuf, cap) != 0)
        goto done;
    /* Readers only once the schema is there. */
    for (; s->nreaders < STORE_READERS; s->nreaders++)
        if (conn_open(s, &s->readers[s->nreaders], path, 0, errbuf, cap) != 0) {
            s->nreaders++; /* so that store_close closes it too */
            goto done;
        }
    rc = STORE_OK;

done:
    if (rc != STORE_OK) {
        name_the_file(path, errbuf, cap);
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
    pthread_mutex_destroy(&s->health_lock);
    free(s);
}

int store_ping(struct store *s)
{
    long depth;

    return store_queue_depth(s, -1, &depth);
}
