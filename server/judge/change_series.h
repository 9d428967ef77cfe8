/*
 * change_series.h - one card x key x row's change-point state, stepped one
 * run at a time (the method is changepoint.h's).
 *
 * Incremental: a series keeps only the runs since its last change (at most
 * CP_WINDOW, the newest) and, for drift, running sums a day over the last
 * CP_DRIFT_DAYS days of the same segment; a new run is one step over that
 * bounded state, never a read of the card's history.  The store keeps the
 * state as a blob (change_series_encode) in migrations/0018_changes.sql's
 * change_series, and calls change_series_step through the hook main()
 * sets (store_changes.h), in the transaction that writes the run.
 *
 * A run older than the oldest the window holds (an import of old runs
 * after newer ones) is counted but joins no series: what it would have
 * changed lies before the last change or out of the window.
 */
#ifndef GPUBENCH_JUDGE_CHANGE_SERIES_H
#define GPUBENCH_JUDGE_CHANGE_SERIES_H

#include <stddef.h>

#include "changepoint.h"

#define CS_RUN_ID_MAX 48 /* a run id's bytes, its NUL included */
#define CS_DAYS 32       /* daily sums kept: CP_DRIFT_DAYS and the edge */

struct cs_point {
    double t; /* days since the epoch */
    double x; /* log of the median per unit of work (ms) */
    char run_id[CS_RUN_ID_MAX];
};

struct cs_day {
    double day; /* floor(t) */
    struct cp_sums sums;
};

/* What a step found. */
struct cs_found {
    int step, drift; /* which of the two below were found */
    struct cp_step s;
    char step_run_id[CS_RUN_ID_MAX]; /* the first run after the step */
    double step_t;                   /* its time, days */
    int n_before, n_after;
    struct cp_drift d;
};

struct change_series {
    long long runs; /* every run stepped, joined or not */
    int n;          /* points in the window, oldest first */
    struct cs_point pts[CP_WINDOW];
    int ndays; /* the segment's daily sums, oldest first */
    struct cs_day days[CS_DAYS];
    double t0;            /* the days' origin (their sums are of t - t0) */
    int drifting;         /* runs since a drift was reported, while it is still there */
    struct cs_found last; /* what the last step found (gb_change_found) */
};

/* Adds a run (its time t in days, its value x, its id) to s and looks for
 * a step and a drift: *found says what was found (a drift only when it
 * starts: one that goes on is not found again).  0; -1 when the id is too
 * long (s unchanged). */
int change_series_step(struct change_series *s, double t, double x, const char *run_id,
                       struct cs_found *found);

/* The state as bytes, *len of them, into buf (cap bytes, at least
 * sizeof(struct change_series) + 16 suffices); 0, or -1 when cap is too
 * small.  Decode: 0, or -1 when the bytes are not a state of this build
 * (the caller starts the series afresh). */
int change_series_encode(const struct change_series *s, unsigned char *buf, size_t cap,
                         size_t *len);
int change_series_decode(struct change_series *s, const unsigned char *buf, size_t len);

#endif
