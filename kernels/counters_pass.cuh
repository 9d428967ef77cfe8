/*
 * counters_pass.cuh - the counter pass that follows the timed samples:
 * one launch of a benchmark's operation under CUPTI's Range Profiler, its
 * counts read back.  Internal to the CUDA backend (smem_read.cu,
 * transpose_kernels.cu call it; counters_cupti.cu implements it).
 *
 * A session is opened only after every timed sample is taken, so nothing
 * of the profiler (its initialisation, its replay passes) runs while a
 * sample is timed.  One user range around one enqueue of the operation;
 * CUPTI asks for as many passes as its metrics need and the enqueue is
 * replayed for each (the benchmarks' kernels are idempotent: same inputs,
 * same outputs).
 */
#ifndef GPUBENCH_KERNELS_COUNTERS_PASS_CUH
#define GPUBENCH_KERNELS_COUNTERS_PASS_CUH

#include "counters.h"
#include "measure.cuh"

struct gb_counter_session;

/* Opens a session on the current device (the one gb_device_open made
 * current).  Returns 0, or 1 with st saying why counters cannot be read. */
int gb_counter_session_open(int device, struct gb_counters_state *st,
                            struct gb_counter_session **out);

/* Profiles one enqueue of `work` units of launch on stream and fills out.
 * Returns 0; 1 when CUPTI refused (st says why; the session must only be
 * closed); -1 on a CUDA error (err), which ends the run as any would. */
int gb_counter_profile(struct gb_counter_session *s, gb_launch_fn launch, void *ctx,
                       long work, cudaStream_t stream, struct gb_counter_values *out,
                       struct gb_cuda_error *err);

/* Releases the session (NULL is fine). */
void gb_counter_session_close(struct gb_counter_session *s);

/* The whole pass for a benchmark with several operations: opens a session
 * unless st rules counters out, and for each of `count` operations calls
 * select(ctx, i) (which points ctx at operation i) then profiles one
 * enqueue of `work` units into out[i].  Returns 0 (out[i].read says which
 * were read; st says why not), or -1 on a CUDA error. */
int gb_counter_pass(int device, struct gb_counters_state *st, int count,
                    void (*select)(void *ctx, int i), gb_launch_fn launch, void *ctx,
                    long work, cudaStream_t stream, struct gb_counter_values *out,
                    struct gb_cuda_error *err);

#endif
