/*
 * store.c - see store.h; this file holds the connections: one writer,
 * which every change goes through (SQLite has one writer at a time
 * anyway), and a few readers, so that reads run beside a write and beside
 * each other (WAL mode).  Each HTTP or runner thread keeps to one reader.
 * Each connection has its own mutex and keeps its prepared statements
 * (SQLITE_PREPARE_PERSISTENT, store_query.c).
 *
 * What the store's files share is store_internal.h: store_query.c runs
 * the statements, store_health.c maps failures and notes damage,
 * store_row.c turns a row into a run; store_queue.c moves runs through
 * their lives, store_read.c answers the reads, store_fleet.c stores runs
 * made elsewhere and the peers' state.
 */
#include "store_internal.h"
#include "store_functions.h"
#include "store_queue.h"
#include "migrate.h"

#include "hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* The reader this thread starts from (chosen round robin on first use). */
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

/* What tells this opening of the database from another: the time and
 * the process, mixed. */
static unsigned opening_stamp(void)
{
    struct timespec t;
    char text[64];

    clock_gettime(CLOCK_REALTIME, &t);
    snprintf(text, sizeof(text), "%lld.%ld.%ld", (long long)t.tv_sec, t.tv_nsec,
             (long)getpid());
    return hash_fnv1a(text);
}

void store_state_tag(struct store *s, char out[STORE_STATE_TAG])
{
    snprintf(out, STORE_STATE_TAG, "%08x-%llx", s->opened,
             (unsigned long long)atomic_load(&s->run_writes));
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
    pthread_mutex_init(&s->touch_lock, NULL);
    atomic_init(&s->writes, 0);
    atomic_init(&s->run_writes, 0);
    s->opened = opening_stamp();
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
    pthread_mutex_destroy(&s->touch_lock);
    pthread_mutex_destroy(&s->health_lock);
    free(s);
}

int store_ping(struct store *s)
{
    long depth;

    return store_queue_depth(s, -1, &depth);
}
