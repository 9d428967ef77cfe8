/*
 * options.h - the daemon's command line, parsed by getopt_long from one
 * table in options.c (gpubenchd --help prints it; the README's
 * Configuration table says the same).
 *
 * Strings in struct options point into argv, into the struct itself, or at
 * the table's literal defaults.
 */
#ifndef GPUBENCH_SERVER_OPTIONS_H
#define GPUBENCH_SERVER_OPTIONS_H

#include <stdio.h>

#include "canary_rule.h"
#include "curl_tls.h"

#define OPTIONS_PATH_CAP 4096

struct options {
    const char *listen;
    const char *db;
    char web[OPTIONS_PATH_CAP];
    char worker[OPTIONS_PATH_CAP];
    const char *chartjs; /* Chart.js, served at /vendor/chart.js */
    const char *token_file;
    const char *web_config; /* --web-config: TLS (web_config.h); NULL: plain HTTP */
    const char **peers;     /* --peer, peer_count of them (room for argc); options_free frees */
    int peer_count;
    const char *peers_file; /* --peers-file: file_sd targets, re-read when changed; NULL: none */
    int peer_concurrency;   /* pulls at once */
    int peer_interval_s;
    const char *peer_token_file; /* bearer token sent to peers; NULL: none */
    struct curl_tls peer_tls;    /* TLS to https:// peers and the webhook; NULL members: none */
    int max_queue;
    int history_runs;          /* runs of a card's history a run is judged against */
    int confirm_runs;          /* confirming runs a change queues; 0: none */
    const char *alert_webhook; /* where confirmed alerts are posted; NULL: nowhere */
    int run_timeout_s;
    int watch_interval_s; /* between watch probes of an idle GPU; 0: none */
    int shutdown_grace_s;
    int http_threads;
    int verbose;
    int auth_reads;            /* reads need a token too */
    int metrics_peer_results;  /* /metrics: result gauges for peers' cards too */
    int allow_unauthenticated; /* listen beyond loopback with no tokens */
    int rate_per_minute;       /* POST /runs a client may make; 0: no limit */
    int rate_burst;
    int max_connections;
    int max_connections_per_ip;

    /* Who may speak to the daemon (http/request_guard.h) */
    const char *web_hosts;           /* --web-host: comma list; NULL: none */
    const char *web_allowed_origins; /* --web-allowed-origins: comma list; NULL: none */
    int max_body_mib;                /* --max-body-memory */

    int test_benchmarks;     /* offer the test-only benchmarks (test_fault, test_hang) */
    int check_db;            /* --check-db: check --db offline and exit */
    const char *backup;      /* --backup DEST: copy --db there and exit */
    const char *recover;     /* --recover DAMAGED: read it into --db and exit */
    int db_check_delay_s;    /* the background check's first run after start */
    int db_check_interval_s; /* and between runs; 0: only once */

    /* Checks on idle cards (runs/canaries.h) */
    struct canary_spec canaries[CANARY_MAX]; /* --canary, canary_count of them */
    int canary_count;
    int64_t canary_idle_s;    /* --canary-idle: quiet this long before a canary */
    int64_t max_clock_skew_s; /* --max-clock-skew: a foreign run no further ahead */
    /* --critical-xids: the XIDs that are critical card events
     * (CARD_CRITICAL_XIDS_MAX of them at most). */
    int critical_xids[64];
    int n_critical_xids;
};

enum options_result {
    OPTIONS_RUN,
    OPTIONS_EXIT_OK,
    OPTIONS_EXIT_USAGE,
};

struct http_options;

/* What options_parse allocated; opt may be parsed again after. */
void options_free(struct options *opt);

/* Fills opt from argv with defaults for what is not given.  Prints help,
 * the version, or what was wrong (to out / err) and says whether to run;
 * on OPTIONS_RUN the caller frees opt with options_free, on anything else
 * nothing is left to free. */
enum options_result options_parse(struct options *opt, int argc, char **argv,
                                  FILE *out, FILE *err);

/* The settings the HTTP layer serves by (http/app.h), from opt: strings
 * point into opt, which must outlive http. */
void options_http(const struct options *opt, struct http_options *http);

#endif
