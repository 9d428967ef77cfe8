/*
 * store_retention.h - --keep-samples: the raw per-sample arrays
 * of old runs dropped, everything else kept.  A run's samples are what
 * makes it large (20 to 2,000 numbers a row); its medians, intervals and
 * digest are what lists, comparisons by median, the fleet, the change
 * points and the history verdicts of later runs read, and a row without
 * samples is pooled by its median (judge/verdicts.c).  The newest
 * keep_newest valid runs of each card and key keep their samples whatever
 * their age: they are a card's history that its next run is judged
 * against sample by sample.  Run by the database check's thread
 * (store_check.h) after each check that found no damage.
 */
#ifndef GPUBENCH_STORE_STORE_RETENTION_H
#define GPUBENCH_STORE_STORE_RETENTION_H

#include <stdint.h>

#include "store.h"

struct store_retention {
    int64_t keep_samples_s; /* 0: samples are kept for good */
    int keep_newest;        /* --history-runs */
};

/* Drops the samples of the runs made more than r->keep_samples_s ago (by
 * their ids, UUIDv7: a run's id carries its creation time), a batch of
 * runs a transaction, then, when any were dropped, VACUUMs so the file
 * shrinks by as much.  *dropped: runs trimmed; *bytes_before, *bytes_after:
 * the file's size (pages) around the pass.  STORE_OK or the store's code. */
int store_drop_samples(struct store *s, const struct store_retention *r, long *dropped,
                       int64_t *bytes_before, int64_t *bytes_after);

#endif
