/*
 * store_touch.h - what the store's writes touched, for a reader that keeps
 * something made per host or card (the whole GET /coverage of a hub,
 * server/http/coverage_cache.h) and makes again only what was touched.
 *
 * Each write that changed rows (each one store_changes counts) is logged
 * with what its query said it touched (store_query_touch,
 * store_internal.h): a host's runs, a card's rows (its UUID, wherever it
 * is held), only this daemon's own queue (queued and running runs, whose
 * ends are logged with their host and card), or nothing that is read per
 * card (a peer's pull cursor).  A write whose query said nothing is
 * logged as touching everything: a write path that does not say is
 * slower to read after, never read wrong.  The log is a ring of
 * STORE_TOUCH_LOG entries (store_internal.h); a reader further behind
 * than it reaches is told that everything was touched.
 *
 * Locking: the log and the count of writes move together under one
 * mutex, so what a reader is told covers every write up to the count it
 * gets back.
 */
#ifndef GPUBENCH_STORE_STORE_TOUCH_H
#define GPUBENCH_STORE_STORE_TOUCH_H

#include "store.h"

enum store_touch_kind {
    STORE_TOUCH_ALL,  /* anything may have changed */
    STORE_TOUCH_HOST, /* the runs of the host named */
    STORE_TOUCH_CARD, /* the rows of the card (device UUID) named: runs, faults, alerts */
    STORE_TOUCH_OWN,  /* this daemon's own queue: runs not yet ended */
    STORE_TOUCH_NONE, /* nothing read per host or card */
};

/* Called for each thing touched; name is the host or the UUID (NULL for
 * the other kinds), borrowed for the call.  It runs under the log's lock:
 * it must not call the store. */
typedef void (*store_touch_fn)(void *ctx, enum store_touch_kind kind, const char *name);

/* Calls fn for what each write counted after since (a value this call or
 * store_changes returned) touched, and returns the count of writes now:
 * every write up to it has been told.  Where the log no longer reaches
 * back to since, fn is called once with STORE_TOUCH_ALL. */
unsigned long long store_touched_since(struct store *s, unsigned long long since, store_touch_fn fn,
                                       void *ctx);

#endif
