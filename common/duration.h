/*
 * duration.h - a span of time as people write it on a command line or in
 * a query: "90s", "10m", "24h", "7d", or a number of seconds ("3600").
 * One parser, so --canary's periods, ?max_age= and `gpubench check
 * --max-age` read the same words.
 */
#ifndef GPUBENCH_COMMON_DURATION_H
#define GPUBENCH_COMMON_DURATION_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The longest span accepted (a year): past it a typo, not a window. */
#define GB_DURATION_MAX_MS (366LL * 24 * 3600 * 1000)

/* What every refusal of a duration says is expected (the daemon's
 * options, ?max_age=, --canary's periods, `gpubench check --max-age`), so
 * that the bound is said wherever a span is refused. */
#define GB_DURATION_EXPECTED                                                                 \
    "a span such as 90s, 10m, 1.5h, 24h or 7d (a number, decimals allowed, then s, m, h or " \
    "d; none: seconds), up to a year (366d)"

/* text as milliseconds into *ms: a positive number (decimals allowed)
 * followed by s, m, h or d, or by nothing for seconds.  0, or -1 (*ms
 * untouched) when it is not one or is not in (0, GB_DURATION_MAX_MS]. */
int gb_duration_ms(const char *text, int64_t *ms);

/* The same in whole seconds (rounded), for what the daemon schedules
 * (--canary periods, --canary-idle): -1 also under 1 s. */
int gb_duration_s(const char *text, int64_t *seconds);

/* Writes seconds as its largest units ("1d2h", "10m", "45s", "0s") into
 * buf (cap >= 24), as the API's sentences say a span back. */
void gb_duration_format(int64_t seconds, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
