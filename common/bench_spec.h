/*
 * bench_spec.h - the one table of benchmarks and their parameters.
 *
 * Both the server (validation, GET /benchmarks) and the worker (its command
 * line, and a second check of every job it is sent) read this table, so a
 * parameter's type, default and bounds are written exactly once.
 *
 * A request's params are resolved into a new object that holds every
 * parameter, defaults filled in; that resolved object is what is stored with
 * the run and what the worker measures.  Unknown fields, wrong types and
 * values out of bounds are errors naming the field, never ignored.
 */
#ifndef GPUBENCH_COMMON_BENCH_SPEC_H
#define GPUBENCH_COMMON_BENCH_SPEC_H

#include <stddef.h>
#include <cjson/cJSON.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A validation failure: a stable code for scripts, the field's JSON path
 * ("params.strides[3]") and a sentence for people. */
struct gb_error {
    char code[32];
    char field[96];
    char message[256];
};

/* Sets all three fields of err (printf-style message); returns -1 so a
 * caller can write `return gb_error_set(...)`. */
int gb_error_set(struct gb_error *err, const char *code, const char *field,
                 const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* v as a person reads it in a message, into buf (cap bytes, always
 * terminated): a whole number with every digit ("1048577", not %g's
 * "1.04858e+06"), anything else in the fewest significant digits that read
 * back as v ("0.0005", "1000.25").  GB_NUMBER_TEXT_MAX holds any. */
#define GB_NUMBER_TEXT_MAX 32
void gb_number_text(char *buf, size_t cap, double v);

/* The first name that appears twice among obj's members, or NULL.  JSON
 * readers disagree on which of two equal keys wins (cJSON takes the first,
 * Python and JavaScript the last), so a repeated key is refused rather
 * than guessed at. */
const char *gb_json_duplicate_key(const cJSON *obj);

enum gb_param_type {
    GB_PARAM_INT,        /* a whole number in [min, max] */
    GB_PARAM_NUMBER,     /* any number in [min, max] */
    GB_PARAM_INT_LIST,   /* min_items..max_items whole numbers, each in [min, max] */
    GB_PARAM_CHOICE,     /* one string out of choices */
    GB_PARAM_CHOICE_LIST /* min_items..max_items distinct strings out of choices */
};

struct gb_param {
    const char *name;
    enum gb_param_type type;
    const char *help;
    double min, max;            /* value bounds (of each element for lists) */
    int min_items, max_items;   /* lists only */
    long multiple_of;           /* ints only; 0 means any */
    int power_of_two;           /* ints only: 0 or a power of two */
    int unique;                 /* lists: refuse repeated elements */
    const char *const *choices; /* NULL-terminated; choice types only */
    const char *default_json;   /* the default, as JSON text; NULL: optional */
    /* 1: the parameter changes what is measured (a stride, a size, a
     * kernel), so runs that differ in it are not comparable and it joins
     * the comparability key; 0: it changes only how, or how often, the
     * same thing is measured (samples, quiet, counters), and runs that
     * differ in it are compared. */
    int measures;
};

/* One method version of a benchmark: bumped by the commit that changes
 * what its numbers mean (a kernel, its launch shape, its timing, its row
 * definitions), so that runs of two methods are never compared.  since is
 * the first gpubench release that stamps it on a run; NULL for a method
 * only ever measured by 0.1.0, the development version during which every
 * benchmark's method changed, whose runs carry no method (see
 * gb_method_of_version). */
struct gb_method {
    int method;         /* 1, 2, ...; 0 ends the list */
    const char *since;  /* gpubench version, or NULL */
    const char *change; /* what changed, and the commit */
};

/* The gpubench version where method versions begin: a run of an older
 * version that carries no method was measured by a method that cannot be
 * known. */
#define GB_METHODS_SINCE "0.2.0"

struct gb_benchmark {
    const char *name;
    const char *description;
    const struct gb_param *params; /* terminated by an entry with name NULL */
    int test_only;                 /* only offered when the daemon is told so
                                    * (gpubenchd --test-benchmarks) */
    /* The short form the health suite runs, as
     * JSON params text (NULL: not in the suite); requested params go over
     * it.  See common/bench_suite.h. */
    const char *health_params;
    /* The run needs every GPU of the node (p2p_bandwidth): the daemon starts
     * it only when every other GPU's runner is idle and holds them until it
     * ends (server/exec/gpu_pool.c). */
    int all_devices;
    /* The GPUs a node needs for the run to measure anything (p2p_bandwidth
     * measures pairs: 2); 0 means one.  Below it a request is refused and
     * the health suite leaves the benchmark out, saying so
     * (server/runs/runs.c), rather than store a done run with no rows. */
    int min_devices;
    /* Its method versions, oldest first, ending with {0}; the last is the
     * method this build measures (gb_benchmark_method). */
    const struct gb_method *methods;
};

/* The table, in the order GET /benchmarks lists it.  Static storage. */
const struct gb_benchmark *gb_benchmark_at(size_t i);
size_t gb_benchmark_count(void);

/* The benchmark called name, or NULL.  Static storage. */
const struct gb_benchmark *gb_benchmark_find(const char *name);

/* The method this build measures b with: the last of b->methods. */
int gb_benchmark_method(const struct gb_benchmark *b);

/* A NEW object for GET /benchmarks: {"since": GB_METHODS_SINCE,
 * "unknown": what a run without a method from before it is compared
 * with}; NULL out of memory. */
cJSON *gb_method_versions_describe(void);

/* The method a run of b made by gpubench `version` ("0.2.0") measured,
 * for runs stored or sent without one: the newest method of b whose since
 * is at or below version.  0 (unknown) for a version before
 * GB_METHODS_SINCE, one that does not parse, or NULL: such runs are
 * grouped by the build that made them, never with known methods. */
int gb_method_of_version(const struct gb_benchmark *b, const char *version);

/* The parameters of a run of b that join its comparability key: those
 * that measure (gb_param.measures), with the spec's defaults filled in for
 * any not stored (runs stored before defaults were), and any stored
 * parameter the spec does not know (it may have measured).  A NEW object
 * (NULL out of memory); with b NULL, a copy of params.  params may be NULL
 * or a non-object, taken as {}. */
cJSON *gb_params_key(const struct gb_benchmark *b, const cJSON *params);

/* Validates params (NULL means {}) against b and returns a NEW object with
 * every parameter present, defaults filled in; the caller owns it and frees
 * it with cJSON_Delete.  On a bad value returns NULL and fills err, with
 * field paths under "params.". */
cJSON *gb_params_resolve(const struct gb_benchmark *b, const cJSON *params,
                         struct gb_error *err);

/* The same with field paths under prefix ("" for a top-level object, as
 * POST /predict has).  A parameter with no default_json is optional and
 * left out when not given. */
cJSON *gb_params_resolve_at(const struct gb_benchmark *b, const cJSON *params,
                            const char *prefix, struct gb_error *err);

/* The device memory a run with these (resolved) params needs, in bytes,
 * so a request can be refused before it asks a card for more than it has.
 * 0 for benchmarks that need next to none. */
double gb_params_device_bytes(const struct gb_benchmark *b, const cJSON *params);

/* A NEW object describing b for GET /benchmarks: name, description and each
 * parameter with its type, default and bounds.  Caller owns it; NULL on
 * allocation failure. */
cJSON *gb_benchmark_describe(const struct gb_benchmark *b);

#ifdef __cplusplus
}
#endif

#endif
