/*
 * duration.c - see duration.h.  One table of units serves the reading and
 * the writing, so that what --help accepts is what the API prints.
 */
#include "duration.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    char suffix;
    int64_t seconds;
} units[] = {
    {'d', 86400},
    {'h', 3600},
    {'m', 60},
    {'s', 1},
};

#define N_UNITS (sizeof(units) / sizeof(units[0]))

int gb_duration_ms(const char *text, int64_t *ms)
{
    double scale = 1e3, v;
    char *end;

    if (text == NULL || text[0] == '\0' || text[0] == '-' || text[0] == '+')
        return -1;
    v = strtod(text, &end);
    if (end == text)
        return -1;
    if (*end != '\0') {
        scale = 0;
        for (size_t i = 0; i < N_UNITS; i++)
            if (end[0] == units[i].suffix && end[1] == '\0')
                scale = 1e3 * (double)units[i].seconds;
        if (scale == 0)
            return -1;
    }
    v *= scale;
    if (!isfinite(v) || v < 1 || v > (double)GB_DURATION_MAX_MS)
        return -1;
    *ms = (int64_t)llround(v);
    return 0;
}

int gb_duration_s(const char *text, int64_t *seconds)
{
    int64_t ms;

    if (gb_duration_ms(text, &ms) != 0 || ms < 1000)
        return -1;
    *seconds = (ms + 500) / 1000;
    return 0;
}

void gb_duration_format(int64_t seconds, char *buf, size_t cap)
{
    size_t used = 0;

    if (cap == 0)
        return;
    buf[0] = '\0';
    for (size_t i = 0; i < N_UNITS && used < cap; i++) {
        int64_t n = seconds / units[i].seconds;

        if (n <= 0)
            continue;
        used += (size_t)snprintf(buf + used, cap - used, "%lld%c", (long long)n,
                                 units[i].suffix);
        seconds -= n * units[i].seconds;
    }
    if (buf[0] == '\0')
        snprintf(buf, cap, "0s");
}
