/*
 * metrics_cache.h - the heavy /metrics collectors' text kept ready (issue
 * 33), so that a scrape of a hub holding thousands of cards reads what was
 * made when its runs were written instead of judging the fleet again.
 *
 * A heavy collector (the results, the fleet's outliers, the coverage)
 * builds its families into a text, and optionally "aged" series whose
 * value is a time (Unix seconds): they are printed as now minus that time,
 * so a cached coverage age is still the age at the scrape.
 *
 * When a collector's text is made again:
 *   - at the scrape, when the store changed since it was made
 *     (store_changes) and its last build took under METRICS_INLINE_MS: a
 *     small daemon's scrape is always fresh;
 *   - otherwise in the background (one thread), after the store changed,
 *     no sooner than METRICS_REFRESH_MIN_S after the last build nor than
 *     four times its duration (a hub pulling all the time does not spend
 *     its cores judging the fleet), and, for a collector marked timed
 *     (the coverage: a cell goes stale with time alone), at least every
 *     METRICS_MAX_AGE_S;
 *   - but only while it is read: the thread makes a collector again only
 *     within METRICS_IDLE_S of its last scrape (Prometheus scrapes every
 *     minute or so; a hub nobody scrapes spends nothing on it).  The
 *     first scrape after a quiet spell, when the store changed since the
 *     kept text, asks the thread for a build and waits for it up to
 *     METRICS_FIRST_WAIT_MS, then reports the collector as failed: a text
 *     older than the quiet spell is never served;
 *   - a scrape before the first build waits for the thread's first build
 *     up to METRICS_FIRST_WAIT_MS, then reports the collector as failed
 *     (a big hub's first build takes seconds: Prometheus's scrape timeout
 *     is 10 s), and builds it itself where no build is under way.
 * A failed build keeps no text: the scrape reports the collector's
 * success as 0 (prom_text.h) until a build succeeds.
 *
 * The whole answer kept (metrics_cache_body, metrics_cache_keep_body): a
 * body of METRICS_BODY_KEEP_MIN_BYTES or more (a hub's thousands of cards,
 * megabytes of series) is kept and served again, without a copy, to the
 * scrapes of the next METRICS_BODY_KEEP_MS while the store has not
 * changed (store_changes): two Prometheus servers and a dashboard
 * scraping a hub each second make it once.  Its
 * gpubench_scrape_collector_* series are those of the scrape that made
 * it; what moves with time alone (uptime, coverage ages) is at most
 * METRICS_BODY_KEEP_MS old; what changes outside the store (a worker
 * restarted, a peer's state) shows at most that late.  A smaller body
 * (a node's own cards) is made at every scrape.  Each reply holds the
 * body it sends (a count), so a body replaced meanwhile lives until its
 * last reply is sent.
 *
 * Locking: one mutex guards every entry and the kept body; a build runs
 * without it, on its own buffers, and swaps them in.
 */
#ifndef GPUBENCH_HTTP_METRICS_CACHE_H
#define GPUBENCH_HTTP_METRICS_CACHE_H

#include "dynbuf.h"
#include "prom_text.h"

#include <stdint.h>

#define METRICS_INLINE_MS 500
#define METRICS_REFRESH_MIN_S 10
#define METRICS_MAX_AGE_S 60
#define METRICS_IDLE_S 600
#define METRICS_FIRST_WAIT_MS 2000
#define METRICS_BODY_KEEP_MS 1000
#define METRICS_BODY_KEEP_MIN_BYTES (1024 * 1024)

struct store;

/* One heavy collector: build writes its text into text and its aged
 * series into aged (Unix seconds as values), reading ctx; 0, or -1 when a
 * read failed.  aged_metric and aged_help name the aged family (NULL:
 * none), printed before the text. */
struct metrics_heavy {
    const char *aged_metric, *aged_help;
    int timed; /* what it says moves with time alone: made again each METRICS_MAX_AGE_S */
    int (*build)(void *ctx, struct dynbuf *text, struct prom_set *aged);
};

struct metrics_cache;

/* Starts the background builder over the n collectors of h (borrowed,
 * static) with ctx (borrowed: it must outlive metrics_cache_stop) and
 * store (whose changes it follows).  NULL when memory ran out or the
 * thread could not start. */
struct metrics_cache *metrics_cache_start(const struct metrics_heavy *h, int n, void *ctx,
                                          struct store *store);

/* How long after a collector's last scrape the thread keeps making it
 * (METRICS_IDLE_S by default); the tests shorten it. */
void metrics_cache_set_idle_ms(struct metrics_cache *c, int64_t idle_ms);

/* Stops the thread and frees everything; NULL does nothing. */
void metrics_cache_stop(struct metrics_cache *c);

/* Collector i's families into b, as kept, made again first where the
 * rules above say so.  0, or -1 when it has no text (its last build
 * failed). */
int metrics_cache_write(struct metrics_cache *c, int i, struct dynbuf *b);

/* The kept whole answer, when one was made less than METRICS_BODY_KEEP_MS
 * ago and the store has not changed since: 1 with *text, *len and *hold
 * (let go with counted_release, counted.h), else 0. */
int metrics_cache_body(struct metrics_cache *c, const char **text, size_t *len, void **hold);

/* The store's change count for metrics_cache_keep_body, read before a
 * body is made. */
unsigned long long metrics_cache_changes(const struct metrics_cache *c);

/* Takes body (malloc'd, len bytes), made from the store at change count
 * changes: kept when len >= METRICS_BODY_KEEP_MIN_BYTES, and then *hold
 * is set to a hold on it for the reply (counted_release) and 0
 * returned.  -1 when it is not kept (too small, or memory ran out):
 * body is still the caller's. */
int metrics_cache_keep_body(struct metrics_cache *c, char *body, size_t len,
                            unsigned long long changes, void **hold);

#endif
