/*
 * canary_rule.h - checks on idle cards (issue 24, `--canary
 * BENCHMARK@PERIOD`): what a canary is, and the rule that says, for one
 * card and one canary at one moment, whether to queue it now, and if not,
 * why.  Pure (no store, no clock, no lock), so that tests/unit/test_canary
 * drives every branch; canaries.c gathers the facts and acts.
 *
 * The rule, in order:
 *   not due      its last run on the card is younger than its period
 *   active       a canary (this one or another) is already queued or
 *                running on the card: never more than one a card
 *   deferred     the card has runs queued or one running (a user's run
 *                always goes first), its probe says another process uses
 *                it, it has no reading yet, or it has been quiet for less
 *                than --canary-idle
 *   queue        otherwise
 *
 * A benchmark that holds every GPU of the node (all_devices: p2p_bandwidth)
 * is no card's: a card's canary leaves it out, and a node canary runs it,
 * due by its newest run on any card of the node, queued only when the rule
 * above says queue for every card (canary_decide_node).
 */
#ifndef GPUBENCH_RUNS_CANARY_RULE_H
#define GPUBENCH_RUNS_CANARY_RULE_H

#include <stddef.h>
#include <stdint.h>

#include "bench_suite.h"

#define CANARY_MAX 16 /* --canary options a daemon takes */
#define CANARY_REASON_MAX 160

/* One --canary: a benchmark, or a suite whose members it runs under one
 * batch.  members are the benchmarks its runs are of (static), so that its
 * last run is found among the runs labelled canary. */
struct canary_spec {
    char name[64];
    const struct gb_benchmark *members[GB_SUITE_MAX_MEMBERS];
    int n_members;
    int64_t period_s;
};

/* Reads "BENCHMARK@PERIOD" (PERIOD as core/duration.h reads it) into spec.
 * 0, or -1 with a sentence in err: no '@', an unknown benchmark (test-only
 * ones are not offered), a bad period. */
int canary_spec_parse(const char *text, struct canary_spec *spec, char *err, size_t cap);

/* 0 when spec can join the n specs before it, else -1 with a sentence in
 * err: the same name given twice, or a benchmark that two of them would
 * run (a suite's member given alone too), which would make one card's
 * canary runs count for both.  A suite that holds every member of another
 * (health_deep and health) may join it: the larger one's last run is
 * found by its own members only (canary_spec_contains), and its runs of
 * the smaller one's members count for the smaller one too, which they
 * are. */
int canary_spec_fits(const struct canary_spec *specs, int n, const struct canary_spec *spec,
                     char *err, size_t cap);

/* Whether outer, a suite, runs every member of inner, another suite, and
 * more. */
int canary_spec_contains(const struct canary_spec *outer, const struct canary_spec *inner);

/* What the scheduler knows about one card, for one canary. */
struct canary_facts {
    int64_t now_ms;         /* wall clock, unix ms */
    int64_t last_ms;        /* when this canary last ran here (queued); -1: never */
    int active;             /* a canary is queued or running on the card */
    long queued;            /* the card's queued runs */
    int running;            /* the card's runner has a run */
    int quiet;              /* gpu_pool_quiet_since: 1 quiet, 0 busy, -1 no reading */
    int64_t quiet_since_ms; /* when quiet: since when */
    const char *why;        /* the probe's why when not quiet; NULL: none */
};

enum canary_step {
    CANARY_NOT_DUE,
    CANARY_ACTIVE,
    CANARY_DEFERRED,
    CANARY_QUEUE,
};

/* Why a due canary waits; each kind starts a new deferral when it follows
 * another (canary_note). */
enum canary_defer {
    CANARY_DEFER_NONE,
    CANARY_DEFER_USER_RUNS,
    CANARY_DEFER_BUSY,
    CANARY_DEFER_SETTLING,
    CANARY_DEFER_NO_READING,
    CANARY_DEFER_REFUSED, /* runs_accept refused it (a full queue): canaries.c */
};

/* When a canary last run at last_ms is due again: last_ms + period, or -1
 * (due now) when it never ran. */
int64_t canary_due_ms(int64_t last_ms, int64_t period_s);

/* The rule above for f, a canary of period_s and --canary-idle idle_s.
 * On CANARY_DEFERRED, *defer says which kind and why gets the sentence
 * ("card busy: pid 4242 python3 on the card", "card quiet for 3m of 10m");
 * otherwise *defer is CANARY_DEFER_NONE and why is "". */
enum canary_step canary_decide(const struct canary_facts *f, int64_t period_s, int64_t idle_s,
                               enum canary_defer *defer, char *why, size_t cap);

/* What the scheduler knows about the node, for one node canary. */
struct canary_node_facts {
    int64_t now_ms;
    int64_t last_ms; /* its newest run on any card of the node; -1: never */
    int n_cards;
    const struct canary_facts *cards; /* each card's (their now_ms and last_ms unused) */
    const int *index;                 /* each card's GPU index, for the sentence */
};

/* A node canary of period_s: not due as canary_decide says; else the rule
 * for each card in turn, as though the canary were due there: active when
 * a canary is queued or running on a card, deferred with the first card
 * that waits ("GPU 1: card busy: pid 4242 python3 on the card"), queue
 * only when every card says queue. */
enum canary_step canary_decide_node(const struct canary_node_facts *f, int64_t period_s,
                                    int64_t idle_s, enum canary_defer *defer, char *why,
                                    size_t cap);

/* The deferrals of one canary on one card (kept in memory: they start
 * again at 0 when the daemon restarts). */
struct canary_record {
    long deferred;                  /* deferrals so far */
    enum canary_defer kind;         /* the current one's kind; NONE when not deferred */
    char reason[CANARY_REASON_MAX]; /* the latest deferral's sentence, kept after it ends */
    int64_t reason_ms;              /* when that sentence was last true */
};

/* Records a decision: a deferral of a kind other than the current one's
 * counts as a new one (a card that stays busy for an hour is deferred
 * once, with its sentence kept up to date); any other step ends the
 * current deferral.  Returns 1 when a new deferral began (worth a log
 * line), else 0. */
int canary_note(struct canary_record *r, enum canary_step step, enum canary_defer defer,
                const char *why, int64_t now_ms);

#endif
