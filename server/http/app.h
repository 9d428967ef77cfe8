/*
 * app.h - the daemon's shared state, handed to every HTTP handler: the
 * options it was started with, the store, the GPUs and the waiters.  Built
 * once in main() and torn down there; handlers only borrow it.
 */
#ifndef GPUBENCH_APP_H
#define GPUBENCH_APP_H

#include <stdint.h>

#include "options.h"

struct store;
struct gpu_pool;
struct waiters;
struct auth;
struct ratelimit;
struct peers;
struct run_cache;
struct alerts;

struct app {
    const struct options *opt;
    const char *db_path;      /* --db, absolute; owned by the db lock */
    const char *worker_owner; /* what its workers carry (worker_proc.h) */
    struct store *store;
    struct gpu_pool *gpus;
    struct waiters *waiters;
    struct auth *auth;            /* NULL: no tokens, everything open */
    struct ratelimit *post_limit; /* NULL: no rate limit */
    struct peers *peers;          /* NULL: no --peer */
    struct run_cache *run_cache;  /* finished runs' JSON; NULL: none */
    struct alerts *alerts;        /* the alert webhook (alerts.h) */
    char host[256];
    int64_t started_mono_ms;
    char started_at[32];
};

#endif
