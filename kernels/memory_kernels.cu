/*
 * memory_kernels.cu - gmem_stride's strided global loads and
 * hbm_bandwidth's STREAM kernels.  See gb_perf.h.
 *
 * gmem_stride: warp request r of a launch reads words base(r) + L * stride
 * (lane L), base(r) = r * 32 * stride masked to the footprint (a power of
 * two of words), so every base is 128-byte aligned and the requests sweep
 * the footprint once before any line is read again: with a footprint over
 * the L2 every sector comes from DRAM.  8 independent loads a thread per
 * loop trip keep enough bytes in flight.  Each thread stores its sum; the
 * check recomputes every thread's sum on the host from the same hash.
 *
 * hbm_bandwidth: c = a (copy), c = q a (scale), c = a + b (add),
 * c = a + q b (triad, one fma), one double2 a thread in one pass; a and b never
 * change, so every launch is the same and every element of c is checked
 * bit for bit against the host's own arithmetic (fma for triad).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "counters_pass.cuh"
#include "cuda_check.cuh"
#include "perf_common.cuh"

static const int kGmemBlock = 1024;
static const int kGmemUnroll = 8;
static const long kCounterIterations = 16;
static const int kVerifyIterations = 2;

__host__ __device__ inline long long gmem_word(long long request, long long stride,
                                               long long mask, int lane)
{
    return ((request * 32 * stride) & mask) + lane * stride;
}

__global__ void fill_words(unsigned *data, long long words, uint32_t seed)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < words;
         i += (long long)gridDim.x * blockDim.x)
        data[i] = gb_hash32((uint64_t)i, seed);
}

__global__ void __launch_bounds__(1024)
    gmem_read(const unsigned *__restrict__ data, long long stride, long long mask,
              int iterations, unsigned *sink)
{
    long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    long long warp = tid >> 5, warps = ((long long)gridDim.x * blockDim.x) >> 5;
    int lane = threadIdx.x & 31;
    unsigned acc = 0;

    for (int i = 0; i < iterations; i++) {
#pragma unroll
        for (int k = 0; k < kGmemUnroll; k++) {
            long long r = ((long long)i * kGmemUnroll + k) * warps + warp;
            acc += __ldg(data + gmem_word(r, stride, mask, lane));
        }
    }
    sink[tid] = acc;
}

struct gmem_ctx {
    const unsigned *data;
    unsigned *sink;
    const long *strides;
    long long stride, mask;
    int grid;
};

static int launch_gmem(void *p, long work, cudaStream_t stream, struct gb_cuda_error *err)
{
    struct gmem_ctx *c = (struct gmem_ctx *)p;

    gmem_read<<<c->grid, kGmemBlock, 0, stream>>>(c->data, c->stride, c->mask, (int)work,
                                                  c->sink);
    return gb_cuda_check_launch("gmem_read launch", err);
}

static void select_stride(void *p, int i)
{
    struct gmem_ctx *c = (struct gmem_ctx *)p;

    c->stride = c->strides[i];
}

/* Poison the sums, one launch of kVerifyIterations, every thread's sum
 * recomputed. */
static int verify_gmem(struct gmem_ctx *c, struct gb_timer *t, unsigned *host, uint32_t seed,
                       struct gb_perf_op *op, struct gb_cuda_error *err)
{
    long long threads = (long long)c->grid * kGmemBlock, warps = threads / 32;

    if (gb_cuda_check(cudaMemsetAsync(c->sink, GB_POISON_BYTE, threads * sizeof(unsigned),
                                      t->stream),
                      "cudaMemsetAsync(poison)", err) != 0 ||
        launch_gmem(c, kVerifyIterations, t->stream, err) != 0 ||
        gb_cuda_check(cudaStreamSynchronize(t->stream), "cudaStreamSynchronize", err) != 0 ||
        gb_cuda_check(cudaMemcpy(host, c->sink, threads * sizeof(unsigned),
                                 cudaMemcpyDeviceToHost),
                      "cudaMemcpy(sums)", err) != 0)
        return -1;
    for (long long tid = 0; tid < threads; tid++) {
        unsigned want = 0;
        for (int r = 0; r < kVerifyIterations * kGmemUnroll; r++)
            want += gb_hash32((uint64_t)gmem_word(r * warps + tid / 32, c->stride, c->mask,
                                                  (int)(tid % 32)),
                              seed);
        op->mismatches += host[tid] != want;
    }
    op->checked = threads;
    return 0;
}

int gb_gmem_stride_measure(int device, const long *strides, int count,
                           long long footprint_bytes, int l2_fetch_bytes, int *l2_fetch_used,
                           struct gb_counters_state *counters,
                           const struct gb_measure_opts *opts, struct gb_hooks *hooks,
                           struct gb_perf_op *ops, struct gb_cuda_error *err)
{
    struct gmem_ctx c;
    struct gb_timer timer = {NULL, NULL, NULL};
    struct gb_counter_values *cv = NULL;
    unsigned *data = NULL, *sink = NULL, *host = NULL;
    long long words = footprint_bytes / 4, max_stride = 1, threads;
    uint32_t seed = 0x5eed1234u;
    size_t fetch_before = 0, fetch_now = 0;
    int sms, per_sm, rc = -1, fetch_set = 0;

    memset(&c, 0, sizeof(c));
    *l2_fetch_used = 0;
    for (int i = 0; i < count; i++)
        max_stride = strides[i] > max_stride ? strides[i] : max_stride;
    if (gb_perf_device_shape(device, &sms, &per_sm, err) != 0)
        return -1;
    c.grid = sms * (per_sm / kGmemBlock > 0 ? per_sm / kGmemBlock : 1);
    c.mask = words - 1;
    c.strides = strides;
    threads = (long long)c.grid * kGmemBlock;
    host = (unsigned *)malloc(threads * sizeof(unsigned));
    cv = (struct gb_counter_values *)calloc((size_t)count, sizeof(*cv));
    if (host == NULL || cv == NULL) {
        gb_cuda_check(cudaErrorMemoryAllocation, "host allocation", err);
        goto out;
    }
    /* The footprint plus one request's reach past its last base. */
    if (gb_cuda_check(cudaMalloc(&data, (words + 32 * max_stride) * sizeof(unsigned)),
                      "cudaMalloc(data)", err) != 0 ||
        gb_cuda_check(cudaMalloc(&sink, threads * sizeof(unsigned)), "cudaMalloc(sums)",
                      err) != 0 ||
        gb_timer_create(&timer, err) != 0)
        goto out;
    fill_words<<<sms * 4, 1024, 0, timer.stream>>>(data, words + 32 * max_stride, seed);
    if (gb_cuda_check_launch("fill_words launch", err) != 0)
        goto out;
    /* With the default 64-byte fetch (H200) a lane's lone 32-byte sector
     * costs two from DRAM once sectors stop pairing up (stride 16 took 1.9x
     * stride 8's time; with 32, 1.18x): 32 makes DRAM move what the
     * prediction counts.  A context limit, put back at the end. */
    if (gb_cuda_check(cudaDeviceGetLimit(&fetch_before, cudaLimitMaxL2FetchGranularity),
                      "cudaDeviceGetLimit(L2 fetch granularity)", err) != 0)
        goto out;
    if (l2_fetch_bytes > 0) {
        if (gb_cuda_check(cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity,
                                             (size_t)l2_fetch_bytes),
                          "cudaDeviceSetLimit(L2 fetch granularity)", err) != 0)
            goto out;
        fetch_set = 1;
    }
    if (gb_cuda_check(cudaDeviceGetLimit(&fetch_now, cudaLimitMaxL2FetchGranularity),
                      "cudaDeviceGetLimit(L2 fetch granularity)", err) != 0)
        goto out;
    *l2_fetch_used = (int)fetch_now;
    c.data = data;
    c.sink = sink;
    for (int i = 0; i < count; i++) {
        c.stride = strides[i];
        if (verify_gmem(&c, &timer, host, seed, &ops[i], err) != 0)
            goto out;
        if (ops[i].mismatches != 0) {
            rc = 1;
            goto out;
        }
        ops[i].amount = (double)threads * kGmemUnroll * 4;
        if (gb_perf_time(&timer, launch_gmem, &c, 1L << 22, 0, opts, hooks, &ops[i], err) != 0)
            goto out;
    }
    if (counters != NULL &&
        gb_counter_pass(device, counters, count, select_stride, launch_gmem, &c,
                        kCounterIterations, timer.stream, cv, err) != 0)
        goto out;
    for (int i = 0; i < count; i++) {
        ops[i].counters = cv[i];
        ops[i].counter_requests = threads / 32 * kGmemUnroll * kCounterIterations;
    }
    rc = 0;

out:
    if (fetch_set) {
        cudaError_t e = cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, fetch_before);
        if (rc == 0 && gb_cuda_check(e, "cudaDeviceSetLimit(restore L2 fetch granularity)",
                                     err) != 0)
            rc = -1;
    }
    gb_timer_destroy(&timer);
    if (data)
        (void)cudaFree(data);
    if (sink)
        (void)cudaFree(sink);
    free(host);
    free(cv);
    return rc;
}

/* ---- hbm_bandwidth -------------------------------------------------- */

enum { STREAM_COPY,
       STREAM_SCALE,
       STREAM_ADD,
       STREAM_TRIAD,
       STREAM_MEMCPY };
static const char *const kStreamNames[GB_HBM_OPS] = {"copy", "scale", "add", "triad",
                                                     "memcpy"};
static const double kScalar = 3.0;

__global__ void fill_doubles(double *x, long long n, uint32_t seed)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        x[i] = gb_hash_unit((uint64_t)i, seed);
}

template <int kOp>
__device__ inline double2 stream_one(double2 x, double2 y, double q)
{
    double2 r;

    if (kOp == STREAM_COPY)
        return x;
    if (kOp == STREAM_SCALE) {
        r.x = q * x.x;
        r.y = q * x.y;
    } else {
        r.x = kOp == STREAM_ADD ? x.x + y.x : fma(q, y.x, x.x);
        r.y = kOp == STREAM_ADD ? x.y + y.y : fma(q, y.y, x.y);
    }
    return r;
}

/* One double2 a thread and no loop: the grid covers the arrays once.  On
 * an H200 (1 GiB arrays) this copy ran 4276 GB/s, 100.5% of cudaMemcpy's
 * 4255, where the grid-stride form (two 1024-thread blocks an SM, four
 * double2 in flight a thread) ran 3941 (92.6%) and did no better with 1,
 * 4 or 8 in flight, __ldcs/__stcs or up to 32 blocks an SM: what the
 * one-pass grid gains is not bytes in flight but the write stream's order
 * (examples/h200_i18_stream_experiments.txt and .cu). */
static const int kStreamBlock = 256;

template <int kOp>
__global__ void __launch_bounds__(256)
    stream_op(const double2 *__restrict__ a, const double2 *__restrict__ b,
              double2 *__restrict__ c, double q, long long n2)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    bool two = kOp == STREAM_ADD || kOp == STREAM_TRIAD;

    if (i < n2) {
        double2 x = a[i];
        c[i] = stream_one<kOp>(x, two ? b[i] : x, q);
    }
}

typedef void (*stream_kernel)(const double2 *, const double2 *, double2 *, double, long long);
static const stream_kernel kStream[4] = {stream_op<STREAM_COPY>, stream_op<STREAM_SCALE>,
                                         stream_op<STREAM_ADD>, stream_op<STREAM_TRIAD>};

struct hbm_ctx {
    double *a, *b, *c;
    long long n;
    int op, grid;
};

static int launch_stream(void *p, long work, cudaStream_t stream, struct gb_cuda_error *err)
{
    struct hbm_ctx *c = (struct hbm_ctx *)p;

    for (long i = 0; i < work; i++) {
        if (c->op == STREAM_MEMCPY) {
            if (gb_cuda_check(cudaMemcpyAsync(c->c, c->a, c->n * sizeof(double),
                                              cudaMemcpyDeviceToDevice, stream),
                              "cudaMemcpyAsync(device to device)", err) != 0)
                return -1;
            continue;
        }
        kStream[c->op]<<<c->grid, kStreamBlock, 0, stream>>>((const double2 *)c->a,
                                                             (const double2 *)c->b, (double2 *)c->c,
                                                             kScalar, c->n / 2);
        if (gb_cuda_check_launch("stream kernel launch", err) != 0)
            return -1;
    }
    return 0;
}

static double stream_expected(int op, long long i)
{
    double a = gb_hash_unit((uint64_t)i, 1), b = gb_hash_unit((uint64_t)i, 2);

    switch (op) {
    case STREAM_SCALE:
        return kScalar * a;
    case STREAM_ADD:
        return a + b;
    case STREAM_TRIAD:
        return fma(kScalar, b, a);
    default:
        return a;
    }
}

static int verify_stream(struct hbm_ctx *c, struct gb_timer *t, double *host,
                         struct gb_perf_op *op, struct gb_cuda_error *err)
{
    if (gb_cuda_check(cudaMemsetAsync(c->c, GB_POISON_BYTE, c->n * sizeof(double), t->stream),
                      "cudaMemsetAsync(poison)", err) != 0 ||
        launch_stream(c, 1, t->stream, err) != 0 ||
        gb_cuda_check(cudaStreamSynchronize(t->stream), "cudaStreamSynchronize", err) != 0 ||
        gb_cuda_check(cudaMemcpy(host, c->c, c->n * sizeof(double), cudaMemcpyDeviceToHost),
                      "cudaMemcpy(c to host)", err) != 0)
        return -1;
    for (long long i = 0; i < c->n; i++) {
        double want = stream_expected(c->op, i);
        op->mismatches += memcmp(&host[i], &want, sizeof(double)) != 0;
    }
    op->checked = c->n;
    return 0;
}

int gb_hbm_measure(int device, long long elements, const struct gb_measure_opts *opts,
                   struct gb_hooks *hooks, struct gb_perf_op *ops, struct gb_cuda_error *err)
{
    struct hbm_ctx c;
    struct gb_timer timer = {NULL, NULL, NULL};
    double *host = NULL;
    int sms, per_sm, rc = -1;

    memset(&c, 0, sizeof(c));
    c.n = elements & ~1LL;
    if (gb_perf_device_shape(device, &sms, &per_sm, err) != 0)
        return -1;
    c.grid = (int)((c.n / 2 + kStreamBlock - 1) / kStreamBlock);
    host = (double *)malloc(c.n * sizeof(double));
    if (host == NULL) {
        gb_cuda_check(cudaErrorMemoryAllocation, "host allocation", err);
        goto out;
    }
    if (gb_cuda_check(cudaMalloc(&c.a, c.n * sizeof(double)), "cudaMalloc(a)", err) != 0 ||
        gb_cuda_check(cudaMalloc(&c.b, c.n * sizeof(double)), "cudaMalloc(b)", err) != 0 ||
        gb_cuda_check(cudaMalloc(&c.c, c.n * sizeof(double)), "cudaMalloc(c)", err) != 0 ||
        gb_timer_create(&timer, err) != 0)
        goto out;
    fill_doubles<<<sms * 4, 1024, 0, timer.stream>>>(c.a, c.n, 1);
    fill_doubles<<<sms * 4, 1024, 0, timer.stream>>>(c.b, c.n, 2);
    if (gb_cuda_check_launch("fill_doubles launch", err) != 0)
        goto out;
    /* memcpy first: the ceiling the kernels are shares of. */
    for (int k = 0; k < GB_HBM_OPS; k++) {
        int i = (k + GB_HBM_OPS - 1) % GB_HBM_OPS;
        c.op = i;
        snprintf(ops[i].label, sizeof(ops[i].label), "%s", kStreamNames[i]);
        if (verify_stream(&c, &timer, host, &ops[i], err) != 0)
            goto out;
        if (ops[i].mismatches != 0) {
            rc = 1;
            goto out;
        }
        ops[i].amount = (double)c.n * sizeof(double) *
                        (i == STREAM_ADD || i == STREAM_TRIAD ? 3 : 2);
        /* A graph of large cudaMemcpy ran at 2.7 TB/s where plain ones ran
         * 4.2 (1 GiB arrays, H200): memcpy is timed without a graph. */
        if (gb_perf_time(&timer, launch_stream, &c, 1L << 16, i != STREAM_MEMCPY, opts, hooks,
                         &ops[i], err) != 0)
            goto out;
    }
    rc = 0;

out:
    gb_timer_destroy(&timer);
    if (c.a)
        (void)cudaFree(c.a);
    if (c.b)
        (void)cudaFree(c.b);
    if (c.c)
        (void)cudaFree(c.c);
    free(host);
    return rc;
}
