/*
 * counters_report.h - hardware counters in a run's JSON: the fields of a
 * row (measured counts beside the counts the prediction implies, and
 * whether they agree), the summary of a run's rows, and meta.counters
 * (read or not, and why not, in words a user can act on).  Pure: counts in,
 * JSON out; unit-tested in tests/unit/test_kernels_counters.c.
 */
#ifndef GPUBENCH_KERNELS_COUNTERS_REPORT_H
#define GPUBENCH_KERNELS_COUNTERS_REPORT_H

#include <cjson/cJSON.h>

#include "counters.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Adds to row: expected_shared_load_requests (requests), expected_bank_conflicts
 * and expected_wavefronts (gb_expected_*, from degree), and, from v when
 * v->read: bank_conflicts, wavefronts, their store counterparts,
 * shared_load_requests, shared_store_requests, measured_degree and
 * counters_agree (bank conflicts within GB_COUNTERS_AGREE_TOL of the
 * expected count); null in each of these when not read.  Returns 1 when
 * read and agreeing, 0 otherwise, -1 out of memory. */
int gb_counters_add_row(cJSON *row, const struct gb_counter_values *v, double requests,
                        int degree);

/* A NEW summary.counters object (NULL out of memory) over a report's rows
 * (after gb_counters_add_row): read (every row has its counts; why not is
 * in meta.counters), how many rows agree, and `launch`, the sentence
 * saying which launch was counted (counts are that launch's, never
 * scaled). */
cJSON *gb_counters_summary(const cJSON *rows, const char *launch);

/* A NEW meta.counters object (NULL out of memory; st NULL: a run that made
 * no counter pass): mode, available, reason (gb_counters_reason, when not
 * available), the library loaded, the
 * metric names, replay passes and the agreement tolerance. */
cJSON *gb_counters_meta_json(const struct gb_counters_state *st);

#ifdef __cplusplus
}
#endif

#endif
