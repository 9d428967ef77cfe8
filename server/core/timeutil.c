/*
 * timeutil.c - see timeutil.h.
 */
#include "timeutil.h"

#include <stdio.h>
#include <time.h>

int64_t time_now_unix_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t time_mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void time_format_rfc3339(int64_t unix_ms, char *buf, size_t cap)
{
    time_t secs = (time_t)(unix_ms / 1000);
    struct tm tm;

    gmtime_r(&secs, &tm);
    snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
             tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
             tm.tm_min, tm.tm_sec, (int)(unix_ms % 1000));
}

void time_now_rfc3339(char *buf, size_t cap)
{
    time_format_rfc3339(time_now_unix_ms(), buf, cap);
}
