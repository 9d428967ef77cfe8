/*
 * log.c - see log.h.  The line is formatted into one buffer first so that
 * lines from several threads never interleave mid-line.
 */
#include "log.h"
#include "timeutil.h"

#include <stdarg.h>
#include <stdio.h>

static enum log_level min_level = LOG_INFO;

void log_set_level(enum log_level level)
{
    min_level = level;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
    static const char *const names[] = {"debug", "info", "warn", "error"};
    char stamp[32], line[1024];
    va_list ap;
    int n;

    if (level < min_level)
        return;
    time_now_rfc3339(stamp, sizeof(stamp));
    n = snprintf(line, sizeof(line), "%s %s ", stamp, names[level]);
    if (n < 0 || (size_t)n >= sizeof(line))
        return;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", line);
}
