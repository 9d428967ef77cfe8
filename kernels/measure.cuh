/*
 * measure.cuh - the timing machinery every benchmark shares.  Internal to
 * the CUDA backend.
 *
 * An operation is a function that enqueues `work` units (loop iterations
 * of one launch, or that many launches) on a stream.  A gb_timer holds the
 * stream and the two CUDA events; it warms the operation up, calibrates
 * the work so one sample lasts at least min_sample_ms, then takes the
 * samples, calling the progress and in-flight hooks.  Events bracket each
 * sample on the GPU's own clock, so host jitter between launches is not
 * counted.
 */
#ifndef GPUBENCH_KERNELS_MEASURE_CUH
#define GPUBENCH_KERNELS_MEASURE_CUH

#include <cuda_runtime.h>

#include "gb_kernels.h"

/* Enqueues work units on stream; returns the first launch error. */
typedef int (*gb_launch_fn)(void *ctx, long work, cudaStream_t stream,
                            struct gb_cuda_error *err);

struct gb_timer {
    cudaStream_t stream;
    cudaEvent_t start, stop;
};

/* Creates the stream and events (gb_timer_destroy releases them, also
 * after a partial failure). */
int gb_timer_create(struct gb_timer *t, struct gb_cuda_error *err);
void gb_timer_destroy(struct gb_timer *t);

/* Times one enqueue of work units; *ms is the whole span. */
int gb_time_once(struct gb_timer *t, gb_launch_fn launch, void *ctx, long work,
                 double *ms, struct gb_cuda_error *err);

/* Two warm-up enqueues at *work, then grows *work (up to max_work) until
 * one enqueue lasts min_sample_ms. */
int gb_calibrate(struct gb_timer *t, gb_launch_fn launch, void *ctx,
                 long *work, long max_work, double min_sample_ms,
                 struct gb_cuda_error *err);

/* Takes samples enqueues of work units into out (allocated here, owned by
 * the caller's result).  With per_launch set, each sample is divided by
 * work (work counts launches).  Advances hooks->done. */
int gb_take_samples(struct gb_timer *t, gb_launch_fn launch, void *ctx,
                    long work, int samples, int per_launch,
                    struct gb_hooks *hooks, struct gb_samples *out,
                    struct gb_cuda_error *err);

#endif
