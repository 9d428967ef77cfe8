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
 * so bytes per clock come without trusting a reported clock.
 * After the timed samples, each row runs once more under CUPTI for its
 * hardware counters (counters_pass.cuh), at kCounterIterations.
 */
#include <stdlib.h>
#include <string.h>

#include "counters_pass.cuh"
#include "cuda_check.cuh"
#include "measure.cuh"
#include "rounds.h"

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
    extern __shared__ unsigned smem[];

    /* Distinct values, so a broadcast cannot be mistaken for a read of
     * another word and the sum depends on every address. */
    for (int i = threadIdx.x; i < smem_words; i += blockDim.x)
        smem[i] = (unsigned)i * 2654435761u;
    __syncthreads();

    const volatile unsigned *p = smem + words.w[threadIdx.x % GB_WARP_LANES];
    unsigned acc = 0;
    long long t0 = clock64();
    for (int i = 0; i < iterations; i++) {
#pragma unroll
        for (int k = 0; k < kUnroll; k++)
            acc += p[0];
    }
    /* Thread 0 reads the clock once every warp of the block is done. */
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        spans[3 * blockIdx.x] = t0;
        spans[3 * blockIdx.x + 1] = clock64();
        spans[3 * blockIdx.x + 2] = sm;
    }
    sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

struct smem_ctx {
    const struct gb_smem_plan *plan;
    lane_words words;
    int smem_words, smem_bytes, grid;
    int sm_count;
    unsigned *sink;
    long long *spans;  /* per block: start clock, end clock, SM id */
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

/* The longest SM busy span of the last launch, in that SM's cycles: on
 * each SM, from its first block's start to its last block's end (blocks
 * sharing an SM overlap, so no single block's count covers the SM). */
static int read_cycles(const struct smem_ctx *c, long long *host, long long *first,
                       long long *last, double *out, struct gb_cuda_error *err)
{
    long long longest = 0;

    if (gb_cuda_check(cudaMemcpy(host, c->spans, sizeof(long long) * 3 * (size_t)c->grid,
                                 cudaMemcpyDeviceToHost),
                      "cudaMemcpy(spans)", err) != 0)
        return -1;
    for (int sm = 0; sm < c->sm_count; sm++) {
        first[sm] = -1;
        last[sm] = -1;
    }
    for (int b = 0; b < c->grid; b++) {
        long long start = host[3 * b], end = host[3 * b + 1], sm = host[3 * b + 2];
        if (sm < 0 || sm >= c->sm_count)
            continue;
        if (first[sm] < 0 || start < first[sm])
            first[sm] = start;
        if (end > last[sm])
            last[sm] = end;
    }
    for (int sm = 0; sm < c->sm_count; sm++)
        if (first[sm] >= 0 && last[sm] - first[sm] > longest)
            longest = last[sm] - first[sm];
    *out = (double)longest;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The row's SM clock is the median over its samples of busy cycles over
 * event time (one sample's clock could be an outlier); *cycles and *ms
 * are those of the sample with that clock (the lower middle one for an
 * even count), so that cycles / ms is the median clock.  clock is
 * scratch room for s->count values. */
static void pick_median_clock(const struct gb_samples *s, const double *cycles,
                              double *clock, double *cycles_out, double *ms_out)
{
    double median;
    int best = 0;

    *cycles_out = 0;
    *ms_out = 0;
    if (s->count < 1)
        return;
    for (int i = 0; i < s->count; i++)
        clock[i] = s->ms[i] > 0 ? cycles[i] / s->ms[i] : 0;
    qsort(clock, (size_t)s->count, sizeof(double), cmp_double);
    median = clock[(s->count - 1) / 2];
    for (int i = 0; i < s->count; i++) {
        if ((s->ms[i] > 0 ? cycles[i] / s->ms[i] : 0) == median) {
            best = i;
            break;
        }
    }
    *cycles_out = cycles[best];
    *ms_out = s->ms[best];
}

static int alloc_result(const struct gb_smem_plan *plan, struct gb_smem_timing *t,
                        struct gb_cuda_error *err)
{
    t->rows = (struct gb_samples *)calloc((size_t)plan->rows, sizeof(*t->rows));
    t->cycles = (double *)calloc((size_t)plan->rows, sizeof(double));
    t->last_ms = (double *)calloc((size_t)plan->rows, sizeof(double));
    t->counters = (struct gb_counter_values *)calloc((size_t)plan->rows, sizeof(*t->counters));
    if (t->rows == NULL || t->cycles == NULL || t->last_ms == NULL || t->counters == NULL)
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
    long long *host_spans = NULL, *first = NULL, *last = NULL;
    long iterations = kFirstIterations;
    double *spans = NULL, *scratch = NULL;
    int rc = -1, capacity;

    memset(t, 0, sizeof(*t));
    memset(&c, 0, sizeof(c));
    c.plan = plan;
    c.smem_words = plan->smem_words;
    c.smem_bytes = plan->smem_words * (int)sizeof(unsigned);
    if (alloc_result(plan, t, err) != 0 || configure(device, &c, t, err) != 0)
        goto out;
    host_spans = (long long *)calloc(3 * (size_t)c.grid, sizeof(long long));
    first = (long long *)calloc((size_t)c.sm_count, sizeof(long long));
    last = (long long *)calloc((size_t)c.sm_count, sizeof(long long));
    if (host_spans == NULL || first == NULL || last == NULL) {
        gb_cuda_check(cudaErrorMemoryAllocation, "calloc(spans)", err);
        goto out;
    }
    if (gb_cuda_check(cudaMalloc(&c.sink, sizeof(unsigned) * (size_t)c.grid * kBlock),
                      "cudaMalloc(sink)", err) != 0 ||
        gb_cuda_check(cudaMalloc(&c.spans, sizeof(long long) * 3 * (size_t)c.grid),
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
    spans = (double *)calloc((size_t)plan->rows * (size_t)capacity, sizeof(double));
    if (spans == NULL) {
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
                    read_cycles(&c, host_spans, first, last,
                                &spans[(size_t)r * capacity + (s->count - 1)], err) != 0)
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
        pick_median_clock(&t->rows[r], &spans[(size_t)r * capacity], scratch, &t->cycles[r],
                          &t->last_ms[r]);
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
    free(spans);
    free(scratch);
    free(first);
    free(last);
    return rc;
}

