/*
 * store_health.c - the one place a failure of SQLite is handled
 * (store_fail): SQLite's code mapped to the store's (a full disk, a
 * damaged file, anything else), said in the log with the file's name, and
 * a full disk or a damaged file noted in the store's health (under
 * health_lock), which /healthz and /metrics read.  Damage SQLite cannot
 * see (a JSON value this store wrote that no longer parses) is reported
 * here by the row helpers through a flag of the calling thread.
 */
#include "store_internal.h"
#include "log.h"
#include "timeutil.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Set by the row helpers when a value this store wrote as JSON no longer
 * parses (a damaged page SQLite cannot tell from data), and read back by
 * store_fail or store_damage_served on the same thread within the same
 * query: the helpers see only the statement, not its connection.  Reset
 * when a query begins, so that it never outlives the query that set it
 * (a later, unrelated failure on the thread is not damage). */
static _Thread_local int damaged_value;
/* The run served as damaged, for the log: "run ID (column)". */
static _Thread_local char damaged_what[96];

void store_note_damaged_value(void)
{
    damaged_value = 1;
}

void store_note_damaged_run(const char *id, const char *column)
{
    damaged_value = 1;
    snprintf(damaged_what, sizeof(damaged_what), "run %.40s (%.32s)", id ? id : "?", column);
}

void store_damage_reset(void)
{
    damaged_value = 0;
    damaged_what[0] = '\0';
}

/* Whether the error on db says the file is damaged: SQLite's own word
 * for it, or a JSON function refusing a value (this store only writes JSON
 * it has parsed, so one that no longer parses was damaged on disk). */
int store_error_is_damage(sqlite3 *db)
{
    int code = sqlite3_extended_errcode(db);

    if (store_rc_from_sqlite(code, 0) == STORE_CORRUPT)
        return 1;
    return (code & 0xff) == SQLITE_ERROR && strstr(sqlite3_errmsg(db), "malformed JSON") != NULL;
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

/* Notes a full disk (rc STORE_NO_SPACE) or damage (STORE_CORRUPT) in s's
 * health; the first time, with what and msg.  1 when it is the first. */
static int note_health(struct store *s, int rc, const char *what, const char *msg)
{
    char now[32];
    int first;

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
    return first;
}

int store_fail(struct conn *c, const char *what)
{
    int code = sqlite3_extended_errcode(c->db);
    int sys = sqlite3_system_errno(c->db);
    int rc = code == SQLITE_OK ? STORE_ERROR : store_rc_from_sqlite(code, sys);
    const char *msg = code == SQLITE_OK ? "out of memory" : sqlite3_errmsg(c->db);

    if (damaged_value || (code != SQLITE_OK && rc == STORE_ERROR && store_error_is_damage(c->db))) {
        rc = STORE_CORRUPT;
        msg = "a JSON value stored by this daemon no longer parses (a damaged page)";
    }
    int first = 1;
    const char *advice = "";

    store_damage_reset();
    if (rc == STORE_NO_SPACE || rc == STORE_CORRUPT)
        first = note_health(c->owner, rc, what, msg);
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

void store_damage_served(struct conn *c, const char *what)
{
    char msg[160];

    if (!damaged_value)
        return;
    snprintf(msg, sizeof(msg), "%s: a JSON value stored by this daemon no longer parses",
             damaged_what[0] ? damaged_what : "a value");
    store_damage_reset();
    note_health(c->owner, STORE_CORRUPT, what, msg);
    log_warn("database %s: %s: %s; served marked damaged (the rest is served): stop the "
             "daemon and run gpubenchd --check-db",
             store_file_name(c), what, msg);
}

void store_wrote(struct conn *c)
{
    struct store *s = c->owner;
    sqlite3_int64 total = sqlite3_total_changes64(c->db);
    int was_full;

    if (total == c->changes_seen)
        return; /* nothing reached the disk: it proves nothing */
    c->changes_seen = total;
    store_touch_count(c);
    pthread_mutex_lock(&s->health_lock);
    was_full = s->health.no_space;
    s->health.no_space = 0;
    if (was_full && !s->health.corrupt)
        s->health.message[0] = s->health.since[0] = '\0';
    pthread_mutex_unlock(&s->health_lock);
    if (was_full)
        log_info("store: writes succeed again (there is space on the disk)");
}

unsigned long long store_changes(struct store *s)
{
    return (unsigned long long)atomic_load(&s->writes);
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
