/*
 * heavy_pool.h - the threads that run the heavy reads (a route's weight,
 * router.c: a hub's /coverage, /cards, /fleet, /metrics, the exports), so
 * that libmicrohttpd's own threads only ever run light work and a
 * /healthz, a single run or a write is never queued behind a reading of
 * the whole fleet.  http.c suspends the connection, hands the
 * handler to a job here and resumes the connection when it is done.
 *
 * A fixed set of threads takes jobs in order from one bounded queue; a
 * job is refused when the queue is full or the pool is stopping (the
 * request is then answered 503 at once).  The threads run at a lower
 * priority (nice +10, HEAVY_NICE): on a busy machine the light threads come
 * first.  heavy_pool_stop has what is queued end at once (cancelled),
 * then joins the threads;
 * heavy_pool_free, once nothing can submit any more, frees it.
 */
#ifndef GPUBENCH_HTTP_HEAVY_POOL_H
#define GPUBENCH_HTTP_HEAVY_POOL_H

struct heavy_pool;

/* What a pool is doing now, for /healthz. */
struct heavy_pool_load {
    int threads;
    int running; /* jobs a thread runs now */
    int queued;  /* jobs waiting for a thread */
    int queue_cap;
};

/* A pool of threads threads and a queue of at most queue_cap jobs; each
 * job first sleeps hold_ms (0: none; a test's way to keep the pool busy,
 * never set outside --test-benchmarks).  NULL when a thread could not be
 * made or memory ran out. */
struct heavy_pool *heavy_pool_new(int threads, int queue_cap, int hold_ms);

/* Queues fn(arg, cancelled): 0, or -1 when the queue is full or the pool
 * is stopping (fn is then never called).  cancelled is 1 for a job that
 * was still queued when heavy_pool_stop began: it should end at once
 * (answer that the daemon is stopping) instead of doing its work. */
int heavy_pool_submit(struct heavy_pool *p, void (*fn)(void *arg, int cancelled), void *arg);

void heavy_pool_load(struct heavy_pool *p, struct heavy_pool_load *out);

/* Refuses new jobs from now on, runs every queued one and joins the
 * threads.  NULL: nothing. */
void heavy_pool_stop(struct heavy_pool *p);

/* Frees a stopped pool (heavy_pool_stop first); until then a submit is
 * refused.  NULL: nothing. */
void heavy_pool_free(struct heavy_pool *p);

#endif
