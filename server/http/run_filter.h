/*
 * run_filter.h - the filters of GET /runs, GET /runs.csv and GET
 * /runs.ndjson, read from the query and checked in one place, so that the
 * three answer the same query the same way (a bad value is the same 400,
 * naming the same field, on each).
 *
 * device means what it means in POST /runs: a whole number is the GPU
 * index, "GPU-..." or "MIG-..." a UUID, anything else a card's name.
 */
#ifndef GPUBENCH_HTTP_RUN_FILTER_H
#define GPUBENCH_HTTP_RUN_FILTER_H

#include "http.h"
#include "store_runs.h"

/* The query argument names the filters take, for a handler's query_check
 * list. */
#define RUN_FILTER_ARGS "benchmark", "device", "host", "status", "label", "batch", "valid"

/* The longest filter value: the longest of the fields they match (a card's
 * name, import_check.c). */
#define RUN_FILTER_VALUE_MAX 256

/* Fills f's benchmark, device (or device_index), host, status, label,
 * batch and valid (true: valid and unknown runs; false: invalid ones) from
 * req's query; the strings are borrowed from the connection.
 * 0, or -1 with a 400 made in rep. */
int run_filter_from_query(struct http_request *req, struct http_reply *rep,
                          struct run_filter *f);

#endif
