/*
 * heavy_pool.c - see heavy_pool.h.  One mutex guards the ring of jobs and
 * the counts; a condition variable wakes a thread for each job queued and
 * all of them at the stop.
 */
#define _GNU_SOURCE
#include "heavy_pool.h"
#include "log.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* How much lower the heavy threads' priority is than the daemon's. */
#define HEAVY_NICE 10

struct job {
    void (*fn)(void *arg, int cancelled);
    void *arg;
};

struct heavy_pool {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct job *ring; /* queue_cap slots; under lock */
    int queue_cap, head, count;
    int running;  /* under lock */
    int stopping; /* under lock */
    int hold_ms;
    int nthreads; /* written under lock once the threads run */
    pthread_t *threads;
};

static void *worker(void *cls)
{
    struct heavy_pool *p = cls;

    (void)pthread_setname_np(pthread_self(), "heavy-reads"); /* for top and perf */
    /* Linux: a thread's nice value is its own. */
    if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), HEAVY_NICE) != 0)
        log_debug("heavy reads: their threads keep the daemon's priority");
    pthread_mutex_lock(&p->lock);
    for (;;) {
        struct job j;
        int cancelled;
        while (p->count == 0 && !p->stopping)
            pthread_cond_wait(&p->wake, &p->lock);
        if (p->count == 0)
            break; /* stopping, and nothing left */
        j = p->ring[p->head];
        p->head = (p->head + 1) % p->queue_cap;
        p->count--;
        p->running++;
        cancelled = p->stopping; /* still queued at the stop */
        pthread_mutex_unlock(&p->lock);
        if (p->hold_ms > 0 && !cancelled) {
            struct timespec t = {p->hold_ms / 1000, (long)(p->hold_ms % 1000) * 1000000L};
            nanosleep(&t, NULL);
        }
        j.fn(j.arg, cancelled);
        pthread_mutex_lock(&p->lock);
        p->running--;
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

struct heavy_pool *heavy_pool_new(int threads, int queue_cap, int hold_ms)
{
    struct heavy_pool *p = calloc(1, sizeof(*p));

    if (p == NULL)
        return NULL;
    p->ring = calloc((size_t)queue_cap, sizeof(*p->ring));
    p->threads = calloc((size_t)threads, sizeof(*p->threads));
    if (p->ring == NULL || p->threads == NULL) {
        free(p->ring);
        free(p->threads);
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    p->queue_cap = queue_cap;
    p->hold_ms = hold_ms;
    for (; p->nthreads < threads; p->nthreads++)
        if (pthread_create(&p->threads[p->nthreads], NULL, worker, p) != 0) {
            heavy_pool_free(p);
            return NULL;
        }
    return p;
}

int heavy_pool_submit(struct heavy_pool *p, void (*fn)(void *arg, int cancelled), void *arg)
{
    int rc = -1;

    pthread_mutex_lock(&p->lock);
    if (!p->stopping && p->count < p->queue_cap) {
        p->ring[(p->head + p->count) % p->queue_cap] = (struct job){fn, arg};
        p->count++;
        pthread_cond_signal(&p->wake);
        rc = 0;
    }
    pthread_mutex_unlock(&p->lock);
    return rc;
}

void heavy_pool_load(struct heavy_pool *p, struct heavy_pool_load *out)
{
    pthread_mutex_lock(&p->lock);
    out->threads = p->nthreads;
    out->running = p->running;
    out->queued = p->count;
    out->queue_cap = p->queue_cap;
    pthread_mutex_unlock(&p->lock);
}

void heavy_pool_stop(struct heavy_pool *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->lock);
    p->stopping = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    pthread_mutex_lock(&p->lock);
    p->nthreads = 0;
    pthread_mutex_unlock(&p->lock);
}

void heavy_pool_free(struct heavy_pool *p)
{
    if (p == NULL)
        return;
    heavy_pool_stop(p);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p->threads);
    free(p->ring);
    free(p);
}
