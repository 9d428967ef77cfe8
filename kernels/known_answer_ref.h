/*
 * known_answer_ref.h - known_answer's inputs and exact answers
 * (docs/DEEP_CHECKS.md).  The inline functions below are compiled both for
 * the GPU (known_answer_kernels.cu) and for the host (known_answer_ref.c),
 * so element i starts from the same bits on both; the host then computes
 * every element's exact result, and the GPU's must equal it bit for bit.
 *
 * Why the answers are exact: IEEE 754 fma, multiply and integer arithmetic
 * are correctly rounded (or exact), so the host's fmaf()/fma() give the
 * GPU's bits; the host reference is compiled without -ffast-math and every
 * fused step is an explicit fmaf/fma call (no contraction can change it).
 * The tensor-core inputs are integers in [-4, 4] (exact in BF16), so every
 * product and every partial sum is an integer far below 2^24: exact in
 * FP32 in whatever order the hardware adds.
 *
 * Pure (no CUDA, no JSON); unit-tested by tests/unit/test_kernels_known_answer.c.
 */
#ifndef GPUBENCH_KERNELS_KNOWN_ANSWER_REF_H
#define GPUBENCH_KERNELS_KNOWN_ANSWER_REF_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define GB_HD __host__ __device__
#else
#define GB_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

enum gb_ka_kind { GB_KA_FP32,
                  GB_KA_FP64,
                  GB_KA_INT,
                  GB_KA_MMA,
                  GB_KA_CUBLAS,
                  GB_KA_KINDS };

/* The kinds' names as in docs/DEEP_CHECKS.md ("fp32_fma", ...); -1 / NULL
 * for what is not one. */
int gb_ka_kind_parse(const char *name);
const char *gb_ka_kind_name(int kind);

/* The shapes the worker runs (the unit tests use smaller ones). */
#define GB_KA_CHAIN_STEPS 512 /* fma steps an element, fp32 / fp64 / int */
#define GB_KA_MMA_KTILES 8    /* k = 16 a tile: k = 128 */
#define GB_KA_MMA_REPS 64     /* the warp's k sweep repeated: |sum| <= 64*128*16 */
#define GB_KA_GEMM_M 4096     /* cublas_bf16: C (m x n) = A (m x k) B (k x n) */
#define GB_KA_GEMM_N 2048
#define GB_KA_GEMM_K 128
#define GB_KA_SEED 0x5eed3201u

/* A 64-bit mix of an index and a seed (splitmix64's finaliser). */
GB_HD static inline uint64_t gb_ka_mix(uint64_t i, uint64_t seed)
{
    uint64_t x = (i ^ (seed * 0x9E3779B97F4A7C15ull)) + 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* The FMA chains iterate the quadratic map x <- x*x + c (one fma a step):
 * with c in [-1.95, -1.6) the orbit is chaotic and stays in (-2, 2), so
 * one wrong bit anywhere spreads to the result and nothing overflows or
 * turns NaN.  x0 in [-1, 1). */
GB_HD static inline double gb_ka_start(uint64_t i, uint32_t seed)
{
    return -1.0 + (double)(gb_ka_mix(i, seed) >> 11) * (2.0 / 9007199254740992.0);
}
GB_HD static inline double gb_ka_c(uint64_t i, uint32_t seed)
{
    return -1.95 + 0.35 * (double)(gb_ka_mix(i, seed ^ 0xc0ffeeu) >> 11) / 9007199254740992.0;
}

GB_HD static inline uint32_t gb_ka_fp32_elem(uint64_t i, uint32_t seed, int steps)
{
    float x = (float)gb_ka_start(i, seed), c = (float)gb_ka_c(i, seed);
    union {
        float f;
        uint32_t u;
    } v;

    for (int s = 0; s < steps; s++)
        x = fmaf(x, x, c);
    v.f = x;
    return v.u;
}

GB_HD static inline uint64_t gb_ka_fp64_elem(uint64_t i, uint32_t seed, int steps)
{
    double x = gb_ka_start(i, seed), c = gb_ka_c(i, seed);
    union {
        double f;
        uint64_t u;
    } v;

    for (int s = 0; s < steps; s++)
        x = fma(x, x, c);
    v.f = x;
    return v.u;
}

/* Integer mixing: 64-bit multiply, 32x32 multiply-add, shifts, xor. */
GB_HD static inline uint64_t gb_ka_int_elem(uint64_t i, uint32_t seed, int steps)
{
    uint64_t x = gb_ka_mix(i, seed);

    for (int s = 0; s < steps; s++) {
        uint32_t lo = (uint32_t)x, hi = (uint32_t)(x >> 32);
        x ^= x >> 29;
        x *= 0xBF58476D1CE4E5B9ull;
        x += (uint64_t)(lo * 0x2545F491u + hi);
        x = (x << 17) | (x >> 47);
    }
    return x;
}

/* Tensor-core inputs: integers in [-4, 4].  A of warp w is 16 x k (row r,
 * column kk), B is k x 8 (row kk, column c). */
GB_HD static inline int gb_ka_mma_a(uint64_t w, int r, int kk, uint32_t seed)
{
    return (int)(gb_ka_mix((w << 24) | ((uint64_t)r << 16) | (uint64_t)kk, seed) % 9u) - 4;
}
GB_HD static inline int gb_ka_mma_b(uint64_t w, int kk, int c, uint32_t seed)
{
    return (int)(gb_ka_mix((w << 24) | ((uint64_t)c << 16) | (uint64_t)kk, seed ^ 0xb0b0u) %
                 9u) -
           4;
}

/* cuBLAS inputs, column-major: A m x k at i + kk*m, B k x n at kk + j*k. */
GB_HD static inline int gb_ka_gemm_in(uint64_t index, uint32_t seed)
{
    return (int)(gb_ka_mix(index, seed) % 9u) - 4;
}

/* ---- the host's answers ---------------------------------------------- */

/* out[i] = the kind's result of element i (bits), for elements
 * 0..count-1. */
void gb_ka_fp32_ref(uint32_t *out, size_t count, uint32_t seed, int steps);
void gb_ka_fp64_ref(uint64_t *out, size_t count, uint32_t seed, int steps);
void gb_ka_int_ref(uint64_t *out, size_t count, uint32_t seed, int steps);

/* The mma kernel's answer: warp w's 16 x 8 tile at out[w*128 + r*8 + c]
 * = reps * sum over kk < 16*ktiles of A(w,r,kk) B(w,kk,c), as FP32 bits. */
void gb_ka_mma_ref(uint32_t *out, int warps, int ktiles, int reps, uint32_t seed);

/* cuBLAS's answer, C = A B column-major (m x n at i + j*m), FP32 bits. */
void gb_ka_gemm_ref(uint32_t *out, int m, int n, int k, uint32_t seed);

/* FNV-1a 64 over count results, each taken as a 64-bit little-endian
 * word (a 32-bit result zero-extended); width is 4 or 8 bytes. */
uint64_t gb_ka_hash(const void *results, size_t count, int width);

/* One wrong result: the SM that computed it (-1: not known), the element,
 * the bits expected and got. */
#define GB_KA_MAX_RECORDS 16
struct gb_ka_mismatch {
    int sm;
    long long element;
    uint64_t expected, got;
};

/* Where mismatches are kept: the count, and the first GB_KA_MAX_RECORDS
 * in the order they were noted. */
struct gb_ka_log {
    unsigned long long count;
    struct gb_ka_mismatch first[GB_KA_MAX_RECORDS];
};

/* Writes record slot (the value of the count before it was advanced, as
 * the GPU's atomicAdd gives it) when the slot is one of the first. */
GB_HD static inline void gb_ka_note(struct gb_ka_mismatch *first, unsigned long long slot,
                                    int sm, long long element, uint64_t expected, uint64_t got)
{
    if (slot < GB_KA_MAX_RECORDS) {
        first[slot].sm = sm;
        first[slot].element = element;
        first[slot].expected = expected;
        first[slot].got = got;
    }
}

/* Compares count results (width 4 or 8) bit for bit and notes every one
 * that differs in log (sm[i] the SM of element i, or NULL: -1).  Returns
 * how many differed. */
unsigned long long gb_ka_compare(const void *expected, const void *got, size_t count, int width,
                                 const int *sm, struct gb_ka_log *log);

/* Sorts the noted records by element (the GPU notes them in whatever
 * order its atomics ran); n = min(count, GB_KA_MAX_RECORDS). */
void gb_ka_sort(struct gb_ka_mismatch *first, int n);

#ifdef __cplusplus
}
#endif

#endif
