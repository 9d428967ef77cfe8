/*
 * cli_rows.h - a run's results (results.rows and p2p_bandwidth's
 * results.summary.matrix) as terminal tables, labelled and in units from
 * the result-field table (common/result_fields.c); see cli_rows.c.
 */
#ifndef GPUBENCH_CLIENT_CLI_ROWS_H
#define GPUBENCH_CLIENT_CLI_ROWS_H

#include "cli_table.h"

#include <cjson/cJSON.h>
#include <stdio.h>

/* rows (results.rows) into t, an empty table, as a header and a line a
 * row: the row key, then every field the terminal shows that a row has. */
void cli_rows_table(struct cli_table *t, const cJSON *rows);

/* results (a run's "results", or NULL) of a run of benchmark on out: the
 * rows' table after an empty line, when there are rows, with what one
 * sample was where it held more than one unit of work, then each matrix
 * of summary.matrix that holds a number, titled with its unit. */
void cli_rows_print(FILE *out, const char *benchmark, const cJSON *results, int colour);

#endif
