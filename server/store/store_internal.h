/*
 * store_internal.h - what the store's files share, and nothing outside
 * server/store*.c may include: the connections (one writer, a few readers,
 * each keeping its prepared statements), the columns every run query
 * selects, and the helpers that turn a row into a run.  See store.h for
 * the store itself and store.c for the connections.
 */
#ifndef GPUBENCH_STORE_INTERNAL_H
#define GPUBENCH_STORE_INTERNAL_H

#include <pthread.h>
#include <sqlite3.h>
#include <cjson/cJSON.h>

#include "store.h"

#define STORE_READERS 4
#define STMT_CACHE 64

struct cached_stmt {
    const char *sql;      /* a static string: its address is the key */
    sqlite3_stmt *st;
};

struct conn {
    struct store *owner;
    sqlite3 *db;
    pthread_mutex_t lock;
    struct cached_stmt cache[STMT_CACHE];
    int ncache;
    sqlite3_int64 changes_seen;  /* sqlite3_total_changes64 at the last
                                  * store_wrote */
};

struct store {
    store_url_fn run_url; /* set before serving, then only read */
    struct conn writer;
    struct conn readers[STORE_READERS];
    int nreaders;
    unsigned next_reader;  /* under writer.lock */
    pthread_mutex_t health_lock;  /* guards health */
    struct store_health health;
};

/* The columns every run query selects, in the order run_from_row reads. */
#define RUN_COLUMNS                                                          \
    "r.id, r.benchmark, r.params, r.label, r.batch_id, r.host, "             \
    "r.device_index, r.device_uuid, r.device_name, r.status, r.timeout_s, "  \
    "r.created_at, r.started_at, r.finished_at, r.progress_done, "           \
    "r.progress_total, r.error_code, r.error_message, r.origin, r.final_seq, " \
    "r.validity, r.progress_message, r.confirms"

enum {
    C_ID, C_BENCHMARK, C_PARAMS, C_LABEL, C_BATCH, C_HOST, C_DEV_INDEX,
    C_DEV_UUID, C_DEV_NAME, C_STATUS, C_TIMEOUT, C_CREATED, C_STARTED,
    C_FINISHED, C_PROG_DONE, C_PROG_TOTAL, C_ERR_CODE, C_ERR_MSG, C_ORIGIN,
    C_SEQ, C_VALIDITY, C_PROG_MESSAGE, C_CONFIRMS, C_COUNT
};

/* The next number in the order runs become final here (see
 * migrations/0002_fleet.sql); evaluated inside the writing transaction.
 * The IS NOT NULL is what lets max() read the end of the partial index
 * runs_by_final_seq instead of scanning every run. */
#define NEXT_SEQ "(SELECT coalesce(max(final_seq), 0) + 1 FROM runs WHERE final_seq IS NOT NULL)"

/* The part of the comparability key that decides a verdict (benchmark,
 * card model, params: compare_key_fields with decides_verdict), as one
 * text, of the runs row named by prefix t ("" or "r.").  Kept in
 * runs.verdict_key for done runs; migrations/0007_run_verdicts.sql fills
 * it with the same expression. */
#define STORE_VERDICT_KEY(t)                                                     \
    "(" t "benchmark || char(31) || coalesce(" t "device_name, '') || char(31) || " \
    "json(" t "params))"

/* What a verdict reads of a run (store_get_verdict_run), in the order
 * store_verdict_run_from_row reads them: the fields of runs r
 * (VERDICT_RUN_FIELDS), then its results' rows.  Neither the meta nor the
 * summary is parsed. */
#define VERDICT_RUN_FIELDS                                                  \
    "r.id, r.benchmark, r.params, r.device_name, r.status, r.created_at, " \
    "r.confirms, r.valid"
#define VERDICT_RUN_COLUMNS                                                  \
    VERDICT_RUN_FIELDS ", (SELECT json_extract(results, '$.rows') "          \
    "FROM run_results WHERE run_id = r.id)"

/* The prepared statement for sql on c, prepared on first use and kept;
 * sql must have static storage (its address is the key).  SQLITE_OK or the
 * prepare error.  Release it with store_conn_release. */
int store_conn_prepare(struct conn *c, const char *sql, sqlite3_stmt **st);

/* Ends a statement's use: reset (closing its read) and unbound. */
void store_conn_release(struct conn *c, sqlite3_stmt *st);

/* One sqlite3_step of a statement that yields at most one row: STORE_OK
 * with the row to read, STORE_NOT_FOUND with none, STORE_ERROR when the
 * step failed (the caller's store_fail reports it). */
int store_step_one(sqlite3_stmt *st);

/* The one place a failure of SQLite on c is handled: logs what was being
 * done with SQLite's words, notes a full disk or a damaged file in the
 * store's health, and returns STORE_NO_SPACE, STORE_CORRUPT or
 * STORE_ERROR.  Call it on the failure path BEFORE the statement is
 * released or a ROLLBACK is run: both reset the connection's error. */
int store_fail(struct conn *c, const char *what);

/* Notes that a write on c succeeded: when it changed rows (so it reached
 * the disk), a full disk noted before is over. */
void store_wrote(struct conn *c);

/* The reader connection this thread keeps to. */
struct conn *store_reader(struct store *s);

/* Row helpers: a column's text (NULL for NULL), a JSON column parsed (null
 * when it does not parse; a NEW item), a run object from a row selected
 * with RUN_COLUMNS (NEW; caller owns; its params a raw item).  The JSON
 * ones and the run return NULL when a column could not be read (a damaged
 * page, no memory): an error for store_fail, never a null to show. */
const char *store_col_text(sqlite3_stmt *st, int col);
void store_add_text_or_null(cJSON *obj, const char *name, const char *v);
cJSON *store_json_column(sqlite3_stmt *st, int col);
/* A JSON column as a raw item (printed verbatim, not parsed): only for
 * columns this store wrote as JSON, and only for answers that print them. */
cJSON *store_raw_column(sqlite3_stmt *st, int col);
cJSON *store_run_from_row(const struct store *s, sqlite3_stmt *st);

/* A run as a verdict reads it, from a row selected with
 * VERDICT_RUN_COLUMNS: {"id", "benchmark", "params" (raw), "device":
 * {"name"}, "status", "created_at", "confirms", "validity": {"valid"},
 * "results": {"rows"}} (no results: null).  NEW, or NULL when a column
 * could not be read. */
cJSON *store_verdict_run_from_row(sqlite3_stmt *st);

/* A run as a verdict reads it from a row that selected VERDICT_RUN_FIELDS:
 * its "results" read on c by its id (c's lock held by the caller).  NEW, or NULL (SQLite's error left on c for the
 * caller's store_fail, as store_exec leaves it). */
cJSON *store_verdict_run_from_fields(struct conn *c, sqlite3_stmt *st);

/* For a row helper or a read that finds a value this store wrote as JSON
 * no longer valid: the store_fail that follows on this thread answers
 * STORE_CORRUPT. */
void store_note_damaged_value(void);

/* Binds text (NULL binds SQL NULL). */
void store_bind_text(sqlite3_stmt *st, int i, const char *v);

/* One statement without rows, up to four text values bound in order;
 * *changes (if not NULL) gets the rows changed.  STORE_OK or STORE_ERROR;
 * the caller passes an error to store_fail (the connection keeps it). */
int store_exec(struct conn *c, const char *sql, const char *v1, const char *v2,
               const char *v3, const char *v4, int *changes);

/* A finished run's results, meta and digests, inside the caller's
 * transaction on the writer. */
int store_put_results(struct conn *c, const char *id, const char *results,
                      const char *meta);

/* Queued runs of a device (or of the node, -1); the caller holds c's lock. */
int store_count_queued(struct conn *c, int device_index, long *depth);


#endif
