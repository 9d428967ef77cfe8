/*
 * run_judge.h - a finished run judged once, from what it carries: its
 * validity (common/validity.h), its checks against its card model's
 * floors (common/expect.h), the summary and digest that reads use without
 * parsing the results, its method and its comparability key.  Pure: the
 * same for a run measured here, imported or pulled, and never done again
 * by the store, which only writes what this decided (core/run_record.h).
 * The verdicts against the card's history and the fleet need the store
 * and are the runs layer's (runs/run_verdicts.h).
 */
#ifndef GPUBENCH_JUDGE_RUN_JUDGE_H
#define GPUBENCH_JUDGE_RUN_JUDGE_H

#include "run_record.h"

/* Fills r->judged from r's envelope (benchmark, device_name, params,
 * method, status) and its results and meta trees.  A run without results
 * (failed, cancelled) gets only its method.  0, or -1 when memory ran out
 * or the run cannot be judged (no benchmark): r->judged is then cleared,
 * and such a run must not be stored as judged. */
int judge_run_record(struct run_record *r);

/* Only r's change-point series points (r->judged.points), from its
 * benchmark, device_uuid and results, with the validity and key the run
 * was stored with (valid as runs.valid: 1, 0, -1 unknown): what the
 * replay of stored runs into their series needs (runs/change_replay.h),
 * the same points as judge_run_record gave when the run was stored.  0,
 * or -1 when memory ran out. */
int judge_run_points(struct run_record *r, int valid, const char *verdict_key);

#endif
