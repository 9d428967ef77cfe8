/*
 * run_cache.h - the JSON of finished runs, kept ready to send.
 *
 * A run that has ended (done, failed, cancelled) never changes again, so
 * GET /runs/ID need not read and print it twice: its answer is kept here,
 * keyed by run id, in at most max_bytes, the least recently used going
 * first.  Runs that can still change are never put here.
 *
 * An answer can be sent straight from the cache, without a copy: a hold
 * (run_cache_hold) keeps an entry's bytes alive, even once the cache has
 * dropped or replaced it, until counted_release (counted.h); each entry counts its
 * holders and the cache's own link as one more.
 */
#ifndef GPUBENCH_CORE_RUN_CACHE_H
#define GPUBENCH_CORE_RUN_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct run_cache;

/* NULL when out of memory (the daemon then runs without it). */
struct run_cache *run_cache_new(size_t max_bytes);
void run_cache_free(struct run_cache *c);

/* A malloc'ed copy of the body kept for id (the caller frees it), with its
 * length in *len and, when tag is not NULL, its hash_fnv1a64 in *tag
 * (computed once, when it was put: an ETag costs nothing on a hit); NULL
 * when there is none.  c may be NULL. */
char *run_cache_get(struct run_cache *c, const char *id, size_t *len, uint64_t *tag);

/* The body kept for id, held: not a copy, valid (and unchanged) until
 * counted_release(*hold), which must come once for each hold (any thread,
 * libmicrohttpd's once a response is sent; the entry is freed when the
 * cache has dropped it and no other hold is left); its length
 * in *len and, when tag is not NULL, its hash_fnv1a64 in *tag.  NULL (and
 * *hold NULL) when there is none.  c may be NULL. */
const char *run_cache_hold(struct run_cache *c, const char *id, size_t *len, uint64_t *tag,
                           void **hold);

/* Keeps a copy of body for id.  c may be NULL. */
void run_cache_put(struct run_cache *c, const char *id, const char *body, size_t len);

#endif
