/*
 * canaries.h - checks on idle cards: each --canary runs on each
 * card of the node at most once a period, queued only when the card has
 * been quiet for --canary-idle and has nothing else queued, labelled
 * canary (STORE_CANARY_LABEL); GET /canaries shows what it did and why it
 * waits.  The rule is canary_rule.h's; this is the thread that applies it.
 *
 * A thread of its own, not the runners' idle tick: queuing a run is the
 * runs layer's (runs_accept), above the GPU pool, and a look at the store
 * every second should never delay a runner taking its next run.  It looks
 * once a second, reading the store and the pool's probe (gpu_pool.h,
 * gpu_pool_quiet_since) with no lock held, then notes its decisions under
 * its own lock, which only GET /canaries also takes, briefly.
 *
 * What a canary last ran is read from the runs table every time, so "at
 * most once a period" holds across a restart; the deferral counts and
 * reasons are kept in memory and start again at 0 when the daemon does.
 */
#ifndef GPUBENCH_RUNS_CANARIES_H
#define GPUBENCH_RUNS_CANARIES_H

#include <stdint.h>
#include <cjson/cJSON.h>

#include "canary_rule.h"

struct dynbuf;

struct runs;
struct canaries;

/* What the canaries are started with; runs (and its store and GPUs) must
 * outlive them. */
struct canaries_config {
    struct runs *runs;
    const struct canary_spec *specs; /* copied */
    int n_specs;
    int64_t idle_s;    /* --canary-idle */
    int run_timeout_s; /* a canary run's timeout: the daemon's --run-timeout */
};

/* Starts the thread when there is a canary and a GPU (else only GET
 * /canaries is served, saying why nothing runs).  NULL when out of memory
 * or the thread cannot start (logged). */
struct canaries *canaries_start(const struct canaries_config *cfg);

/* Stops the thread and frees all; NULL is fine. */
void canaries_stop(struct canaries *c);

/* GET /canaries' answer: per card, each canary's last run, its outcome,
 * when it is due next and its deferrals; an empty list with the reason
 * when there is no GPU or no canary.  A NEW object the caller deletes, or
 * NULL when the store failed (*store_rc says how) or memory ran out
 * (*store_rc 0). */
cJSON *canaries_describe(struct canaries *c, int *store_rc);

/* The same as Prometheus series into b, for GET /metrics: each canary's
 * last run time (gpubench_canary_last_run_timestamp_seconds), whether it
 * is due and held back now, and its deferrals since the start (a counter:
 * the counts live in memory).  Labels host, uuid, gpu (the card's index;
 * "all" and uuid "" for a node canary) and canary.  Nothing without a GPU
 * or a --canary.  STORE_OK, or the store's failure (b may then hold a
 * part, which the caller drops); a refused line marks b (dynbuf_failed),
 * which the caller asks before sending. */
int canaries_metrics(struct canaries *c, struct dynbuf *b);

#endif
