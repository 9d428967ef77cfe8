/*
 * run_cache.c - see run_cache.h.  A hash table of chained entries and one
 * least-recently-used list through them, under one mutex; a hit costs a
 * hash, a short chain walk and a copy of the body (run_cache_get) or a
 * count of its holders (run_cache_hold).  An entry is freed by the last
 * of the cache's link and its holds to let go (entry_unref).
 */
#include "run_cache.h"
#include "counted.h"
#include "hash.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BUCKETS 4096
#define ID_LEN 40

struct entry {
    struct counted ref;          /* first: a hold is the entry; the cache's link and the holds */
    struct entry *chain;         /* next in the bucket */
    struct entry *newer, *older; /* the LRU list */
    char id[ID_LEN];
    size_t len;
    uint64_t tag; /* hash_fnv1a64 of body */
    char body[];
};

struct run_cache {
    pthread_mutex_t lock;
    struct entry *buckets[BUCKETS];
    struct entry *newest, *oldest;
    size_t bytes, max_bytes;
};

static unsigned bucket_of(const char *id)
{
    return hash_fnv1a(id) % BUCKETS;
}

struct run_cache *run_cache_new(size_t max_bytes)
{
    struct run_cache *c = calloc(1, sizeof(*c));

    if (c == NULL)
        return NULL;
    pthread_mutex_init(&c->lock, NULL);
    c->max_bytes = max_bytes;
    return c;
}

void run_cache_free(struct run_cache *c)
{
    struct entry *e, *next;

    if (c == NULL)
        return;
    for (e = c->newest; e; e = next) {
        next = e->older;
        counted_release(e);
    }
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static void unlink_lru(struct run_cache *c, struct entry *e)
{
    if (e->newer)
        e->newer->older = e->older;
    else
        c->newest = e->older;
    if (e->older)
        e->older->newer = e->newer;
    else
        c->oldest = e->newer;
    e->newer = e->older = NULL;
}

static void push_newest(struct run_cache *c, struct entry *e)
{
    e->older = c->newest;
    e->newer = NULL;
    if (c->newest)
        c->newest->newer = e;
    c->newest = e;
    if (c->oldest == NULL)
        c->oldest = e;
}

static struct entry **find(struct run_cache *c, const char *id)
{
    struct entry **pp = &c->buckets[bucket_of(id)];

    while (*pp && strcmp((*pp)->id, id) != 0)
        pp = &(*pp)->chain;
    return pp;
}

static void drop(struct run_cache *c, struct entry *e)
{
    struct entry **pp = find(c, e->id);

    *pp = e->chain;
    unlink_lru(c, e);
    c->bytes -= sizeof(*e) + e->len;
    counted_release(e); /* the cache's link; a hold may keep it on */
}

static void entry_free(struct counted *c)
{
    free(c); /* the entry's first member */
}

const char *run_cache_hold(struct run_cache *c, const char *id, size_t *len, uint64_t *tag,
                           void **hold)
{
    struct entry *e;

    *hold = NULL;
    if (c == NULL || strlen(id) >= ID_LEN)
        return NULL;
    pthread_mutex_lock(&c->lock);
    e = *find(c, id);
    if (e) {
        counted_hold(&e->ref);
        *len = e->len;
        if (tag)
            *tag = e->tag;
        unlink_lru(c, e);
        push_newest(c, e);
    }
    pthread_mutex_unlock(&c->lock);
    *hold = e;
    return e ? e->body : NULL;
}

char *run_cache_get(struct run_cache *c, const char *id, size_t *len, uint64_t *tag)
{
    void *hold;
    size_t n = 0;
    const char *kept = run_cache_hold(c, id, &n, tag, &hold);
    char *copy = kept ? malloc(n + 1) : NULL;

    if (copy) {
        memcpy(copy, kept, n + 1);
        *len = n;
    }
    counted_release(hold);
    return copy;
}

void run_cache_put(struct run_cache *c, const char *id, const char *body, size_t len)
{
    struct entry *e, **pp;

    if (c == NULL || strlen(id) >= ID_LEN || sizeof(*e) + len > c->max_bytes)
        return;
    e = malloc(sizeof(*e) + len + 1);
    if (e == NULL)
        return;
    memset(e, 0, sizeof(*e));
    strcpy(e->id, id);
    e->len = len;
    e->tag = hash_fnv1a64(body, len);
    counted_init(&e->ref, 1, entry_free);
    memcpy(e->body, body, len);
    e->body[len] = '\0';
    pthread_mutex_lock(&c->lock);
    pp = find(c, id);
    if (*pp)
        drop(c, *pp);
    while (c->oldest && c->bytes + sizeof(*e) + len > c->max_bytes)
        drop(c, c->oldest);
    pp = find(c, id);
    e->chain = *pp;
    *pp = e;
    push_newest(c, e);
    c->bytes += sizeof(*e) + len;
    pthread_mutex_unlock(&c->lock);
}
