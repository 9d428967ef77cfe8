/*
 * verdict_rows.h - a run's result rows packed to what a verdict reads of
 * them (verdicts.c): each row's key fields, measured SM clock and median
 * as a small JSON text, and every sample as 8-byte IEEE-754 doubles in a
 * blob (migrations/0008_verdict_samples.sql keeps both per run).
 *
 * Why: GET /compare with verdicts reads hundreds of runs a request, and
 * their results (5 to 10 kB of JSON a run, most of it samples printed to
 * 17 digits) cost more to read and parse than the statistics cost to run.
 * Packed, a run is a third of the bytes and its samples need no parsing.
 * Unpacked rows carry exactly the doubles the results parse to: the
 * numbers of the text are printed with 17 digits, which read back to the
 * same double, so a verdict is the same from either.
 */
#ifndef GPUBENCH_VERDICT_ROWS_H
#define GPUBENCH_VERDICT_ROWS_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* Packs rows (results.rows as a run carries them) into *text (NEW, free())
 * and *blob (NEW, free()) of *blob_len bytes.  0; 1 when a row holds
 * something the packing does not keep exactly (a sample that is not a
 * finite number, a clock or median that is not finite): the rows are then
 * read from the results, *text and *blob NULL; -1 out of memory. */
int verdict_rows_pack(const cJSON *rows, char **text, unsigned char **blob, size_t *blob_len);

/* The rows back, as a NEW array of row objects holding the key fields,
 * "sm_clock_mhz_measured", "median_ms" and "samples" where the row had
 * them; NULL when text and blob do not agree (damaged) or out of memory. */
cJSON *verdict_rows_unpack(const char *text, const unsigned char *blob, size_t blob_len);

#endif
