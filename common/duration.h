/*
 * duration.h - a span of time as people write it on a command line or in
 * a query: "90s", "10m", "24h", "7d", or a number of seconds ("3600").
 * One parser, so --canary's periods, ?max_age= and `gpubench check
 * --max-age` read the same words.
 */
#ifndef GPUBENCH_COMMON_DURATION_H
#define GPUBENCH_COMMON_DURATION_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The longest span accepted (a year): past it a typo, not a window. */
#define GB_DURATION_MAX_MS (366LL * 24 * 3600 * 1000)

/* text as milliseconds into *ms: a positive number (decimals allowed)
 * followed by s, m, h or d, or by nothing for seconds.  0, or -1 (*ms
 * untouched) when it is not one or is not in (0, GB_DURATION_MAX_MS]. */
int gb_duration_ms(const char *text, int64_t *ms);

#ifdef __cplusplus
}
#endif

#endif
