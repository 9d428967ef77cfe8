/*
 * store.h - every run and its results, in SQLite: opening the database,
 * the store's result codes, its health, and what a start or a probe asks
 * of it.  What each table holds is in its own header: store_runs.h (runs
 * and their results), store_queue.h (a run's life on its GPU),
 * store_peers.h, store_verdicts.h (what a verdict reads),
 * store_baselines.h, store_alerts.h.
 *
 * One connection, opened in WAL mode with synchronous=FULL, a busy timeout
 * and foreign keys on, and guarded by one mutex: HTTP threads and the GPU
 * runners all go through here.  Every statement is prepared with bound
 * values.  A run is written before anyone is told it was accepted, and its
 * status only moves forward (see migrations/0001_runs.sql).
 *
 * JSON that a function returns through an out-parameter is a NEW cJSON
 * tree owned by the caller (cJSON_Delete).
 */
#ifndef GPUBENCH_STORE_STORE_H
#define GPUBENCH_STORE_STORE_H

#include <stddef.h>
#include <stdio.h>

struct store;

/* Every write may also answer STORE_NO_SPACE or STORE_CORRUPT (nothing was
 * changed), and every read STORE_CORRUPT. */
enum store_rc {
    STORE_OK = 0,
    STORE_NOT_FOUND = 1,
    STORE_CONFLICT = 2, /* the run is not in a state that allows it */
    STORE_FULL = 3,     /* the queue is at its bound */
    STORE_NO_SPACE = 4, /* the disk holding the database is full: a write
                         * was refused and changed nothing; try later */
    STORE_CORRUPT = 5,  /* the database file is damaged (SQLite said
                         * SQLITE_CORRUPT or SQLITE_NOTADB) */
    STORE_ERROR = -1
};

/* Every failure of SQLite becomes one of STORE_NO_SPACE, STORE_CORRUPT or
 * STORE_ERROR in one place (store.c), which also logs it and keeps the
 * store's health (store_health).  This is that mapping, from SQLite's
 * extended result code and the system errno behind it. */
int store_rc_from_sqlite(int sqlite_rc, int sys_errno);

/* A few words for a store result, for logs and run errors ("the disk
 * holding the database is full"). */
const char *store_rc_words(int rc);

/* Where the daemon's own check of its database stands (store_check.h). */
enum store_check_state {
    STORE_CHECK_PENDING, /* not finished yet */
    STORE_CHECK_OK,      /* the last one found no damage */
    STORE_CHECK_DAMAGED, /* one found damage (corrupt is set) */
    STORE_CHECK_FAILED,  /* the last one could not run (said in the log) */
};
/* Their names in /healthz's "database_check", by value. */
extern const char *const store_check_words[];

/* What /healthz reports of the database, beyond answering at all. */
struct store_health {
    int no_space;        /* the last write failed for want of space */
    int corrupt;         /* a read or write found the file damaged (stays
                          * set: damage does not heal by itself) */
    char message[256];   /* what failed, in SQLite's words */
    char since[32];      /* when (RFC 3339) */
    int check;           /* enum store_check_state */
    char checked_at[32]; /* when the last check ended (RFC 3339); "" */
};
void store_health_get(struct store *s, struct store_health *h);

/* 1 for done, failed and cancelled: a run that will never change again. */
int store_status_final(const char *status);

/* Opens (creating if needed) and migrates the database at path.  On
 * failure returns STORE_ERROR with a sentence in errbuf. */
int store_open(const char *path, struct store **out, char *errbuf, size_t cap);
void store_close(struct store *s);

/* Marks runs this node left 'running' (the daemon died under them) as
 * failed with code "interrupted".  *count gets how many. */
int store_recover(struct store *s, int *count);

/* What the database holds now, as a short tag (an ETag's, for answers
 * made from the runs alone: list pages, exports): it changes with every
 * write that changed rows, but those that said they change no run row
 * (store_query_no_run_rows), and with every opening of the database, and
 * stays the same otherwise.  Read it BEFORE reading what it tags, so
 * that a write in between makes the tag older, never the answer. */
#define STORE_STATE_TAG 40
void store_state_tag(struct store *s, char out[STORE_STATE_TAG]);

/* A trivial query, for /healthz. */
int store_ping(struct store *s);

/* A count that grows with every committed write that changed rows (runs
 * stored, imported or pulled, card events, alerts...): a reader that keeps
 * something made from the store (the /metrics cache, metrics_cache.h)
 * compares it to know whether to make it again. */
unsigned long long store_changes(struct store *s);

#endif
