/*
 * waiters.c - see waiters.h.  A list under a mutex, and one timer thread
 * that sleeps on a condition variable until the nearest deadline.  It
 * knows no HTTP: a waiter is an opaque token, parked and resumed through
 * the two callbacks its creator gave.
 *
 * Closing (waiters_close) only refuses new waits: the timer keeps ending
 * the waits it kept until waiters_free stops it, and the list emptying is
 * signalled on a second condition variable (drained) for waiters_drain.
 */
#include "waiters.h"
#include "timeutil.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct waiter {
    struct waiter *next;
    char run_id[40];
    void *token; /* the caller's; handed back to resume */
    int64_t deadline_ms;
};

struct waiters {
    pthread_mutex_t lock;   /* guards what follows but the callbacks and timer */
    pthread_cond_t cond;    /* the timer's: the nearest deadline moved, or stop */
    pthread_cond_t drained; /* broadcast whenever the list becomes empty */
    pthread_t timer;
    void (*park)(void *token); /* set at creation, then only read */
    void (*resume)(void *token);
    struct waiter *head;
    int closing; /* new waits are refused (WAITERS_CLOSING) */
    int ended;   /* the timer thread is to return (waiters_free) */
};

/* The arguments of a match for waiters_close: resume all but kept ones. */
struct keep_check {
    int (*keep)(void *arg, const char *run_id);
    void *arg;
};

/* Resumes and frees every entry for which match() holds. Lock held. */
static void release_matching(struct waiters *w,
                             int (*match)(const struct waiter *, const void *),
                             const void *arg)
{
    struct waiter **pp = &w->head;

    while (*pp) {
        struct waiter *e = *pp;
        if (match(e, arg)) {
            *pp = e->next;
            w->resume(e->token);
            free(e);
        } else {
            pp = &e->next;
        }
    }
    if (w->head == NULL)
        pthread_cond_broadcast(&w->drained);
}

static int match_expired(const struct waiter *e, const void *now)
{
    return e->deadline_ms <= *(const int64_t *)now;
}

static int match_run(const struct waiter *e, const void *id)
{
    return strcmp(e->run_id, id) == 0;
}

static int match_all(const struct waiter *e, const void *unused)
{
    (void)e;
    (void)unused;
    return 1;
}

/* Refuses new waits and resumes every token. Lock held. */
static void close_all(struct waiters *w)
{
    w->closing = 1;
    release_matching(w, match_all, NULL);
}

static int match_not_kept(const struct waiter *e, const void *check)
{
    const struct keep_check *k = check;

    return !k->keep(k->arg, e->run_id);
}

/* A time_mono_ms instant as the CLOCK_MONOTONIC timespec that both
 * condition variables wait on (see waiters_new). */
static struct timespec mono_timespec(int64_t ms)
{
    struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000L};

    return ts;
}

static void *timer_main(void *arg)
{
    struct waiters *w = arg;

    pthread_mutex_lock(&w->lock);
    while (!w->ended) {
        int64_t now = time_mono_ms(), next = now + 1000;
        struct timespec ts;

        release_matching(w, match_expired, &now);
        for (struct waiter *e = w->head; e; e = e->next)
            if (e->deadline_ms < next)
                next = e->deadline_ms;
        ts = mono_timespec(next);
        pthread_cond_timedwait(&w->cond, &w->lock, &ts);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

struct waiters *waiters_new(void (*park)(void *token), void (*resume)(void *token))
{
    struct waiters *w = calloc(1, sizeof(*w));
    pthread_condattr_t attr;
    int made = 0; /* how many of attr, lock, cond, drained were made */
    int rc = -1;

    if (w == NULL)
        return NULL;
    w->park = park;
    w->resume = resume;
    if (pthread_condattr_init(&attr) != 0)
        goto done;
    made = 1;
    if (pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) != 0 ||
        pthread_mutex_init(&w->lock, NULL) != 0)
        goto done;
    made = 2;
    if (pthread_cond_init(&w->cond, &attr) != 0)
        goto done;
    made = 3;
    if (pthread_cond_init(&w->drained, &attr) != 0)
        goto done;
    made = 4;
    if (pthread_create(&w->timer, NULL, timer_main, w) != 0)
        goto done;
    rc = 0;

done:
    if (rc != 0 && made >= 4)
        pthread_cond_destroy(&w->drained);
    if (rc != 0 && made >= 3)
        pthread_cond_destroy(&w->cond);
    if (rc != 0 && made >= 2)
        pthread_mutex_destroy(&w->lock);
    if (made >= 1)
        pthread_condattr_destroy(&attr);
    if (rc != 0) {
        free(w);
        return NULL;
    }
    return w;
}

void waiters_close(struct waiters *w, int (*keep)(void *arg, const char *run_id), void *arg)
{
    struct keep_check check = {keep, arg};

    if (w == NULL)
        return;
    pthread_mutex_lock(&w->lock);
    w->closing = 1;
    release_matching(w, match_not_kept, &check);
    pthread_mutex_unlock(&w->lock);
}

int waiters_drain(struct waiters *w, int64_t deadline_ms)
{
    struct timespec ts = mono_timespec(deadline_ms);
    int left = 0;

    if (w == NULL)
        return 0;
    pthread_mutex_lock(&w->lock);
    /* ETIMEDOUT, or a spurious wake: the loop looks again either way. */
    while (w->head != NULL && time_mono_ms() < deadline_ms)
        pthread_cond_timedwait(&w->drained, &w->lock, &ts);
    for (struct waiter *e = w->head; e; e = e->next)
        left++;
    close_all(w);
    pthread_mutex_unlock(&w->lock);
    return left;
}

void waiters_release_all(struct waiters *w)
{
    pthread_mutex_lock(&w->lock);
    close_all(w);
    pthread_mutex_unlock(&w->lock);
}

void waiters_free(struct waiters *w)
{
    if (w == NULL)
        return;
    waiters_release_all(w);
    pthread_mutex_lock(&w->lock);
    w->ended = 1;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->timer, NULL);
    pthread_cond_destroy(&w->drained);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

enum waiters_rc waiters_wait(struct waiters *w, const char *run_id, void *token,
                             int64_t deadline_ms, int (*still_waiting)(void *arg), void *arg)
{
    struct waiter *e;
    enum waiters_rc rc = WAITERS_CLOSING;

    pthread_mutex_lock(&w->lock);
    if (w->closing)
        goto done;
    rc = WAITERS_ENDED;
    if (!still_waiting(arg))
        goto done;
    rc = WAITERS_FAILED;
    e = calloc(1, sizeof(*e));
    if (e == NULL)
        goto done;
    strncpy(e->run_id, run_id, sizeof(e->run_id) - 1);
    e->token = token;
    e->deadline_ms = deadline_ms;
    e->next = w->head;
    w->head = e;
    w->park(token);                /* under the lock: no notify can come before it */
    pthread_cond_signal(&w->cond); /* the nearest deadline may have moved */
    rc = WAITERS_PARKED;

done:
    pthread_mutex_unlock(&w->lock);
    return rc;
}

void waiters_notify(struct waiters *w, const char *run_id)
{
    pthread_mutex_lock(&w->lock);
    release_matching(w, match_run, run_id);
    pthread_mutex_unlock(&w->lock);
}
