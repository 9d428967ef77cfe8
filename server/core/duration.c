/*
 * duration.c - see duration.h.  One table of units serves the reading and
 * the writing, so that what --help accepts is what the API prints.
 */
#include "duration.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

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

int duration_parse(const char *text, int64_t *seconds)
{
    char *end;
    long long n;
    int64_t unit = 1;

    if (text == NULL || *text < '0' || *text > '9')
        return -1;
    errno = 0;
    n = strtoll(text, &end, 10);
    if (errno != 0)
        return -1;
    if (*end != '\0') {
        size_t i;

        for (i = 0; i < N_UNITS && units[i].suffix != *end; i++)
            ;
        if (i == N_UNITS || end[1] != '\0')
            return -1;
        unit = units[i].seconds;
    }
    if (n < 1 || n > DURATION_MAX_S / unit)
        return -1;
    *seconds = (int64_t)n * unit;
    return 0;
}

void duration_format(int64_t seconds, char *buf, size_t cap)
{
    size_t used = 0;

    if (cap == 0)
        return;
    buf[0] = '\0';
    for (size_t i = 0; i < N_UNITS && used < cap; i++) {
        int64_t n = seconds / units[i].seconds;

        if (n == 0)
            continue;
        used += (size_t)snprintf(buf + used, cap - used, "%lld%c", (long long)n,
                                 units[i].suffix);
        seconds -= n * units[i].seconds;
    }
    if (buf[0] == '\0')
        snprintf(buf, cap, "0s");
}
