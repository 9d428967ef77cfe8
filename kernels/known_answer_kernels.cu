/*
 * known_answer_kernels.cu - known_answer on the GPU; see gb_deep.h and
 * known_answer_ref.h (the inputs and the exact answers).
 *
 * Every kind is a kernel whose answer the host knows exactly.  The host
 * computes it once, uploads it, and every launch compares each result bit
 * for bit on the GPU: a result that differs advances the log's count and
 * fills one of its first 16 records (SM, element, expected, got) through
 * an atomic.  The grid fills every SM (SMs x 4 blocks of 256 threads, all
 * resident at once) and each block writes its %smid into a table, whose
 * union over the launches is sms_covered.  cuBLAS's kernels record no
 * SM, so cublas_bf16's sms_covered is -1 (not recorded).
 *
 *   fp32_fma, fp64_fma  x <- fma(x, x, c), GB_KA_CHAIN_STEPS steps an element
 *   int_mix             64-bit multiply, 32-bit multiply-add, shift, rotate
 *   mma_bf16            mma.sync.m16n8k16 BF16 -> FP32 (sm_80+), each warp a
 *                       16 x 8 tile over k = 128, the k sweep repeated
 *                       GB_KA_MMA_REPS times
 *   cublas_bf16         cublasGemmEx BF16 in, FP32 out, compute 32F,
 *                       4096 x 2048 x 128, then a compare kernel
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_bf16.h>

#include "cublas_api.cuh"
#include "cuda_check.cuh"
#include "gb_deep.h"
#include "rounds.h"

static const int kKaBlock = 256;
static const int kKaBlocksPerSm = 4;
#define KA_MAX_SMS 1024

__device__ inline int ka_smid(void)
{
    unsigned r;
    asm volatile("mov.u32 %0, %%smid;"
                 : "=r"(r));
    return (int)r;
}

__device__ inline void ka_check(struct gb_ka_log *log, int sm, long long i, uint64_t want,
                                uint64_t got)
{
    if (got != want) {
        unsigned long long slot = atomicAdd(&log->count, 1ull);
        gb_ka_note(log->first, slot, sm, i, want, got);
    }
}

template <int kKind>
__global__ void __launch_bounds__(256)
    ka_chain(const void *expected, void *out, long long count, uint32_t seed, int steps,
             struct gb_ka_log *log, unsigned *sm_seen)
{
    int sm = ka_smid();
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    uint64_t got, want;

    if (threadIdx.x == 0 && sm < KA_MAX_SMS)
        sm_seen[sm] = 1;
    if (i >= count)
        return;
    if (kKind == GB_KA_FP32) {
        got = gb_ka_fp32_elem((uint64_t)i, seed, steps);
        ((uint32_t *)out)[i] = (uint32_t)got;
        want = ((const uint32_t *)expected)[i];
    } else {
        got = kKind == GB_KA_FP64 ? gb_ka_fp64_elem((uint64_t)i, seed, steps)
                                  : gb_ka_int_elem((uint64_t)i, seed, steps);
        ((uint64_t *)out)[i] = got;
        want = ((const uint64_t *)expected)[i];
    }
    ka_check(log, sm, i, want, got);
}

__device__ inline uint32_t ka_pack_bf16(int lo, int hi)
{
    return (uint32_t)__bfloat16_as_ushort(__float2bfloat16((float)lo)) |
           ((uint32_t)__bfloat16_as_ushort(__float2bfloat16((float)hi)) << 16);
}

/* One warp, one 16 x 8 tile: the fragments are built from the same input
 * formulas the host uses (PTX ISA, mma.m16n8k16 .bf16 fragment layout:
 * group g = lane / 4, t = lane % 4). */
__global__ void __launch_bounds__(256)
    ka_mma(const uint32_t *expected, uint32_t *out, uint32_t seed, int reps,
           struct gb_ka_log *log, unsigned *sm_seen)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    int sm = ka_smid(), lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    uint64_t w = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
    uint32_t a[GB_KA_MMA_KTILES][4], b[GB_KA_MMA_KTILES][2];
    float d[4] = {0, 0, 0, 0};

    if (threadIdx.x == 0 && sm < KA_MAX_SMS)
        sm_seen[sm] = 1;
#pragma unroll
    for (int kt = 0; kt < GB_KA_MMA_KTILES; kt++) {
        int k0 = kt * 16 + 2 * t;
        a[kt][0] = ka_pack_bf16(gb_ka_mma_a(w, g, k0, seed), gb_ka_mma_a(w, g, k0 + 1, seed));
        a[kt][1] = ka_pack_bf16(gb_ka_mma_a(w, g + 8, k0, seed),
                                gb_ka_mma_a(w, g + 8, k0 + 1, seed));
        a[kt][2] = ka_pack_bf16(gb_ka_mma_a(w, g, k0 + 8, seed),
                                gb_ka_mma_a(w, g, k0 + 9, seed));
        a[kt][3] = ka_pack_bf16(gb_ka_mma_a(w, g + 8, k0 + 8, seed),
                                gb_ka_mma_a(w, g + 8, k0 + 9, seed));
        b[kt][0] = ka_pack_bf16(gb_ka_mma_b(w, k0, g, seed), gb_ka_mma_b(w, k0 + 1, g, seed));
        b[kt][1] = ka_pack_bf16(gb_ka_mma_b(w, k0 + 8, g, seed),
                                gb_ka_mma_b(w, k0 + 9, g, seed));
    }
    for (int r = 0; r < reps; r++) {
#pragma unroll
        for (int kt = 0; kt < GB_KA_MMA_KTILES; kt++)
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                         "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                         : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                         : "r"(a[kt][0]), "r"(a[kt][1]), "r"(a[kt][2]), "r"(a[kt][3]),
                           "r"(b[kt][0]), "r"(b[kt][1]));
    }
    /* d0, d1: row g, columns 2t, 2t+1; d2, d3: row g + 8. */
    for (int q = 0; q < 4; q++) {
        long long e = (long long)w * 128 + (g + 8 * (q >> 1)) * 8 + 2 * t + (q & 1);
        uint32_t got = __float_as_uint(d[q]);
        out[e] = got;
        ka_check(log, sm, e, expected[e], got);
    }
#else
    (void)expected, (void)out, (void)seed, (void)reps, (void)log, (void)sm_seen;
#endif
}

template <typename T>
__global__ void ka_fill_gemm(T *x, long long count, uint32_t seed)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
         i += (long long)gridDim.x * blockDim.x)
        x[i] = __float2bfloat16((float)gb_ka_gemm_in((uint64_t)i, seed));
}

/* cuBLAS's output against the answer (no SM known: -1). */
__global__ void ka_compare32(const uint32_t *expected, const uint32_t *got, long long count,
                             struct gb_ka_log *log)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
         i += (long long)gridDim.x * blockDim.x)
        ka_check(log, -1, i, expected[i], got[i]);
}

/* What one kind needs on the GPU. */
struct ka_run {
    int kind, sm_count, blocks;
    long long count; /* results a launch */
    int width;       /* bytes a result */
    void *expected, *out;
    void *host_expected, *host_out;
    struct gb_ka_log *log;
    unsigned *sm_seen;
    cudaStream_t stream;
#ifdef GB_HAVE_CUBLAS
    const struct gb_cublas_api *api;
    cublasHandle_t handle;
    __nv_bfloat16 *a, *b;
#endif
};

static int ka_launch(struct ka_run *r, struct gb_cuda_error *err)
{
    cudaStream_t s = r->stream;

    switch (r->kind) {
    case GB_KA_FP32:
        ka_chain<GB_KA_FP32><<<r->blocks, kKaBlock, 0, s>>>(r->expected, r->out, r->count,
                                                            GB_KA_SEED, GB_KA_CHAIN_STEPS,
                                                            r->log, r->sm_seen);
        break;
    case GB_KA_FP64:
        ka_chain<GB_KA_FP64><<<r->blocks, kKaBlock, 0, s>>>(r->expected, r->out, r->count,
                                                            GB_KA_SEED, GB_KA_CHAIN_STEPS,
                                                            r->log, r->sm_seen);
        break;
    case GB_KA_INT:
        ka_chain<GB_KA_INT><<<r->blocks, kKaBlock, 0, s>>>(r->expected, r->out, r->count,
                                                           GB_KA_SEED, GB_KA_CHAIN_STEPS,
                                                           r->log, r->sm_seen);
        break;
    case GB_KA_MMA:
        ka_mma<<<r->blocks, kKaBlock, 0, s>>>((const uint32_t *)r->expected,
                                              (uint32_t *)r->out, GB_KA_SEED, GB_KA_MMA_REPS,
                                              r->log, r->sm_seen);
        break;
    default: {
#ifdef GB_HAVE_CUBLAS
        if (gb_cublas_gemm_bf16(r->api, r->handle, GB_KA_GEMM_M, GB_KA_GEMM_N, GB_KA_GEMM_K,
                                r->a, r->b, (float *)r->out, err) != 0)
            return -1;
        ka_compare32<<<r->sm_count * 8, 256, 0, s>>>((const uint32_t *)r->expected,
                                                     (const uint32_t *)r->out, r->count, r->log);
#endif
        break;
    }
    }
    return gb_cuda_check_launch("known_answer launch", err);
}

/* The host's answer for the kind, and the shape of its launches. */
static int ka_prepare(struct ka_run *r, struct gb_ka_result *res)
{
    size_t bytes;

    r->width = r->kind == GB_KA_FP32 || r->kind >= GB_KA_MMA ? 4 : 8;
    r->blocks = r->sm_count * kKaBlocksPerSm;
    if (r->kind == GB_KA_CUBLAS)
        r->count = (long long)GB_KA_GEMM_M * GB_KA_GEMM_N;
    else if (r->kind == GB_KA_MMA)
        r->count = (long long)r->blocks * (kKaBlock / 32) * 128;
    else
        r->count = (long long)r->blocks * kKaBlock;
    bytes = (size_t)r->count * (size_t)r->width;
    r->host_expected = malloc(bytes);
    r->host_out = malloc(bytes);
    if (r->host_expected == NULL || r->host_out == NULL) {
        snprintf(res->reason, sizeof(res->reason), "out of host memory for the answer");
        return -1;
    }
    switch (r->kind) {
    case GB_KA_FP32:
        gb_ka_fp32_ref((uint32_t *)r->host_expected, (size_t)r->count, GB_KA_SEED,
                       GB_KA_CHAIN_STEPS);
        break;
    case GB_KA_FP64:
        gb_ka_fp64_ref((uint64_t *)r->host_expected, (size_t)r->count, GB_KA_SEED,
                       GB_KA_CHAIN_STEPS);
        break;
    case GB_KA_INT:
        gb_ka_int_ref((uint64_t *)r->host_expected, (size_t)r->count, GB_KA_SEED,
                      GB_KA_CHAIN_STEPS);
        break;
    case GB_KA_MMA:
        gb_ka_mma_ref((uint32_t *)r->host_expected, (int)(r->count / 128), GB_KA_MMA_KTILES,
                      GB_KA_MMA_REPS, GB_KA_SEED);
        break;
    default:
        gb_ka_gemm_ref((uint32_t *)r->host_expected, GB_KA_GEMM_M, GB_KA_GEMM_N, GB_KA_GEMM_K,
                       GB_KA_SEED);
        break;
    }
    return 0;
}

/* cuBLAS's handle and inputs; 1 when cuBLAS cannot run (res says why). */
static int ka_cublas_setup(struct ka_run *r, struct gb_ka_result *res, struct gb_cuda_error *err)
{
#ifdef GB_HAVE_CUBLAS
    long long na = (long long)GB_KA_GEMM_M * GB_KA_GEMM_K;
    long long nb = (long long)GB_KA_GEMM_K * GB_KA_GEMM_N;

    r->api = gb_cublas(res->reason, sizeof(res->reason));
    if (r->api == NULL)
        return 1;
    if (r->api->create(&r->handle) != CUBLAS_STATUS_SUCCESS || r->handle == NULL) {
        r->handle = NULL;
        snprintf(res->reason, sizeof(res->reason), "cublasCreate failed");
        return 1;
    }
    if (r->api->set_stream(r->handle, r->stream) != CUBLAS_STATUS_SUCCESS) {
        snprintf(res->reason, sizeof(res->reason), "cublasSetStream failed");
        return 1;
    }
    if (gb_cuda_check(cudaMalloc(&r->a, (size_t)na * 2), "cudaMalloc(A)", err) != 0 ||
        gb_cuda_check(cudaMalloc(&r->b, (size_t)nb * 2), "cudaMalloc(B)", err) != 0)
        return -1;
    ka_fill_gemm<<<1024, 256, 0, r->stream>>>(r->a, na, GB_KA_SEED);
    ka_fill_gemm<<<1024, 256, 0, r->stream>>>(r->b, nb, GB_KA_SEED ^ 0xb0b0u);
    return gb_cuda_check_launch("ka_fill_gemm launch", err);
#else
    (void)r, (void)err;
    snprintf(res->reason, sizeof(res->reason), "%s", GB_CUBLAS_NOT_BUILT);
    return 1;
#endif
}

static void ka_free(struct ka_run *r)
{
#ifdef GB_HAVE_CUBLAS
    if (r->handle)
        (void)r->api->destroy(r->handle);
    if (r->a)
        (void)cudaFree(r->a);
    if (r->b)
        (void)cudaFree(r->b);
#endif
    if (r->expected)
        (void)cudaFree(r->expected);
    if (r->out)
        (void)cudaFree(r->out);
    if (r->log)
        (void)cudaFree(r->log);
    if (r->sm_seen)
        (void)cudaFree(r->sm_seen);
    if (r->stream)
        (void)cudaStreamDestroy(r->stream);
    free(r->host_expected);
    free(r->host_out);
}

/* Launches until `seconds` have passed, in batches of about 20 ms that
 * end with a synchronisation (a sticky error is seen at once). */
static int ka_loop(struct ka_run *r, double seconds, struct gb_ka_result *res,
                   struct gb_cuda_error *err)
{
    double t0 = gb_monotonic_s(), now = t0;
    long batch = 1;

    while (now - t0 < seconds) {
        double b0 = gb_monotonic_s();
        for (long i = 0; i < batch; i++)
            if (ka_launch(r, err) != 0)
                return -1;
        if (gb_cuda_check(cudaStreamSynchronize(r->stream), "cudaStreamSynchronize", err) != 0)
            return -1;
        res->launches += batch;
        now = gb_monotonic_s();
        if (now - b0 < 0.02 && batch < (1L << 16))
            batch *= 2;
    }
    res->seconds += now - t0;
    return 0;
}

int gb_known_answer_run(int device, int kind, double seconds, struct gb_ka_result *res,
                        struct gb_cuda_error *err)
{
    struct ka_run r;
    struct gb_ka_log host_log, dev_log;
    unsigned seen[KA_MAX_SMS];
    double t0 = gb_monotonic_s();
    int cc_major = 0, rc = -1, setup;

    memset(&r, 0, sizeof(r));
    memset(res, 0, sizeof(*res));
    memset(&host_log, 0, sizeof(host_log));
    r.kind = kind;
    res->sms_covered = -1;
    if (gb_cuda_check(cudaSetDevice(device), "cudaSetDevice", err) != 0 ||
        gb_cuda_check(cudaDeviceGetAttribute(&r.sm_count, cudaDevAttrMultiProcessorCount, device),
                      "cudaDeviceGetAttribute(SMs)", err) != 0 ||
        gb_cuda_check(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, device),
                      "cudaDeviceGetAttribute(cc)", err) != 0 ||
        gb_cuda_check(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking),
                      "cudaStreamCreate", err) != 0)
        goto out;
    res->sm_count = r.sm_count;
    if (kind == GB_KA_MMA && cc_major < 8) {
        snprintf(res->reason, sizeof(res->reason),
                 "mma.sync BF16 needs compute capability 8.0 or later (this card: %d.x)",
                 cc_major);
        rc = 0;
        goto out;
    }
    if (kind == GB_KA_CUBLAS) {
        setup = ka_cublas_setup(&r, res, err);
        if (setup != 0) {
            rc = setup > 0 ? 0 : -1;
            goto out;
        }
    }
    if (ka_prepare(&r, res) != 0) {
        gb_cuda_check(cudaErrorMemoryAllocation, "malloc(known answer)", err);
        goto out;
    }
    if (gb_cuda_check(cudaMalloc(&r.expected, (size_t)r.count * r.width), "cudaMalloc(answer)",
                      err) != 0 ||
        gb_cuda_check(cudaMalloc(&r.out, (size_t)r.count * r.width), "cudaMalloc(results)",
                      err) != 0 ||
        gb_cuda_check(cudaMalloc(&r.log, sizeof(*r.log)), "cudaMalloc(log)", err) != 0 ||
        gb_cuda_check(cudaMalloc(&r.sm_seen, sizeof(seen)), "cudaMalloc(SMs)", err) != 0 ||
        gb_cuda_check(cudaMemcpy(r.expected, r.host_expected, (size_t)r.count * r.width,
                                 cudaMemcpyHostToDevice),
                      "cudaMemcpy(answer)", err) != 0 ||
        gb_cuda_check(cudaMemset(r.log, 0, sizeof(*r.log)), "cudaMemset(log)", err) != 0 ||
        gb_cuda_check(cudaMemset(r.sm_seen, 0, sizeof(seen)), "cudaMemset(SMs)", err) != 0 ||
        gb_cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", err) != 0)
        goto out;
    res->setup_seconds = gb_monotonic_s() - t0;
    /* The first launch: its results are copied back, hashed and compared
     * on the host too (a check of the GPU's compare). */
    t0 = gb_monotonic_s();
    if (ka_launch(&r, err) != 0 ||
        gb_cuda_check(cudaStreamSynchronize(r.stream), "cudaStreamSynchronize", err) != 0 ||
        gb_cuda_check(cudaMemcpy(r.host_out, r.out, (size_t)r.count * r.width,
                                 cudaMemcpyDeviceToHost),
                      "cudaMemcpy(results)", err) != 0 ||
        gb_cuda_check(cudaMemcpy(&dev_log, r.log, sizeof(dev_log), cudaMemcpyDeviceToHost),
                      "cudaMemcpy(log)", err) != 0)
        goto out;
    res->launches = 1;
    res->seconds = gb_monotonic_s() - t0;
    res->hash = gb_ka_hash(r.host_out, (size_t)r.count, r.width);
    gb_ka_compare(r.host_expected, r.host_out, (size_t)r.count, r.width, NULL, &host_log);
    if (ka_loop(&r, seconds - res->seconds, res, err) != 0 ||
        gb_cuda_check(cudaMemcpy(&res->log, r.log, sizeof(res->log), cudaMemcpyDeviceToHost),
                      "cudaMemcpy(log)", err) != 0 ||
        gb_cuda_check(cudaMemcpy(seen, r.sm_seen, sizeof(seen), cudaMemcpyDeviceToHost),
                      "cudaMemcpy(SMs)", err) != 0)
        goto out;
    /* The host saw more wrong results in the first launch than the GPU's
     * compare did: the compare is wrong, so its count is not trusted. */
    if (host_log.count > dev_log.count)
        res->log = host_log;
    res->checked = (unsigned long long)res->launches * (unsigned long long)r.count;
    if (kind != GB_KA_CUBLAS) {
        res->sms_covered = 0;
        for (int s = 0; s < KA_MAX_SMS; s++)
            res->sms_covered += seen[s] != 0;
    }
    gb_ka_sort(res->log.first,
               res->log.count < GB_KA_MAX_RECORDS ? (int)res->log.count : GB_KA_MAX_RECORDS);
    res->available = 1;
    rc = 0;

out:
    ka_free(&r);
    return rc;
}
