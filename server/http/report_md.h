/*
 * report_md.h - runs and comparisons as markdown people paste into notes
 * and issues, in the style of the measurement write-ups: a sentence with the
 * card, driver, CUDA and date above a table, verdicts where there are
 * any.  Pure: it reads the JSON the API answers with and writes text; the
 * handlers (GET /runs/ID.md, GET /compare.md) fetch and send.
 */
#ifndef GPUBENCH_HTTP_REPORT_MD_H
#define GPUBENCH_HTTP_REPORT_MD_H

#include "dynbuf.h"

#include <cjson/cJSON.h>

/* A run as GET /runs/ID shows it, appended to out.  0, or -1 when out
 * refused to grow (its cap) and the text is incomplete. */
int report_md_run(const cJSON *run, struct dynbuf *out);

/* Returns the run id as GET /runs/ID shows it, a NEW object the caller
 * deletes, or NULL when there is none. */
typedef cJSON *(*report_run_fn)(void *ctx, const char *id);

/* A GET /compare answer (series per card, or with baseline= and
 * candidate= the verdicts) appended to out.  run_of fetches the newest
 * run of each group or series for its driver, CUDA and date (NULL: those
 * are left out).  0, or -1 as above. */
int report_md_compare(const cJSON *answer, report_run_fn run_of, void *ctx, struct dynbuf *out);

/* GET /changes's list (store_changes.h) as a table, newest first,
 * appended to out.  0, or -1 as above. */
int report_md_changes(const cJSON *changes, struct dynbuf *out);

#endif
