/*
 * counted.h - a count of the holders of a piece of memory shared across
 * threads, and the function that frees it when the last of them lets go
 * (as the Linux kernel's kref).
 *
 * The texts the daemon sends without a copy are shared this way: a
 * finished run's answer kept by the run cache, a hub's whole /metrics
 * answer kept by the metrics cache.  The cache that keeps one counts as a
 * holder while it keeps it, and so does each libmicrohttpd response
 * sending it, whichever thread lets go last.
 *
 * A struct counted is the first member of what it counts, so that a hold
 * (a void *, as libmicrohttpd's callbacks and struct http_reply take it)
 * is a pointer to both.
 */
#ifndef GPUBENCH_CORE_COUNTED_H
#define GPUBENCH_CORE_COUNTED_H

#include <stdatomic.h>

struct counted {
    atomic_int holders;
    /* frees the object whose first member this is; called once, by the
     * thread that lets go last */
    void (*free_fn)(struct counted *c);
};

/* Starts the count at holders (the maker's holds) with free_fn. */
void counted_init(struct counted *c, int holders, void (*free_fn)(struct counted *c));

/* One more holder. */
void counted_hold(struct counted *c);

/* Lets go of one hold on hold (a struct counted *, or what starts with
 * one); the last frees it.  NULL does nothing.  Any thread may call it. */
void counted_release(void *hold);

#endif
