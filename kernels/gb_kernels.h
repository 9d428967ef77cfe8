/*
 * gb_kernels.h - the C face of the GPU backend: what the rest of the
 * worker (plain C) may ask of CUDA.
 *
 * Two implementations sit behind it: the CUDA one (cuda_device.cu,
 * measure.cu, smem_read.cu, transpose_kernels.cu) where nvcc was found at
 * build time, and nocuda.c, which answers every call with "built without
 * CUDA".  Nothing outside the .cu files of kernels/ includes a CUDA header.
 *
 * Conventions: functions return 0 on success and -1 on a CUDA failure,
 * which they describe in a struct gb_cuda_error (the failing call, the
 * error's NAME such as cudaErrorIllegalAddress, and whether the context is
 * now unusable).  Memory a result struct points to is owned by that struct
 * and released with its *_free function.
 */
#ifndef GPUBENCH_KERNELS_GB_KERNELS_H
#define GPUBENCH_KERNELS_GB_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "counters.h"
#include "predict.h"
#include "verify.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gb_device_info {
    int index;
    char name[256];
    char uuid[64];       /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
    char pci_bus_id[32]; /* "0000:19:00.0", as NVML takes it */
    int cc_major, cc_minor;
    int sm_count;
    long long memory_bytes;
    int bus_width_bits;
    int l2_bytes;
    int smem_per_sm_bytes;
    int smem_per_block_bytes;
    int smem_per_block_optin_bytes; /* the most one block may opt in to */
    int max_threads_per_sm;
    int max_clock_khz; /* the SM clock the driver gives as peak */
    int max_mem_clock_khz;
};

struct gb_cuda_error {
    int fatal;      /* the context is unusable: the worker must exit */
    char call[64];  /* what failed: "cudaMalloc", "smem_read launch" */
    char name[64];  /* cudaGetErrorName: "cudaErrorIllegalAddress" */
    char text[192]; /* cudaGetErrorString */
};

/* Progress and card-state hooks.  The measuring code counts done (timed
 * samples finished) out of total and calls progress after each sample;
 * in_flight is called while a timed sample is still running on the GPU
 * (the moment to read clocks that reflect the load).  Either may be NULL. */
struct gb_samples;

/* between is called after each timed sample has ended and before the next
 * is enqueued (the GPU is idle then), with the row the sample belongs to:
 * the moment to read the card through NVML without touching a timed
 * region (watch.h). */
struct gb_hooks {
    void (*progress)(void *arg, int done, int total);
    void (*in_flight)(void *arg, int done, int total);
    void (*between)(void *arg, struct gb_samples *row);
    void *arg;
    int done, total;
};

struct gb_measure_opts {
    int samples;          /* timed samples after warm-up and calibration */
    double min_sample_ms; /* least duration of one sample */
    double precision;     /* > 0: rounds of `samples` until every row's
                             95% interval of the median is within this
                             share of it (rounds.h); 0: one round */
    int max_samples;      /* with precision: the most samples a row takes */
    double deadline_s;    /* with precision: no new round after this
                             CLOCK_MONOTONIC time (s); 0: none */
};

/* What NVML saw between a row's samples (the worker's watch.c fills it,
 * report_json.c writes it): the union of throttle reasons and the lowest
 * memory clock. */
struct gb_row_watch {
    int polls;         /* readings taken for this row */
    int throttle_read; /* at least one throttle mask was read */
    unsigned long long throttle_mask;
    double mem_clock_mhz; /* lowest seen; 0: never read */
};

/* Timed samples of one operation: ms[i] is the time of ONE launch (a
 * sample of several launches is divided by their number).  Owned by the
 * enclosing result. */
struct gb_samples {
    double *ms;
    int count;
    int capacity;     /* ms has room for this many */
    long work;        /* loop iterations (smem) or launches (transpose) per sample */
    double precision; /* as asked (gb_measure_opts), for the report */
    struct gb_row_watch watch;
};

/* ---- devices ------------------------------------------------------ */

int gb_backend_has_cuda(void);

/* Number of CUDA devices.  Returns 0, or -1 with a sentence in reason
 * (the CUDA error name and text, or "built without CUDA"). */
int gb_device_count(int *count, char *reason, size_t reason_cap);

int gb_device_query(int index, struct gb_device_info *out,
                    struct gb_cuda_error *err);

/* Makes index the current device and creates its context now, so that a
 * failure shows before the worker announces itself ready. */
int gb_device_open(int index, struct gb_cuda_error *err);

/* CUDA driver and runtime versions as 1000*major + 10*minor; 0 unknown. */
void gb_cuda_versions(int *driver, int *runtime);

/* Before any timed sample: rules out, where it can without touching the
 * GPU's counters, that hardware counters can be read (the driver's
 * admin-only restriction, no libcupti, a build without CUPTI or CUDA) and
 * records why in st.  Nothing happens when st says counters: off. */
void gb_counters_probe(struct gb_counters_state *st);

/* Test only: launches a kernel that writes through a bad pointer, so the
 * sticky-error path (report, then exit) can be checked on a real GPU. */
int gb_fault_illegal_address(struct gb_cuda_error *err);

/* Test only: launches a kernel that spins until the process is killed and
 * waits for it; returns only on a CUDA error. */
int gb_hang_forever(struct gb_cuda_error *err);

/* ---- shared-memory reads (smem_stride, smem_pattern) ---------------- */

struct gb_smem_plan {
    int rows;
    const int (*words)[GB_WARP_LANES];  /* rows x 32 word indices, lane order */
    int smem_words;                     /* array size every launch gets */
    int baseline_row;                   /* the row that calibrates the work */
    struct gb_counters_state *counters; /* the counter pass after the timed
                                           samples; NULL: none */
};

struct gb_smem_timing {
    int row_count;
    struct gb_samples *rows;            /* row_count entries, same work for all */
    double *busy_cycles;                /* per row: median over its samples of the
                                           longest SM busy span (clock64 cycles) */
    double *clock_mhz;                  /* per row: median over its samples of that
                                           SM's cycles over the same span's
                                           %globaltimer ns (sm_clock.h) */
    long long warp_loads;               /* warp-wide 32-bit loads in one sample */
    struct gb_counter_values *counters; /* per row: one launch's counts */
    long counter_work;                  /* that launch's loop iterations */
    int grid, block, blocks_per_sm, smem_bytes, loads_per_iteration;
};

/* Times every row of plan with one kernel (word indices passed at run
 * time, so only the addresses differ between rows).  Fills t; release it
 * with gb_smem_timing_free, also after a failure. */
int gb_smem_measure(int device, const struct gb_smem_plan *plan,
                    const struct gb_measure_opts *opts, struct gb_hooks *hooks,
                    struct gb_smem_timing *t, struct gb_cuda_error *err);
void gb_smem_timing_free(struct gb_smem_timing *t);

/* ---- transpose ------------------------------------------------------ */

enum gb_transpose_kernel {
    GB_TRANSPOSE_COPY,
    GB_TRANSPOSE_TILE32,
    GB_TRANSPOSE_TILE33,
    GB_TRANSPOSE_TILE32_SWIZZLE,
    GB_TRANSPOSE_KERNEL_COUNT
};

struct gb_transpose_plan {
    int n; /* matrix side, multiple of 32 */
    int count;
    const enum gb_transpose_kernel *kernels; /* timed in this order */
    uint32_t seed;                           /* input values */
    struct gb_counters_state *counters;      /* as in gb_smem_plan */
};

struct gb_transpose_timing {
    int count;                          /* plan.count */
    struct gb_samples memcpy_d2d;       /* cudaMemcpy device to device */
    struct gb_samples *kernels;         /* plan.count entries */
    struct gb_verify_report *verify;    /* plan.count entries */
    int failed_kernel;                  /* index whose check failed, or -1 */
    struct gb_counter_values *counters; /* plan.count entries: one launch
                                           of each kernel */
};

/* Returns 0 when every kernel was verified and timed; 1 when the check of
 * kernel t->failed_kernel failed (its report says how; nothing after it
 * was timed); -1 on a CUDA failure.  Release t with
 * gb_transpose_timing_free in every case. */
int gb_transpose_measure(int device, const struct gb_transpose_plan *plan,
                         const struct gb_measure_opts *opts,
                         struct gb_hooks *hooks, struct gb_transpose_timing *t,
                         struct gb_cuda_error *err);
void gb_transpose_timing_free(struct gb_transpose_timing *t);

#ifdef __cplusplus
}
#endif

#endif
