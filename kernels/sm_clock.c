/*
 * sm_clock.c - busy cycles and the SM clock of a smem_read launch from its
 * blocks' own clock64 / %globaltimer reads (see sm_clock.h for why the
 * event time is not used).
 */
#include "sm_clock.h"

#include <math.h>
#include <stdlib.h>

void gb_sm_busy_of_launch(const long long *spans, int blocks, int sm_count, int *first,
                          int *last, struct gb_sm_busy *out)
{
    double longest = -1;

    out->sm = -1;
    out->cycles = 0;
    out->ns = 0;
    for (int sm = 0; sm < sm_count; sm++)
        first[sm] = last[sm] = -1;
    /* The interval is chosen by the SM's own cycle counter; its two end
     * blocks' timer reads then bound the very same interval. */
    for (int b = 0; b < blocks; b++) {
        const long long *s = spans + (size_t)GB_SPAN_FIELDS * b;
        long long sm = s[GB_SPAN_SM];
        if (sm < 0 || sm >= sm_count)
            continue;
        if (first[sm] < 0 ||
            s[GB_SPAN_START_CYCLES] < spans[(size_t)GB_SPAN_FIELDS * first[sm]])
            first[sm] = b;
        if (last[sm] < 0 ||
            s[GB_SPAN_END_CYCLES] >
                spans[(size_t)GB_SPAN_FIELDS * last[sm] + GB_SPAN_END_CYCLES])
            last[sm] = b;
    }
    for (int sm = 0; sm < sm_count; sm++) {
        const long long *f, *l;
        double cycles;
        if (first[sm] < 0)
            continue;
        f = spans + (size_t)GB_SPAN_FIELDS * first[sm];
        l = spans + (size_t)GB_SPAN_FIELDS * last[sm];
        cycles = (double)(l[GB_SPAN_END_CYCLES] - f[GB_SPAN_START_CYCLES]);
        if (cycles > longest) {
            longest = cycles;
            out->sm = sm;
            out->cycles = cycles;
            out->ns = (double)(l[GB_SPAN_END_NS] - f[GB_SPAN_START_NS]);
        }
    }
}

double gb_sm_busy_mhz(const struct gb_sm_busy *b)
{
    return b->sm >= 0 && b->ns > 0 ? b->cycles / (b->ns * 1e-3) : NAN;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of x[0..n-1], sorted in place; NAN when n < 1. */
static double median_in_place(double *x, int n)
{
    if (n < 1)
        return NAN;
    qsort(x, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

void gb_sm_clock_row(const double *cycles, const double *ns, int n, double *scratch,
                     double *busy_cycles, double *clock_mhz)
{
    int m = 0;

    for (int i = 0; i < n; i++)
        scratch[i] = cycles[i];
    *busy_cycles = median_in_place(scratch, n);
    for (int i = 0; i < n; i++)
        if (ns[i] > 0)
            scratch[m++] = cycles[i] / (ns[i] * 1e-3);
    *clock_mhz = median_in_place(scratch, m);
}
