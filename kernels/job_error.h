/*
 * job_error.h - why a job failed, in the shape the worker protocol sends:
 * a stable code ("unknown_benchmark", "invalid_params", "cuda_error",
 * "verification_failed", ...), a sentence, the parameter at fault when
 * there is one, and whether the worker must exit after reporting it.
 * In kernels/ because the benchmarks fill it; the worker sends it.
 */
#ifndef GPUBENCH_KERNELS_JOB_ERROR_H
#define GPUBENCH_KERNELS_JOB_ERROR_H

#include "bench_spec.h"
#include "gb_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gb_job_error {
    char code[32];
    char field[96];
    char message[512];
    int fatal; /* the GPU context is unusable: report, then exit */
};

/* Sets code and message (printf-style), clears field and fatal; returns
 * -1 so a caller can `return gb_job_fail(...)`. */
int gb_job_fail(struct gb_job_error *err, const char *code, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* code "cuda_error"; the message names the call and the CUDA error name
 * (cudaErrorIllegalAddress); fatal copied.  Returns -1. */
int gb_job_fail_cuda(struct gb_job_error *err, const struct gb_cuda_error *cuda);

/* A parameter check's failure (gb_params_resolve): code "invalid_params",
 * its message and field.  Returns -1. */
int gb_job_fail_params(struct gb_job_error *err, const struct gb_error *spec);

#ifdef __cplusplus
}
#endif

#endif
