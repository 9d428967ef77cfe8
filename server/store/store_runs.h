/*
 * store_runs.h - the runs table and their results: accepting runs, reading
 * one or a page of them, cancelling a queued one, storing runs made
 * elsewhere, and what /compare and /metrics read of them (store_queue.c,
 * store_read.c, store_fleet.c).  See store.h for the store itself.
 */
#ifndef GPUBENCH_STORE_STORE_RUNS_H
#define GPUBENCH_STORE_STORE_RUNS_H

#include <stddef.h>
#include <cjson/cJSON.h>

#include "run_status.h"
#include "run_record.h"
#include "store.h"

/* A run about to be accepted.  Strings are borrowed for the call. */
struct run_new {
    char id[40];
    const char *benchmark;
    const char *params_json;
    const char *label;    /* may be NULL */
    const char *batch_id; /* may be NULL */
    const char *host;
    int device_index;
    const char *device_uuid;
    const char *device_name;
    int timeout_s;
    const char *confirms; /* a confirming run: the run it repeats; or NULL */
};

/* GET /runs filters; NULL or empty means "any".  cursor is the id of the
 * last run of the previous page. */
struct run_filter {
    const char *benchmark;
    const char *device;  /* device name or uuid */
    int by_device_index; /* 1: match the GPU index device_index instead */
    int device_index;
    const char *host;
    const char *status;
    const char *label;
    const char *batch;
    const char *cursor;
    int limit;
    size_t max_bytes; /* full: a page ends with the run whose results
                       * and meta take it past this many bytes (so it
                       * has at least one run), and the next page
                       * follows it; 0: count alone bounds a page */
    int full;         /* with results and meta (exports, /compare) */
    int by_seq;       /* 1: only runs final after after_seq, in that
                       * order (a peer's pull); 0: newest first */
    long long after_seq;
    int valid; /* RUN_VALID_ANY, or only valid (and unknown)
                * runs, or only invalid ones */
};

/* run_filter.valid.  A run not judged (valid null) counts as valid, as the
 * README says: RUN_VALID_TRUE keeps it, RUN_VALID_FALSE leaves it out. */
enum {
    RUN_VALID_ANY = 0,
    RUN_VALID_TRUE = 1,
    RUN_VALID_FALSE = 2
};

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

/* How a list page is made of its entries' text: the layer above keeps
 * finished runs' entries (a finished run never changes) and decides what
 * an entry holds beyond the store's fields (runs.c adds the run's "url").
 * Both are called under the store's read lock, so they must not call the
 * store.  get: for a finished run, appends the entry kept for run id to
 * out and answers 1, or 0 when none is kept.  put: takes the entry the
 * store built (consumed), appends what the page lists to out, keeps it
 * when final, and answers 0, or -1 when memory ran out (the page fails). */
struct dynbuf;
struct store_entries {
    void *ctx;
    int (*get)(void *ctx, const char *id, struct dynbuf *out);
    int (*put)(void *ctx, const char *id, int final, cJSON *entry, struct dynbuf *out);
};

/* A page of runs, newest first, with only their results' summary, as the
 * text of a JSON array appended to out: the page's ids are read first
 * (the index alone), and only the runs entries does not keep are read
 * whole and built, in the same snapshot.  *next_cursor is set to the
 * cursor of the following page, or "" on the last page.  f->full is not
 * taken (store_list_runs).  STORE_OK, or a failure (out then holds part
 * of a page, or has failed: the caller answers an error). */
int store_list_page(struct store *s, const struct run_filter *f,
                    const struct store_entries *entries, struct dynbuf *out,
                    char next_cursor[40]);

/* A page of runs, newest first: with only their results' summary, or
 * whole (f->full: what the exports send); *next_cursor is set to the
 * cursor of the following page, or "" on the last page. */
int store_list_runs(struct store *s, const struct run_filter *f, cJSON **out,
                    char next_cursor[40]);

/* queued -> cancelled.  STORE_CONFLICT if it is no longer queued (its
 * status is put in status). */
int store_cancel_run(struct store *s, const char *id, char status[16]);

/* What storing runs made elsewhere did with them.  A run whose id is held
 * here already is never replaced: with the same origin (NULL: measured
 * here) it is counted existing, with another it is a conflict (a peer
 * serving another node's run ids), refused and counted; the first
 * conflict's id and the origin it is held with here are kept for the
 * log. */
struct import_tally {
    int inserted;
    int existing;
    int conflicts;
    char conflict_id[40];    /* the first conflict's run id, or "" */
    char conflict_held[160]; /* the origin it is held with here; "" measured here */
    /* runs with a new id naming a card another origin speaks for
     * (store_owners.c): refused; the first one's run, its place among the
     * runs given, card, and the card's owner ("" this node) and host */
    int card_conflicts;
    int card_index;
    char card_run_id[40];
    char card_uuid[136];
    char card_owner[160];
    char card_host[136];
};

/* Stores n finished runs made elsewhere (an import, a peer), all in one
 * transaction, as they were checked and judged (runs/run_finish.c: each
 * record's judged part filled where it has results; its origin decided
 * there): a run whose id is already here is left as it is (*tally says
 * how), so an import can be repeated.  A new run naming a card that
 * another origin speaks for (store_owners.c) refuses the whole import:
 * STORE_CONFLICT, nothing stored, tally's card_ fields naming it. */
int store_import_runs(struct store *s, const struct run_record *runs, int n,
                      struct import_tally *tally);

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
 * UUID), as an array of runs with results.rows only (their digest);
 * own_host (NULL: every card): only runs measured here under that host
 * name (no origin: not pulled nor imported).  *out is NEW. */
int store_latest_per_card(struct store *s, const char *own_host, cJSON **out);

#endif
