/*
 * quiet.h - the decision of `quiet: wait`: is the card quiet enough to
 * start timing?  Quiet means no other process on the card and GPU
 * utilisation under GB_QUIET_UTIL_PERCENT, both held for GB_QUIET_HOLD_S
 * without a break.
 *
 * Pure (each reading carries its own time) so that the rule is tested on
 * readings recorded on an H200 (tests/fixtures/h200_quiet_*.txt) without a
 * GPU; watch.c feeds it live NVML readings.
 *
 * NVML's utilisation is the share of a PAST sample window (1/6 s to 1 s
 * depending on the card) in which a kernel ran.  The readings are taken
 * before this job's warm-up and calibration, so its own kernels are never
 * in the window; a job that follows another on the same worker may see
 * the tail of the previous one, which the 1 s hold outlasts.
 */
#ifndef GPUBENCH_WORKER_QUIET_H
#define GPUBENCH_WORKER_QUIET_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GB_QUIET_UTIL_PERCENT 5
#define GB_QUIET_HOLD_S 1.0
#define GB_QUIET_POLL_S 0.1

enum gb_quiet_mode {
    GB_QUIET_OFF,
    GB_QUIET_CHECK,
    GB_QUIET_WAIT,
};

/* "off", "check", "wait" (the params' spelling); anything else: wait. */
enum gb_quiet_mode gb_quiet_mode_parse(const char *text);
const char *gb_quiet_mode_name(enum gb_quiet_mode mode);

struct gb_quiet_reading {
    double t_s;       /* seconds since the first reading */
    int procs;        /* other processes on the card; -1: not read */
    int util_percent; /* -1: not read */
};

enum gb_quiet_decision {
    GB_QUIET_GO,       /* quiet (or not asked to wait): start timing */
    GB_QUIET_WAITING,  /* look again in GB_QUIET_POLL_S */
    GB_QUIET_TIMED_OUT /* wait_s has passed without a quiet card: time
                          anyway, and say so */
};

struct gb_quiet_state {
    int quiet;          /* the last reading was quiet */
    double quiet_since; /* since when, without a break */
    int util_max;       /* highest utilisation seen; -1 none read */
    int readings;
};

void gb_quiet_begin(struct gb_quiet_state *st);

/* Whether one reading is quiet: no other process and utilisation under
 * the bound; what could not be read does not count against it. */
int gb_quiet_reading_is_quiet(const struct gb_quiet_reading *r);

/* The decision after reading r (readings in time order).  check and off
 * go after the first reading.  wait goes once the card has been quiet
 * for GB_QUIET_HOLD_S; when wait_s has passed it goes if the last
 * reading was quiet (a short wait cannot see a whole hold) and times out
 * otherwise. */
enum gb_quiet_decision gb_quiet_step(struct gb_quiet_state *st, const struct gb_quiet_reading *r,
                                     enum gb_quiet_mode mode, double wait_s);

/* Reads readings "t_s procs util" (one a line, '#' comments) from f into
 * out[0..cap-1]; returns how many, or -1 on a malformed line.  The trace
 * format watch.c writes with GPUBENCH_WATCH_TRACE. */
int gb_quiet_read_trace(FILE *f, struct gb_quiet_reading *out, int cap);

#ifdef __cplusplus
}
#endif

#endif
