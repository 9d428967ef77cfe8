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
    double median; /* middle sample; mean of the two middle ones for even n */
    double spread; /* (max - min) / median: 0.02 means the samples span 2% */
    /* The 95% confidence interval of the median (gb_median_ci_ranks):
     * ci_low = the ci_lo_rank-th smallest sample, ci_high the ci_hi_rank-th
     * (1-based); ci_coverage is its exact coverage, under 0.95 only for
     * n < 6, where [min, max] is the best there is. */
    double ci_low, ci_high, ci_coverage;
    int ci_lo_rank, ci_hi_rank;
};

/* The method, in words, for a report's summary.ci_method. */
#define GB_CI_METHOD                                                       \
    "distribution-free 95% interval of the median from order statistics: " \
    "the k-th smallest and k-th largest sample, k the largest rank with "  \
    "P(Binomial(n, 1/2) < k) <= 2.5%; exact coverage >= 95% for any "      \
    "continuous timing distribution (n >= 6), no resampling, deterministic"

/* The confidence level every row's interval is computed at. */
#define GB_CI_LEVEL 0.95

/* The symmetric order-statistic interval of the median of n samples:
 * 1-based ranks lo <= hi (hi = n + 1 - lo) with the largest lo such that
 * P(X_(lo) <= median <= X_(hi)) = 1 - 2 P(Binomial(n, 1/2) <= lo - 1) is at
 * least level.  Whatever the distribution of the samples (continuous), the
 * count of samples below the true median is Binomial(n, 1/2), so the
 * coverage is exact and assumes nothing more.  Where no rank reaches level
 * (n < 6 at 95%) lo = 1, hi = n.  Returns that coverage, or -1 when n < 1
 * or level is not in (0, 1). */
double gb_median_ci_ranks(int n, double level, int *lo, int *hi);

/* Fills out from x[0..n-1] (x is not modified).  Returns 0, or -1 when
 * n < 1 or memory for the sorted copy cannot be had. */
int gb_stats_compute(const double *x, int n, struct gb_stats *out);

#ifdef __cplusplus
}
#endif

#endif
