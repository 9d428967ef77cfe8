/*
 * timeutil.c - see timeutil.h.
 */
#include "timeutil.h"

#include <stdio.h>
#include <string.h>
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

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
 * (Howard Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int digits(const char *s, int n, int *out)
{
    int v = 0;

    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

int time_parse_rfc3339(const char *text, int64_t *unix_ms)
{
    static const int month_days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int y, mo, d, h, mi, s, ms, leap, last;

    if (text == NULL || strlen(text) != 24 || text[4] != '-' || text[7] != '-' ||
        text[10] != 'T' || text[13] != ':' || text[16] != ':' || text[19] != '.' ||
        text[23] != 'Z' || digits(text, 4, &y) || digits(text + 5, 2, &mo) ||
        digits(text + 8, 2, &d) || digits(text + 11, 2, &h) || digits(text + 14, 2, &mi) ||
        digits(text + 17, 2, &s) || digits(text + 20, 3, &ms))
        return -1;
    if (y < 1970 || mo < 1 || mo > 12 || h > 23 || mi > 59 || s > 59)
        return -1;
    leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    last = month_days[mo - 1] + (mo == 2 && leap);
    if (d < 1 || d > last)
        return -1;
    *unix_ms = ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60000 + (int64_t)s * 1000 + ms;
    return 0;
}

struct timespec time_after_ms(clockid_t clock, int64_t ms)
{
    struct timespec t;

    clock_gettime(clock, &t);
    t.tv_sec += (time_t)(ms / 1000);
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}
