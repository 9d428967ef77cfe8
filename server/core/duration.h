/*
 * duration.h - lengths of time as people write them on a command line
 * ("24h", "10m", "90s", "7d", or plain seconds) and as the API's sentences
 * say them back ("3m", "1h30m").  Whole seconds: nothing the daemon
 * schedules needs less.
 */
#ifndef GPUBENCH_CORE_DURATION_H
#define GPUBENCH_CORE_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* The longest duration read: a year, far past any period worth
 * scheduling, and far from overflowing milliseconds in an int64. */
#define DURATION_MAX_S (366LL * 86400)

/* Reads text (digits, then one of s, m, h, d or nothing for seconds) into
 * *seconds.  0, or -1 when it is not such a duration, is under 1 s or over
 * DURATION_MAX_S. */
int duration_parse(const char *text, int64_t *seconds);

/* Writes seconds as its largest units ("1d2h", "10m", "45s", "0s") into
 * buf (cap >= 24). */
void duration_format(int64_t seconds, char *buf, size_t cap);

#endif
