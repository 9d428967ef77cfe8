/*
 * table.h - the human tables of `gpubench-worker run`, laid out like the
 * glossary entry's two tables.  They print from the result and meta
 * objects (what a run stores), so the table never shows a number the
 * stored run does not hold.
 */
#ifndef GPUBENCH_KERNELS_TABLE_H
#define GPUBENCH_KERNELS_TABLE_H

#include <stdio.h>
#include <cjson/cJSON.h>

void gb_print_table(FILE *out, const char *benchmark, const cJSON *result,
                    const cJSON *meta);

#endif
