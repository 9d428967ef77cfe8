/*
 * known_answer_ref.c - the host's exact answers for known_answer, the
 * comparison and the results' hash; see known_answer_ref.h.
 *
 * Compiled without -ffast-math (the build never sets it) and every fused
 * step is an explicit fmaf()/fma() call in the header, so the compiler has
 * nothing to contract: the host's bits are IEEE's, as the GPU's must be.
 */
#include "known_answer_ref.h"

#include <stdlib.h>
#include <string.h>

static const char *const kind_names[GB_KA_KINDS] = {"fp32_fma", "fp64_fma", "int_mix",
                                                    "mma_bf16", "cublas_bf16"};

int gb_ka_kind_parse(const char *name)
{
    for (int k = 0; name && k < GB_KA_KINDS; k++)
        if (strcmp(name, kind_names[k]) == 0)
            return k;
    return -1;
}

const char *gb_ka_kind_name(int kind)
{
    return kind >= 0 && kind < GB_KA_KINDS ? kind_names[kind] : NULL;
}

void gb_ka_fp32_ref(uint32_t *out, size_t count, uint32_t seed, int steps)
{
    for (size_t i = 0; i < count; i++)
        out[i] = gb_ka_fp32_elem(i, seed, steps);
}

void gb_ka_fp64_ref(uint64_t *out, size_t count, uint32_t seed, int steps)
{
    for (size_t i = 0; i < count; i++)
        out[i] = gb_ka_fp64_elem(i, seed, steps);
}

void gb_ka_int_ref(uint64_t *out, size_t count, uint32_t seed, int steps)
{
    for (size_t i = 0; i < count; i++)
        out[i] = gb_ka_int_elem(i, seed, steps);
}

static uint32_t float_bits(float f)
{
    uint32_t u;

    memcpy(&u, &f, sizeof(u));
    return u;
}

void gb_ka_mma_ref(uint32_t *out, int warps, int ktiles, int reps, uint32_t seed)
{
    int k = 16 * ktiles;

    for (int w = 0; w < warps; w++)
        for (int r = 0; r < 16; r++)
            for (int c = 0; c < 8; c++) {
                long sum = 0;
                for (int kk = 0; kk < k; kk++)
                    sum += (long)gb_ka_mma_a((uint64_t)w, r, kk, seed) *
                           gb_ka_mma_b((uint64_t)w, kk, c, seed);
                out[(size_t)w * 128 + (size_t)r * 8 + (size_t)c] =
                    float_bits((float)(sum * reps));
            }
}

void gb_ka_gemm_ref(uint32_t *out, int m, int n, int k, uint32_t seed)
{
    int32_t *acc = calloc((size_t)m, sizeof(*acc));
    int8_t *a = malloc((size_t)m * (size_t)k);

    if (acc == NULL || a == NULL) { /* only the unit tests' tiny sizes could get here */
        free(acc);
        free(a);
        memset(out, 0xff, sizeof(*out) * (size_t)m * (size_t)n);
        return;
    }
    for (size_t x = 0; x < (size_t)m * (size_t)k; x++)
        a[x] = (int8_t)gb_ka_gemm_in(x, seed);
    /* Column by column; the inner loop runs down a column of A, so the
     * compiler vectorises it (m*n*k is about 1e9 at the worker's shape). */
    for (int j = 0; j < n; j++) {
        memset(acc, 0, sizeof(*acc) * (size_t)m);
        for (int kk = 0; kk < k; kk++) {
            int32_t b = gb_ka_gemm_in((uint64_t)kk + (uint64_t)j * (uint64_t)k, seed ^ 0xb0b0u);
            const int8_t *col = a + (size_t)kk * (size_t)m;
            for (int i = 0; i < m; i++)
                acc[i] += col[i] * b;
        }
        for (int i = 0; i < m; i++)
            out[(size_t)j * (size_t)m + (size_t)i] = float_bits((float)acc[i]);
    }
    free(acc);
    free(a);
}

uint64_t gb_ka_hash(const void *results, size_t count, int width)
{
    const unsigned char *p = results;
    uint64_t h = 0xcbf29ce484222325ull;

    for (size_t i = 0; i < count; i++) {
        uint64_t v = 0;
        if (width == 4) {
            uint32_t u;
            memcpy(&u, p + i * 4, 4);
            v = u;
        } else {
            memcpy(&v, p + i * 8, 8);
        }
        for (int b = 0; b < 8; b++) {
            h ^= (v >> (8 * b)) & 0xff;
            h *= 0x100000001b3ull;
        }
    }
    return h;
}

static uint64_t word_at(const void *base, size_t i, int width)
{
    if (width == 4) {
        uint32_t u;
        memcpy(&u, (const unsigned char *)base + i * 4, 4);
        return u;
    }
    uint64_t v;
    memcpy(&v, (const unsigned char *)base + i * 8, 8);
    return v;
}

unsigned long long gb_ka_compare(const void *expected, const void *got, size_t count, int width,
                                 const int *sm, struct gb_ka_log *log)
{
    unsigned long long before = log->count;

    for (size_t i = 0; i < count; i++) {
        uint64_t e = word_at(expected, i, width), g = word_at(got, i, width);
        if (e != g)
            gb_ka_note(log->first, log->count++, sm ? sm[i] : -1, (long long)i, e, g);
    }
    return log->count - before;
}

static int by_element(const void *a, const void *b)
{
    const struct gb_ka_mismatch *x = a, *y = b;

    return (x->element > y->element) - (x->element < y->element);
}

void gb_ka_sort(struct gb_ka_mismatch *first, int n)
{
    if (n > 1)
        qsort(first, (size_t)n, sizeof(*first), by_element);
}
