/*
 * nccl_api.cuh - libnccl loaded with dlopen (first GPUBENCH_NCCL_LIBRARY,
 * then libnccl.so.2, then libnccl.so), for nccl_allreduce
 * (nccl_kernels.cu).  Internal to the CUDA backend.
 *
 * Why dlopen, and why no header: NCCL ships apart from the toolkit and the
 * driver (the CUDA repository's libnccl2 package, or a Python wheel's
 * nvidia/nccl/lib/libnccl.so.2), Debian main has no libnccl-dev, and a
 * node without it must still build and run every other benchmark; where
 * it is missing nccl_allreduce's rows say so.  So the few types and
 * functions used are declared here, as NCCL's nccl.h (src/nccl.h.in,
 * NCCL 2.x) declares them; their values are NCCL's ABI and have not
 * changed since 2.0 (bfloat16 since 2.10).
 */
#ifndef GPUBENCH_KERNELS_NCCL_API_CUH
#define GPUBENCH_KERNELS_NCCL_API_CUH

#include <stddef.h>

#include <cuda_runtime.h>

/* nccl.h: typedef struct ncclComm* ncclComm_t; */
typedef struct ncclComm *gb_ncclComm_t;

/* nccl.h: ncclResult_t (ncclSuccess 0, ncclUnhandledCudaError 1,
 * ncclSystemError 2, ncclInternalError 3, ncclInvalidArgument 4,
 * ncclInvalidUsage 5, ncclRemoteError 6, ncclInProgress 7). */
typedef int gb_ncclResult_t;
#define GB_NCCL_SUCCESS 0

/* nccl.h: ncclDataType_t (ncclHalf = ncclFloat16 6, ncclFloat =
 * ncclFloat32 7, ncclDouble = ncclFloat64 8, ncclBfloat16 9). */
enum {
    GB_NCCL_HALF_T = 6,
    GB_NCCL_FLOAT_T = 7,
    GB_NCCL_DOUBLE_T = 8,
    GB_NCCL_BFLOAT16_T = 9,
};

/* nccl.h: ncclRedOp_t (ncclSum 0, ncclProd 1, ncclMax 2, ncclMin 3,
 * ncclAvg 4). */
#define GB_NCCL_SUM 0

/* nccl.h: NCCL_VERSION(X,Y,Z) is X*10000 + Y*100 + Z from 2.9 on,
 * X*1000 + Y*100 + Z before (checked against NCCL 2.28.9's nccl.h, the
 * one in the CUDA 13.0 toolkit of the build machine, which gpubench does
 * not include). */

struct gb_nccl_api {
    void *lib;
    int version; /* ncclGetVersion's code */
    char path[200];
    gb_ncclResult_t (*get_version)(int *version);
    gb_ncclResult_t (*comm_init_all)(gb_ncclComm_t *comms, int ndev, const int *devlist);
    gb_ncclResult_t (*comm_destroy)(gb_ncclComm_t comm);
    gb_ncclResult_t (*all_reduce)(const void *sendbuff, void *recvbuff, size_t count,
                                  int datatype, int op, gb_ncclComm_t comm, cudaStream_t stream);
    gb_ncclResult_t (*group_start)(void);
    gb_ncclResult_t (*group_end)(void);
    const char *(*error_string)(gb_ncclResult_t result);
};

/* The process's one loaded NCCL (loaded at the first call, never
 * unloaded), or NULL with the reason in reason[0..cap-1] (the same reason
 * at every later call). */
const struct gb_nccl_api *gb_nccl(char *reason, size_t cap);

/* version "2.21.5" of an ncclGetVersion code, into buf. */
void gb_nccl_version_text(int code, char *buf, size_t cap);

#endif
