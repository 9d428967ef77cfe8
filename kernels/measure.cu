/*
 * measure.cu - warm-up, calibration and timed samples; see measure.cuh.
 */
#include <stdlib.h>

#include "calibrate.h"
#include "cuda_check.cuh"
#include "measure.cuh"
#include "rounds.h"

#define WARMUP_ENQUEUES 2

int gb_timer_create(struct gb_timer *t, struct gb_cuda_error *err)
{
    t->stream = NULL;
    t->start = NULL;
    t->stop = NULL;
    if (gb_cuda_check(cudaStreamCreateWithFlags(&t->stream, cudaStreamNonBlocking),
                      "cudaStreamCreateWithFlags", err) != 0 ||
        gb_cuda_check(cudaEventCreate(&t->start), "cudaEventCreate", err) != 0 ||
        gb_cuda_check(cudaEventCreate(&t->stop), "cudaEventCreate", err) != 0)
        return -1;
    return 0;
}

void gb_timer_destroy(struct gb_timer *t)
{
    /* Returns ignored on purpose: this runs on the way out, also after a
     * sticky error, when every call fails and the first error is what the
     * user must see. */
    if (t->start)
        (void)cudaEventDestroy(t->start);
    if (t->stop)
        (void)cudaEventDestroy(t->stop);
    if (t->stream)
        (void)cudaStreamDestroy(t->stream);
    t->start = t->stop = NULL;
    t->stream = NULL;
}

/* Records start, enqueues, records stop; the caller synchronises. */
static int enqueue_timed(struct gb_timer *t, gb_launch_fn launch, void *ctx,
                         long work, struct gb_cuda_error *err)
{
    if (gb_cuda_check(cudaEventRecord(t->start, t->stream), "cudaEventRecord", err) != 0 ||
        launch(ctx, work, t->stream, err) != 0 ||
        gb_cuda_check(cudaEventRecord(t->stop, t->stream), "cudaEventRecord", err) != 0)
        return -1;
    return 0;
}

static int elapsed(struct gb_timer *t, double *ms, struct gb_cuda_error *err)
{
    float f = 0;

    if (gb_cuda_check(cudaEventSynchronize(t->stop), "cudaEventSynchronize", err) != 0 ||
        gb_cuda_check(cudaEventElapsedTime(&f, t->start, t->stop),
                      "cudaEventElapsedTime", err) != 0)
        return -1;
    *ms = f;
    return 0;
}

int gb_time_once(struct gb_timer *t, gb_launch_fn launch, void *ctx, long work,
                 double *ms, struct gb_cuda_error *err)
{
    if (enqueue_timed(t, launch, ctx, work, err) != 0)
        return -1;
    return elapsed(t, ms, err);
}

int gb_calibrate(struct gb_timer *t, gb_launch_fn launch, void *ctx,
                 long *work, long max_work, double min_sample_ms,
                 struct gb_cuda_error *err)
{
    double ms = 0, warm = 0;

    for (int i = 0; i < WARMUP_ENQUEUES; i++) {
        if (launch(ctx, *work, t->stream, err) != 0)
            return -1;
    }
    if (gb_cuda_check(cudaStreamSynchronize(t->stream), "cudaStreamSynchronize", err) != 0)
        return -1;
    do {
        if (gb_time_once(t, launch, ctx, *work, &ms, err) != 0)
            return -1;
    } while (!gb_calibrate_step(work, ms, min_sample_ms, max_work));
    while (warm < GB_WARMUP_MS) {
        if (gb_time_once(t, launch, ctx, *work, &ms, err) != 0)
            return -1;
        warm += ms > 0 ? ms : GB_WARMUP_MS;
    }
    return 0;
}

int gb_samples_alloc(struct gb_samples *out, int capacity, long work,
                     struct gb_cuda_error *err)
{
    out->ms = (double *)calloc((size_t)capacity, sizeof(double));
    out->count = 0;
    out->capacity = out->ms ? capacity : 0;
    out->work = work;
    if (out->ms == NULL)
        return gb_cuda_check(cudaErrorMemoryAllocation, "calloc(samples)", err);
    return 0;
}

int gb_take_sample(struct gb_timer *t, gb_launch_fn launch, void *ctx,
                   int per_launch, struct gb_hooks *hooks, struct gb_samples *out,
                   struct gb_cuda_error *err)
{
    double ms;

    if (out->count >= out->capacity)
        return gb_cuda_check(cudaErrorInvalidValue, "gb_take_sample: no room", err);
    if (enqueue_timed(t, launch, ctx, out->work, err) != 0)
        return -1;
    if (hooks->in_flight)
        hooks->in_flight(hooks->arg, hooks->done, hooks->total);
    if (elapsed(t, &ms, err) != 0)
        return -1;
    out->ms[out->count++] = per_launch ? ms / (double)out->work : ms;
    /* The sample is over and the next not yet enqueued: the card may be
     * looked at now without the look landing in a timed region. */
    if (hooks->between)
        hooks->between(hooks->arg, out);
    hooks->done++;
    if (hooks->progress)
        hooks->progress(hooks->arg, hooks->done, hooks->total);
    return 0;
}

int gb_take_samples(struct gb_timer *t, gb_launch_fn launch, void *ctx,
                    long work, const struct gb_measure_opts *opts, int per_launch,
                    struct gb_hooks *hooks, struct gb_samples *out,
                    struct gb_cuda_error *err)
{
    int round = opts->samples;

    if (gb_samples_alloc(out, gb_rounds_capacity(opts), work, err) != 0)
        return -1;
    out->precision = opts->precision;
    while (round > 0) {
        for (int i = 0; i < round; i++) {
            if (gb_take_sample(t, launch, ctx, per_launch, hooks, out, err) != 0)
                return -1;
        }
        round = gb_rounds_next(out, 1, opts, gb_monotonic_s());
        hooks->total += round;
    }
    return 0;
}

int gb_graph_capture(struct gb_timer *t, gb_launch_fn launch, void *ctx, long work,
                     struct gb_graph *g, struct gb_cuda_error *err)
{
    cudaGraph_t captured = NULL;
    int launched;

    g->graph = NULL;
    g->exec = NULL;
    if (gb_cuda_check(cudaStreamBeginCapture(t->stream, cudaStreamCaptureModeThreadLocal),
                      "cudaStreamBeginCapture", err) != 0)
        return -1;
    launched = launch(ctx, work, t->stream, err);
    /* End the capture in every case, or the stream stays unusable. */
    if (gb_cuda_check(cudaStreamEndCapture(t->stream, &captured), "cudaStreamEndCapture",
                      err) != 0 ||
        launched != 0)
        goto fail;
    g->graph = captured;
    if (gb_cuda_check(cudaGraphInstantiate(&g->exec, g->graph, 0), "cudaGraphInstantiate",
                      err) != 0)
        goto fail;
    return 0;

fail:
    if (captured != NULL && g->graph == NULL)
        (void)cudaGraphDestroy(captured);
    gb_graph_destroy(g);
    return -1;
}

void gb_graph_destroy(struct gb_graph *g)
{
    /* Returns ignored: this runs on the way out, where the first error
     * is the one to report. */
    if (g->exec)
        (void)cudaGraphExecDestroy(g->exec);
    if (g->graph)
        (void)cudaGraphDestroy(g->graph);
    g->exec = NULL;
    g->graph = NULL;
}

int gb_graph_launch(void *ctx, long work, cudaStream_t stream, struct gb_cuda_error *err)
{
    struct gb_graph *g = (struct gb_graph *)ctx;

    (void)work;
    return gb_cuda_check(cudaGraphLaunch(g->exec, stream), "cudaGraphLaunch", err);
}

int gb_measure_op(struct gb_timer *t, gb_launch_fn launch, void *ctx, long max_work,
                  int use_graph, const struct gb_measure_opts *opts, struct gb_hooks *hooks,
                  struct gb_samples *out, struct gb_cuda_error *err)
{
    struct gb_graph graph = {NULL, NULL};
    long work = 1;
    double ms;
    int rc = -1;

    if (gb_calibrate(t, launch, ctx, &work, max_work, opts->min_sample_ms, err) != 0)
        goto out;
    if (!use_graph) {
        rc = gb_take_samples(t, launch, ctx, work, opts, 1, hooks, out, err);
        goto out;
    }
    if (gb_graph_capture(t, launch, ctx, work, &graph, err) != 0 ||
        gb_time_once(t, gb_graph_launch, &graph, work, &ms, err) != 0 ||
        gb_take_samples(t, gb_graph_launch, &graph, work, opts, 1, hooks, out, err) != 0)
        goto out;
    rc = 0;

out:
    gb_graph_destroy(&graph);
    return rc;
}
