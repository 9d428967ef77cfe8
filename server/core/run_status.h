/*
 * run_status.h - the statuses a run goes through, with their names: the
 * one list that the store, the filters, /metrics, imports and the page
 * (through GET /benchmarks, "run_statuses") all read.  The names are the
 * API's and the database's (runs.status); migrations/0001_runs.sql checks
 * the same five.
 *
 *   queued -> running -> done | failed;  queued or running -> cancelled
 */
#ifndef GPUBENCH_CORE_RUN_STATUS_H
#define GPUBENCH_CORE_RUN_STATUS_H

enum run_status {
    RUN_QUEUED,
    RUN_RUNNING,
    RUN_DONE,
    RUN_FAILED,
    RUN_CANCELLED,
    RUN_STATUS_COUNT
};

/* The names, in enum order, then NULL. */
extern const char *const run_status_names[RUN_STATUS_COUNT + 1];

/* The status called name, or -1 when name is NULL or none. */
int run_status_parse(const char *name);

/* 1 when name is a status a run ends in (done, failed, cancelled). */
int run_status_is_final(const char *name);

#endif
