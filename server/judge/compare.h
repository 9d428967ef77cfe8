/*
 * compare.h - runs of one benchmark side by side, one series per card.
 *
 * Runs belong in one comparison only when their comparability key agrees:
 * benchmark, its method version, the parameters that change what is
 * measured, card model, driver and CUDA versions.  Within a
 * key, each card (its UUID on its host) is a series; its rows are aligned
 * by the row key (stride, variant, ...) and give, per key, the median over
 * the chosen runs of each run's median, the lowest and highest sample
 * time, and the spread; every time per unit of work (work_units.h), which
 * the answer names in "time_per".  Pure: no I/O, so it is tested without a daemon.
 */
#ifndef GPUBENCH_JUDGE_COMPARE_H
#define GPUBENCH_JUDGE_COMPARE_H

#include <cjson/cJSON.h>

/* The comparability key, defined here once: the fields in which two runs
 * must agree to be compared, where a run keeps each (run object as GET
 * /runs/ID shows it: a, then b inside it).  /compare's series agree on all
 * of them; a verdict (verdicts.c) needs only those with decides_verdict,
 * since a driver or CUDA change is what it is asked to judge.  Ends with a
 * NULL name. */
struct compare_key_field {
    const char *name;
    const char *a, *b;
    int decides_verdict;
};
extern const struct compare_key_field compare_key_fields[];

/* A run's value of key field f: a NEW item (null when absent).  method is
 * the run's "method", or for a run without one the text "unknown: build
 * COMMIT" (its meta.build.git_commit): such runs are compared only with
 * their own build's.  params are those that change what is measured,
 * defaults filled in (gb_params_key), so that a run stored without its
 * defaults, or with another quiet_wait_s, is compared. */
cJSON *compare_key_value(const cJSON *run, const struct compare_key_field *f);

/* The method part of the key: method (a run's "method") when it is one,
 * else, for a run whose method cannot be known (gpubench 0.1.0,
 * bench_spec.h), "unknown: build BUILD" with BUILD its
 * meta.build.git_commit ("-dirty" kept), so that such runs are compared
 * only with runs of the same build.  A NEW item. */
cJSON *compare_method_of(const cJSON *method, const char *build);

/* The verdict-deciding fields of the key (decides_verdict) as one JSON
 * text: what the store keeps as runs.verdict_key and computes in SQL
 * through the same function (server/judge/judge_sql.c), so the key is
 * defined once.  A NEW string the caller frees; NULL out of memory. */
char *compare_verdict_key_text(const cJSON *run);

/* Reads the result rows of run id for compare_build: a NEW array the
 * caller owns, or NULL. */
typedef cJSON *(*compare_rows_fn)(void *ctx, const char *id);

/* Builds the GET /compare answer for benchmark from runs (run objects as
 * GET /runs/ID shows them, newest first; only "done" ones are used),
 * keeping at most latest runs a series.  Unless include_invalid, a run
 * whose validity.valid is false is left out (not taking a place among the
 * latest) and counted in "excluded_invalid", per series and in all; a run
 * not judged (null) is kept.  A run without results.rows has
 * them read through rows_of (when not NULL), only if its series keeps it.
 * Returns a NEW object the caller owns, or NULL when out of memory. */
cJSON *compare_build(const char *benchmark, const cJSON *runs, int latest,
                     int include_invalid, compare_rows_fn rows_of, void *ctx);

/* The rows of a run of benchmark as compare_build, the fleet and
 * /metrics read them: each row's key and measured fields only (no
 * samples, no detail), and the units of work a sample held where the
 * benchmark's times grow with them (work_units.h: read from the row or
 * summary, which may be NULL).  Stored with every run (store.c), so that
 * a comparison of many runs parses little.  A NEW array the caller owns,
 * whole, or NULL when out of memory (never a digest missing a field). */
cJSON *compare_row_digest(const char *benchmark, const cJSON *rows, const cJSON *summary);

/* The row key field of a result row ("stride", "variant", ...), or NULL. */
const char *compare_row_key(const cJSON *row);

#endif
