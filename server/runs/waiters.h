/*
 * waiters.h - HTTP requests waiting for a run to end (?wait=SECONDS),
 * without a thread asleep for each: the request's connection is suspended
 * (libmicrohttpd) and listed here; it is resumed when its run ends
 * (waiters_notify) or its deadline passes (a timer thread), and its handler
 * then runs again to answer.
 *
 * The check of the run's state and the suspension happen under one lock
 * that waiters_notify also takes, so an end that comes between them cannot
 * be missed.
 */
#ifndef GPUBENCH_WAITERS_H
#define GPUBENCH_WAITERS_H

#include <stdint.h>

struct MHD_Connection;
struct waiters;

/* NULL if out of memory or the timer thread cannot start. */
struct waiters *waiters_new(void);

/* Resumes every connection still waiting, then frees w. */
void waiters_free(struct waiters *w);

/* Under the lock: if still_waiting(arg) says the run has not ended,
 * suspends conn and lists it until deadline_ms (time_mono_ms clock) and
 * returns 1; otherwise returns 0 and leaves conn alone. Returns -1 if the
 * entry could not be made (out of memory: answer now instead). */
int waiters_wait(struct waiters *w, const char *run_id,
                 struct MHD_Connection *conn, int64_t deadline_ms,
                 int (*still_waiting)(void *arg), void *arg);

/* Resumes every connection waiting on run_id. */
void waiters_notify(struct waiters *w, const char *run_id);

/* Resumes every connection (shutdown) and refuses new waits. */
void waiters_release_all(struct waiters *w);

#endif
