/*
 * cublas_api.cu - libcublas loaded once with dlopen; see cublas_api.cuh.
 */
#include "cublas_api.cuh"
#include "cuda_check.cuh"
#include "dl_once.cuh"

#ifdef GB_HAVE_CUBLAS
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* First GPUBENCH_CUBLAS_LIBRARY, then the versioned names, then the
 * toolkit's own folder. */
static int cublas_load(struct gb_cublas_api *api, char *reason, size_t cap)
{
    const char *env = getenv("GPUBENCH_CUBLAS_LIBRARY");
    const char *names[] = {env, "libcublas.so.13", "libcublas.so.12", "libcublas.so",
                           "/usr/local/cuda/lib64/libcublas.so.13",
                           "/usr/local/cuda/lib64/libcublas.so.12"};

    memset(api, 0, sizeof(*api));
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && api->lib == NULL; i++)
        if (names[i] != NULL)
            api->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (api->lib == NULL) {
        const char *why = dlerror();
        snprintf(reason, cap, "cuBLAS not loaded (libcublas.so.13/.12, /usr/local/cuda/lib64; "
                              "set GPUBENCH_CUBLAS_LIBRARY): %s",
                 why ? why : "not found");
        return -1;
    }
    gb_dl_sym(api->lib, "cublasCreate_v2", &api->create);
    gb_dl_sym(api->lib, "cublasDestroy_v2", &api->destroy);
    gb_dl_sym(api->lib, "cublasSetStream_v2", &api->set_stream);
    gb_dl_sym(api->lib, "cublasGemmEx", &api->gemm_ex);
    if (!api->create || !api->destroy || !api->set_stream || !api->gemm_ex) {
        snprintf(reason, cap, "cuBLAS loaded but lacks cublasCreate_v2/cublasGemmEx");
        dlclose(api->lib);
        api->lib = NULL;
        return -1;
    }
    return 0;
}

const struct gb_cublas_api *gb_cublas(char *reason, size_t cap)
{
    static struct gb_cublas_api api;
    static struct gb_dl_once once;

    return gb_dl_once(&once, &api, cublas_load, reason, cap);
}

int gb_cublas_gemm_bf16(const struct gb_cublas_api *api, cublasHandle_t handle, int m, int n,
                        int k, const void *a, const void *b, float *c, struct gb_cuda_error *err)
{
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t st = api->gemm_ex(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a,
                                     CUDA_R_16BF, m, b, CUDA_R_16BF, k, &zero, c, CUDA_R_32F, m,
                                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);

    if (st != CUBLAS_STATUS_SUCCESS) {
        gb_cuda_check(cudaErrorUnknown, "cublasGemmEx", err);
        snprintf(err->text, sizeof(err->text), "cublasGemmEx returned status %d", (int)st);
        return -1;
    }
    return 0;
}
#endif
