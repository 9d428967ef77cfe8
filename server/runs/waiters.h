/*
 * waiters.h - requests waiting for a run to end (?wait=SECONDS), without a
 * thread asleep for each: the request is parked (http/ suspends its
 * libmicrohttpd connection) and listed here as an opaque token; it is
 * resumed when its run ends (waiters_notify) or its deadline passes (a
 * timer thread), and its handler then runs again to answer.  The layer
 * that owns the requests gives the park and resume callbacks, so nothing
 * here knows HTTP.
 *
 * The check of the run's state and the suspension happen under one lock
 * that waiters_notify also takes, so an end that comes between them cannot
 * be missed.
 */
#ifndef GPUBENCH_RUNS_WAITERS_H
#define GPUBENCH_RUNS_WAITERS_H

#include <stdint.h>

struct waiters;

/* park(token) is called under the waiters' lock when a wait is made,
 * resume(token) once when it ends (its run ended, its deadline passed, or
 * shutdown), from whichever thread ends it.  NULL if out of memory or the
 * timer thread cannot start. */
struct waiters *waiters_new(void (*park)(void *token), void (*resume)(void *token));

/* Resumes every token still waiting, then frees w. */
void waiters_free(struct waiters *w);

/* Under the lock: if still_waiting(arg) says the run has not ended,
 * parks token and lists it until deadline_ms (time_mono_ms clock) and
 * returns 1; otherwise returns 0 and leaves token alone. Returns -1 if the
 * entry could not be made (out of memory: answer now instead). */
int waiters_wait(struct waiters *w, const char *run_id, void *token, int64_t deadline_ms,
                 int (*still_waiting)(void *arg), void *arg);

/* Resumes every token waiting on run_id. */
void waiters_notify(struct waiters *w, const char *run_id);

/* Resumes every token (shutdown) and refuses new waits. */
void waiters_release_all(struct waiters *w);

#endif
