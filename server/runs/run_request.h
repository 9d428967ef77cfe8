/*
 * run_request.h - the body of POST /runs, parsed and checked whole, with no
 * I/O: JSON with nothing after it, only known fields (an unknown one is
 * named), the benchmark, its params resolved against the benchmark table
 * (defaults filled in), the label and the timeout.  The device is only
 * looked at for its shape here; which GPU it names is the pool's business.
 *
 * Pure, so that the fuzzer (tests/fuzz/) can drive it directly.
 */
#ifndef GPUBENCH_RUNS_RUN_REQUEST_H
#define GPUBENCH_RUNS_RUN_REQUEST_H

#include <stddef.h>
#include <cjson/cJSON.h>

#include "bench_spec.h"
#include "bench_suite.h"

#define RUN_LABEL_MAX 200

/* One benchmark a request runs on each device it names. */
struct run_part {
    const struct gb_benchmark *bench; /* static */
    cJSON *params;                    /* owned: resolved, defaults filled in */
};

struct run_request {
    cJSON *body;                      /* owned: the parsed body */
    const struct gb_benchmark *bench; /* static: parts[0].bench */
    cJSON *params;                    /* borrowed: parts[0].params */
    /* A suite ("health") expands into one part per member, each with its
     * health_params under the requested params (common/bench_suite.h); a
     * benchmark is one part.  suite is NULL for a benchmark. */
    const struct gb_suite *suite;
    int n_parts;
    struct run_part parts[GB_SUITE_MAX_MEMBERS];
    const char *label; /* borrowed from body; NULL if none */
    int timeout_s;
    const cJSON *device; /* borrowed from body; NULL if none */
    /* Set only by a card's canary (canaries.c), never by a body: leave out
     * the benchmarks that hold every GPU, which a node canary runs when
     * every card is quiet. */
    int one_card;
};

/* The one strict reading of JSON text (POST /runs, every JSON body, each
 * line of an import): text (len bytes, need not be NUL-terminated) as one
 * JSON value with nothing but whitespace after it.  A NEW item the caller
 * owns, or NULL with *at set to the byte offset of the error and
 * *trailing set to 1 when a whole value was read and more text follows it
 * (0 when the text is not JSON at all). */
cJSON *json_parse_whole(const char *text, size_t len, size_t *at, int *trailing);

/* A request body as one JSON value with nothing but whitespace after it
 * (len bytes, need not be NUL-terminated): a NEW item the caller owns, or
 * NULL with err set (malformed_json, the byte offset said). */
cJSON *request_json_parse(const char *body, size_t len, struct gb_error *err);

/* Parses body (len bytes, need not be NUL-terminated).  max_timeout_s is
 * the daemon's --run-timeout (the default and the bound of timeout_s);
 * test_benchmarks offers the test-only ones.  0, or -1 with err filled
 * (every error is an HTTP 400).  Free r with run_request_free either way. */
int run_request_parse(const char *body, size_t len, int max_timeout_s,
                      int test_benchmarks, struct run_request *r,
                      struct gb_error *err);
void run_request_free(struct run_request *r);

#endif
