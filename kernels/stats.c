/*
 * stats.c - min / median / max / spread of samples, and the median's
 * confidence interval; see stats.h.
 * The median is taken on a sorted copy so the caller's samples keep the
 * order they were measured in (drift over a run stays visible).
 *
 * Why order statistics for the interval and not a bootstrap or a normal
 * approximation: GPU timings are skewed (a floor the hardware cannot beat,
 * a tail of interrupted samples) and often discrete (event ticks), so a
 * normal model is wrong, and a bootstrap's coverage is only asymptotic and
 * needs a random seed to be reproducible.  The binomial ranks make one
 * assumption (independent samples) and give the same interval for the
 * same samples every time.
 */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* P(Binomial(n, 1/2) = i), in logs so n in the thousands neither
 * overflows nor underflows. */
static double binomial_half_pmf(int n, int i)
{
    return exp(lgamma(n + 1.0) - lgamma(i + 1.0) - lgamma(n - i + 1.0) + n * log(0.5));
}

double gb_median_ci_ranks(int n, double level, int *lo, int *hi)
{
    double below, coverage;
    int k = 1;

    if (n < 1 || !(level > 0 && level < 1))
        return -1;
    /* below = P(B <= k - 1), B the count of samples under the median; the
     * coverage of ranks (k, n + 1 - k) is 1 - 2 below and falls as k
     * grows: take the largest k that still holds level. */
    below = binomial_half_pmf(n, 0);
    coverage = n > 1 ? 1 - 2 * below : 0;
    while (k + 1 <= (n + 1) / 2) {
        double next_below = below + binomial_half_pmf(n, k);
        if (1 - 2 * next_below < level)
            break;
        below = next_below;
        coverage = 1 - 2 * below;
        k++;
    }
    *lo = k;
    *hi = n + 1 - k;
    return coverage;
}

int gb_stats_compute(const double *x, int n, struct gb_stats *out)
{
    double *sorted;
    double sum = 0;

    if (x == NULL || n < 1 || out == NULL)
        return -1;
    sorted = malloc((size_t)n * sizeof(*sorted));
    if (sorted == NULL)
        return -1;
    memcpy(sorted, x, (size_t)n * sizeof(*sorted));
    qsort(sorted, (size_t)n, sizeof(*sorted), cmp_double);
    for (int i = 0; i < n; i++)
        sum += sorted[i];
    out->n = n;
    out->min = sorted[0];
    out->max = sorted[n - 1];
    out->mean = sum / n;
    if (n % 2)
        out->median = sorted[n / 2];
    else
        out->median = (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    out->spread = out->median > 0 ? (out->max - out->min) / out->median : 0;
    out->ci_coverage = gb_median_ci_ranks(n, GB_CI_LEVEL, &out->ci_lo_rank, &out->ci_hi_rank);
    out->ci_low = sorted[out->ci_lo_rank - 1];
    out->ci_high = sorted[out->ci_hi_rank - 1];
    free(sorted);
    return 0;
}
