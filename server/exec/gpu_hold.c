/*
 * gpu_hold.c - the node-wide hold for runs that need every GPU; see
 * gpu_hold.h.
 */
#include "gpu_hold.h"
#include "bench_spec.h"
#include "log.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct gpu_hold {
    pthread_mutex_t lock; /* guards what follows */
    int count;
    int holder; /* slot holding the node, or -1 */
    int *busy;  /* per slot: a claimed run has not ended */
    int closed; /* gpu_hold_close: nothing is claimed any more */
};

struct gpu_hold *gpu_hold_new(int count)
{
    struct gpu_hold *h = calloc(1, sizeof(*h));

    if (h == NULL)
        return NULL;
    h->busy = calloc((size_t)(count > 0 ? count : 1), sizeof(*h->busy));
    if (h->busy == NULL || pthread_mutex_init(&h->lock, NULL) != 0) {
        free(h->busy);
        free(h);
        return NULL;
    }
    h->count = count;
    h->holder = -1;
    return h;
}

void gpu_hold_free(struct gpu_hold *h)
{
    if (h == NULL)
        return;
    pthread_mutex_destroy(&h->lock);
    free(h->busy);
    free(h);
}

static int needs_every_gpu(const char *benchmark)
{
    const struct gb_benchmark *b = gb_benchmark_find(benchmark);

    return b != NULL && b->all_devices;
}

static int others_busy(const struct gpu_hold *h, int slot)
{
    for (int i = 0; i < h->count; i++)
        if (i != slot && h->busy[i])
            return 1;
    return 0;
}

int gpu_hold_claim(struct gpu_hold *h, int slot, int device_index, struct store *s,
                   struct run_job *job, int *waiting)
{
    char next[64];
    int rc, every;

    *waiting = 0;
    pthread_mutex_lock(&h->lock);
    if (h->closed) {
        rc = STORE_NOT_FOUND;
        goto done;
    }
    if (h->count <= 1) {
        rc = store_claim_next(s, device_index, job);
        goto done;
    }
    if (h->holder >= 0 && h->holder != slot) {
        rc = STORE_NOT_FOUND;
        goto done;
    }
    rc = store_peek_next(s, device_index, next);
    if (rc != STORE_OK) {
        /* The run this slot held the node for is gone (cancelled). */
        if (h->holder == slot)
            h->holder = -1;
        goto done;
    }
    every = needs_every_gpu(next);
    if (!every && h->holder == slot)
        h->holder = -1;
    if (every) {
        h->holder = slot;
        if (others_busy(h, slot)) {
            *waiting = 1;
            rc = STORE_NOT_FOUND;
            goto done;
        }
    }
    rc = store_claim_next(s, device_index, job);
    if (rc != STORE_OK)
        goto done;
    /* The run claimed is the one looked at: no other thread claims this
     * device's runs, and a cancel between the two only removes it, after
     * which the claim takes the next; check that one too. */
    if (needs_every_gpu(job->benchmark) != every) {
        if (!every && others_busy(h, slot)) {
            if (store_requeue_run(s, job->id) != STORE_OK)
                log_error("run %s needs every GPU but could not be put back in the "
                          "queue to wait for them; it runs beside the others",
                          job->id);
            else {
                store_job_clear(job);
                h->holder = slot;
                *waiting = 1;
                rc = STORE_NOT_FOUND;
                goto done;
            }
        }
        h->holder = every ? -1 : slot;
    }
    h->busy[slot] = 1;

done:
    pthread_mutex_unlock(&h->lock);
    return rc;
}

void gpu_hold_close(struct gpu_hold *h)
{
    pthread_mutex_lock(&h->lock);
    h->closed = 1;
    pthread_mutex_unlock(&h->lock);
}

int gpu_hold_release(struct gpu_hold *h, int slot)
{
    int wake;

    if (h->count <= 1)
        return 0;
    pthread_mutex_lock(&h->lock);
    h->busy[slot] = 0;
    wake = h->holder >= 0;
    if (h->holder == slot)
        h->holder = -1;
    pthread_mutex_unlock(&h->lock);
    return wake;
}

int gpu_hold_holder(struct gpu_hold *h)
{
    int holder;

    pthread_mutex_lock(&h->lock);
    holder = h->holder;
    pthread_mutex_unlock(&h->lock);
    return holder;
}
