/*
 * stats.c - min / median / max / spread of samples; see stats.h.
 * The median is taken on a sorted copy so the caller's samples keep the
 * order they were measured in (drift over a run stays visible).
 */
#include "stats.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
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
    free(sorted);
    return 0;
}
