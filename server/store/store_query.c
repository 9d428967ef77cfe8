/*
 * store_query.c - the one way a statement is run (struct store_query,
 * store_internal.h).  A query takes its connection's mutex for the
 * calling function's whole span and, on one cleanup path
 * (store_query_end), maps a failure through store_fail (store_health.c),
 * releases (resets) the statement, rolls back what was not committed and
 * unlocks: no statement holds a read transaction open after the call.
 * Statements are prepared once per connection and kept (a cache of
 * STMT_CACHE keyed by the SQL text's address, the least recently used
 * going first), then only reset and re-bound; values are bound by their
 * type.  A read takes whichever reader connection is free.
 */
#include "store_internal.h"
#include "log.h"

#include <math.h>
#include <string.h>

/* The prepared statement for sql on c, prepared on first use and kept;
 * when the cache is full, the least recently used statement that no query
 * holds now is finalized to make room (a connection serves one query at a
 * time, but a nested query holds its outer query's statement).  sql must
 * be a string with static storage.  Returns SQLITE_OK or the prepare
 * error; release the statement with conn_release. */
static int conn_prepare(struct conn *c, const char *sql, sqlite3_stmt **st)
{
    int rc, victim = -1;

    c->tick++;
    for (int i = 0; i < c->ncache; i++) {
        if (c->cache[i].sql == sql) {
            c->cache[i].used = c->tick;
            c->cache[i].busy = 1;
            *st = c->cache[i].st;
            return SQLITE_OK;
        }
    }
    rc = sqlite3_prepare_v3(c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
    if (rc != SQLITE_OK)
        return rc;
    if (c->ncache < STMT_CACHE) {
        victim = c->ncache++;
    } else {
        for (int i = 0; i < c->ncache; i++)
            if (!c->cache[i].busy && (victim < 0 || c->cache[i].used < c->cache[victim].used))
                victim = i;
        if (victim < 0)
            return SQLITE_OK; /* every one in use: this one is finalized after */
        sqlite3_finalize(c->cache[victim].st);
    }
    c->cache[victim] = (struct cached_stmt){.sql = sql, .st = *st, .used = c->tick, .busy = 1};
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
            c->cache[i].busy = 0;
            return;
        }
    }
    sqlite3_finalize(st);
}

/* c locked, or for a reader, the first free reader from c on (c itself,
 * waited for, when all are busy): a long read on one never holds up the
 * threads that happened to choose it. */
static struct conn *conn_lock(struct conn *c)
{
    struct store *s = c->owner;
    int first, n = s ? s->nreaders : 0;

    if (s == NULL || c == &s->writer || n < 2) {
        pthread_mutex_lock(&c->lock);
        return c;
    }
    first = (int)(c - s->readers);
    for (int i = 0; i < n; i++) {
        struct conn *r = &s->readers[(first + i) % n];
        if (pthread_mutex_trylock(&r->lock) == 0)
            return r;
    }
    pthread_mutex_lock(&c->lock);
    return c;
}

void store_query_begin(struct store_query *q, struct conn *c, const char *what)
{
    memset(q, 0, sizeof(*q));
    q->what = what;
    q->c = conn_lock(c);
    store_touch_begin(q->c);
    store_damage_reset(); /* what an earlier query noted is not this one's */
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

int store_query_transaction_relaxed(struct store_query *q)
{
    if (sqlite3_exec(q->c->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL) != SQLITE_OK)
        return STORE_ERROR;
    q->relaxed = 1;
    return store_query_transaction(q);
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

int store_query_rows(struct store_query *q, cJSON *(*make)(sqlite3_stmt *), cJSON **out)
{
    cJSON *list = cJSON_CreateArray();
    int step;

    *out = NULL;
    if (list == NULL)
        return STORE_ERROR;
    while ((step = store_query_step(q)) == STORE_STEP_ROW) {
        cJSON *item = make(q->st);
        if (item == NULL || !cJSON_AddItemToArray(list, item)) {
            cJSON_Delete(item);
            step = STORE_ERROR;
            break;
        }
    }
    if (step != STORE_STEP_DONE) {
        cJSON_Delete(list);
        return STORE_ERROR;
    }
    *out = list;
    return STORE_OK;
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

int store_query_end(struct store_query *q, int rc)
{
    struct conn *c = q->c;

    if (q->nested) {
        /* The outer query's end maps the failure, after this statement is
         * released, and releasing it resets the connection's error: a
         * damaged page met here would reach store_fail as a plain error
         * (500 internal where it must say database_corrupt), so it is
         * noted now. */
        if (rc == STORE_ERROR && store_error_is_damage(c->db))
            store_note_damaged_value();
        conn_release(c, q->st);
        q->st = NULL;
        return rc;
    }
    if (rc != STORE_OK && sqlite3_total_changes64(c->db) != c->changes_seen) {
        /* a failure after rows changed (a commit before it, or rows
         * about to be rolled back): counted as touching everything, so a
         * keeper never misses what did reach the disk */
        c->changes_seen = sqlite3_total_changes64(c->db);
        if (c == &c->owner->writer) /* its pending list is the writer's, under its lock */
            c->owner->pending_all = 1;
        store_touch_count(c);
    }
    if (rc == STORE_ERROR)
        rc = store_fail(c, q->what);
    else
        store_damage_served(c, q->what);
    if (rc == STORE_OK && !q->in_tx)
        store_wrote(c);
    conn_release(c, q->st);
    q->st = NULL;
    if (q->in_tx)
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
    q->in_tx = 0;
    /* Every other write on the connection is durable at COMMIT. */
    if (q->relaxed &&
        sqlite3_exec(c->db, "PRAGMA synchronous = FULL", NULL, NULL, NULL) != SQLITE_OK) {
        log_msg(LOG_ERROR, "store: cannot restore synchronous = FULL on the writer: %s",
                sqlite3_errmsg(c->db));
        rc = STORE_ERROR;
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}
