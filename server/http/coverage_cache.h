/*
 * coverage_cache.h - a hub's whole GET /coverage kept ready:
 * each host's cards printed once, as coverage_build prints them, and made
 * again only when a write touched that host or one of its cards, or when
 * time alone changes what they say; an answer is the kept texts of the
 * hosts asked for, their ages filled in at the answer's time.
 *
 * What is kept, per host other than this daemon's own: its cards' text
 * with each age_s left as a hole holding its run's time (coverage.h,
 * age_holes), their totals, their UUIDs and the time the text holds until
 * (coverage_card.valid_until_ms).  This daemon's own host is made at each
 * answer, as before: its GPUs come from the pool and its queue writes all
 * the time (a node has no other host, and its answer is a few ms).
 *
 * Freshness: an answer is never older than the last write counted before
 * it began.  Each answer first asks the store what the writes since the
 * last one touched (store_touch.h: a run's host and card, a peer's card
 * faults' cards; a write that says nothing touches everything) and makes
 * those hosts again before it prints, reading the store after it has
 * read the count, so a write in between is seen by the next answer too.
 * The kept texts are for one max_age and deep_max_age; an answer with
 * others makes every host again (and keeps those).
 *
 * Locking: one mutex, held through an answer (the answers are one at a
 * time; a rebuild of every host, at the first answer or after a write that
 * touched everything, takes as long as an answer took before).
 */
#ifndef GPUBENCH_HTTP_COVERAGE_CACHE_H
#define GPUBENCH_HTTP_COVERAGE_CACHE_H

#include <stddef.h>

#include "coverage.h"

struct store;
struct coverage_cache;

/* A NEW, empty cache (coverage_cache_free), or NULL out of memory. */
struct coverage_cache *coverage_cache_new(void);
void coverage_cache_free(struct coverage_cache *c);

/* GET /coverage's answer (the bytes reply_json would send for
 * coverage_build's tree, its newline included) for q (q->host: one host,
 * NULL: every one; q->now_ms the answer's time; q->read_faults as for
 * coverage_build) from store, into a NEW malloc'd *text of *len bytes.
 * STORE_OK, a store's code when a read failed, or STORE_ERROR (out of
 * memory or read_faults failed: its own ctx says which). */
int coverage_cache_answer(struct coverage_cache *c, struct store *store,
                          const struct coverage_query *q, char **text, size_t *len);

#endif
