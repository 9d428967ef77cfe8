/*
 * rounds.c - the sampling rounds of a precision run; see rounds.h.
 * Every row is held to the precision, the baseline included: a ratio is
 * only as certain as both of its terms.
 */
#include "rounds.h"

#include <math.h>
#include <time.h>

#include "stats.h"

int gb_rounds_capacity(const struct gb_measure_opts *opts)
{
    if (opts->precision > 0 && opts->max_samples > opts->samples)
        return opts->max_samples;
    return opts->samples;
}

double gb_rounds_half_width(const struct gb_samples *s)
{
    struct gb_stats st;

    if (s->count < 1 || gb_stats_compute(s->ms, s->count, &st) != 0 || !(st.median > 0))
        return INFINITY;
    return (st.ci_high - st.ci_low) / 2 / st.median;
}

int gb_rounds_next(const struct gb_samples *rows, int count,
                   const struct gb_measure_opts *opts, double now_s)
{
    int room = -1, imprecise = 0;

    if (!(opts->precision > 0) || count < 1)
        return 0;
    if (opts->deadline_s > 0 && now_s >= opts->deadline_s)
        return 0;
    for (int r = 0; r < count; r++) {
        int left = rows[r].capacity - rows[r].count;
        if (room < 0 || left < room)
            room = left;
        if (!(gb_rounds_half_width(&rows[r]) <= opts->precision))
            imprecise = 1;
    }
    if (!imprecise || room <= 0)
        return 0;
    return room < opts->samples ? room : opts->samples;
}

double gb_monotonic_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}
