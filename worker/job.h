/*
 * job.h - one job, start to end, the same for `--serve` and `run`:
 * check the benchmark and its parameters (common/bench_spec.c, no GPU
 * needed), measure, and wrap the result with the run's metadata.
 *
 * A gb_worker is the process's hold on its one GPU: the device's
 * properties, and NVML where it could be loaded.
 */
#ifndef GPUBENCH_WORKER_JOB_H
#define GPUBENCH_WORKER_JOB_H

#include <cjson/cJSON.h>

#include "gb_kernels.h"
#include "job_error.h"
#include "nvml_state.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gb_worker {
    int device;
    struct gb_device_info info;
    struct gb_nvml *nvml;  /* NULL where NVML could not be loaded */
    char nvml_reason[256]; /* why it is NULL */
};

/* Opens device index (context created now) and loads NVML.  On failure
 * fills err (code "device_unavailable") and returns -1; release with
 * gb_worker_close in every case. */
int gb_worker_open(struct gb_worker *w, int device, struct gb_job_error *err);
void gb_worker_close(struct gb_worker *w);

/* Checks benchmark and params without touching the GPU.  Returns the
 * resolved params (NEW, caller owns: every parameter, defaults filled),
 * or NULL with err: "unknown_benchmark" or "invalid_params" (message and
 * field from gb_params_resolve). */
cJSON *gb_job_resolve(const char *benchmark, const cJSON *params,
                      struct gb_job_error *err);

/* Progress: done of total timed samples; message, when not NULL, says
 * what the job is doing besides sampling ("waiting for a quiet card: pid
 * 4242 python3"), with done and total as they stand. */
typedef void (*gb_job_progress_fn)(void *arg, int done, int total, const char *message);

/* A precision run starts no new round after this share of its time limit
 * (the rest is for the counter pass and the result), and assumes this
 * limit when the job line gives none (the daemon's default is 300 s). */
#define GB_JOB_DEADLINE_SHARE 0.8
#define GB_JOB_DEFAULT_TIMEOUT_S 300

/* Measures benchmark with resolved params within timeout_s (0: the
 * default; see GB_JOB_DEADLINE_SHARE): first the quiet check (params
 * quiet, quiet_wait_s; watch.h), then the benchmark with the card read
 * between samples.  On success returns 0 and sets *result ({"rows",
 * "summary"}) and *meta (with meta.watch), both NEW and owned by the
 * caller; on failure returns -1 with err (err->fatal: exit after
 * reporting). */
int gb_job_run(struct gb_worker *w, const char *benchmark, const cJSON *resolved,
               double timeout_s, gb_job_progress_fn progress, void *progress_arg,
               cJSON **result, cJSON **meta, struct gb_job_error *err);

#ifdef __cplusplus
}
#endif

#endif
