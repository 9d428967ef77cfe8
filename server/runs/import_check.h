/*
 * import_check.h - is this JSON object a finished run fit to store?  Used
 * for POST /runs/import and the runs pulled from peers: a foreign run is
 * checked field by field before anything is written, so a bad line cannot
 * leave a bad row.  And the NDJSON body of an import, read line by line as
 * strictly as POST /runs reads its body (run_request.c's parser).
 */
#ifndef GPUBENCH_RUNS_IMPORT_CHECK_H
#define GPUBENCH_RUNS_IMPORT_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "bench_spec.h"

/* The longest import line: the largest run a worker may report is a line
 * of WORKER_LINE_CAP (16 MiB, worker_proc.h), and an import holds nothing
 * larger, so every run stored here is at most this as NDJSON (a peer's cap,
 * peers.h, is reckoned from it). */
#define IMPORT_LINE_MAX (16 * 1024 * 1024)

/* What a foreign run is held to beyond its shape: the benchmarks offered
 * here (test-only ones with test_benchmarks, as gpubenchd
 * --test-benchmarks), and the receiving daemon's clock: a run whose times
 * lie more than max_skew_ms ahead of now_ms (--max-clock-skew) is refused
 * with code clock_skew, which a puller skips and counts. */
struct import_rules {
    int test_benchmarks;
    int64_t now_ms;
    int64_t max_skew_ms;
};

/* 0 when run can be stored as it is; -1 with err filled: the field's path
 * in the run ("params.strides[2]", "results.rows[0].median_ms") and a
 * sentence that names it.  Held to what POST /runs would have made: a
 * benchmark this daemon offers (test-only ones with rules->test_benchmarks, as
 * gpubenchd --test-benchmarks; else code unknown_benchmark, which a
 * puller skips rather than stops at), never a run its node served marked
 * damaged (code damaged_run, which a puller also skips and counts), params
 * the resolver accepts
 * (bench_spec.h; one left out is fine, since older runs did not store
 * defaults; they are stored as they came), rows with the fields their
 * benchmark's rows carry (gb_result_rows_check) and only finite numbers.
 * Runs that have not finished (queued, running) are refused: only a
 * finished run can be copied, since only its own node can run it. */
int import_check_run(const cJSON *run, const struct import_rules *rules, struct gb_error *err);

/* import_check_run for a run parsed from text (len bytes, the whole of
 * what was parsed): the same answer, found faster where the text is ASCII
 * (the walk for text that is not UTF-8 is then skipped). */
int import_check_line(const cJSON *run, const char *text, size_t len,
                      const struct import_rules *rules, struct gb_error *err);

/* An import body (len bytes, need not be NUL-terminated): one run a line;
 * blank lines are skipped.  Every line is read as one JSON value with
 * nothing after it (a line that holds several runs, as `curl -d` makes of
 * a file by stripping its newlines, is refused with a message that says to
 * send it with --data-binary) and checked with import_check_run.  A NEW
 * array of the runs, or NULL with err set (400 codes; the message names
 * the line, the field names the field within it) at the first bad line:
 * a body is taken whole or not at all.  rules as for
 * import_check_run. */
cJSON *import_parse_ndjson(const char *body, size_t len, const struct import_rules *rules,
                           struct gb_error *err);

#endif
