/*
 * cublas_api.cuh - libcublas loaded with dlopen (first
 * GPUBENCH_CUBLAS_LIBRARY, then libcublas.so.13/.12, then the toolkit's
 * folder), shared by compute_peak's GEMM rows (gemm_kernels.cu) and the
 * deep checks (known_answer's cublas_bf16, soak's gemm load).  Internal to
 * the CUDA backend; only built where cublas_v2.h was found (GB_HAVE_CUBLAS).
 *
 * Why dlopen: cuBLAS ships with the toolkit, not the driver, and at over
 * 100 MB it would make the worker depend on a library a driver-only node
 * lacks; where it is missing the rows that need it say so and the run goes
 * on.
 */
#ifndef GPUBENCH_KERNELS_CUBLAS_API_CUH
#define GPUBENCH_KERNELS_CUBLAS_API_CUH

#ifdef GB_HAVE_CUBLAS
#include <stddef.h>

#include <cublas_v2.h>

struct gb_cublas_api {
    void *lib;
    cublasStatus_t (*create)(cublasHandle_t *);
    cublasStatus_t (*destroy)(cublasHandle_t);
    cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t);
    cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                              int, const void *, const void *, cudaDataType, int, const void *,
                              cudaDataType, int, const void *, void *, cudaDataType, int,
                              cublasComputeType_t, cublasGemmAlgo_t);
};

/* The process's one loaded cuBLAS (loaded at the first call, never
 * unloaded), or NULL with the reason in reason[0..cap-1] (the same reason
 * at every later call). */
const struct gb_cublas_api *gb_cublas(char *reason, size_t cap);

struct gb_cuda_error;

/* C (m x n, FP32) = A (m x k, BF16) B (k x n, BF16), column-major and
 * packed, compute 32F, on the handle's stream.  Returns 0, or -1 with
 * the cuBLAS status in err. */
int gb_cublas_gemm_bf16(const struct gb_cublas_api *api, cublasHandle_t handle, int m, int n,
                        int k, const void *a, const void *b, float *c, struct gb_cuda_error *err);
#endif

/* Why a row that needs cuBLAS cannot run in a build without its header. */
#define GB_CUBLAS_NOT_BUILT \
    "built without cublas_v2.h: rebuild with the CUDA toolkit's cuBLAS headers"

#endif
