/*
 * gb_deep.h - the C face of the GPU backend for the deep checks
 * (known_answer, memtest, soak; docs/DEEP_CHECKS.md).  Same conventions as
 * gb_kernels.h: 0 on success, -1 on a CUDA failure described in err.  A
 * wrong answer or a memory error is not a failure: it is counted and
 * recorded in the output, and deep_bench.c reports it.
 *
 * nocuda.c answers every call with "built without CUDA".
 */
#ifndef GPUBENCH_KERNELS_GB_DEEP_H
#define GPUBENCH_KERNELS_GB_DEEP_H

#include "gb_kernels.h"
#include "known_answer_ref.h"
#include "memtest_ref.h"
#include "soak_report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- known_answer ----------------------------------------------------- */

struct gb_ka_result {
    int available; /* 0: not run; reason says why (cuBLAS missing) */
    char reason[200];
    long long launches;
    unsigned long long checked; /* results compared, over every launch */
    struct gb_ka_log log;       /* mismatches over every launch, the first noted */
    int sm_count;
    int sms_covered;      /* SMs that ran a block (%smid); -1: not recorded (cuBLAS) */
    uint64_t hash;        /* gb_ka_hash of the first launch's results */
    double seconds;       /* time spent launching and checking the kind */
    double setup_seconds; /* the host's reference and the uploads, before */
};

/* Runs kind (enum gb_ka_kind) again and again for `seconds`, every launch
 * compared bit for bit on the GPU against the host's answer. */
int gb_known_answer_run(int device, int kind, double seconds, struct gb_ka_result *out,
                        struct gb_cuda_error *err);

/* ---- memtest ---------------------------------------------------------- */

struct gb_memtest_pattern_result {
    int pattern;
    double seconds;     /* the three passes, every chunk, every pass */
    double bytes_moved; /* written plus read */
    unsigned long long errors;
    struct gb_mt_error first[GB_MT_MAX_RECORDS];
};

struct gb_memtest_result {
    unsigned long long free_bytes, total_bytes; /* cudaMemGetInfo before allocating */
    unsigned long long bytes_tested;            /* the region (sum of its chunks) */
    int chunks;
    double memcpy_gbps; /* device-to-device cudaMemcpy, bytes read plus written */
    unsigned long long memcpy_bytes;
    int count;
    struct gb_memtest_pattern_result p[GB_MT_PATTERNS];
};

/* patterns[0..count-1] (enum gb_mt_pattern), each `passes` times over
 * `fraction` of the free memory.  hooks->progress after each pattern. */
int gb_memtest_run(int device, double fraction, const int *patterns, int count, int passes,
                   uint64_t seed, struct gb_hooks *hooks, struct gb_memtest_result *out,
                   struct gb_cuda_error *err);

/* ---- soak ------------------------------------------------------------- */

/* Called on the host once a second of the soak has passed (second = 0,
 * 1, ...), while the load keeps running: NVML is read here. */
typedef void (*gb_soak_tick_fn)(void *arg, int second);

struct gb_soak_result {
    int load[GB_SOAK_LOADS];      /* the load ran */
    int available[GB_SOAK_LOADS]; /* 0: could not run; reason says why */
    char reason[GB_SOAK_LOADS][200];
    int seconds;                 /* whole seconds held (entries of rate filled) */
    double *rate[GB_SOAK_LOADS]; /* per second: TFLOP/s, GB/s (caller's arrays of cap) */
    long long launches[GB_SOAK_LOADS];
    int gemm_n;
    double hbm_bytes; /* the triad's three arrays */
};

/* Holds the loads asked in out->load (gemm: cuBLAS BF16 GEMM back to back;
 * hbm: a STREAM triad; both on two streams at once) for `seconds`,
 * calling tick each second; out->rate[load] are the caller's arrays of cap
 * seconds.  Rates are the work whose completion the GPU's events place in
 * each second. */
int gb_soak_run(int device, double seconds, int cap, gb_soak_tick_fn tick, void *arg,
                struct gb_soak_result *out, struct gb_cuda_error *err);

#ifdef __cplusplus
}
#endif

#endif
