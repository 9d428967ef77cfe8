/*
 * store_check.c - see store_check.h.
 *
 * quick_check rather than integrity_check: it walks every page of every
 * b-tree (what finds a page overwritten with garbage) without comparing
 * each index entry with its row, which is O(N log N) and on a million runs
 * many times longer.  The thread owns its connection; the store's health is
 * written under the store's health_lock.
 */
#include "store_check.h"
#include "log.h"
#include "store_internal.h"
#include "timeutil.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The rest between tables is at most this long, so that a big table's
 * long check does not stretch the whole one without end. */
#define MAX_REST_MS 2000
/* Tables checked at most (the schema has a dozen). */
#define MAX_TABLES 64

struct store_checker {
    struct store *store;
    const char *path;
    int delay_s, interval_s;
    pthread_t thread;
    pthread_mutex_t lock; /* guards stop */
    pthread_cond_t wake;
    int stop;
};

/* Waits ms, or less when told to stop: 1 when told. */
static int rest(struct store_checker *c, long ms)
{
    struct timespec until;
    int stop;

    until = time_after_ms(CLOCK_MONOTONIC, ms);
    pthread_mutex_lock(&c->lock);
    while (!c->stop && pthread_cond_timedwait(&c->wake, &c->lock, &until) != ETIMEDOUT)
        ;
    stop = c->stop;
    pthread_mutex_unlock(&c->lock);
    return stop;
}

static void note_result(struct store *s, int state, const char *finding)
{
    char now[32];

    time_now_rfc3339(now, sizeof(now));
    pthread_mutex_lock(&s->health_lock);
    if (s->health.check != STORE_CHECK_DAMAGED) /* damage does not heal by itself */
        s->health.check = state;
    snprintf(s->health.checked_at, sizeof(s->health.checked_at), "%s", now);
    if (state == STORE_CHECK_DAMAGED && !s->health.corrupt) {
        s->health.corrupt = 1;
        snprintf(s->health.message, sizeof(s->health.message), "the database check found: %s",
                 finding);
        snprintf(s->health.since, sizeof(s->health.since), "%s", now);
    }
    pthread_mutex_unlock(&s->health_lock);
}

/* One table's quick_check on db: 0 clean, 1 damaged (the first finding in
 * finding), -1 when it could not run for another reason. */
static int check_table(sqlite3 *db, const char *table, char *finding, size_t cap)
{
    char sql[300];
    sqlite3_stmt *st = NULL;
    int rc = 0, step;

    snprintf(sql, sizeof(sql), "PRAGMA quick_check(\"%s\")", table);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        rc = -1;
        goto done;
    }
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *line = (const char *)sqlite3_column_text(st, 0);

        if (line && strcmp(line, "ok") != 0 && rc == 0) {
            snprintf(finding, cap, "%s: %s", table, line);
            rc = 1;
        }
    }
    if (step != SQLITE_DONE && rc == 0)
        rc = -1;

done:
    if (rc == -1 && store_rc_from_sqlite(sqlite3_extended_errcode(db), 0) == STORE_CORRUPT) {
        snprintf(finding, cap, "%s: %s", table, sqlite3_errmsg(db));
        rc = 1;
    }
    if (rc == -1)
        snprintf(finding, cap, "%s: %s", table, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc;
}

/* One whole check.  1 when told to stop in the middle. */
static int check_once(struct store_checker *c)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *list = NULL;
    char finding[200] = "", tables[MAX_TABLES][128];
    int64_t started = time_mono_ms();
    int result = 0, ntables = 0, stopped = 0, step;

    if (sqlite3_open_v2(c->path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        snprintf(finding, sizeof(finding), "cannot open it: %s",
                 db ? sqlite3_errmsg(db) : "out of memory");
        result = -1;
        goto done;
    }
    sqlite3_busy_timeout(db, 5000);
    /* The schema table first: every other table is found through it. */
    result = check_table(db, "sqlite_schema", finding, sizeof(finding));
    if (result != 0)
        goto done;
    /* The names first, then the checks: no read held open across them. */
    if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_schema WHERE type = 'table'", -1, &list,
                           NULL) != SQLITE_OK) {
        snprintf(finding, sizeof(finding), "the list of tables: %s", sqlite3_errmsg(db));
        result = -1;
        goto done;
    }
    while ((step = sqlite3_step(list)) == SQLITE_ROW && ntables < MAX_TABLES)
        snprintf(tables[ntables++], sizeof(tables[0]), "%s",
                 (const char *)sqlite3_column_text(list, 0));
    sqlite3_finalize(list);
    list = NULL;
    for (int i = 0; i < ntables && result == 0 && !stopped; i++) {
        int64_t t0 = time_mono_ms(), took;

        result = check_table(db, tables[i], finding, sizeof(finding));
        took = time_mono_ms() - t0;
        stopped = rest(c, took < MAX_REST_MS ? (long)took : MAX_REST_MS);
    }

done:
    sqlite3_finalize(list);
    sqlite3_close(db);
    if (stopped)
        return 1;
    if (result == 0) {
        note_result(c->store, STORE_CHECK_OK, NULL);
        log_info("database check: no damage found (%d tables, %.1f s)", ntables,
                 (double)(time_mono_ms() - started) / 1000.0);
    } else if (result > 0) {
        note_result(c->store, STORE_CHECK_DAMAGED, finding);
        log_error("database check: the database %s is DAMAGED: %s; stop the daemon and run "
                  "gpubenchd --check-db (README, \"Backups and restore\")",
                  c->path, finding);
    } else {
        note_result(c->store, STORE_CHECK_FAILED, finding);
        log_warn("database check: could not check %s: %s", c->path, finding);
    }
    return 0;
}

static void *checker_main(void *arg)
{
    struct store_checker *c = arg;

    if (rest(c, (long)c->delay_s * 1000))
        return NULL;
    while (check_once(c) == 0 && c->interval_s > 0 && !rest(c, (long)c->interval_s * 1000))
        ;
    return NULL;
}

struct store_checker *store_checker_start(struct store *s, const char *path, int delay_s,
                                          int interval_s)
{
    struct store_checker *c = calloc(1, sizeof(*c));
    pthread_condattr_t attr;
    int made = 0;

    if (c == NULL) {
        log_error("out of memory starting the database check");
        return NULL;
    }
    c->store = s;
    c->path = path;
    c->delay_s = delay_s;
    c->interval_s = interval_s;
    if (pthread_mutex_init(&c->lock, NULL) != 0)
        goto failed;
    made = 1;
    if (pthread_condattr_init(&attr) != 0)
        goto failed;
    /* Rests are measured on the monotonic clock: a clock step does not
     * stretch or skip them. */
    if (pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) != 0 ||
        pthread_cond_init(&c->wake, &attr) != 0) {
        pthread_condattr_destroy(&attr);
        goto failed;
    }
    pthread_condattr_destroy(&attr);
    made = 2;
    if (pthread_create(&c->thread, NULL, checker_main, c) != 0)
        goto failed;
    return c;

failed:
    log_error("cannot start the database check");
    if (made == 2)
        pthread_cond_destroy(&c->wake);
    if (made >= 1)
        pthread_mutex_destroy(&c->lock);
    free(c);
    return NULL;
}

void store_checker_stop(struct store_checker *c)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&c->lock);
    c->stop = 1;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->thread, NULL);
    pthread_cond_destroy(&c->wake);
    pthread_mutex_destroy(&c->lock);
    free(c);
}
