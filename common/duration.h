/*
 * duration.h - spans of time as people write them on a command line or in
 * a query ("24h", "90m", "7d", "30s", or plain seconds), for the coverage
 * window (GET /coverage?max_age=, gpubench check --max-age).  One parser
 * for the daemon and the client, so that both read "24h" the same way.
 */
#ifndef GPUBENCH_COMMON_DURATION_H
#define GPUBENCH_COMMON_DURATION_H

#ifdef __cplusplus
extern "C" {
#endif

/* The longest span taken: ten years, far past any coverage window, and
 * small enough that milliseconds of it fit any 64-bit sum with a time. */
#define GB_DURATION_MAX_S (10LL * 366 * 24 * 3600)

/* Parses text, a whole number followed by nothing (seconds) or one of s,
 * m, h, d, into *seconds.  0, or -1 when text is NULL, empty, not of that
 * form, zero, or longer than GB_DURATION_MAX_S; *seconds is then left as
 * it was. */
int gb_duration_parse(const char *text, long long *seconds);

#ifdef __cplusplus
}
#endif

#endif
