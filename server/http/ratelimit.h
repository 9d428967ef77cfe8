/*
 * ratelimit.h - a token bucket per client (a bearer token, or an address
 * where there are no tokens) for POST /runs: `per_minute` posts a minute on
 * average, `burst` at once.  The table is fixed in size: when full, the
 * client seen longest ago is forgotten (it then starts with a full
 * bucket), so no stream of new clients can grow memory.
 */
#ifndef GPUBENCH_HTTP_RATELIMIT_H
#define GPUBENCH_HTTP_RATELIMIT_H

#include <stdint.h>

struct ratelimit;

/* NULL when per_minute is 0 (no limit) or out of memory. */
struct ratelimit *ratelimit_new(int per_minute, int burst);
void ratelimit_free(struct ratelimit *r);

/* 1 if key may post now (and takes one), else 0 with *retry_after_s set.
 * now_ms on a monotonic clock.  A NULL r always allows. */
int ratelimit_take(struct ratelimit *r, const char *key, int64_t now_ms,
                   int *retry_after_s);

#endif
