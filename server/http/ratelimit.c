/*
 * ratelimit.c - see ratelimit.h.  A small array scanned linearly under a
 * mutex: a lab has tens of clients, not millions.
 */
#include "ratelimit.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define RATELIMIT_SLOTS 256

struct bucket {
    char key[64];
    double tokens;
    int64_t last_ms;
};

struct ratelimit {
    pthread_mutex_t lock;
    double per_ms;
    double burst;
    struct bucket slots[RATELIMIT_SLOTS];
    int used;
};

struct ratelimit *ratelimit_new(int per_minute, int burst)
{
    struct ratelimit *r;

    if (per_minute <= 0)
        return NULL;
    r = calloc(1, sizeof(*r));
    if (r == NULL)
        return NULL;
    pthread_mutex_init(&r->lock, NULL);
    r->per_ms = per_minute / 60000.0;
    r->burst = burst > 0 ? burst : 1;
    return r;
}

void ratelimit_free(struct ratelimit *r)
{
    if (r == NULL)
        return;
    pthread_mutex_destroy(&r->lock);
    free(r);
}

static struct bucket *find_or_make(struct ratelimit *r, const char *key, int64_t now)
{
    struct bucket *oldest = NULL;

    for (int i = 0; i < r->used; i++) {
        if (strcmp(r->slots[i].key, key) == 0)
            return &r->slots[i];
        if (oldest == NULL || r->slots[i].last_ms < oldest->last_ms)
            oldest = &r->slots[i];
    }
    if (r->used < RATELIMIT_SLOTS)
        oldest = &r->slots[r->used++];
    strncpy(oldest->key, key, sizeof(oldest->key) - 1);
    oldest->key[sizeof(oldest->key) - 1] = '\0';
    oldest->tokens = r->burst;
    oldest->last_ms = now;
    return oldest;
}

int ratelimit_take(struct ratelimit *r, const char *key, int64_t now_ms,
                   int *retry_after_s)
{
    struct bucket *b;
    int ok;

    if (r == NULL)
        return 1;
    pthread_mutex_lock(&r->lock);
    b = find_or_make(r, key, now_ms);
    b->tokens += (double)(now_ms - b->last_ms) * r->per_ms;
    if (b->tokens > r->burst)
        b->tokens = r->burst;
    b->last_ms = now_ms;
    ok = b->tokens >= 1.0;
    if (ok)
        b->tokens -= 1.0;
    else
        *retry_after_s = (int)((1.0 - b->tokens) / r->per_ms / 1000.0) + 1;
    pthread_mutex_unlock(&r->lock);
    return ok;
}
