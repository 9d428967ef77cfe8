/*
 * runs.h - the runs layer: what can be done with runs, between the HTTP
 * handlers (api_runs.c parses a request and prints the answer) and the
 * store, the GPU pool and the waiters below.  It knows no HTTP: its
 * failures are enum runs_rc values with a sentence, which the handler
 * turns into a status.
 *
 *   accept    check the device, the GPUs the benchmark needs and the memory
 *             rule (a suite leaves out what the node cannot run), mint the ids, insert
 *             the runs in one transaction, read them back as accepted,
 *             then wake the GPUs' runners
 *   cancel    a queued run, waking whoever waits on it
 *   finished  whether a run has ended (its JSON will never change)
 *   wait      suspend a request's connection until a run ends; at
 *             shutdown, answer every wait but those on a running run
 *   get/page  a run's JSON and list pages, through the one cache of
 *             finished runs (run_cache.c): a finished run's answer and its
 *             list entry are both kept there, and nothing else uses it;
 *             whole list pages in another, under the store's state
 */
#ifndef GPUBENCH_RUNS_RUNS_H
#define GPUBENCH_RUNS_RUNS_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "run_request.h"
#include "waiters.h"

struct run_filter;
struct store;
struct gpu_pool;
struct waiters;
struct run_cache;
struct alerts;
struct card_watch;
struct gpu_pool_hooks;
struct run_ends;

#define RUNS_MAX_BATCH 128 /* runs one request may start (device "all", a suite) */

enum runs_rc {
    RUNS_OK = 0,
    RUNS_BAD_DEVICE,       /* "device" is not an index, a UUID or "all" */
    RUNS_NO_DEVICE,        /* no such GPU on this node */
    RUNS_DEVICE_UNHEALTHY, /* its worker keeps failing */
    RUNS_TOO_LARGE,        /* more GPU memory than the card has, or more runs than a batch */
    RUNS_TOO_FEW_GPUS,     /* the benchmark needs more GPUs than the node has (min_devices) */
    RUNS_QUEUE_FULL,       /* the queue holds --max-queue runs */
    RUNS_NOT_FOUND,        /* no such run */
    RUNS_NOT_QUEUED,       /* cancel: the run is running or has ended */
    RUNS_STORE,            /* the store failed: store_rc says how */
    RUNS_INTERNAL,         /* out of memory or randomness */
};

/* What the runs layer works with.  main() fills it in and owns every
 * pointer; once the daemon serves it is only read (gpus is set once the
 * pool has started, before the first request). */
struct runs {
    struct store *store;
    struct gpu_pool *gpus;
    struct waiters *waiters;
    struct run_cache *cache; /* finished runs' JSON; NULL: none */
    struct run_cache *pages; /* whole list pages by their ETag (runs_page_kept); NULL: none */
    struct alerts *alerts;   /* what a run's end or cancel settles (alerts.h) */
    const char *host;        /* this node's name, given to every run */
    int max_queue;           /* --max-queue */
    int history_runs;        /* --history-runs: what a run is judged against */

    /* What the GPUs' watch readings found (card_watch.h); NULL: none kept. */
    struct card_watch *watch;

    /* Run ends the store refused, to be failed later (run_end.c); made by
     * runs_pool_hooks. */
    struct run_ends *ends;
};

struct runs_error {
    enum runs_rc rc;
    int store_rc;      /* RUNS_STORE: the store's STORE_* code */
    char field[32];    /* the request's field at fault, "" if none */
    char message[512]; /* a sentence for people */
};

/* A member of a suite that a request did not make, and why. */
struct run_left_out {
    const char *benchmark; /* static */
    char reason[96];
};

/* Runs asked for together: one, or a batch (device "all", a suite). */
struct run_set {
    int n;
    char ids[RUNS_MAX_BATCH][40];
    char batch[40]; /* the batch id; "" for a single run */
    /* A suite's members this node cannot run (too few GPUs), left out */
    int n_left_out;
    struct run_left_out left_out[GB_SUITE_MAX_MEMBERS];
};

/* Accepts rr (parsed and checked by run_request_parse): fills set with
 * the new runs and, when accepted is not NULL, *accepted with a NEW array
 * of their JSON as read right after the insert (queued, with places in
 * the queue; or already running, when an idle runner's once-a-second look
 * at its queue came first), which the caller deletes.  The runners are
 * woken after that read, whatever it gave.  Returns RUNS_OK, or the failure with err
 * filled and nothing stored (a failed read-back: the runs are stored and
 * woken; err says the read failed). */
enum runs_rc runs_accept(struct runs *runs, const struct run_request *rr,
                         struct run_set *set, cJSON **accepted, struct runs_error *err);

/* Cancels queued run id and wakes its waiters.  RUNS_NOT_QUEUED puts its
 * status in status; RUNS_NOT_FOUND when there is no such run. */
enum runs_rc runs_cancel(struct runs *runs, const char *id, char status[16],
                         struct runs_error *err);

/* 1 when run id has ended, 0 when not, -1 when it could not be read. */
int runs_finished(struct runs *runs, const char *id);

/* The index in set of the first run that has not ended (one that cannot
 * be read counts as not ended), or set->n when all have. */
int runs_first_unfinished(struct runs *runs, const struct run_set *set);

/* Parks token (the caller's waiting request; the waiters' resume callback
 * gets it back, waiters.h) until run id ends or deadline_ms (time_mono_ms
 * clock) passes: WAITERS_PARKED; or, with token left alone, WAITERS_ENDED
 * when the run has already ended, WAITERS_CLOSING once the daemon stops
 * (runs_close_waits), WAITERS_FAILED when no wait could be made. */
enum waiters_rc runs_wait(struct runs *runs, const char *id, void *token, int64_t deadline_ms);

/* Shutdown, once no run starts any more (gpu_pool_stop_starting): every
 * waiting request is resumed to answer now, but those waiting on a run
 * that is running, whose end (or its return to the queue when the grace
 * is over) comes within the pool's grace and resumes them; new waits are
 * refused.  waiters_drain then bounds that.  No waiters yet: nothing. */
void runs_close_waits(struct runs *runs);

/* The runs of set: a NEW array of their JSON, in set's order, that the
 * caller deletes; *all_finished is 1 when every one has ended. */
enum runs_rc runs_read(struct runs *runs, const struct run_set *set, cJSON **out,
                       int *all_finished, struct runs_error *err);

/* Run id's JSON as text with a trailing newline, its length in *len,
 * from the cache of finished runs when there, and put there when the run
 * has ended; *tag gets the text's hash_fnv1a64 (its ETag: it changes
 * whenever the run's JSON does).  A kept run's text is held, not copied:
 * *hold is set and counted_release(*hold) lets it go; otherwise *hold is NULL
 * and *text is malloc'ed, the caller's to free. */
enum runs_rc runs_get_text(struct runs *runs, const char *id, const char **text, size_t *len,
                           uint64_t *tag, void **hold, struct runs_error *err);

/* A page of runs (store_list_page) as the text of a JSON array, appended
 * to out; finished runs' entries as the cache keeps them, printed once.
 * next as the store's. */
struct dynbuf;
enum runs_rc runs_page(struct runs *runs, struct run_filter *f, struct dynbuf *out,
                       char next[40], struct runs_error *err);

/* A whole list page's answer kept under key, the value of its ETag (the
 * store's state when it was read and its query: a page is kept only as
 * long as nothing was written, since any write makes a new key), held as
 * runs_get_text's (*hold, let go with counted_release); NULL when none is
 * kept. */
const char *runs_page_kept(struct runs *runs, const char *key, size_t *len, void **hold);

/* Keeps a list page's answer under key (as runs_page_kept's). */
void runs_page_keep(struct runs *runs, const char *key, const char *text, size_t len);

/* Run id's URL ("/runs/ID"): what its "url" field and a Location say.
 * The store knows no URLs; the runs layer adds them where it shows runs. */
void runs_url(const char *id, char *buf, size_t cap);

/* Adds run's "url" (from its "id") as its second field, unless it has
 * one.  0, or -1 when it has no id or memory ran out. */
int runs_add_url(cJSON *run);

/* The hooks the GPU pool calls when a run ends (run_end.c): judge it
 * once, store it (keeping an end the store refused, to fail it later),
 * act on its verdicts (alerts.h), wake its waiters.  ctx is runs.  0, or
 * -1 when memory ran out.  runs_pool_hooks_free, after the pool stopped,
 * frees what they keep. */
int runs_pool_hooks(struct runs *runs, struct gpu_pool_hooks *hooks);
void runs_pool_hooks_free(struct runs *runs);

#endif
