/*
 * compute_kernels.cu - compute_peak's FMA chains on the CUDA cores.  See
 * gb_perf.h; the tensor-core GEMM rows are in gemm_kernels.cu.
 *
 * Each thread runs kChains independent chains x = x * a + b (a, b kernel
 * arguments, so nothing folds), kUnroll rounds of all chains per loop
 * trip: 256 FMAs to one loop branch, so the issue slots go to the FMA
 * pipe.  Every block records clock64 and %globaltimer around its loop
 * with its SM id (sm_clock.h), so each sample's SM clock is measured on
 * the SM and the peak is SMs x lanes x 2 x THAT clock.  The check: one
 * launch of two trips, each thread's sum of chains against the host's
 * double-precision recurrence, within the precision's tolerance.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cuda_fp16.h>

#include "cuda_check.cuh"
#include "peaks.h"
#include "perf_common.cuh"
#include "rounds.h"
#include "sm_clock.h"

static const int kFmaBlock = 256;
static const int kChains = 8;
static const int kUnroll = 32;
static const int kCheckTrips = 2;
static const double kA = 0.75, kB = 0.25;

template <typename T>
struct fma_ops;
template <>
struct fma_ops<float> {
    static __device__ float from(double v)
    {
        return (float)v;
    }
    static __device__ float step(float x, float a, float b)
    {
        return fmaf(x, a, b);
    }
    static __device__ double sum(float x)
    {
        return x;
    }
};
template <>
struct fma_ops<double> {
    static __device__ double from(double v)
    {
        return v;
    }
    static __device__ double step(double x, double a, double b)
    {
        return fma(x, a, b);
    }
    static __device__ double sum(double x)
    {
        return x;
    }
};
template <>
struct fma_ops<__half2> {
    static __device__ __half2 from(double v)
    {
        return __float2half2_rn((float)v);
    }
    static __device__ __half2 step(__half2 x, __half2 a, __half2 b)
    {
        return __hfma2(x, a, b);
    }
    static __device__ double sum(__half2 x)
    {
        return (double)__low2float(x) + __high2float(x);
    }
};

/* Chain k of thread t starts at 1 + (t + k) % 7 / 8. */
__host__ __device__ inline double chain_start(long long t, int k)
{
    return 1.0 + (double)((t + k) % 7) / 8.0;
}

template <typename T>
__global__ void __launch_bounds__(256)
    fma_chains(int trips, T a, T b, double *out, long long *spans)
{
    long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    T x[kChains];
    unsigned long long ns0;

#pragma unroll
    for (int k = 0; k < kChains; k++)
        x[k] = fma_ops<T>::from(chain_start(tid, k));
    asm volatile("mov.u64 %0, %%globaltimer;"
                 : "=l"(ns0));
    long long t0 = clock64();
    for (int i = 0; i < trips; i++) {
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
#pragma unroll
            for (int k = 0; k < kChains; k++)
                x[k] = fma_ops<T>::step(x[k], a, b);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        long long t1 = clock64();
        unsigned long long ns1;
        unsigned sm;
        asm volatile("mov.u64 %0, %%globaltimer;"
                     : "=l"(ns1));
        asm volatile("mov.u32 %0, %%smid;"
                     : "=r"(sm));
        long long *o = spans + (size_t)GB_SPAN_FIELDS * blockIdx.x;
        o[GB_SPAN_START_CYCLES] = t0;
        o[GB_SPAN_END_CYCLES] = t1;
        o[GB_SPAN_START_NS] = (long long)ns0;
        o[GB_SPAN_END_NS] = (long long)ns1;
        o[GB_SPAN_SM] = sm;
    }
    double s = 0;
#pragma unroll
    for (int k = 0; k < kChains; k++)
        s += fma_ops<T>::sum(x[k]);
    out[tid] = s;
}

struct fma_ctx {
    int kind, grid, sm_count;
    double *out;
    long long *spans;
};

static int launch_fma(void *p, long work, cudaStream_t stream, struct gb_cuda_error *err)
{
    struct fma_ctx *c = (struct fma_ctx *)p;
    int trips = (int)work;

    if (c->kind == GB_FP32_FMA)
        fma_chains<float><<<c->grid, kFmaBlock, 0, stream>>>(trips, (float)kA, (float)kB,
                                                             c->out, c->spans);
    else if (c->kind == GB_FP64_FMA)
        fma_chains<double><<<c->grid, kFmaBlock, 0, stream>>>(trips, kA, kB, c->out, c->spans);
    else
        fma_chains<__half2><<<c->grid, kFmaBlock, 0, stream>>>(
            trips, __float2half2_rn((float)kA), __float2half2_rn((float)kB), c->out, c->spans);
    return gb_cuda_check_launch("fma_chains launch", err);
}

/* Relative tolerance of a thread's sum after kCheckTrips trips: the
 * recurrence contracts (a = 0.75), so rounding stays within a few units
 * of the precision's epsilon (fp16: 2^-11, two halves a chain). */
static double fma_tolerance(int kind)
{
    return kind == GB_FP32_FMA ? 1e-5 : kind == GB_FP64_FMA ? 1e-13
                                                            : 8e-3;
}

static int verify_fma(struct fma_ctx *c, struct gb_timer *t, double *host, struct gb_perf_op *op,
                      struct gb_cuda_error *err)
{
    long long threads = (long long)c->grid * kFmaBlock;
    double tol = fma_tolerance(c->kind);

    if (gb_cuda_check(cudaMemsetAsync(c->out, GB_POISON_BYTE, threads * sizeof(double),
                                      t->stream),
                      "cudaMemsetAsync(poison)", err) != 0 ||
        launch_fma(c, kCheckTrips, t->stream, err) != 0 ||
        gb_cuda_check(cudaStreamSynchronize(t->stream), "cudaStreamSynchronize", err) != 0 ||
        gb_cuda_check(cudaMemcpy(host, c->out, threads * sizeof(double), cudaMemcpyDeviceToHost),
                      "cudaMemcpy(sums)", err) != 0)
        return -1;
    for (long long tid = 0; tid < threads; tid++) {
        double want = 0, rel;
        for (int k = 0; k < kChains; k++) {
            double x = chain_start(tid, k);
            for (int i = 0; i < kCheckTrips * kUnroll; i++)
                x = x * kA + kB;
            want += c->kind == GB_FP16X2_FMA ? 2 * x : x;
        }
        rel = fabs(host[tid] - want) / want;
        if (!(rel <= tol))
            op->mismatches++;
        if (rel > op->max_error || rel != rel)
            op->max_error = rel;
    }
    op->checked = threads;
    return 0;
}

/* Samples one at a time, each followed by its SM busy span; rounds of
 * samples as gb_take_samples takes them. */
static int sample_with_clock(struct fma_ctx *c, struct gb_timer *t, long work,
                             const struct gb_measure_opts *opts, struct gb_hooks *hooks,
                             struct gb_perf_op *op, struct gb_cuda_error *err)
{
    int cap = gb_rounds_capacity(opts), round = opts->samples, rc = -1;
    long long *host = (long long *)calloc(GB_SPAN_FIELDS * (size_t)c->grid, sizeof(long long));
    int *first = (int *)calloc((size_t)c->sm_count, sizeof(int));
    int *last = (int *)calloc((size_t)c->sm_count, sizeof(int));
    double *cycles = (double *)calloc((size_t)cap, sizeof(double));
    double *ns = (double *)calloc((size_t)cap, sizeof(double));
    double *scratch = (double *)calloc((size_t)cap, sizeof(double));
    double busy;

    if (host == NULL || first == NULL || last == NULL || cycles == NULL || ns == NULL ||
        scratch == NULL) {
        gb_cuda_check(cudaErrorMemoryAllocation, "calloc(spans)", err);
        goto out;
    }
    if (gb_samples_alloc(&op->s, cap, work, err) != 0)
        goto out;
    op->s.precision = opts->precision;
    while (round > 0) {
        for (int i = 0; i < round; i++) {
            struct gb_sm_busy b;
            int n = op->s.count;
            if (gb_take_sample(t, launch_fma, c, 1, hooks, &op->s, err) != 0 ||
                gb_cuda_check(cudaMemcpy(host, c->spans,
                                         sizeof(long long) * GB_SPAN_FIELDS * (size_t)c->grid,
                                         cudaMemcpyDeviceToHost),
                              "cudaMemcpy(spans)", err) != 0)
                goto out;
            gb_sm_busy_of_launch(host, c->grid, c->sm_count, first, last, &b);
            cycles[n] = b.cycles;
            ns[n] = b.ns;
        }
        round = gb_rounds_next(&op->s, 1, opts, gb_monotonic_s());
        hooks->total += round;
    }
    gb_sm_clock_row(cycles, ns, op->s.count, scratch, &busy, &op->clock_mhz);
    op->available = 1;
    rc = 0;

out:
    free(host);
    free(first);
    free(last);
    free(cycles);
    free(ns);
    free(scratch);
    return rc;
}

int gb_gemm_measure_one(int kind, int n, struct gb_timer *t, const struct gb_measure_opts *opts,
                        struct gb_hooks *hooks, struct gb_perf_op *op,
                        struct gb_cuda_error *err);

int gb_compute_measure(int device, const int *kinds, int count, int gemm_n,
                       const struct gb_measure_opts *opts, struct gb_hooks *hooks,
                       struct gb_perf_op *ops, struct gb_cuda_error *err)
{
    struct fma_ctx c;
    struct gb_timer timer = {NULL, NULL, NULL};
    double *host = NULL;
    int per_sm, rc = -1;

    memset(&c, 0, sizeof(c));
    if (gb_perf_device_shape(device, &c.sm_count, &per_sm, err) != 0)
        return -1;
    c.grid = c.sm_count * (per_sm / kFmaBlock > 0 ? per_sm / kFmaBlock : 1);
    host = (double *)malloc((size_t)c.grid * kFmaBlock * sizeof(double));
    if (host == NULL) {
        gb_cuda_check(cudaErrorMemoryAllocation, "host allocation", err);
        goto out;
    }
    if (gb_cuda_check(cudaMalloc(&c.out, (size_t)c.grid * kFmaBlock * sizeof(double)),
                      "cudaMalloc(sums)", err) != 0 ||
        gb_cuda_check(cudaMalloc(&c.spans, sizeof(long long) * GB_SPAN_FIELDS * (size_t)c.grid),
                      "cudaMalloc(spans)", err) != 0 ||
        gb_timer_create(&timer, err) != 0)
        goto out;
    for (int i = 0; i < count; i++) {
        long work = 1;
        snprintf(ops[i].label, sizeof(ops[i].label), "%s",
                 gb_compute_kind_name((enum gb_compute_kind)kinds[i]));
        if (kinds[i] >= GB_GEMM_BF16) {
            if (gb_gemm_measure_one(kinds[i], gemm_n, &timer, opts, hooks, &ops[i], err) != 0)
                goto out;
            if (ops[i].available && ops[i].mismatches != 0) {
                rc = 1;
                goto out;
            }
            continue;
        }
        c.kind = kinds[i];
        if (verify_fma(&c, &timer, host, &ops[i], err) != 0)
            goto out;
        if (ops[i].mismatches != 0) {
            rc = 1;
            goto out;
        }
        ops[i].amount = (double)c.grid * kFmaBlock * kUnroll * kChains *
                        (kinds[i] == GB_FP16X2_FMA ? 4 : 2);
        if (gb_calibrate(&timer, launch_fma, &c, &work, 1L << 24, opts->min_sample_ms, err) != 0 ||
            sample_with_clock(&c, &timer, work, opts, hooks, &ops[i], err) != 0)
            goto out;
    }
    rc = 0;

out:
    gb_timer_destroy(&timer);
    if (c.out)
        (void)cudaFree(c.out);
    if (c.spans)
        (void)cudaFree(c.spans);
    free(host);
    return rc;
}
