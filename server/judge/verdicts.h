/*
 * verdicts.h - a candidate group of runs judged against a baseline group,
 * row by row (GET /compare?baseline=...&candidate=...).
 *
 * Pure: the runs come in as GET /runs/ID shows them, or cut to what is
 * read here (store_get_verdict_run: id, benchmark, params, device.name,
 * status, validity.valid, results.rows with every sample), the answer goes
 * out as JSON; the statistics are
 * common/shift.h's.  Each group keeps its done runs of the benchmark whose
 * comparability key (the compare_key_fields that decide a verdict:
 * benchmark, params, card model) is its first such run's; the rest are
 * left out and counted.  When the two groups' keys differ, the answer says
 * field by field how (comparable false, differences) and judges nothing.
 */
#ifndef GPUBENCH_JUDGE_VERDICTS_H
#define GPUBENCH_JUDGE_VERDICTS_H

#include <cjson/cJSON.h>

struct verdict_group {
    const char *selector; /* as asked, shown in the answer */
    const cJSON *runs;    /* array of runs, newest first; borrowed */
    int other_key_unread; /* runs of another key the selection passed over
                           * (store_select_verdict_runs), counted with
                           * those left out here */
};

/* Judges candidate against baseline for benchmark (NULL: the baseline's
 * first done run's), with margin a fraction (caller checked its bounds).
 * Unless include_invalid, runs whose validity.valid is false are left out
 * and counted.  Returns a NEW object the caller owns, or NULL when out of
 * memory. */
cJSON *verdicts_compare(const char *benchmark, const struct verdict_group *baseline,
                        const struct verdict_group *candidate, double margin,
                        int include_invalid);

/* A run (the group run: one run) judged at its end against its card's
 * history (the group history: its last runs of the key), for the alerts:
 * as verdicts_compare, but each row's verdict is gb_history_verdict's
 * (common/shift.h): too_few_runs below GB_HISTORY_MIN_RUNS history runs,
 * slower or faster only past the card's own run-to-run spread, else
 * within_spread.  Each row also has "pooled_verdict" (verdicts_compare's),
 * "z" (the run's median per unit among the history runs') and
 * "history_runs"; the answer has "too_few_runs" and "runs_needed".  NULL
 * out of memory. */
cJSON *verdicts_history(const char *benchmark, const struct verdict_group *history,
                        const struct verdict_group *run, double margin);

/* The benchmark judged when none is asked: the first done run's of runs
 * (the baseline's), borrowed from it; NULL when it has none. */
const char *verdicts_benchmark_of(const cJSON *runs);

#endif
