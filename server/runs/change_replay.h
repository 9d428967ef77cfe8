/*
 * change_replay.h - the runs stored before the change-point series
 * (migrations/0022_change_replay.sql) stepped into them, once,
 * at the daemon's start before any new run is stored: in pages of
 * CHANGE_REPLAY_PAGE runs in id order, each run read, judged
 * (judge_run_record: its series points) and its page stepped and the
 * cursor moved in one transaction, so that a replay cut short goes on at
 * the next start where it stopped.  Progress is logged every page that
 * ends more than 5 s after the last line, and at the end.
 */
#ifndef GPUBENCH_RUNS_CHANGE_REPLAY_H
#define GPUBENCH_RUNS_CHANGE_REPLAY_H

#include "store.h"

#define CHANGE_REPLAY_PAGE 500

/* Replays what is still due (nothing, quickly, once done): 0, or a
 * STORE_* code / -1 (memory) when it stopped; *replayed gets the runs
 * stepped by this call. */
int change_replay(struct store *s, long *replayed);

#endif
