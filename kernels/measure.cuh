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
 * one enqueue lasts min_sample_ms, then keeps the GPU busy with it for at
 * least GB_WARMUP_MS so the card's clocks and power settle before any
 * sample counts. */
#define GB_WARMUP_MS 200.0
int gb_calibrate(struct gb_timer *t, gb_launch_fn launch, void *ctx,
                 long *work, long max_work, double min_sample_ms,
                 struct gb_cuda_error *err);

/* Makes out ready for capacity samples of work units each (the array is
 * owned by the caller's result). */
int gb_samples_alloc(struct gb_samples *out, int capacity, long work,
                     struct gb_cuda_error *err);

/* Takes one sample (an enqueue of out->work units) and appends it to out
 * (an error when out is full); with per_launch set the time is divided by
 * out->work (work counts launches).  Calls hooks->in_flight while it
 * runs, hooks->between once it has ended, then advances hooks->done and
 * calls hooks->progress. */
int gb_take_sample(struct gb_timer *t, gb_launch_fn launch, void *ctx,
                   int per_launch, struct gb_hooks *hooks, struct gb_samples *out,
                   struct gb_cuda_error *err);

/* gb_samples_alloc, then opts->samples gb_take_sample, then more rounds
 * while gb_rounds_next asks for them (a precision run; hooks->total
 * grows by each round). */
int gb_take_samples(struct gb_timer *t, gb_launch_fn launch, void *ctx,
                    long work, const struct gb_measure_opts *opts, int per_launch,
                    struct gb_hooks *hooks, struct gb_samples *out,
                    struct gb_cuda_error *err);

/* A CUDA graph of one enqueue of work units, captured on the timer's
 * stream, so that a sample of many short launches is one graph launch and
 * the host's launch overhead stays out of it.  Release with
 * gb_graph_destroy. */
struct gb_graph {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
};
int gb_graph_capture(struct gb_timer *t, gb_launch_fn launch, void *ctx, long work,
                     struct gb_graph *g, struct gb_cuda_error *err);
void gb_graph_destroy(struct gb_graph *g);

/* A gb_launch_fn for a captured graph (ctx is the struct gb_graph; work is
 * ignored: the graph holds its launches). */
int gb_graph_launch(void *ctx, long work, cudaStream_t stream, struct gb_cuda_error *err);

/* The whole timing of one operation: calibrates the work per sample with
 * plain enqueues (up to max_work), then, with use_graph, captures that
 * much work as one CUDA graph and times samples of the graph (host launch
 * overhead out of the samples), else times plain enqueues.  Samples are
 * per work unit. */
int gb_measure_op(struct gb_timer *t, gb_launch_fn launch, void *ctx, long max_work,
                  int use_graph, const struct gb_measure_opts *opts, struct gb_hooks *hooks,
                  struct gb_samples *out, struct gb_cuda_error *err);

#endif
