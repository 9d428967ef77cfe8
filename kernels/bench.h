/*
 * bench.h - what a benchmark is to the job layer.
 *
 * Each benchmark (smem_stride.c, smem_pattern.c, transpose.c) turns its
 * resolved parameters (gb_params_resolve: every field present and in
 * bounds) into a measurement through gb_kernels.h and returns a NEW
 * {"rows": [...], "summary": {...}} object that the caller owns.  The job
 * layer adds the metadata; a benchmark only measures and reports.
 */
#ifndef GPUBENCH_KERNELS_BENCH_H
#define GPUBENCH_KERNELS_BENCH_H

#include <cjson/cJSON.h>

#include "gb_kernels.h"
#include "nvml_state.h"
#include "job_error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gb_bench_env {
    const struct gb_device_info *dev;
    struct gb_hooks *hooks;             /* the benchmark sets hooks->total */
    struct gb_counters_state *counters; /* the counter pass after the timed
                                           samples (NULL: none); the
                                           backend records what it read */
    double deadline_s;                  /* CLOCK_MONOTONIC time after which a precision
                                           run starts no new round; 0: none */
    struct gb_nvml *nvml;               /* NULL where NVML could not be loaded */
    const char *nvml_reason;
    cJSON *meta_extra; /* members the benchmark adds to the run's meta
                          (pcie_bandwidth: link); owned by the job */
};

typedef int (*gb_bench_fn)(const struct gb_bench_env *env, const cJSON *params,
                           cJSON **result, struct gb_job_error *err);

int gb_bench_smem_stride(const struct gb_bench_env *env, const cJSON *params,
                         cJSON **result, struct gb_job_error *err);
int gb_bench_smem_pattern(const struct gb_bench_env *env, const cJSON *params,
                          cJSON **result, struct gb_job_error *err);
int gb_bench_transpose(const struct gb_bench_env *env, const cJSON *params,
                       cJSON **result, struct gb_job_error *err);

/* perf_bench.c, p2p_bench.c: memory, compute, host link, peer
 * links, global-memory coalescing, each against its stated peak. */
int gb_bench_gmem_stride(const struct gb_bench_env *env, const cJSON *params,
                         cJSON **result, struct gb_job_error *err);
int gb_bench_hbm_bandwidth(const struct gb_bench_env *env, const cJSON *params,
                           cJSON **result, struct gb_job_error *err);
int gb_bench_compute_peak(const struct gb_bench_env *env, const cJSON *params,
                          cJSON **result, struct gb_job_error *err);
int gb_bench_pcie_bandwidth(const struct gb_bench_env *env, const cJSON *params,
                            cJSON **result, struct gb_job_error *err);
int gb_bench_p2p_bandwidth(const struct gb_bench_env *env, const cJSON *params,
                           cJSON **result, struct gb_job_error *err);

/* nccl_allreduce (nccl_bench.c): NCCL all-reduce over every GPU of the node. */
int gb_bench_nccl_allreduce(const struct gb_bench_env *env, const cJSON *params,
                            cJSON **result, struct gb_job_error *err);

/* The deep checks (deep_bench.c, docs/DEEP_CHECKS.md): known answers on every
 * SM, a memory test, a sustained load. */
int gb_bench_known_answer(const struct gb_bench_env *env, const cJSON *params,
                          cJSON **result, struct gb_job_error *err);
int gb_bench_memtest(const struct gb_bench_env *env, const cJSON *params, cJSON **result,
                     struct gb_job_error *err);
int gb_bench_soak(const struct gb_bench_env *env, const cJSON *params, cJSON **result,
                  struct gb_job_error *err);

/* Test only (test_benchmarks.c; the daemon offers them only when told to):
 * test_fault writes through an illegal address and fails with the sticky
 * cuda_error; test_hang launches a kernel that never ends, for the
 * daemon's run deadline to kill. */
int gb_bench_test_fault(const struct gb_bench_env *env, const cJSON *params,
                        cJSON **result, struct gb_job_error *err);
int gb_bench_test_hang(const struct gb_bench_env *env, const cJSON *params,
                       cJSON **result, struct gb_job_error *err);

/* The measuring options every benchmark takes (samples, min_sample_ms,
 * precision and max_samples) and env's deadline. */
void gb_bench_measure_opts(const struct gb_bench_env *env, const cJSON *params,
                           struct gb_measure_opts *opts);

/* Copies the integer list params[name] into out (at most cap values);
 * returns how many there were, or -1 if the list is missing or too long
 * (gb_params_resolve has ruled that out for the benchmark table). */
int gb_bench_long_list(const cJSON *params, const char *name, long *out, int cap);

#ifdef __cplusplus
}
#endif

#endif
