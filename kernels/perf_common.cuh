/*
 * perf_common.cuh - what the issue-16 kernels share: the input hash both
 * the GPU and the host checker compute, device attributes, and one op's
 * timing into a struct gb_perf_op.  Internal to the CUDA backend.
 */
#ifndef GPUBENCH_KERNELS_PERF_COMMON_CUH
#define GPUBENCH_KERNELS_PERF_COMMON_CUH

#include <stdint.h>

#include "gb_perf.h"
#include "measure.cuh"

/* A 32-bit hash of an index and a seed (the same on host and device), so
 * inputs are filled on the GPU and checked on the host without a copy. */
__host__ __device__ inline uint32_t gb_hash32(uint64_t i, uint32_t seed)
{
    uint64_t x = (i + seed) * 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (uint32_t)x;
}

/* A non-zero value in [0.25, 1) from the hash. */
__host__ __device__ inline double gb_hash_unit(uint64_t i, uint32_t seed)
{
    return 0.25 + 0.75 * (gb_hash32(i, seed) >> 8) / 16777216.0;
}

/* SM count and the most threads an SM holds, of the current device. */
int gb_perf_device_shape(int device, int *sm_count, int *threads_per_sm,
                         struct gb_cuda_error *err);

/* Times launch into op->s (gb_measure_op) and sets op->available. */
int gb_perf_time(struct gb_timer *t, gb_launch_fn launch, void *ctx, long max_work,
                 int use_graph, const struct gb_measure_opts *opts, struct gb_hooks *hooks,
                 struct gb_perf_op *op, struct gb_cuda_error *err);

#endif
