/*
 * rounds.h - how many timed samples a run takes: `samples` once, or, when
 * the run asks for a precision, rounds of `samples` until every row's 95%
 * interval of the median (stats.h) is narrow enough, a row would pass
 * max_samples, or the deadline has come.
 *
 * Pure (the clock is an argument): unit-tested in
 * tests/unit/test_kernels_stats.c.
 */
#ifndef GPUBENCH_KERNELS_ROUNDS_H
#define GPUBENCH_KERNELS_ROUNDS_H

#include "gb_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The samples room a row needs: max(samples, max_samples) with a
 * precision, else samples. */
int gb_rounds_capacity(const struct gb_measure_opts *opts);

/* The half-width of the 95% interval of the median of s's samples
 * relative to that median ((high - low) / 2 / median); infinity when it
 * cannot be had (no sample, zero median, out of memory). */
double gb_rounds_half_width(const struct gb_samples *s);

/* How many samples each row takes in the next round: 0 when no round is
 * wanted (no precision asked; every row precise; no room left; now_s past
 * opts->deadline_s), else min(samples, the room the fullest row has
 * left). */
int gb_rounds_next(const struct gb_samples *rows, int count,
                   const struct gb_measure_opts *opts, double now_s);

/* CLOCK_MONOTONIC in seconds (the clock deadline_s is on). */
double gb_monotonic_s(void);

#ifdef __cplusplus
}
#endif

#endif
