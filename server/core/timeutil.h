/*
 * timeutil.h - the times the API shows (RFC 3339, UTC, milliseconds) and
 * the clocks the daemon measures with.
 */
#ifndef GPUBENCH_CORE_TIMEUTIL_H
#define GPUBENCH_CORE_TIMEUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Milliseconds since the Unix epoch, wall clock. */
int64_t time_now_unix_ms(void);

/* Milliseconds on a clock that never jumps (for deadlines and durations). */
int64_t time_mono_ms(void);

/* The time ms from now on clock, as pthread_cond_timedwait takes it (a
 * condition variable waits on CLOCK_REALTIME unless its attributes say
 * CLOCK_MONOTONIC). */
struct timespec time_after_ms(clockid_t clock, int64_t ms);

/* Writes "2026-11-30T09:05:04.123Z" for ms into buf (cap >= 25). */
void time_format_rfc3339(int64_t unix_ms, char *buf, size_t cap);

/* The current wall time as above. */
void time_now_rfc3339(char *buf, size_t cap);

/* Reads "2026-11-30T09:05:04.123Z", the one shape the API writes, into
 * Unix milliseconds: 0, or -1 for any other text or a date that is not
 * one (month 13, February 30th, hour 24; a year before 1970). */
int time_parse_rfc3339(const char *text, int64_t *unix_ms);

#endif
