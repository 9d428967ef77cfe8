/*
 * bench_table.h - the worker's side of the benchmark table: for each
 * benchmark of common/bench_spec.c that this worker implements, the
 * function that measures it and the one that prints its table for
 * `gpubench-worker run`.  Jobs and the command line dispatch through it
 * (bench_table.c); nothing in the worker tests a benchmark's name.
 */
#ifndef GPUBENCH_WORKER_BENCH_TABLE_H
#define GPUBENCH_WORKER_BENCH_TABLE_H

#include <stddef.h>
#include <stdio.h>
#include <cjson/cJSON.h>

#include "bench.h"
#include "bench_spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Prints a result's rows and summary as the human table. */
typedef void (*gb_table_fn)(FILE *out, const cJSON *result);

struct gb_bench_impl {
    const char *name;  /* the benchmark's name in common/bench_spec.c */
    gb_bench_fn run;   /* measures it */
    gb_table_fn print; /* its table (table.c); NULL: none beyond the header */
};

/* The implementation of spec, or NULL when this worker has none (or spec
 * is NULL).  Static storage. */
const struct gb_bench_impl *gb_bench_impl_for(const struct gb_benchmark *spec);

/* The implementation of the benchmark called name: gb_bench_impl_for of
 * its spec. */
const struct gb_bench_impl *gb_bench_impl_find(const char *name);

/* The implemented benchmarks' names, ", "-joined, into buf (for an error
 * that says what would have been accepted). */
void gb_bench_impl_names(char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
