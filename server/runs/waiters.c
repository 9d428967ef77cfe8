/*
 * waiters.c - see waiters.h.  A list under a mutex, and one timer thread
 * that sleeps on a condition variable until the nearest deadline.  It
 * knows no HTTP: a waiter is an opaque token, parked and resumed through
 * the two callbacks its creator gave.
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
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t timer;
    void (*park)(void *token); /* set at creation, then only read */
    void (*resume)(void *token);
    struct waiter *head;
    int closing;
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

static void *timer_main(void *arg)
{
    struct waiters *w = arg;

    pthread_mutex_lock(&w->lock);
    while (!w->closing) {
        int64_t now = time_mono_ms(), next = now + 1000;
        struct timespec ts;

        release_matching(w, match_expired, &now);
        for (struct waiter *e = w->head; e; e = e->next)
            if (e->deadline_ms < next)
                next = e->deadline_ms;
        /* The condition variable runs on CLOCK_MONOTONIC (see waiters_new). */
        ts.tv_sec = (time_t)(next / 1000);
        ts.tv_nsec = (long)(next % 1000) * 1000000L;
        pthread_cond_timedwait(&w->cond, &w->lock, &ts);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

struct waiters *waiters_new(void (*park)(void *token), void (*resume)(void *token))
{
    struct waiters *w = calloc(1, sizeof(*w));
    pthread_condattr_t attr;

    if (w == NULL)
        return NULL;
    w->park = park;
    w->resume = resume;
    pthread_mutex_init(&w->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cond, &attr);
    pthread_condattr_destroy(&attr);
    if (pthread_create(&w->timer, NULL, timer_main, w) != 0) {
        pthread_cond_destroy(&w->cond);
        pthread_mutex_destroy(&w->lock);
        free(w);
        return NULL;
    }
    return w;
}

void waiters_release_all(struct waiters *w)
{
    pthread_mutex_lock(&w->lock);
    w->closing = 1;
    release_matching(w, match_all, NULL);
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

void waiters_free(struct waiters *w)
{
    if (w == NULL)
        return;
    waiters_release_all(w);
    pthread_join(w->timer, NULL);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

int waiters_wait(struct waiters *w, const char *run_id, void *token, int64_t deadline_ms,
                 int (*still_waiting)(void *arg), void *arg)
{
    struct waiter *e;
    int rc = 0;

    pthread_mutex_lock(&w->lock);
    if (w->closing || !still_waiting(arg))
        goto done;
    e = calloc(1, sizeof(*e));
    if (e == NULL) {
        rc = -1;
        goto done;
    }
    strncpy(e->run_id, run_id, sizeof(e->run_id) - 1);
    e->token = token;
    e->deadline_ms = deadline_ms;
    e->next = w->head;
    w->head = e;
    w->park(token);                /* under the lock: no notify can come before it */
    pthread_cond_signal(&w->cond); /* the nearest deadline may have moved */
    rc = 1;

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
