/*
 * stats.h - summary statistics of a set of timed samples.
 *
 * Every timing the worker stores keeps all its samples; these functions
 * only summarise them (min, median, max, spread) so that a row can be read
 * at a glance.  Pure arithmetic, no GPU: unit-tested in
 * tests/unit/test_kernels_stats.c.
 */
#ifndef GPUBENCH_KERNELS_STATS_H
#define GPUBENCH_KERNELS_STATS_H

#ifdef __cplusplus
extern "C" {
#endif

struct gb_stats {
    int n;
    double min, max, mean;
    double median;  /* middle sample; mean of the two middle ones for even n */
    double spread;  /* (max - min) / median: 0.02 means the samples span 2% */
};

/* Fills out from x[0..n-1] (x is not modified).  Returns 0, or -1 when
 * n < 1 or memory for the sorted copy cannot be had. */
int gb_stats_compute(const double *x, int n, struct gb_stats *out);

#ifdef __cplusplus
}
#endif

#endif
