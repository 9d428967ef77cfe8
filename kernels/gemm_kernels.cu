/*
 * gemm_kernels.cu - compute_peak's tensor-core rows: an n x n x n GEMM
 * through cuBLAS (cublasGemmEx), BF16 and FP16 inputs with FP32
 * accumulation and output, and FP32 inputs at TF32
 * (CUBLAS_COMPUTE_32F_FAST_TF32).
 *
 * cuBLAS is loaded with dlopen at run time (cublas_api.cuh says why).
 * Where its header was missing at build time or the library at run time,
 * the row is reported unavailable with the reason and the run goes on.
 *
 * Inputs are random and non-zero (hash, in [0.25, 1)), so every output is
 * a sum of n positive products and a relative tolerance means something:
 * C is poisoned (NaN), cuBLAS runs once, and every element is compared on
 * the GPU against a reference computed in FP32 from the same (rounded)
 * inputs; a missing k-tile alone moves an element by 1/(n/64) of itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cublas_api.cuh"
#include "cuda_check.cuh"
#include "peaks.h"
#include "perf_common.cuh"

int gb_gemm_measure_one(int kind, int n, struct gb_timer *t, const struct gb_measure_opts *opts,
                        struct gb_hooks *hooks, struct gb_perf_op *op,
                        struct gb_cuda_error *err);

#ifndef GB_HAVE_CUBLAS
int gb_gemm_measure_one(int kind, int n, struct gb_timer *t, const struct gb_measure_opts *opts,
                        struct gb_hooks *hooks, struct gb_perf_op *op,
                        struct gb_cuda_error *err)
{
    (void)kind, (void)n, (void)t, (void)opts, (void)hooks, (void)err;
    op->available = 0;
    snprintf(op->reason, sizeof(op->reason), "%s", GB_CUBLAS_NOT_BUILT);
    return 0;
}
#else
template <typename T>
__global__ void fill_inputs(T *x, long long count, uint32_t seed)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
         i += (long long)gridDim.x * blockDim.x)
        x[i] = (T)(float)gb_hash_unit((uint64_t)i, seed);
}

/* Column-major reference, 16 x 16 tiles, FP32 from the same inputs. */
template <typename T>
__global__ void gemm_reference(const T *a, const T *b, float *ref, int n)
{
    __shared__ float ta[16][17], tb[16][17];
    int row = blockIdx.x * 16 + threadIdx.x, col = blockIdx.y * 16 + threadIdx.y;
    float acc = 0;

    for (int k0 = 0; k0 < n; k0 += 16) {
        ta[threadIdx.y][threadIdx.x] = (float)a[(size_t)(k0 + threadIdx.y) * n + row];
        tb[threadIdx.y][threadIdx.x] = (float)b[(size_t)col * n + k0 + threadIdx.x];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < 16; k++)
            acc = fmaf(ta[k][threadIdx.x], tb[threadIdx.y][k], acc);
        __syncthreads();
    }
    ref[(size_t)col * n + row] = acc;
}

/* counts[0]: elements off by more than tol (NaN included); counts[1]: the
 * largest relative error, as float bits (positive floats order as ints). */
__global__ void gemm_compare(const float *c, const float *ref, long long count, float tol,
                             unsigned long long *bad, unsigned *max_bits)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
         i += (long long)gridDim.x * blockDim.x) {
        float rel = fabsf(c[i] - ref[i]) / fabsf(ref[i]);
        if (!(rel <= tol)) {
            atomicAdd(bad, 1ull);
            rel = rel == rel ? rel : 3.0e38f;
        }
        atomicMax(max_bits, __float_as_uint(rel));
    }
}

struct gemm_ctx {
    const struct gb_cublas_api *api;
    cublasHandle_t handle;
    int n, kind;
    void *a, *b;
    float *c;
};

static int launch_gemm(void *p, long work, cudaStream_t stream, struct gb_cuda_error *err)
{
    struct gemm_ctx *g = (struct gemm_ctx *)p;
    cudaDataType in = g->kind == GB_GEMM_BF16   ? CUDA_R_16BF
                      : g->kind == GB_GEMM_FP16 ? CUDA_R_16F
                                                : CUDA_R_32F;
    cublasComputeType_t compute =
        g->kind == GB_GEMM_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    const float one = 1.0f, zero = 0.0f;

    (void)stream;
    for (long i = 0; i < work; i++) {
        cublasStatus_t s = g->api->gemm_ex(g->handle, CUBLAS_OP_N, CUBLAS_OP_N, g->n, g->n, g->n,
                                           &one, g->a, in, g->n, g->b, in, g->n, &zero, g->c,
                                           CUDA_R_32F, g->n, compute, CUBLAS_GEMM_DEFAULT);
        if (s != CUBLAS_STATUS_SUCCESS) {
            gb_cuda_check(cudaErrorUnknown, "cublasGemmEx", err);
            snprintf(err->text, sizeof(err->text), "cublasGemmEx returned status %d", (int)s);
            return -1;
        }
    }
    return gb_cuda_check_launch("cublasGemmEx", err);
}

template <typename T>
static int fill_pair(struct gemm_ctx *g, size_t count, cudaStream_t s, struct gb_cuda_error *err)
{
    fill_inputs<T><<<1024, 256, 0, s>>>((T *)g->a, (long long)count, 11);
    fill_inputs<T><<<1024, 256, 0, s>>>((T *)g->b, (long long)count, 12);
    return gb_cuda_check_launch("fill_inputs launch", err);
}

template <typename T>
static int reference(struct gemm_ctx *g, float *ref, cudaStream_t s, struct gb_cuda_error *err)
{
    dim3 grid(g->n / 16, g->n / 16), block(16, 16);

    gemm_reference<T><<<grid, block, 0, s>>>((const T *)g->a, (const T *)g->b, ref, g->n);
    return gb_cuda_check_launch("gemm_reference launch", err);
}

/* Poison C, one GEMM, the reference, every element compared. */
static int verify_gemm(struct gemm_ctx *g, float *ref, struct gb_timer *t, struct gb_perf_op *op,
                       struct gb_cuda_error *err)
{
    long long count = (long long)g->n * g->n;
    unsigned long long *bad = NULL, host_bad = 0;
    unsigned *max_bits = NULL, host_bits = 0;
    float tol = g->kind == GB_GEMM_TF32 ? 2e-3f : 5e-4f, max_rel;
    int rc = -1, made;

    made = g->kind == GB_GEMM_TF32   ? reference<float>(g, ref, t->stream, err)
           : g->kind == GB_GEMM_FP16 ? reference<__half>(g, ref, t->stream, err)
                                     : reference<__nv_bfloat16>(g, ref, t->stream, err);
    if (made != 0 ||
        gb_cuda_check(cudaMalloc(&bad, sizeof(*bad)), "cudaMalloc(count)", err) != 0 ||
        gb_cuda_check(cudaMalloc(&max_bits, sizeof(*max_bits)), "cudaMalloc(max)", err) != 0 ||
        gb_cuda_check(cudaMemsetAsync(bad, 0, sizeof(*bad), t->stream), "cudaMemsetAsync",
                      err) != 0 ||
        gb_cuda_check(cudaMemsetAsync(max_bits, 0, sizeof(*max_bits), t->stream),
                      "cudaMemsetAsync", err) != 0 ||
        gb_cuda_check(cudaMemsetAsync(g->c, GB_POISON_BYTE, count * sizeof(float), t->stream),
                      "cudaMemsetAsync(poison)", err) != 0 ||
        launch_gemm(g, 1, t->stream, err) != 0)
        goto out;
    gemm_compare<<<1024, 256, 0, t->stream>>>(g->c, ref, count, tol, bad, max_bits);
    if (gb_cuda_check_launch("gemm_compare launch", err) != 0 ||
        gb_cuda_check(cudaMemcpyAsync(&host_bad, bad, sizeof(host_bad), cudaMemcpyDeviceToHost,
                                      t->stream),
                      "cudaMemcpyAsync(count)", err) != 0 ||
        gb_cuda_check(cudaMemcpyAsync(&host_bits, max_bits, sizeof(host_bits),
                                      cudaMemcpyDeviceToHost, t->stream),
                      "cudaMemcpyAsync(max)", err) != 0 ||
        gb_cuda_check(cudaStreamSynchronize(t->stream), "cudaStreamSynchronize", err) != 0)
        goto out;
    memcpy(&max_rel, &host_bits, sizeof(max_rel));
    op->checked = count;
    op->mismatches = (long long)host_bad;
    op->max_error = max_rel;
    rc = 0;

out:
    if (bad)
        (void)cudaFree(bad);
    if (max_bits)
        (void)cudaFree(max_bits);
    return rc;
}

int gb_gemm_measure_one(int kind, int n, struct gb_timer *t, const struct gb_measure_opts *opts,
                        struct gb_hooks *hooks, struct gb_perf_op *op,
                        struct gb_cuda_error *err)
{
    const struct gb_cublas_api *api;
    struct gemm_ctx g;
    size_t count = (size_t)n * n, elem = kind == GB_GEMM_TF32 ? 4 : 2;
    float *ref = NULL;
    int rc = -1, filled;

    memset(&g, 0, sizeof(g));
    api = gb_cublas(op->reason, sizeof(op->reason));
    if (api == NULL) {
        op->available = 0;
        hooks->total -= opts->samples;
        return 0;
    }
    g.api = api;
    g.n = n;
    g.kind = kind;
    if (api->create(&g.handle) != CUBLAS_STATUS_SUCCESS || g.handle == NULL) {
        op->available = 0;
        snprintf(op->reason, sizeof(op->reason), "cublasCreate failed");
        hooks->total -= opts->samples;
        return 0;
    }
    if (api->set_stream(g.handle, t->stream) != CUBLAS_STATUS_SUCCESS) {
        gb_cuda_check(cudaErrorUnknown, "cublasSetStream", err);
        goto out;
    }
    if (gb_cuda_check(cudaMalloc(&g.a, count * elem), "cudaMalloc(A)", err) != 0 ||
        gb_cuda_check(cudaMalloc(&g.b, count * elem), "cudaMalloc(B)", err) != 0 ||
        gb_cuda_check(cudaMalloc(&g.c, count * sizeof(float)), "cudaMalloc(C)", err) != 0 ||
        gb_cuda_check(cudaMalloc(&ref, count * sizeof(float)), "cudaMalloc(reference)", err) != 0)
        goto out;
    filled = kind == GB_GEMM_TF32   ? fill_pair<float>(&g, count, t->stream, err)
             : kind == GB_GEMM_FP16 ? fill_pair<__half>(&g, count, t->stream, err)
                                    : fill_pair<__nv_bfloat16>(&g, count, t->stream, err);
    if (filled != 0 || verify_gemm(&g, ref, t, op, err) != 0)
        goto out;
    op->available = 1;
    rc = 0;
    if (op->mismatches != 0)
        goto out;
    op->amount = 2.0 * n * (double)n * n;
    rc = gb_perf_time(t, launch_gemm, &g, 1L << 12, 0, opts, hooks, op, err);

out:
    if (g.handle)
        (void)api->destroy(g.handle);
    if (g.a)
        (void)cudaFree(g.a);
    if (g.b)
        (void)cudaFree(g.b);
    if (g.c)
        (void)cudaFree(g.c);
    if (ref)
        (void)cudaFree(ref);
    return rc;
}
#endif
