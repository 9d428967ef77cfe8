/*
 * run_verdicts.h - a run judged when it ends: against the same
 * card's own recent history and against the other cards of its model.
 *
 * The verdicts are stored with the run, in the transaction that stores its
 * end (store_finish_run), and shown as its "verdicts":
 *   {"judged": true, "margin", "confirms": ID or null,
 *    "history": null (no earlier valid run of its key on its card) or
 *      {"runs": [ids], "verdict", "verdict_rows", "rows": [{"key",
 *       "verdict", "shift", "ci_low", "ci_high", "n_baseline",
 *       "n_candidate", "more_samples", "baseline_median_ms",
 *       "candidate_median_ms", "cycles"}]}   (verdicts.h, per row)
 *    "fleet": {"cards", "peers", "rows": [{"key", "value_ms",
 *       "median_ms", "mad_ms", "z", "outlier"}], "outlier_rows"} (fleet.h)}
 * or {"judged": false, "reason"} for an invalid run (left out of
 * every verdict, its own included).
 *
 * The history is the card's last --history-runs valid done runs of the
 * run's key (benchmark, card model, params); the fleet each other card's
 * newest valid done run of the key.  Both are found through indexes
 * (store_verdicts.c), so judging costs the same at any number of runs.
 */
#ifndef GPUBENCH_RUNS_RUN_VERDICTS_H
#define GPUBENCH_RUNS_RUN_VERDICTS_H

#include <cjson/cJSON.h>

struct store;

/* Judges run (borrowed), a run object as it will be stored (done,
 * with its results, meta, validity and checks: run_finish.c makes it),
 * whose rows' digest as stored is digest_text, against the card's last
 * history_runs runs of its key and the fleet in store.  Returns the
 * verdicts as a NEW object the caller owns, or NULL when they could not be
 * made (logged; the run is stored without). */
cJSON *run_verdicts_judge(struct store *store, int history_runs, cJSON *run,
                          const char *digest_text);

#endif
