/*
 * cuda_check.cuh - turning a cudaError_t into a struct gb_cuda_error.
 * Internal to the CUDA backend (the .cu files of kernels/).
 *
 * Every CUDA call's return goes through gb_cuda_check, and every launch
 * is followed by gb_cuda_check_launch (the launch itself returns nothing).
 * A failure records the call, the error's name and text, and whether the
 * error is sticky: after an illegal address or a kernel fault the context
 * is unusable and every later call fails, so the worker must report and
 * exit rather than take the next job.
 */
#ifndef GPUBENCH_KERNELS_CUDA_CHECK_CUH
#define GPUBENCH_KERNELS_CUDA_CHECK_CUH

#include <cuda_runtime.h>

#include "gb_kernels.h"

/* Returns 0 when e is cudaSuccess; otherwise fills err (first failure
 * wins: a later call does not overwrite it) and returns -1. */
int gb_cuda_check(cudaError_t e, const char *call, struct gb_cuda_error *err);

/* cudaGetLastError after a launch, checked as above under the name what. */
int gb_cuda_check_launch(const char *what, struct gb_cuda_error *err);

#endif
