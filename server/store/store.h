/*
 * store.h - every run and its results, in SQLite.
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
#ifndef GPUBENCH_STORE_H
#define GPUBENCH_STORE_H

#include <stddef.h>
#include <stdio.h>
#include <cjson/cJSON.h>

#include "run_status.h"

struct run_cache;

struct store;

enum store_rc {
    STORE_OK = 0,
    STORE_NOT_FOUND = 1,
    STORE_CONFLICT = 2,   /* the run is not in a state that allows it */
    STORE_FULL = 3,       /* the queue is at its bound */
    STORE_NO_SPACE = 4,   /* the disk holding the database is full: a write
                           * was refused and changed nothing; try later */
    STORE_CORRUPT = 5,    /* the database file is damaged (SQLite said
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

/* What /healthz reports of the database, beyond answering at all. */
struct store_health {
    int no_space;        /* the last write failed for want of space */
    int corrupt;         /* a read or write found the file damaged (stays
                          * set: damage does not heal by itself) */
    char message[256];   /* what failed, in SQLite's words */
    char since[32];      /* when (RFC 3339) */
};
void store_health_get(struct store *s, struct store_health *h);

/* A run about to be accepted.  Strings are borrowed for the call. */
struct run_new {
    char id[40];
    const char *benchmark;
    const char *params_json;
    const char *label;       /* may be NULL */
    const char *batch_id;    /* may be NULL */
    const char *host;
    int device_index;
    const char *device_uuid;
    const char *device_name;
    int timeout_s;
    const char *confirms;    /* a confirming run: the run it repeats; or NULL */
};

/* What a GPU runner needs to start a run; filled by store_claim_next.
 * params_json is owned by the job: free it with store_job_clear. */
struct run_job {
    char id[40];
    char benchmark[64];
    char *params_json;
    int timeout_s;
};

/* GET /runs filters; NULL or empty means "any".  cursor is the id of the
 * last run of the previous page. */
struct run_filter {
    const char *benchmark;
    const char *device;      /* device name or uuid */
    int by_device_index;     /* 1: match the GPU index device_index instead */
    int device_index;
    const char *host;
    const char *status;
    const char *label;
    const char *batch;
    const char *cursor;
    int limit;
    size_t max_bytes;        /* full: a page ends with the run whose results
                              * and meta take it past this many bytes (so it
                              * has at least one run), and the next page
                              * follows it; 0: count alone bounds a page */
    int full;                /* with results and meta (exports, /compare) */
    struct run_cache *cache; /* not full: keep finished runs' list entries
                              * here and reuse them (NULL: build each) */
    int by_seq;              /* 1: only runs final after after_seq, in that
                              * order (a peer's pull); 0: newest first */
    long long after_seq;
    int valid;               /* RUN_VALID_ANY, or only valid (and unknown)
                              * runs, or only invalid ones */
};

/* run_filter.valid.  A run not judged (valid null) counts as valid, as the
 * README says: RUN_VALID_TRUE keeps it, RUN_VALID_FALSE leaves it out. */
enum { RUN_VALID_ANY = 0, RUN_VALID_TRUE = 1, RUN_VALID_FALSE = 2 };

/* 1 for done, failed and cancelled: a run that will never change again. */
int store_status_final(const char *status);

/* Opens (creating if needed) and migrates the database at path.  On
 * failure returns STORE_ERROR with a sentence in errbuf. */
int store_open(const char *path, struct store **out, char *errbuf, size_t cap);
void store_close(struct store *s);

/* Runs SQLite's integrity check on the database at path, opened read-only
 * (it neither takes a running daemon's lock nor writes): *damaged is set
 * when it found anything, and each finding is printed to out.  Returns
 * STORE_OK when the check ran, else an error with a sentence in errbuf. */
int store_check_file(const char *path, FILE *out, int *damaged,
                     char *errbuf, size_t cap);

/* How a run's "url" field is made from its id: the handlers know the
 * API's paths, the store does not.  Without one, runs carry no "url". */
typedef void (*store_url_fn)(const char *id, char *buf, size_t cap);
void store_set_run_url(struct store *s, store_url_fn fn);

/* Marks runs this node left 'running' (the daemon died under them) as
 * failed with code "interrupted".  *count gets how many. */
int store_recover(struct store *s, int *count);

/* Inserts n runs as 'queued' in one transaction, refusing all of them
 * (STORE_FULL) if the node's queued runs would then number more than
 * max_queue. */
int store_insert_runs(struct store *s, const struct run_new *runs, int n,
                      int max_queue);

/* The whole run as the API shows it. */
int store_get_run(struct store *s, const char *id, cJSON **out);

/* The same, with results and meta as raw JSON items, printed as stored
 * rather than parsed: for answers that only print them. */
int store_get_run_raw(struct store *s, const char *id, cJSON **out);

/* Just its status ("queued", ...), into status[16]. */
int store_run_status(struct store *s, const char *id, char status[16]);

/* A page of runs, newest first: with only their results' summary, or
 * whole (f->full); *next_cursor is set to the cursor of the following
 * page, or "" on the last page. */
int store_list_runs(struct store *s, const struct run_filter *f,
                    cJSON **out, char next_cursor[40]);

/* queued -> cancelled.  STORE_CONFLICT if it is no longer queued (its
 * status is put in status).
 *
 * Every write below may also answer STORE_NO_SPACE or STORE_CORRUPT
 * (nothing was changed), and every read STORE_CORRUPT. */
int store_cancel_run(struct store *s, const char *id, char status[16]);

/* Takes the oldest queued run of a device and marks it running.
 * STORE_NOT_FOUND when the queue is empty. */
/* The benchmark of the run store_claim_next would claim next for
 * device_index, without claiming it (the runner decides whether it may
 * start: a run that needs every GPU waits for the others to be idle).
 * STORE_OK, STORE_NOT_FOUND when none is queued, or an error. */
int store_peek_next(struct store *s, int device_index, char benchmark[64]);
int store_claim_next(struct store *s, int device_index, struct run_job *job);
void store_job_clear(struct run_job *job);

/* A progress message longer than this (characters) is cut: it is one line
 * shown beside a run, and the worker's own are under 200. */
#define STORE_PROGRESS_MESSAGE_MAX 512

/* Records done of total and why the worker is not measuring yet (message,
 * or NULL: nothing, which clears an earlier one).  STORE_CONFLICT when the
 * run is not running (nothing written). */
int store_set_progress(struct store *s, const char *id, long done, long total,
                       const char *message);

/* running -> done (results and meta given) or failed (error given), with
 * the verdicts the run got at its end (run_verdicts.h; NULL: none), in one
 * transaction.  STORE_CONFLICT when the run is not running (then nothing
 * is written). */
int store_finish_run(struct store *s, const char *id, const char *status,
                     const char *results_json, const char *meta_json,
                     const char *error_code, const char *error_message,
                     const char *verdicts_json);

/* running -> queued, for a run the daemon stopped before it finished.
 * STORE_CONFLICT when it was not running. */
int store_requeue_run(struct store *s, const char *id);

/* Queued runs of one device (device_index >= 0) or of the node (-1). */
int store_queue_depth(struct store *s, int device_index, long *depth);

/* Stores finished runs made elsewhere (an import, a peer), all in one
 * transaction: a run whose id is already here is left as it is, so an
 * import can be repeated.  Each element of runs is a run object as GET
 * /runs/ID shows it, already checked by import_check_run; origin is kept
 * when the run names one, else set to the given origin.  *inserted and
 * *existing get the counts. */
int store_import_runs(struct store *s, const cJSON *runs, const char *origin,
                      int *inserted, int *existing);

/* For GET /compare: the newest f->limit done runs of f->benchmark
 * (filtered by f->host, f->device, f->label), newest first, with only what
 * decides their comparison: id, host, device, params, and meta holding the
 * driver and CUDA versions.  Their rows come from store_run_rows. */
int store_compare_runs(struct store *s, const struct run_filter *f, cJSON **out);

/* A finished run's result rows, cut to what a comparison reads (the
 * digest), or whole where it has none.  STORE_NOT_FOUND when it has no
 * results.  *rows is NEW; the caller owns it. */
int store_run_rows(struct store *s, const char *id, cJSON **rows);

/* Runs by status: counts[i] for the status names in order
 * queued, running, done, failed, cancelled. */
int store_count_by_status(struct store *s, long counts[RUN_STATUS_COUNT]);

/* The newest done run of each benchmark on each card (host and device
 * UUID), as an array of runs with results.rows only (their digest). */
int store_latest_per_card(struct store *s, cJSON **out);

/* A peer's pull state (migrations/0002_fleet.sql), made if new. */
struct peer_row {
    long long cursor;
    long long runs_pulled;
    char last_success_at[32];
    char last_error[256];
    char last_error_at[32];
};
int store_peer_load(struct store *s, const char *url, struct peer_row *row);

/* Records a pull: on success (error NULL) the new cursor and how many runs
 * it stored; on failure the error, with the time. */
int store_peer_record(struct store *s, const char *url, long long cursor,
                      long long pulled, const char *error);

/* The runs a verdict's selector picks (GET /compare?baseline=card:...):
 * done runs matching every field given (NULL or "" is any), created_at
 * within [since, until] (RFC 3339 UTC text, compared as text), newest
 * first, at most limit.  *ids is a NEW array of run id strings. */
struct run_select {
    const char *benchmark;
    const char *card;        /* device UUID */
    const char *host;
    const char *label;
    const char *driver;      /* meta.driver.nvidia_version */
    const char *since;
    const char *until;
    int limit;
};
int store_select_runs(struct store *s, const struct run_select *sel, cJSON **ids);

/* The done runs of run_id's card (host, device UUID) and key (benchmark,
 * card model, params: what decides a verdict), run_id's own included,
 * made within since..until (either NULL or ""), newest first, at most
 * limit; a NEW array of ids.  STORE_NOT_FOUND when run_id is not a done
 * run here. */
int store_select_like(struct store *s, const char *run_id, const char *since,
                      const char *until, int limit, cJSON **ids);

/* Pinned baselines (migrations/0005_baselines.sql).  insert: STORE_CONFLICT
 * when the name is taken; created_at gets the time stored.  get: one by
 * name (STORE_NOT_FOUND), or with name NULL all of them as an array, by
 * name; each {"name", "created_at", "spec", "runs"}, NEW.  delete:
 * STORE_NOT_FOUND when there is none. */
int store_baseline_insert(struct store *s, const char *name, const char *spec_json,
                          const char *runs_json, char created_at[32]);
int store_baseline_get(struct store *s, const char *name, cJSON **out);
int store_baseline_delete(struct store *s, const char *name);

/* A run as a verdict reads it (verdicts.h): its id, benchmark, params,
 * device name, status, created_at, confirms, validity.valid and
 * results.rows (null without results) with every sample; not its meta nor
 * its results' summary.  NEW; STORE_NOT_FOUND when there is no such run. */
int store_get_verdict_run(struct store *s, const char *id, cJSON **out);

/* The runs of a verdict's group picked by filters (GET /compare's card:,
 * host:, label:, driver: selectors; sel as for store_select_runs): among
 * the done runs that match, the group's key is the verdict key (benchmark,
 * card model, params) of the newest one (the newest valid one unless
 * include_invalid; of the newest run's benchmark when sel->benchmark is
 * not given), and the group the newest sel->limit runs of that key, valid
 * or not, read as store_get_verdict_run reads them, newest first.  Runs of
 * other keys are not read: *other_key gets how many of them (matching,
 * done, of the benchmark) were made since the oldest run taken.  *runs is
 * a NEW array (empty when nothing matches). */
int store_select_verdict_runs(struct store *s, const struct run_select *sel,
                              int include_invalid, cJSON **runs, int *other_key);

/* What a run is judged against at its end (store_verdicts.c), by run id:
 * history: the card's (host, device UUID) newest valid done runs of the
 * run's key (benchmark, card model, params), at most limit, newest first,
 * as store_get_verdict_run reads them.  peers: each other card's newest valid done run of the key, as
 * {"host", "device_uuid", "run_id", "rows"} (rows: the digest).  cards:
 * every card's newest valid done run of each key of benchmark (NULL: of
 * every benchmark), as {"group" (the key), "benchmark", "card_model",
 * "params", "host", "device_uuid", "run_id", "rows"}, grouped by key.  All
 * NEW arrays. */
int store_history_runs(struct store *s, const char *id, int limit, cJSON **runs);
int store_fleet_peers(struct store *s, const char *id, cJSON **peers);
int store_fleet_cards(struct store *s, const char *benchmark, cJSON **cards);

/* Alerts (store_alerts.c; alerts.h says when they move).  An alert is
 * shown as {"id", "kind", "state", "card": {...}, "benchmark", "row",
 * "verdict", "shift", "z", "runs": {"detected", "confirmed", "cleared"},
 * "reason", "detected_at", ...}. */
struct alert_new {
    const char *kind;    /* "history" or "fleet" */
    const char *run_id;  /* the run that found it (card and key are its) */
    const char *row_key; /* the row's key value as JSON text */
    const char *verdict; /* "slower" or "outlier" */
    double shift, z;     /* NAN: none */
    int confirms_left;   /* confirming runs queued to judge it */
    int confirmed;       /* 1: confirmed at once (no confirming runs) */
};
/* Stores a new alert; STORE_CONFLICT (nothing stored) when one of the same
 * card, key, kind and row is open (not cleared). */
int store_alert_detect(struct store *s, const struct alert_new *a, long long *id);
/* Clears the confirmed or acknowledged alerts of run_id's card and key of
 * kind and row (a later run found the row as it was); *cleared: how many. */
int store_alerts_clear(struct store *s, const char *run_id, const char *kind,
                       const char *row_key, int *cleared);
/* The alerts run_id found that wait for a confirming run (NEW array). */
int store_alerts_pending(struct store *s, const char *run_id, cJSON **alerts);
/* A confirming run (run_id) judged detected alert id: repeated, it is
 * confirmed and *confirmed gets it as a NEW array of one (else NULL); not
 * repeated, one fewer confirmation is awaited, and at none it is cleared. */
int store_alert_settle(struct store *s, long long id, int repeated, const char *run_id,
                       cJSON **confirmed);
/* Alerts no confirming run will settle.  Not found_by: run_id is a
 * confirming run that ended without a verdict (failed, cancelled, not
 * valid): each detected alert of the run it confirms awaits one fewer
 * confirmation, and at none it is cleared with reason.  found_by: run_id
 * found them and none of its confirming runs could be queued: its
 * detected alerts are cleared with reason at once.  *changed: how many
 * alerts it touched. */
int store_alerts_unconfirmed(struct store *s, const char *run_id, int found_by,
                             const char *reason, int *changed);
/* Each run whose detected alerts wait for confirmations (at start, to find
 * those a restart lost): a NEW array of {"run_id", "awaited" (the most
 * confirmations one of its alerts awaits), "pending" (its confirming runs
 * queued or running), "interrupted" (those a restart failed),
 * "last_interrupted" (the newest of them, or null)}. */
int store_alerts_waiting(struct store *s, cJSON **waiting);
/* The open confirmed and acknowledged alerts counted by kind, state,
 * benchmark, row and card (for /metrics): a NEW array of {"kind",
 * "state", "benchmark", "row", "host", "device_uuid", "count"}. */
int store_alerts_open_counts(struct store *s, cJSON **counts);
/* Alert id as GET /alerts shows it (NEW); STORE_NOT_FOUND when none. */
int store_alert_get(struct store *s, long long id, cJSON **alert);
/* Open alerts only, or open ones then the most recent others; NEW array. */
int store_alerts_list(struct store *s, int open_only, int limit, cJSON **alerts);
/* What became of alert id's webhook post: "delivered", "failed" or "none"
 * (migrations/0008_alert_webhook.sql). */
int store_alert_webhook_done(struct store *s, long long id, const char *outcome);
/* The confirmed alerts the webhook has not been told of yet (a stop or a
 * crash came first), oldest first, at most limit: a NEW array. */
int store_alerts_unposted(struct store *s, int limit, cJSON **alerts);
/* detected or confirmed -> acknowledged with reason; *alert gets the alert
 * as it is now (NEW) unless STORE_NOT_FOUND; STORE_CONFLICT when it was
 * acknowledged or cleared already (nothing changed). */
int store_alert_ack(struct store *s, long long id, const char *reason, cJSON **alert);

/* A trivial query, for /healthz. */
int store_ping(struct store *s);

#endif
