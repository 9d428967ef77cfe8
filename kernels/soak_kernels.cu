/*
 * soak_kernels.cu - soak's loads on the GPU; see gb_deep.h.
 *
 * gemm: cublasGemmEx BF16 in, FP32 out, compute 32F, 8192^3 with random
 * inputs, four a unit; hbm: the STREAM triad c = a + q b over three 1 GiB
 * arrays of doubles (one double2 a thread, one pass), eight a unit.  Each
 * load runs on its own stream with three units in flight, an event after
 * each unit; with `both` the two streams run at once.  The host polls the
 * events: a unit's work is spread evenly over the GPU time from the end of
 * the one before it on the same stream to its own end (both read with
 * cudaEventElapsedTime from one start event), so each second gets the work
 * the GPU finished in it, whatever the host was doing.  Once a second of
 * host time has passed the caller's tick runs (NVML is read there) while
 * the queued units keep the GPU busy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_bf16.h>

#include "cublas_api.cuh"
#include "cuda_check.cuh"
#include "gb_deep.h"
#include "rounds.h"

#define SOAK_DEPTH 3
static const int kSoakGemmN = 8192;
static const int kSoakGemmPerUnit = 4;
static const long long kSoakHbmElems = 1LL << 27; /* doubles an array: 1 GiB */
static const int kSoakHbmPerUnit = 8;
static const double kSoakTriadQ = 0.5;

__global__ void soak_fill_bf16(__nv_bfloat16 *x, long long count, uint32_t seed)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
         i += (long long)gridDim.x * blockDim.x)
        x[i] = __float2bfloat16((float)gb_ka_start((uint64_t)i, seed));
}

__global__ void soak_fill_f64(double *x, long long count, uint32_t seed)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
         i += (long long)gridDim.x * blockDim.x)
        x[i] = gb_ka_start((uint64_t)i, seed);
}

__global__ void __launch_bounds__(256)
    soak_triad(const double2 *__restrict__ a, const double2 *__restrict__ b,
               double2 *__restrict__ c, double q, long long n2)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;

    if (i < n2) {
        double2 x = a[i], y = b[i];
        c[i] = make_double2(fma(q, y.x, x.x), fma(q, y.y, x.y));
    }
}

struct soak_load {
    int on;
    cudaStream_t stream;
    cudaEvent_t ev[SOAK_DEPTH];
    int head, inflight;   /* ring of units in flight, oldest at head */
    double last_end_ms;   /* GPU time the previous unit ended */
    double work_per_unit; /* FLOP or bytes */
    double *bucket;       /* work a second */
    long long units;
};

struct soak_ctx {
    struct soak_load l[GB_SOAK_LOADS];
    cudaEvent_t start;
    int seconds;
#ifdef GB_HAVE_CUBLAS
    const struct gb_cublas_api *api;
    cublasHandle_t handle;
#endif
    __nv_bfloat16 *ga, *gb;
    float *gc;
    double *ha, *hb, *hc;
};

static int soak_unit(struct soak_ctx *c, int load, struct gb_cuda_error *err)
{
    struct soak_load *l = &c->l[load];

    if (load == GB_SOAK_GEMM) {
#ifdef GB_HAVE_CUBLAS
        for (int i = 0; i < kSoakGemmPerUnit; i++)
            if (gb_cublas_gemm_bf16(c->api, c->handle, kSoakGemmN, kSoakGemmN, kSoakGemmN, c->ga,
                                    c->gb, c->gc, err) != 0)
                return -1;
#endif
    } else {
        long long n2 = kSoakHbmElems / 2;
        for (int i = 0; i < kSoakHbmPerUnit; i++)
            soak_triad<<<(unsigned)((n2 + 255) / 256), 256, 0, l->stream>>>(
                (const double2 *)c->ha, (const double2 *)c->hb, (double2 *)c->hc, kSoakTriadQ,
                n2);
    }
    if (gb_cuda_check_launch("soak unit launch", err) != 0 ||
        gb_cuda_check(cudaEventRecord(l->ev[(l->head + l->inflight) % SOAK_DEPTH], l->stream),
                      "cudaEventRecord", err) != 0)
        return -1;
    l->inflight++;
    return 0;
}

/* Spreads work over [from_ms, to_ms] of GPU time into one-second buckets. */
static void soak_credit(struct soak_load *l, int seconds, double from_ms, double to_ms)
{
    double span = to_ms - from_ms;

    if (span <= 0) {
        int s = (int)(to_ms / 1000.0);
        if (s >= 0 && s < seconds)
            l->bucket[s] += l->work_per_unit;
        return;
    }
    for (int s = (int)(from_ms / 1000.0); s < seconds && s * 1000.0 < to_ms; s++) {
        double a = from_ms > s * 1000.0 ? from_ms : s * 1000.0;
        double b = to_ms < (s + 1) * 1000.0 ? to_ms : (s + 1) * 1000.0;
        if (b > a && s >= 0)
            l->bucket[s] += l->work_per_unit * (b - a) / span;
    }
}

/* Takes the finished units off the ring (oldest first). */
static int soak_poll(struct soak_ctx *c, int load, struct gb_cuda_error *err)
{
    struct soak_load *l = &c->l[load];

    while (l->inflight > 0) {
        cudaError_t e = cudaEventQuery(l->ev[l->head]);
        float ms = 0;
        if (e == cudaErrorNotReady) {
            (void)cudaGetLastError(); /* not an error: the unit is still running */
            return 0;
        }
        if (gb_cuda_check(e, "cudaEventQuery", err) != 0 ||
            gb_cuda_check(cudaEventElapsedTime(&ms, c->start, l->ev[l->head]),
                          "cudaEventElapsedTime", err) != 0)
            return -1;
        soak_credit(l, c->seconds, l->last_end_ms, ms);
        l->last_end_ms = ms;
        l->units++;
        l->head = (l->head + 1) % SOAK_DEPTH;
        l->inflight--;
    }
    return 0;
}

static int soak_setup_gemm(struct soak_ctx *c, struct gb_soak_result *out,
                           struct gb_cuda_error *err)
{
#ifdef GB_HAVE_CUBLAS
    size_t n2 = (size_t)kSoakGemmN * kSoakGemmN;

    c->api = gb_cublas(out->reason[GB_SOAK_GEMM], sizeof(out->reason[GB_SOAK_GEMM]));
    if (c->api == NULL)
        return 1;
    if (c->api->create(&c->handle) != CUBLAS_STATUS_SUCCESS || c->handle == NULL) {
        c->handle = NULL;
        snprintf(out->reason[GB_SOAK_GEMM], sizeof(out->reason[0]), "cublasCreate failed");
        return 1;
    }
    if (c->api->set_stream(c->handle, c->l[GB_SOAK_GEMM].stream) != CUBLAS_STATUS_SUCCESS) {
        snprintf(out->reason[GB_SOAK_GEMM], sizeof(out->reason[0]), "cublasSetStream failed");
        return 1;
    }
    if (gb_cuda_check(cudaMalloc(&c->ga, n2 * 2), "cudaMalloc(A)", err) != 0 ||
        gb_cuda_check(cudaMalloc(&c->gb, n2 * 2), "cudaMalloc(B)", err) != 0 ||
        gb_cuda_check(cudaMalloc(&c->gc, n2 * 4), "cudaMalloc(C)", err) != 0)
        return -1;
    soak_fill_bf16<<<1024, 256>>>(c->ga, (long long)n2, 21);
    soak_fill_bf16<<<1024, 256>>>(c->gb, (long long)n2, 22);
    c->l[GB_SOAK_GEMM].work_per_unit = kSoakGemmPerUnit * 2.0 * kSoakGemmN *
                                       (double)kSoakGemmN * kSoakGemmN;
    out->gemm_n = kSoakGemmN;
    return gb_cuda_check_launch("soak_fill_bf16 launch", err);
#else
    (void)c, (void)err;
    snprintf(out->reason[GB_SOAK_GEMM], sizeof(out->reason[0]), "%s", GB_CUBLAS_NOT_BUILT);
    return 1;
#endif
}

static int soak_setup_hbm(struct soak_ctx *c, struct gb_soak_result *out,
                          struct gb_cuda_error *err)
{
    size_t bytes = (size_t)kSoakHbmElems * sizeof(double);

    if (gb_cuda_check(cudaMalloc(&c->ha, bytes), "cudaMalloc(a)", err) != 0 ||
        gb_cuda_check(cudaMalloc(&c->hb, bytes), "cudaMalloc(b)", err) != 0 ||
        gb_cuda_check(cudaMalloc(&c->hc, bytes), "cudaMalloc(c)", err) != 0)
        return -1;
    soak_fill_f64<<<1024, 256>>>(c->ha, kSoakHbmElems, 31);
    soak_fill_f64<<<1024, 256>>>(c->hb, kSoakHbmElems, 32);
    c->l[GB_SOAK_HBM].work_per_unit = kSoakHbmPerUnit * 3.0 * (double)bytes;
    out->hbm_bytes = 3.0 * (double)bytes;
    return gb_cuda_check_launch("soak_fill_f64 launch", err);
}

static void soak_free(struct soak_ctx *c)
{
#ifdef GB_HAVE_CUBLAS
    if (c->handle)
        (void)c->api->destroy(c->handle);
#endif
    void *bufs[] = {c->ga, c->gb, c->gc, c->ha, c->hb, c->hc};
    for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
        if (bufs[i])
            (void)cudaFree(bufs[i]);
    for (int k = 0; k < GB_SOAK_LOADS; k++) {
        for (int d = 0; d < SOAK_DEPTH; d++)
            if (c->l[k].ev[d])
                (void)cudaEventDestroy(c->l[k].ev[d]);
        if (c->l[k].stream)
            (void)cudaStreamDestroy(c->l[k].stream);
        free(c->l[k].bucket);
    }
    if (c->start)
        (void)cudaEventDestroy(c->start);
}

static void soak_nap(void)
{
    struct timespec ts = {0, 200000}; /* 0.2 ms */

    nanosleep(&ts, NULL);
}

/* The loop: keep every load's ring full until the end, tick each second,
 * then drain. */
static int soak_hold(struct soak_ctx *c, double seconds, gb_soak_tick_fn tick, void *arg,
                     struct gb_cuda_error *err)
{
    double t0, now;
    int next_tick = 1, busy = 1;

    if (gb_cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", err) != 0 ||
        gb_cuda_check(cudaEventRecord(c->start, c->l[GB_SOAK_HBM].stream), "cudaEventRecord",
                      err) != 0 ||
        gb_cuda_check(cudaStreamWaitEvent(c->l[GB_SOAK_GEMM].stream, c->start, 0),
                      "cudaStreamWaitEvent", err) != 0)
        return -1;
    t0 = now = gb_monotonic_s();
    while (busy) {
        busy = 0;
        for (int k = 0; k < GB_SOAK_LOADS; k++) {
            struct soak_load *l = &c->l[k];
            if (!l->on)
                continue;
            if (soak_poll(c, k, err) != 0)
                return -1;
            while (now - t0 < seconds && l->inflight < SOAK_DEPTH)
                if (soak_unit(c, k, err) != 0)
                    return -1;
            busy |= l->inflight > 0;
        }
        now = gb_monotonic_s();
        while (next_tick <= c->seconds && now - t0 >= next_tick) {
            if (tick)
                tick(arg, next_tick - 1);
            next_tick++;
        }
        busy |= now - t0 < seconds;
        if (busy)
            soak_nap();
    }
    return 0;
}

int gb_soak_run(int device, double seconds, int cap, gb_soak_tick_fn tick, void *arg,
                struct gb_soak_result *out, struct gb_cuda_error *err)
{
    struct soak_ctx c;
    int rc = -1, setup;

    memset(&c, 0, sizeof(c));
    c.seconds = (int)seconds < cap ? (int)seconds : cap;
    if (gb_cuda_check(cudaSetDevice(device), "cudaSetDevice", err) != 0 ||
        gb_cuda_check(cudaEventCreate(&c.start), "cudaEventCreate", err) != 0)
        goto out;
    for (int k = 0; k < GB_SOAK_LOADS; k++) {
        struct soak_load *l = &c.l[k];
        if (gb_cuda_check(cudaStreamCreateWithFlags(&l->stream, cudaStreamNonBlocking),
                          "cudaStreamCreate", err) != 0)
            goto out;
        for (int d = 0; d < SOAK_DEPTH; d++)
            if (gb_cuda_check(cudaEventCreate(&l->ev[d]), "cudaEventCreate", err) != 0)
                goto out;
        l->bucket = (double *)calloc((size_t)(c.seconds > 0 ? c.seconds : 1), sizeof(double));
        if (l->bucket == NULL) {
            gb_cuda_check(cudaErrorMemoryAllocation, "calloc(soak seconds)", err);
            goto out;
        }
    }
    for (int k = 0; k < GB_SOAK_LOADS; k++) {
        if (!out->load[k])
            continue;
        setup = k == GB_SOAK_GEMM ? soak_setup_gemm(&c, out, err) : soak_setup_hbm(&c, out, err);
        if (setup < 0)
            goto out;
        out->available[k] = setup == 0;
        c.l[k].on = setup == 0;
    }
    if (soak_hold(&c, seconds, tick, arg, err) != 0)
        goto out;
    out->seconds = c.seconds;
    for (int k = 0; k < GB_SOAK_LOADS; k++) {
        double scale = k == GB_SOAK_GEMM ? 1e12 : 1e9;
        out->launches[k] = c.l[k].units;
        for (int s = 0; s < c.seconds; s++)
            out->rate[k][s] = c.l[k].on ? c.l[k].bucket[s] / scale : -1;
    }
    rc = 0;

out:
    soak_free(&c);
    return rc;
}
