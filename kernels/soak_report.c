/*
 * soak_report.c - soak's windows; see soak_report.h.
 */
#include "soak_report.h"

#include <string.h>

static void mean_add(double v, double *sum, int *n)
{
    if (v >= 0) {
        *sum += v;
        (*n)++;
    }
}

void gb_soak_window(const struct gb_soak_second *s, int n, int start, int len, int load,
                    struct gb_soak_window *w)
{
    double sum[5] = {0, 0, 0, 0, 0};
    int cnt[5] = {0, 0, 0, 0, 0};
    int end = start + len;

    memset(w, 0, sizeof(*w));
    start = start < 0 ? 0 : start;
    end = end > n ? n : end;
    w->start = start;
    w->len = end > start ? end - start : 0;
    for (int i = start; i < end; i++) {
        mean_add(s[i].rate[load], &sum[0], &cnt[0]);
        mean_add(s[i].sm_clock_mhz, &sum[1], &cnt[1]);
        mean_add(s[i].mem_clock_mhz, &sum[2], &cnt[2]);
        mean_add(s[i].power_w, &sum[3], &cnt[3]);
        mean_add(s[i].temperature_c, &sum[4], &cnt[4]);
        if (s[i].throttle_read)
            w->throttle_mask |= s[i].throttle_mask;
    }
    w->rate = cnt[0] ? sum[0] / cnt[0] : -1;
    w->sm_clock_mhz = cnt[1] ? sum[1] / cnt[1] : -1;
    w->mem_clock_mhz = cnt[2] ? sum[2] / cnt[2] : -1;
    w->power_w = cnt[3] ? sum[3] / cnt[3] : -1;
    w->temperature_c = cnt[4] ? sum[4] / cnt[4] : -1;
}

void gb_soak_windows(const struct gb_soak_second *s, int n, int load, struct gb_soak_window *first,
                     struct gb_soak_window *last, struct gb_soak_window *worst)
{
    int worst_start = 0;
    double worst_rate = -1;

    gb_soak_window(s, n, 0, GB_SOAK_FIRST_S, load, first);
    gb_soak_window(s, n, n - GB_SOAK_LAST_S, GB_SOAK_LAST_S, load, last);
    for (int start = 0; start + GB_SOAK_WORST_S <= n || start == 0; start++) {
        struct gb_soak_window w;
        gb_soak_window(s, n, start, GB_SOAK_WORST_S, load, &w);
        if (w.rate >= 0 && (worst_rate < 0 || w.rate < worst_rate)) {
            worst_rate = w.rate;
            worst_start = start;
        }
        if (start + GB_SOAK_WORST_S >= n)
            break;
    }
    gb_soak_window(s, n, worst_start, GB_SOAK_WORST_S, load, worst);
}

int gb_soak_first_slowdown(const struct gb_soak_second *s, int n, unsigned long long *mask)
{
    *mask = 0;
    for (int i = 0; i < n; i++)
        if (s[i].throttle_read && (s[i].throttle_mask & GB_SOAK_SLOWDOWN_BITS)) {
            *mask = s[i].throttle_mask & GB_SOAK_SLOWDOWN_BITS;
            return i;
        }
    return -1;
}
