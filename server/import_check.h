/*
 * import_check.h - is this JSON object a finished run fit to store?  Used
 * for POST /runs/import (and, later, runs pulled from peers): a foreign run
 * is checked field by field before anything is written, so a bad line
 * cannot leave a bad row.
 */
#ifndef GPUBENCH_IMPORT_CHECK_H
#define GPUBENCH_IMPORT_CHECK_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* 0 when run can be stored as it is; -1 with a sentence in err that names
 * the field.  Runs that have not finished (queued, running) are refused:
 * only a finished run can be copied, since only its own node can run it. */
int import_check_run(const cJSON *run, char *err, size_t cap);

#endif
