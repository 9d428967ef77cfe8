/*
 * counters.h - hardware counters of shared memory beside the prediction:
 * the pure half (no CUDA, no JSON), unit-tested without a GPU.
 *
 * The worker reads, through CUPTI's Range Profiler (counters_cupti.cu), the
 * metrics of gb_counter_metric for ONE launch per row, in a pass of its own
 * after the timed samples, so the profiler never runs while a sample is
 * timed.  This file holds what that needs around it:
 *   - the metric list (the names CUPTI is asked for, in one table);
 *   - the `counters` parameter (auto | on | off) and what became of it
 *     (struct gb_counters_state), with the sentence a user can act on when
 *     the counters could not be read;
 *   - the arithmetic that turns a prediction into counts: a warp request of
 *     conflict degree d is served in d wavefronts, so it adds d - 1 bank
 *     conflicts; requests x (d - 1) is the count the prediction implies;
 *   - the agreement rule (within GB_COUNTERS_AGREE_TOL);
 *   - RmProfilingAdminOnly from /proc/driver/nvidia/params.
 */
#ifndef GPUBENCH_KERNELS_COUNTERS_H
#define GPUBENCH_KERNELS_COUNTERS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The metrics, in the order of gb_counter_values.v. */
enum gb_counter_metric {
    GB_CM_LD_CONFLICTS,  /* l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum */
    GB_CM_ST_CONFLICTS,  /* ..._op_st.sum */
    GB_CM_LD_WAVEFRONTS, /* l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum */
    GB_CM_ST_WAVEFRONTS, /* ..._op_st.sum */
    GB_CM_LD_REQUESTS,   /* smsp__inst_executed_op_shared_ld.sum: warp loads */
    GB_CM_ST_REQUESTS,   /* smsp__inst_executed_op_shared_st.sum: warp stores */
    GB_CM_GLD_SECTORS,   /* l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum */
    GB_CM_GLD_REQUESTS,  /* l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum */
    GB_CM_GLD_SETS,      /* l1tex__t_set_accesses_pipe_lsu_mem_global_op_ld.sum:
                          * tag lookups, one per 128-byte line a load touches */
    GB_CM_DRAM_READ,     /* dram__bytes_read.sum */
    GB_CM_COUNT
};

/* The CUPTI metric name of m (static string; NULL out of range). */
const char *gb_counter_metric_name(int m);

/* The JSON field a row gets for m ("bank_conflicts", "wavefronts", ...). */
const char *gb_counter_metric_field(int m);

/* One profiled launch's counts; read is 0 where they were not read. */
struct gb_counter_values {
    int read;
    double v[GB_CM_COUNT];
};

/* ---- the parameter and its outcome --------------------------------- */

enum gb_counters_mode {
    GB_COUNTERS_AUTO, /* read them where the driver allows it */
    GB_COUNTERS_ON,   /* fail the run if they cannot be read */
    GB_COUNTERS_OFF   /* do not try */
};

enum gb_counters_status {
    GB_COUNTERS_READ,           /* every row has its counts */
    GB_COUNTERS_NOT_ASKED,      /* counters: off */
    GB_COUNTERS_NO_CUDA,        /* worker built without CUDA */
    GB_COUNTERS_NO_CUPTI_BUILD, /* built without CUPTI's range profiler headers */
    GB_COUNTERS_NO_LIBRARY,     /* libcupti not found at run time */
    GB_COUNTERS_TOO_OLD,        /* libcupti lacks the range profiler (< 12.8) */
    GB_COUNTERS_ADMIN_ONLY,     /* RmProfilingAdminOnly=1, not root */
    GB_COUNTERS_UNSUPPORTED,    /* the GPU or its chip is not supported */
    GB_COUNTERS_FAILED,         /* another CUPTI failure; detail names it */
    GB_COUNTERS_NO_PASS         /* the run counted no launch (a benchmark
                                   without a counter pass) */
};

/* Parses "auto" | "on" | "off"; NULL or anything else is auto. */
enum gb_counters_mode gb_counters_mode_parse(const char *s);
const char *gb_counters_mode_name(enum gb_counters_mode m);

/* What one run did about counters.  Filled by the backend (probe, then the
 * counter pass) and read by the report; plain data, nothing to free. */
struct gb_counters_state {
    enum gb_counters_mode mode;
    enum gb_counters_status status;
    char detail[256];  /* the CUPTI call and error, a path, ... */
    char library[256]; /* the libcupti that was loaded, "" if none */
    int passes;        /* replay passes CUPTI needed per launch */
    int launches;      /* launches counted so far in the run */
};

/* Initialises st for mode: status NOT_ASKED when off, else READ until the
 * backend says otherwise. */
void gb_counters_state_init(struct gb_counters_state *st, enum gb_counters_mode mode);

/* After the run: a status still READ with no launch counted becomes
 * NO_PASS, so a run never claims counters it did not read. */
void gb_counters_state_finish(struct gb_counters_state *st);

/* Records why counters cannot be read (detail printf-style, may be NULL);
 * returns -1 so a caller can `return gb_counters_fail(...)`. */
int gb_counters_fail(struct gb_counters_state *st, enum gb_counters_status status,
                     const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* 1 when st says the counters were (or are still to be) read. */
int gb_counters_wanted(const struct gb_counters_state *st);

/* The sentence a user reads when counters were not read: what happened and
 * what to change (the driver option, the library path, ...), with the
 * detail appended.  Writes "" when status is READ. */
void gb_counters_reason(const struct gb_counters_state *st, char *buf, size_t cap);

/* ---- the prediction as counts --------------------------------------- */

/* A request (one warp-wide shared load) of conflict degree d takes d
 * wavefronts, d - 1 of them extra: requests x (d - 1) bank conflicts and
 * requests x d wavefronts.  Degree 0 (no shared access) implies 0. */
double gb_expected_bank_conflicts(double requests, int degree);
double gb_expected_wavefronts(double requests, int degree);

/* Measured and implied agree when they differ by at most
 * GB_COUNTERS_AGREE_TOL of the implied count, or, where the prediction is
 * no conflict at all, by at most that share of the requests (at most one
 * stray wavefront in a hundred requests). */
#define GB_COUNTERS_AGREE_TOL 0.01
int gb_counts_agree(double measured, double expected, double requests);

/* wavefronts / requests: the degree the hardware served on average; 0
 * where there were no requests. */
double gb_measured_degree(double wavefronts, double requests);

/* ---- the driver's restriction ---------------------------------------- */

#define GB_PROC_DRIVER_PARAMS_PATH "/proc/driver/nvidia/params"

/* RmProfilingAdminOnly in text (the contents of
 * /proc/driver/nvidia/params, one "Name: value" a line): 1 or 0, or -1 when
 * the line is missing. */
int gb_parse_profiling_admin_only(const char *text);

/* The same, read from path; -1 when the file cannot be read. */
int gb_read_profiling_admin_only(const char *path);

#ifdef __cplusplus
}
#endif

#endif
