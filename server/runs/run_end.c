/*
 * run_end.c - what the runs layer does when a GPU runner ends a run: the
 * hooks the pool calls (gpu_pool.h), so that the pool keeps only its loop.
 *
 * A run's end, on the GPU's runner thread:
 *   the worker's trees -> struct run_record -> run_finish_judge (once:
 *   validity, checks, digest, key, verdicts) -> store_finish_run (the store
 *   only writes) -> alerts (its verdicts open, confirm or clear them; a run
 *   without verdicts settles the alerts it was to confirm) -> waiters.
 * A write the store refuses is tried again END_TRIES times, the waits
 * doubling from END_RETRY_MS (about 6 s in all); then the run is kept as
 * pending, to be failed with the reason (store_error) as soon as the
 * database takes a write again: run_settle tries that before the runner
 * claims another run, so no run starts while one is shown running that is
 * not.  A run that is no longer running (STORE_CONFLICT) has an end
 * already and is left as it is.
 *
 * The pending ends are one list for all GPUs under its lock; each GPU's
 * runner touches only its own entry, so the lock is held for the list's
 * links, never across a write.
 */
#include "runs.h"

#include "alerts.h"
#include "card_watch.h"
#include "gpu_pool.h"
#include "log.h"
#include "run_finish.h"
#include "store_queue.h"
#include "timeutil.h"
#include "waiters.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define END_TRIES 6
#define END_RETRY_MS 200

/* A run whose end could not be stored, to be failed with message. */
struct pending_end {
    int gpu;
    char id[40];
    char message[320];
    struct pending_end *next;
};

struct run_ends {
    pthread_mutex_t lock; /* guards the list's links */
    struct pending_end *pending;
};

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* A store rc that says the run has an end already (or none to have). */
static int ended_already(int rc)
{
    return rc == STORE_CONFLICT || rc == STORE_NOT_FOUND;
}

/* Judges r (once: later tries only store it) and stores it, trying again
 * with back-off.  *judged and *verdicts get what the alerts need (NULL
 * when not judged).  Returns the last store rc, or -1 when the run cannot
 * be judged (memory ran out). */
static int judge_and_store(struct runs *runs, int gpu, struct run_record *r, cJSON **judged,
                           cJSON **verdicts)
{
    const struct run_finish_ctx ctx = {.store = runs->store, .history_runs = runs->history_runs};
    int64_t wait = END_RETRY_MS;
    int rc = STORE_ERROR, is_judged = 0;

    for (int i = 0; i < END_TRIES; i++, wait *= 2) {
        if (i > 0)
            sleep_ms(wait);
        if (!is_judged) {
            rc = run_finish_judge(&ctx, r, 1, judged, verdicts);
            if (rc == -1)
                return -1;
            if (ended_already(rc))
                break;
            if (rc != 0)
                continue; /* its row could not be read: try again */
            is_judged = 1;
        }
        rc = store_finish_run(runs->store, r);
        if (rc == STORE_OK || ended_already(rc))
            break;
        if (i == 0)
            log_warn("gpu %d: run %s ended (%s) but the store refused it (%s); trying again", gpu,
                     r->id, r->status, store_rc_words(rc));
    }
    if (ended_already(rc))
        log_error("gpu %d: run %s was not running when it ended (%s); its end (%s) was not "
                  "stored",
                  gpu, r->id, rc == STORE_CONFLICT ? "it had ended already" : "no such run",
                  r->status);
    return rc;
}

/* Keeps id's end to be failed by run_settle.  Out of memory it is left
 * running in the database: the next start marks it failed (interrupted). */
static void keep_pending(struct runs *runs, int gpu, const char *id, const char *status,
                         int rc)
{
    struct pending_end *p = calloc(1, sizeof(*p));

    log_error("gpu %d: run %s ended (%s) but %d tries to store it failed (%s); it will be "
              "failed as soon as the database takes a write",
              gpu, id, status, END_TRIES, store_rc_words(rc));
    if (p == NULL) {
        log_error("gpu %d: run %s is left running in the database; the next start marks it "
                  "failed (interrupted)",
                  gpu, id);
        return;
    }
    p->gpu = gpu;
    snprintf(p->id, sizeof(p->id), "%s", id);
    snprintf(p->message, sizeof(p->message),
             "the run ended (%s) but its end could not be stored: %s; it was failed once the "
             "database took writes again",
             status, store_rc_words(rc));
    pthread_mutex_lock(&runs->ends->lock);
    p->next = runs->ends->pending;
    runs->ends->pending = p;
    pthread_mutex_unlock(&runs->ends->lock);
}

static void run_end(void *ctx, int gpu, struct gpu_run_end *end)
{
    struct runs *runs = ctx;
    struct run_record r = {0};
    cJSON *judged = NULL, *verdicts = NULL;
    char now[32];
    int rc = -1;

    time_now_rfc3339(now, sizeof(now));
    rc = run_record_take_trees(&r, end->results, end->meta);
    end->results = end->meta = NULL; /* taken, whatever happened */
    if (rc != 0 || run_record_set(&r.id, end->id) != 0 ||
        run_record_set(&r.status, end->status) != 0 ||
        run_record_set(&r.finished_at, now) != 0 ||
        run_record_set(&r.error_code, end->code) != 0 ||
        run_record_set(&r.error_message, end->message) != 0)
        goto out_of_memory;
    rc = judge_and_store(runs, gpu, &r, &judged, &verdicts);
    if (rc == -1)
        goto out_of_memory;
    goto stored;

out_of_memory:
    /* Its result cannot be kept: the run is failed with why, never
     * stored unjudged. */
    run_record_clear(&r);
    if (run_record_set(&r.id, end->id) != 0 || run_record_set(&r.status, "failed") != 0 ||
        run_record_set(&r.finished_at, now) != 0 ||
        run_record_set(&r.error_code, "internal") != 0 ||
        run_record_set(&r.error_message,
                       "the daemon ran out of memory judging the run's result") != 0) {
        keep_pending(runs, gpu, end->id, end->status, STORE_ERROR);
        goto done;
    }
    rc = judge_and_store(runs, gpu, &r, NULL, NULL);

stored:
    if (rc == STORE_OK && judged && verdicts)
        alerts_on_run(runs->alerts, judged, verdicts);
    else if (rc == STORE_OK) /* failed, or its verdicts could not be made */
        alerts_on_unjudged(runs->alerts, r.id,
                           strcmp(r.status, "done") == 0 ? "was not judged" : r.status);
    else if (!ended_already(rc))
        keep_pending(runs, gpu, r.id, r.status, rc);

done:
    cJSON_Delete(judged);
    cJSON_Delete(verdicts);
    run_record_clear(&r);
}

/* Fails GPU gpu's pending end, if any.  0 when none is left. */
static int run_settle(void *ctx, int gpu, int stopping)
{
    struct runs *runs = ctx;
    struct pending_end **at, *p = NULL;
    struct run_record r = {0};
    char now[32];
    int rc;

    pthread_mutex_lock(&runs->ends->lock);
    for (at = &runs->ends->pending; *at; at = &(*at)->next)
        if ((*at)->gpu == gpu) {
            p = *at;
            break;
        }
    pthread_mutex_unlock(&runs->ends->lock);
    if (p == NULL)
        return 0;
    time_now_rfc3339(now, sizeof(now));
    r.id = p->id;
    r.status = "failed";
    r.finished_at = now;
    r.error_code = "store_error";
    r.error_message = p->message;
    rc = store_finish_run(runs->store, &r); /* borrowed strings: not cleared */
    if (!ended_already(rc) && rc != STORE_OK) {
        if (stopping)
            log_error("gpu %d: run %s is left running in the database; the next start marks "
                      "it failed (interrupted)",
                      gpu, p->id);
        return -1;
    }
    if (rc == STORE_OK) {
        log_warn("gpu %d: run %s failed: %s", gpu, p->id, p->message);
        alerts_on_unjudged(runs->alerts, p->id, "failed");
    }
    waiters_notify(runs->waiters, p->id);
    pthread_mutex_lock(&runs->ends->lock);
    for (at = &runs->ends->pending; *at; at = &(*at)->next)
        if (*at == p) {
            *at = p->next;
            break;
        }
    pthread_mutex_unlock(&runs->ends->lock);
    free(p);
    return 0;
}

static void run_ended(void *ctx, const char *id)
{
    struct runs *runs = ctx;

    waiters_notify(runs->waiters, id);
}

static void card_reading(void *ctx, int index, const char *uuid, const char *name,
                         const cJSON *reading)
{
    struct runs *runs = ctx;

    (void)index;
    card_watch_reading(runs->watch, uuid, name, reading);
}

int runs_pool_hooks(struct runs *runs, struct gpu_pool_hooks *hooks)
{
    runs->ends = calloc(1, sizeof(*runs->ends));
    if (runs->ends == NULL)
        return -1;
    pthread_mutex_init(&runs->ends->lock, NULL);
    hooks->ctx = runs;
    hooks->run_end = run_end;
    hooks->run_settle = run_settle;
    hooks->run_ended = run_ended;
    hooks->card_reading = card_reading;
    return 0;
}

void runs_pool_hooks_free(struct runs *runs)
{
    struct pending_end *p, *next;

    if (runs->ends == NULL)
        return;
    for (p = runs->ends->pending; p; p = next) {
        next = p->next;
        free(p);
    }
    pthread_mutex_destroy(&runs->ends->lock);
    free(runs->ends);
    runs->ends = NULL;
}
