/*
 * coverage.h - which cards were checked lately (GET /coverage, /metrics,
 * gpubench check): every card this daemon knows against every member of
 * the health suite (common/bench_suite.h), each cell judged from the
 * card's newest valid run of that benchmark.
 *
 * Pure: the cells come from the store (store_coverage_cells), the
 * daemon's own GPUs from the pool, the time from the caller.  A cell is
 *   never    no valid run of the benchmark on the card
 *   stale    its newest valid run is older than max_age
 *   fresh    within max_age
 *   failing  its newest valid run missed a floor (checks_failed), however
 *            old: an unconfirmed miss the card's rerun will confirm or
 *            clear, shown rather than hidden by age
 * A benchmark that runs on every GPU of a node at once (all_devices:
 * p2p_bandwidth) checks every card of its host, whichever GPU it was
 * stored under.  A benchmark a card's node cannot run (p2p_bandwidth, which needs two
 * GPUs, on a host with one known card) is left out of that card with the
 * reason, as the health suite leaves it out, rather than counted never
 * forever.
 */
#ifndef GPUBENCH_JUDGE_COVERAGE_H
#define GPUBENCH_JUDGE_COVERAGE_H

#include <stdint.h>
#include <cjson/cJSON.h>

/* A GPU of this daemon's own, listed even before it has a run.  Strings
 * must outlive the call. */
struct coverage_gpu {
    int index;
    const char *uuid;
    const char *name;
};

struct coverage_query {
    const char *own_host;           /* this daemon's host name */
    const struct coverage_gpu *own; /* its GPUs (n_own of them) */
    int n_own;
    const char *host;    /* only this host's cards; NULL: every host */
    int64_t now_ms;      /* Unix ms */
    long long max_age_s; /* a valid run older than this is stale */
    /* the same for the deep checks' cells; 0: COVERAGE_DEEP_MAX_AGE_S */
    long long deep_max_age_s;
    /* The faults of card uuid (card_state.h: what makes it degraded, such
     * as a confirmed floor alert): 0 with *faults a NEW array (or NULL for
     * none), -1 when they could not be read (then so can't the coverage). */
    int (*read_faults)(void *ctx, const char *uuid, cJSON **faults);
    void *ctx;
};

/* The deep checks' window without deep_max_age_s: the weekly canary's
 * (--canary health_deep@7d). */
#define COVERAGE_DEEP_MAX_AGE_S (7 * 86400LL)

/* The state names, in the order the totals list them. */
enum coverage_state {
    COVERAGE_FRESH,
    COVERAGE_STALE,
    COVERAGE_NEVER,
    COVERAGE_FAILING,
    COVERAGE_STATES,
};
const char *coverage_state_name(enum coverage_state s);

/* The coverage of the cards in cells (as store_coverage_cells reads them,
 * ordered by host and card) and q->own, of q->host when given: a NEW
 * object {"host" (own), "max_age_s", "benchmarks": [names], "cards":
 * [{"host", "uuid", "index", "name", "own", "state", "reason",
 * "coverage_reason", "cells": [{"benchmark",
 * "state", "run_id", "at", "age_s"}], "left_out": [{"benchmark",
 * "reason"}]}], "totals": {state: cells}}, cards ordered by host, index
 * and uuid; NULL out of memory or when read_faults failed.  A card's
 * state and reason are card_state_judge's (the same as GET /cards/UUID
 * says) from its cells' runs and its faults; coverage_reason names the
 * first cell that is not fresh ("hbm_bandwidth never checked",
 * "transpose last checked 30h ago (max 24h)"), null when all are.
 * Beside them, the deep checks of health_deep (known_answer, memtest,
 * soak): "deep_max_age_s", "deep_benchmarks", each card's "deep_cells"
 * and "deep_left_out" (as cells, judged against deep_max_age_s) and
 * "deep_totals"; they never change a card's state or coverage_reason. */
cJSON *coverage_build(const cJSON *cells, const struct coverage_query *q);

#endif
