/*
 * bench_suite.h - named suites of benchmarks: one request that expands into
 * one run per member (the nightly `health` suite).
 *
 * A suite is not a benchmark the worker knows; the daemon expands it.  Its
 * members are not listed here but read off the benchmark table
 * (common/bench_spec.c): a benchmark is in the health suite when its spec
 * has health_params, so adding a benchmark to the suite is setting that one
 * field.  health_deep runs the health members first, then its own
 * (known_answer, memtest, soak, each with its params in the suite table):
 * the health members are then measured on a card in the state the nightly
 * suite finds it, not one the soak's two minutes at the power cap left hot
 * (on an H200, a gmem_stride row right after the soak ran into
 * sw_power_cap, so the weekly suite's own run was invalid), and the soak's
 * heat leaves with the suite.  A member's params are its health_params with the requested params
 * over them (each requested param goes to the members that take it).
 */
#ifndef GPUBENCH_COMMON_BENCH_SUITE_H
#define GPUBENCH_COMMON_BENCH_SUITE_H

#include <stddef.h>
#include <cjson/cJSON.h>

#include "bench_spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most members a suite can have (the benchmark table is far shorter). */
#define GB_SUITE_MAX_MEMBERS 16

/* A member a suite runs after the health members, with its params. */
struct gb_suite_extra {
    const char *benchmark;
    const char *params; /* JSON object text, as health_params */
};

struct gb_suite {
    const char *name;
    const char *description;
    const struct gb_suite_extra *extra; /* NULL-ended, or NULL: none */
    double expected_s;                  /* how long one card's runs take, in seconds */
    const char *expected_source;        /* where expected_s comes from */
};

/* The suite called name, or NULL.  Static storage. */
const struct gb_suite *gb_suite_find(const char *name);

/* The suites, in the order GET /benchmarks lists them.  Static storage. */
const struct gb_suite *gb_suite_at(size_t i);
size_t gb_suite_count(void);

/* Whether b is offered by a daemon (test-only benchmarks only with
 * --test-benchmarks): b NULL is not. */
int gb_benchmark_offered(const struct gb_benchmark *b, int test_benchmarks);

/* The names of the benchmarks offered, ", " between them, then (with
 * suites set) the suites' as "NAME (a suite)", into buf (cut at cap): what
 * a refused benchmark name is answered with. */
void gb_benchmark_names(int test_benchmarks, int suites, char *buf, size_t cap);

/* Fills members (room for cap) with the suite's benchmarks in the order
 * they run: the health members in table order, test-only ones left out,
 * then its extra ones; returns how many.  Static storage. */
int gb_suite_members(const struct gb_suite *s, const struct gb_benchmark **members,
                     int cap);

/* The params member runs with in suite s: its extra params there, else its
 * health_params (a NULL s: the health_params), with the requested params
 * (NULL means {}) over those it takes, resolved against its table
 * (defaults filled in).  A NEW object the caller deletes, or NULL with err
 * filled (the field under "params.", the member named). */
cJSON *gb_suite_member_params(const struct gb_suite *s, const struct gb_benchmark *member,
                              const cJSON *params, struct gb_error *err);

/* 0 when every requested param is taken by at least one member, else -1
 * with err naming the first one no member takes. */
int gb_suite_check_params(const struct gb_suite *s, const cJSON *params,
                          struct gb_error *err);

/* A NEW object for GET /benchmarks: name, description, "suite": true,
 * expected_s, expected_source and members [{name, health_params (the
 * params it runs with in this suite), all_devices}].  NULL when out of
 * memory. */
cJSON *gb_suite_describe(const struct gb_suite *s);

#ifdef __cplusplus
}
#endif

#endif
