/*
 * store_queue.h - a run's life on its GPU (store_queue.c): the runner
 * peeks at and claims the next queued run, records its progress and its
 * end, or puts it back in the queue.  All on the writer connection.  See
 * store.h for the store itself, store_runs.h for accepting runs.
 */
#ifndef GPUBENCH_STORE_STORE_QUEUE_H
#define GPUBENCH_STORE_STORE_QUEUE_H

#include "run_record.h"
#include "store.h"

/* The label of the runs the canaries queue (runs/canaries.c).
 * A card's queue takes them after every other queued run of the card
 * (STORE_QUEUE_RANK), and a canary's last run is the newest run with it
 * (store_canary.h): a run a person posts with this label counts as one. */
#define STORE_CANARY_LABEL "canary"

/* What a GPU runner needs to start a run; filled by store_claim_next.
 * params_json is owned by the job: free it with store_job_clear. */
struct run_job {
    char id[40];
    char benchmark[64];
    char *params_json;
    int timeout_s;
};

/* The benchmark of the run store_claim_next would claim next for
 * device_index, without claiming it (the runner decides whether it may
 * start: a run that needs every GPU waits for the others to be idle).
 * STORE_OK, STORE_NOT_FOUND when none is queued, or an error. */
int store_peek_next(struct store *s, int device_index, char benchmark[64]);

/* Takes the first queued run of a device (the oldest, canaries after the
 * rest) and marks it running.
 * STORE_NOT_FOUND when the queue is empty. */
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

/* running -> r's status (done, failed), with its finished_at and error,
 * its results and meta as judged (r->judged filled where it has results:
 * runs/run_finish.c) and the verdicts it got at its end (NULL: none), in
 * one transaction.  The store writes r as it is: it judges nothing.
 * STORE_CONFLICT when the run is not running (then nothing is written). */
int store_finish_run(struct store *s, const struct run_record *r);

/* running -> queued, for a run the daemon stopped before it finished.
 * STORE_CONFLICT when it was not running. */
int store_requeue_run(struct store *s, const char *id);

/* Queued runs of one device (device_index >= 0) or of the node (-1). */
int store_queue_depth(struct store *s, int device_index, long *depth);

#endif
