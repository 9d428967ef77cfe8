/*
 * smem_read.cu - the one kernel behind smem_stride and smem_pattern, and
 * its measurement.  See gb_kernels.h (gb_smem_measure).
 *
 * Lane L of every warp reads 32-bit word words[L] of a dynamic shared
 * array, kUnroll times per loop iteration, `iterations` times.  The word
 * indices are a kernel argument, so every row of a run executes the same
 * instructions in the same order and only the addresses move.
 *
 * Why it measures the shared-load pipe and nothing else:
 *  - the pointer is volatile, so the compiler must issue every load (it
 *    may neither hoist the repeated read out of the loop nor merge it);
 *  - the sum of the loaded values is stored at the end, so nothing is
 *    dead code;
 *  - per load the loop issues about one more instruction (an add), far
 *    below the four issue slots an SM has per clock, while a conflict-free
 *    warp load occupies the 128-byte-a-clock shared pipe for one clock and
 *    a d-way conflicted one for d clocks;
 *  - the grid is exactly the blocks that fit at once (every SM full, one
 *    wave, no tail), and a sample lasts at least min_sample_ms.
 * clock64() around the loop, with the SM's id, gives each SM's busy span
 * in its own cycles (first block's start to last block's end on that SM),
 * so bytes per clock come without trusting a reported clock; %globaltimer
 * read next to each clock64 gives the same span in nanoseconds, so the
 * SM's clock is measured on the SM over its busy span alone (sm_clock.h:
 * the event time also holds the launch and the ramp across SMs).  These
 * are two reads a block at each end of the loop, nothing inside it.
 * After the timed samples, each row runs once more under CUPTI for its
 * hardware counters (counters_pass.cuh), at kCounterIterations.
 */
#include <stdlib.h>
#include <string.h>

#include "counters_pass.cuh"
#include "cuda_check.cuh"
#include "measure.cuh"
#include "rounds.h"
#include "sm_clock.h"

static const int kBlock = 1024;
static const int kUnroll = 32;
static const long kFirstIterations = 64;
static const long kMaxIterations = 1L << 24;
/* The counter pass's launch: counts are exact and grow with the
 * iterations, so a short launch says as much and keeps CUPTI's replay
 * passes cheap. */
static const long kCounterIterations = 64;

struct lane_words {
    int w[GB_WARP_LANES];
};

__global__ void __launch_bounds__(1024)
    smem_read(lane_words words, int smem_words, int iterations, unsigned *sink,
              long long *spans)
{
    /* spans: GB_SPAN_FIELDS a block (sm_clock.h). */
    extern __shared__ unsigned smem[];

    /* Distinct values, so a broadcast cannot be mistaken for a read of
     * another word and the sum depends on every address. */
    for (int i = threadIdx.x; i < smem_words; i += blockDim.x)
        smem[i] = (unsigned)i * 2654435761u;
    __syncthreads();

    const volatile unsigned *p = smem + words.w[threadIdx.x % GB_WARP_LANES];
    unsigned acc = 0;
    unsigned long long ns0;
    asm volatile("mov.u64 %0, %%globaltimer;"
                 : "=l"(ns0));
    long long t0 = clock64();
    for (int i = 0; i < iterations; i++) {
#pragma unroll
        for (int k = 0; k < kUnroll; k++)
            acc += p[0];
    }
    /* Thread 0 reads the clock once every warp of the block is done. */
    __syncthreads();
    if (threadIdx.x == 0) {
        long long t1 = clock64();
        unsigned long long ns1;
        unsigned sm;
        asm volatile("mov.u64 %0, %%globaltimer;"
                     : "=l"(ns1));
        asm volatile("mov.u32 %0, %%smid;"
                     : "=r"(sm));
        long long *out = spans + (size_t)GB_SPAN_FIELDS * blockIdx.x;
        out[GB_SPAN_START_CYCLES] = t0;
        out[GB_SPAN_END_CYCLES] = t1;
        out[GB_SPAN_START_NS] = (long long)ns0;
        out[GB_SPAN_END_NS] = (long long)ns1;
        out[GB_SPAN_SM] = sm;
    }
    sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

struct smem_ctx {
    const struct gb_smem_plan *plan;
    lane_words words;
    int smem_words, smem_bytes, grid;
    int sm_count;
    unsigned *sink;
    long long *spans; /* GB_SPAN_FIELDS per block (sm_clock.h) */
};

static int launch_smem_read(void *p, long work, cudaStream_t stream,
                            struct gb_cuda_error *err)
{
    struct smem_ctx *c = (struct smem_ctx *)p;

    smem_read<<<c->grid, kBlock, c->smem_bytes, stream>>>(
        c->words, c->smem_words, (int)work, c->sink, c->spans);
    return gb_cuda_check_launch("smem_read launch", err);
}

static void set_row(void *p, int row)
{
    struct smem_ctx *c = (struct smem_ctx *)p;

    memcpy(c->words.w, c->plan->words[row], sizeof(c->words.w));
}

/* The last launch's busy span (sm_clock.h): the longest one over SMs, in
 * cycles and in nanoseconds of the same interval. */
static int read_busy(const struct smem_ctx *c, long long *host, int *first, int *last,
                     double *cycles, double *ns, struct gb_cuda_error *err)
{
    struct gb_sm_busy busy;

    if (gb_cuda_check(cudaMemcpy(host, c->spans,
                                 sizeof(long long) * GB_SPAN_FIELDS * (size_t)c->grid,
                                 cudaMemcpyDeviceToHost),
                      "cudaMemcpy(spans)", err) != 0)
        return -1;
    gb_sm_busy_of_launch(host, c->grid, c->sm_count, first, last, &busy);
    *cycles = busy.cycles;
    *ns = busy.ns;
    return 0;
}

static int alloc_result(const struct gb_smem_plan *plan, struct gb_smem_timing *t,
                        struct gb_cuda_error *err)
{
    t->rows = (struct gb_samples *)calloc((size_t)plan->rows, sizeof(*t->rows));
    t->busy_cycles = (double *)calloc((size_t)plan->rows, sizeof(double));
    t->clock_mhz = (double *)calloc((size_t)plan->rows, sizeof(double));
    t->counters = (struct gb_counter_values *)calloc((size_t)plan->rows, sizeof(*t->counters));
    if (t->rows == NULL || t->busy_cycles == NULL || t->clock_mhz == NULL || t->counters == NULL)
        return gb_cuda_check(cudaErrorMemoryAllocation, "calloc(rows)", err);
    t->row_count = plan->rows;
    return 0;
}

/* Shared memory, occupancy and the grid that fills every SM once. */
static int configure(int device, struct smem_ctx *c, struct gb_smem_timing *t,
                     struct gb_cuda_error *err)
{
    int sms = 0, per_sm = 0;

    if (gb_cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                      "cudaDeviceGetAttribute(MultiProcessorCount)", err) != 0 ||
        gb_cuda_check(cudaFuncSetAttribute(smem_read,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           c->smem_bytes),
                      "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)", err) != 0 ||
        gb_cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                          &per_sm, smem_read, kBlock, (size_t)c->smem_bytes),
                      "cudaOccupancyMaxActiveBlocksPerMultiprocessor", err) != 0)
        return -1;
    if (per_sm < 1)
        return gb_cuda_check(cudaErrorInvalidConfiguration,
                             "occupancy: no block of smem_read fits an SM", err);
    c->sm_count = sms;
    c->grid = sms * per_sm;
    t->grid = c->grid;
    t->block = kBlock;
    t->blocks_per_sm = per_sm;
    t->smem_bytes = c->smem_bytes;
    t->loads_per_iteration = kUnroll;
    return 0;
}

int gb_smem_measure(int device, const struct gb_smem_plan *plan,
                    const struct gb_measure_opts *opts, struct gb_hooks *hooks,
                    struct gb_smem_timing *t, struct gb_cuda_error *err)
{
    struct smem_ctx c;
    struct gb_timer timer = {NULL, NULL, NULL};
    long long *host_spans = NULL;
    int *first = NULL, *last = NULL;
    long iterations = kFirstIterations;
    double *cycles = NULL, *ns = NULL, *scratch = NULL;
    int rc = -1, capacity;

    memset(t, 0, sizeof(*t));
    memset(&c, 0, sizeof(c));
    c.plan = plan;
    c.smem_words = plan->smem_words;
    c.smem_bytes = plan->smem_words * (int)sizeof(unsigned);
    if (alloc_result(plan, t, err) != 0 || configure(device, &c, t, err) != 0)
        goto out;
    host_spans = (long long *)calloc(GB_SPAN_FIELDS * (size_t)c.grid, sizeof(long long));
    first = (int *)calloc((size_t)c.sm_count, sizeof(int));
    last = (int *)calloc((size_t)c.sm_count, sizeof(int));
    if (host_spans == NULL || first == NULL || last == NULL) {
        gb_cuda_check(cudaErrorMemoryAllocation, "calloc(spans)", err);
        goto out;
    }
    if (gb_cuda_check(cudaMalloc(&c.sink, sizeof(unsigned) * (size_t)c.grid * kBlock),
                      "cudaMalloc(sink)", err) != 0 ||
        gb_cuda_check(cudaMalloc(&c.spans, sizeof(long long) * GB_SPAN_FIELDS * (size_t)c.grid),
                      "cudaMalloc(spans)", err) != 0 ||
        gb_timer_create(&timer, err) != 0)
        goto out;

    /* One amount of work for every row, sized on the baseline, so the
     * rows' times compare directly (a d-way row simply lasts d times as
     * long). */
    set_row(&c, plan->baseline_row);
    if (gb_calibrate(&timer, launch_smem_read, &c, &iterations, kMaxIterations,
                     opts->min_sample_ms, err) != 0)
        goto out;
    t->warp_loads = (long long)c.grid * (kBlock / GB_WARP_LANES) * iterations * kUnroll;

    /* Samples taken in turns, one row after another, so that a slow drift
     * of the card (clocks, temperature) reaches every row alike instead of
     * bending the ratios of the rows measured last.  A precision run
     * takes further rounds the same way (rounds.h). */
    capacity = gb_rounds_capacity(opts);
    cycles = (double *)calloc((size_t)plan->rows * (size_t)capacity, sizeof(double));
    ns = (double *)calloc((size_t)plan->rows * (size_t)capacity, sizeof(double));
    if (cycles == NULL || ns == NULL) {
        gb_cuda_check(cudaErrorMemoryAllocation, "calloc(spans per sample)", err);
        goto out;
    }
    for (int r = 0; r < plan->rows; r++) {
        if (gb_samples_alloc(&t->rows[r], capacity, iterations, err) != 0)
            goto out;
        t->rows[r].precision = opts->precision;
    }
    for (int round = opts->samples; round > 0;) {
        for (int i = 0; i < round; i++) {
            for (int r = 0; r < plan->rows; r++) {
                struct gb_samples *s = &t->rows[r];
                set_row(&c, r);
                if (gb_take_sample(&timer, launch_smem_read, &c, 0, hooks, s, err) != 0 ||
                    read_busy(&c, host_spans, first, last,
                              &cycles[(size_t)r * capacity + (s->count - 1)],
                              &ns[(size_t)r * capacity + (s->count - 1)], err) != 0)
                    goto out;
            }
        }
        round = gb_rounds_next(t->rows, plan->rows, opts, gb_monotonic_s());
        hooks->total += round * plan->rows;
    }
    scratch = (double *)calloc((size_t)capacity, sizeof(double));
    if (scratch == NULL) {
        gb_cuda_check(cudaErrorMemoryAllocation, "calloc(clocks)", err);
        goto out;
    }
    for (int r = 0; r < plan->rows; r++)
        gb_sm_clock_row(&cycles[(size_t)r * capacity], &ns[(size_t)r * capacity],
                        t->rows[r].count, scratch, &t->busy_cycles[r], &t->clock_mhz[r]);
    /* Counters in a pass of their own, once every sample is timed. */
    t->counter_work = iterations < kCounterIterations ? iterations : kCounterIterations;
    if (plan->counters != NULL &&
        gb_counter_pass(device, plan->counters, plan->rows, set_row, launch_smem_read, &c,
                        t->counter_work, timer.stream, t->counters, err) != 0)
        goto out;
    rc = 0;

out:
    gb_timer_destroy(&timer);
    /* Frees are not checked: on the error path the first error stands. */
    if (c.sink)
        (void)cudaFree(c.sink);
    if (c.spans)
        (void)cudaFree(c.spans);
    free(host_spans);
    free(cycles);
    free(ns);
    free(scratch);
    free(first);
    free(last);
    return rc;
}
