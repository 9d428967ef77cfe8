/*
 * app.h - the daemon's shared state as the HTTP layer sees it, handed to
 * every handler: the settings it serves by, the store, the GPUs, the runs
 * layer and the rest.  Built once in main() and torn down there; handlers
 * only borrow it.  Nothing below http/ sees this struct: each layer under
 * it is handed only what it works with (runs.h, gpu_pool.h, alerts.h,
 * peers.h).
 */
#ifndef GPUBENCH_HTTP_APP_H
#define GPUBENCH_HTTP_APP_H

#include <stddef.h>
#include <stdint.h>

struct store;
struct gpu_pool;
struct runs;
struct auth;
struct ratelimit;
struct peers;
struct alerts;
struct http_tls;
struct canaries;
struct metrics_cache;
struct coverage_cache;
struct heavy_pool;

/* The command-line settings the HTTP layer reads (main copies them from
 * its options, options.h, which this layer does not see). */
/* Where Debian's libjs-chart.js puts Chart.js: --chartjs's default. */
#define HTTP_CHARTJS_DEFAULT "/usr/share/javascript/chart.js/chart.min.js"

struct http_options {
    const char *listen;              /* --listen, as given */
    const char *web;                 /* --web: the page's folder */
    const char *chartjs;             /* --chartjs: Chart.js's file */
    int run_timeout_s;               /* a run's default timeout */
    int test_benchmarks;             /* the test double's benchmarks are listed */
    int64_t max_clock_skew_s;        /* --max-clock-skew: a foreign run no further ahead */
    int auth_reads;                  /* --auth-reads: reads need a token too */
    int metrics_peer_results;        /* --metrics-peer-results: result gauges of every card */
    int http_threads;                /* libmicrohttpd's thread pool */
    int heavy_threads;               /* the heavy reads' pool (heavy_pool.h) */
    int max_connections;             /* in all */
    int max_connections_per_ip;      /* from one address */
    const char *web_hosts;           /* --web-host: more names Host may give; NULL: none */
    const char *web_allowed_origins; /* --web-allowed-origins: comma list; NULL: none */
    size_t max_body_bytes;           /* --max-body-memory: bodies buffered at once, in all */
};

struct app {
    const struct http_options *opt;
    const char *db_path; /* --db, absolute; owned by the db lock */
    struct store *store;
    struct gpu_pool *gpus;
    struct runs *runs;               /* the runs layer (runs.h) */
    struct auth *auth;               /* NULL: no tokens, everything open */
    struct ratelimit *post_limit;    /* NULL: no rate limit */
    struct peers *peers;             /* NULL: no --peer */
    struct alerts *alerts;           /* the alert webhook (alerts.h) */
    struct http_tls *tls;            /* NULL: plain HTTP (tls.h) */
    struct canaries *canaries;       /* the checks on idle cards (canaries.h) */
    struct metrics_cache *metrics;   /* /metrics' heavy collectors (metrics_cache.h) */
    struct coverage_cache *coverage; /* the whole GET /coverage kept (coverage_cache.h);
                                      * NULL: made at each request */
    struct heavy_pool *heavy;        /* the heavy routes' threads: http_start's */
    char host[256];
    int check_host; /* loopback or unauthenticated: Host must name us (http_start) */
    int64_t started_mono_ms;
    char started_at[32];
};

#endif
