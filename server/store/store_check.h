/*
 * store_check.h - the daemon's own check of its database, beside normal
 * service: a read that only meets damage when it happens to touch a bad
 * page would leave a damaged database unnoticed for as long as nobody
 * reads that run, while backups keep copying the damage.
 *
 * One thread, started after the store is open, waits delay_s, then runs
 * PRAGMA quick_check one table (with its indexes) at a time on a read-only
 * connection of its own, resting between tables as long as the last one
 * took, so that the HTTP readers and the writer keep most of the disk and
 * the CPU; in WAL mode it never blocks them.  Then again every interval_s.
 * Its result goes into the store's health (store_health: check, and
 * corrupt with the finding), which /healthz and /metrics show, and into
 * the log.  A database found whole then has its old samples dropped
 * (--keep-samples, store_retention.h): the daemon's one maintenance pass.
 */
#ifndef GPUBENCH_STORE_STORE_CHECK_H
#define GPUBENCH_STORE_STORE_CHECK_H

#include "store_retention.h"

struct store;
struct store_checker;

/* Starts the check of the database at path (the file s has open).  s and
 * path must outlive the checker.  interval_s 0: one check only.  After
 * each check that found no damage, the same thread drops old runs'
 * samples as retention says (store_retention.h; copied; NULL or
 * keep_samples_s 0: never).  NULL when the thread could not start (said
 * in the log). */
struct store_checker *store_checker_start(struct store *s, const char *path, int delay_s,
                                          int interval_s, const struct store_retention *retention);

/* Stops the thread (a check under way ends at its next table) and frees
 * it.  NULL: nothing. */
void store_checker_stop(struct store_checker *c);

#endif
