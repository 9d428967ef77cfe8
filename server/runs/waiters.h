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
 *
 * Shutdown is two steps, so that no waiting request is left
 * without an answer nor kept past what it waits for: waiters_close answers
 * at once every wait but those whose run still ends by itself (a running
 * run, which the GPU pool ends or puts back within its grace), and
 * refuses new waits; waiters_drain then waits for those, up to a
 * deadline, and resumes whatever is left.
 */
#ifndef GPUBENCH_RUNS_WAITERS_H
#define GPUBENCH_RUNS_WAITERS_H

#include <stdint.h>

struct waiters;

/* What waiters_wait did. */
enum waiters_rc {
    WAITERS_PARKED,  /* token parked: resume comes when the wait ends */
    WAITERS_ENDED,   /* the run has ended (or cannot be read): token left alone */
    WAITERS_CLOSING, /* the daemon is stopping (waiters_close): no new wait */
    WAITERS_FAILED,  /* out of memory: no wait made */
};

/* park(token) is called under the waiters' lock when a wait is made,
 * resume(token) once when it ends (its run ended, its deadline passed, or
 * shutdown), from whichever thread ends it.  NULL if out of memory or the
 * timer thread cannot start. */
struct waiters *waiters_new(void (*park)(void *token), void (*resume)(void *token));

/* Resumes every token still waiting, then frees w. */
void waiters_free(struct waiters *w);

/* Under the lock: if still_waiting(arg) says the run has not ended,
 * parks token and lists it until deadline_ms (time_mono_ms clock):
 * WAITERS_PARKED.  Otherwise token is left alone and the caller answers
 * now: WAITERS_ENDED, WAITERS_CLOSING once waiters_close (or
 * waiters_release_all) was called, WAITERS_FAILED when out of memory. */
enum waiters_rc waiters_wait(struct waiters *w, const char *run_id, void *token,
                             int64_t deadline_ms, int (*still_waiting)(void *arg), void *arg);

/* Resumes every token waiting on run_id. */
void waiters_notify(struct waiters *w, const char *run_id);

/* Shutdown, first step: refuses new waits (WAITERS_CLOSING) and resumes
 * every token but those whose run keep(arg, run_id) says is to end by
 * itself soon; those stay until their run ends (waiters_notify) or
 * waiters_drain's deadline.  keep is called under the lock; arg is
 * keep's own.  NULL w: nothing. */
void waiters_close(struct waiters *w, int (*keep)(void *arg, const char *run_id), void *arg);

/* Shutdown, second step: waits until no token is parked or deadline_ms
 * (time_mono_ms clock) has passed, then resumes whatever is left (as
 * waiters_release_all).  Returns how many were left.  NULL w: 0. */
int waiters_drain(struct waiters *w, int64_t deadline_ms);

/* Resumes every token (shutdown) and refuses new waits. */
void waiters_release_all(struct waiters *w);

#endif
