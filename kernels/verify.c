/*
 * verify.c - inputs and the element-by-element check of the transpose
 * outputs; see verify.h.
 */
#include "verify.h"

#include <stddef.h>

/* A 32-bit integer mix (from the "lowbias32" family): cheap, and nearby
 * indices give unrelated values, so a row off by one is caught. */
static uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

void gb_fill_input(uint32_t *in, long long count, uint32_t seed)
{
    for (long long i = 0; i < count; i++) {
        uint32_t h = mix32((uint32_t)i ^ mix32(seed + (uint32_t)(i >> 32)));
        /* Keep the sign and 23 mantissa bits, force exponent 127: a finite
         * float of magnitude in [1, 2). */
        in[i] = (h & 0x807FFFFFu) | 0x3F800000u;
    }
}

/* Walks the matrix in square blocks so that the transposed reads of in[]
 * stay in cache; the first mismatch is still the first in row-major
 * order, whatever order the blocks are visited in. */
#define VERIFY_BLOCK 64

long long gb_verify_matrix(const uint32_t *in, const uint32_t *out, long long n,
                           int transposed, struct gb_verify_report *r)
{
    long long first = -1;

    r->mismatches = 0;
    r->unwritten = 0;
    for (long long r0 = 0; r0 < n; r0 += VERIFY_BLOCK) {
        for (long long c0 = 0; c0 < n; c0 += VERIFY_BLOCK) {
            long long r1 = r0 + VERIFY_BLOCK < n ? r0 + VERIFY_BLOCK : n;
            long long c1 = c0 + VERIFY_BLOCK < n ? c0 + VERIFY_BLOCK : n;
            for (long long row = r0; row < r1; row++) {
                for (long long col = c0; col < c1; col++) {
                    uint32_t got = out[row * n + col];
                    uint32_t want = transposed ? in[col * n + row] : in[row * n + col];
                    if (got == want)
                        continue;
                    if (first < 0 || row * n + col < first)
                        first = row * n + col;
                    r->mismatches++;
                    if (got == GB_POISON_BITS)
                        r->unwritten++;
                }
            }
        }
    }
    r->first_row = first < 0 ? -1 : first / n;
    r->first_col = first < 0 ? -1 : first % n;
    return r->mismatches;
}
