/*
 * nccl_math.h - nccl_allreduce's arithmetic, pure C (no CUDA, no NCCL):
 * the bandwidths nccl-tests defines and the known answer every element
 * must hold.  Unit-tested in tests/unit/test_kernels_nccl.c; the CUDA side
 * (nccl_kernels.cu) fills and checks buffers with these bit patterns.
 */
#ifndef GPUBENCH_KERNELS_NCCL_MATH_H
#define GPUBENCH_KERNELS_NCCL_MATH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The element types nccl_allreduce sums (bench_spec.c's dtype choices). */
enum gb_nccl_dtype { GB_NCCL_FLOAT,
                     GB_NCCL_BFLOAT16,
                     GB_NCCL_HALF,
                     GB_NCCL_DOUBLE };

/* The dtype called name ("float", "bfloat16", "half", "double"); -1 for
 * any other. */
int gb_nccl_dtype_of(const char *name);

/* Bytes of one element of dtype (2, 4 or 8). */
int gb_nccl_dtype_size(enum gb_nccl_dtype dtype);

/* Algorithm bandwidth in GB/s: bytes / seconds / 1e9 (nccl-tests' algbw:
 * the buffer's size over the time of one all-reduce); NAN when seconds is
 * not > 0. */
double gb_nccl_algbw_gbps(double bytes, double seconds);

/* nccl-tests' all-reduce bus bandwidth factor 2(n-1)/n for n ranks (the
 * share of the buffer each rank sends and receives in a ring, so that the
 * figure is comparable across rank counts); 0 for n < 1. */
double gb_nccl_busbw_factor(int ranks);

/* The value rank r (0-based) fills its buffer with: r + 1; after the sum
 * over n ranks every element must be n(n+1)/2.  Exact in every dtype for
 * n up to 22 (253 < 256, bfloat16's 8-bit significand), since each
 * partial sum is a whole number at most the total. */
double gb_nccl_rank_value(int rank);
double gb_nccl_expected_sum(int ranks);
#define GB_NCCL_MAX_EXACT_RANKS 22

/* The bit pattern of the whole number v (|v| < 2^bits of the significand)
 * in dtype, in the low bytes of the result: IEEE binary32, bfloat16 (the
 * high half of binary32: exact for such v), binary16, binary64. */
uint64_t gb_nccl_bits(enum gb_nccl_dtype dtype, double v);

#ifdef __cplusplus
}
#endif

#endif
