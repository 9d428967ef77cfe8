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
    /* 1: each age_s that is a number is written as a hole instead, a raw
     * value COVERAGE_HOLE_OPEN, its run's finished time in Unix ms, then
     * COVERAGE_HOLE_CLOSE, for a keeper of the printed text to fill in at
     * each answer (coverage_fill_ages); 0: the ages at now_ms */
    int age_holes;
};

/* The bytes around a hole: control characters, which JSON text escapes in
 * any string, so they are found nowhere else in printed cards. */
#define COVERAGE_HOLE_OPEN '\x01'
#define COVERAGE_HOLE_CLOSE '\x02'

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

/* One card of the coverage, as coverage_build lists it. */
struct coverage_card {
    cJSON *card;                  /* NEW: the card's object, the callee's */
    const char *host, *uuid;      /* borrowed from the cells or q */
    long totals[COVERAGE_STATES]; /* its cells' states (what "totals" sums) */
    long deep_totals[COVERAGE_STATES];
    /* The first time (Unix ms) at which its object says something else
     * with time alone, its ages apart: a cell's window passed, the card's
     * newest run past max_age (unknown), the age in its coverage_reason
     * reaching its next unit; INT64_MAX: never */
    int64_t valid_until_ms;
};

/* Calls fn for each card coverage_build would list, in its order (host,
 * index, uuid), made as coverage_build makes it (q->age_holes apart): fn
 * owns c->card whatever it returns; 0, or -1 when it fails.  0, or -1 out
 * of memory, when read_faults failed or when fn did. */
typedef int (*coverage_card_fn)(void *ctx, const struct coverage_card *c);
int coverage_cards(const cJSON *cells, const struct coverage_query *q, coverage_card_fn fn,
                   void *ctx);

/* coverage_build's answer without its cards and totals: a NEW {"host",
 * "max_age_s", "deep_max_age_s", "benchmarks", "deep_benchmarks",
 * "cards": []}, or NULL out of memory. */
cJSON *coverage_head(const struct coverage_query *q);

/* Adds "totals" and "deep_totals" (as coverage_build does) to out; 0, or
 * -1 out of memory. */
int coverage_add_totals(cJSON *out, const long totals[COVERAGE_STATES],
                        const long deep_totals[COVERAGE_STATES]);

/* Appends text (len bytes, printed cards with holes: age_holes) to b with
 * each hole filled with its age at now_ms as coverage_build prints age_s;
 * 0, or -1 when b failed or a hole is not closed. */
struct dynbuf;
int coverage_fill_ages(struct dynbuf *b, const char *text, size_t len, int64_t now_ms);

#endif
