/*
 * table.h - the human tables of `gpubench-worker run`, laid out like the
 * glossary entry's two tables.  They print from the result and meta
 * objects (what a run stores), so the table never shows a number the
 * stored run does not hold.
 */
#ifndef GPUBENCH_WORKER_TABLE_H
#define GPUBENCH_WORKER_TABLE_H

#include <stdio.h>
#include <cjson/cJSON.h>

/* The run's header (meta), the benchmark's own table (its gb_table_fn in
 * bench_table.c) and the counters' note. */
void gb_print_table(FILE *out, const char *benchmark, const cJSON *result,
                    const cJSON *meta);

/* The benchmarks' tables (gb_table_fn, bench_table.h). */
void gb_table_smem_stride(FILE *out, const cJSON *result);
void gb_table_smem_pattern(FILE *out, const cJSON *result);
void gb_table_transpose(FILE *out, const cJSON *result);
/* value / peak / share rows: gmem_stride, hbm_bandwidth, compute_peak,
 * pcie_bandwidth, p2p_bandwidth. */
void gb_table_peaks(FILE *out, const cJSON *result);

/* known_answer, memtest, soak (docs/DEEP_CHECKS.md): each row's value and
 * unit, what it checked and whether it passed; the summary's totals. */
void gb_table_deep(FILE *out, const cJSON *result);

#endif
