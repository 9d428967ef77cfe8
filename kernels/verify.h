/*
 * verify.h - the transpose benchmark's inputs and its check of every
 * output element, on the host.
 *
 * Inputs are finite, pseudo-random floats (never zeros: zeros hide an
 * unwritten output).  Before a verified launch the output is poisoned with
 * GB_POISON_BITS, a NaN no input can equal; afterwards every element is
 * compared bit for bit with the input it must hold, so an element the
 * kernel never wrote fails as surely as a misplaced one.  Pure C on plain
 * buffers; unit-tested in tests/unit/test_kernels_verify.c.
 */
#ifndef GPUBENCH_KERNELS_VERIFY_H
#define GPUBENCH_KERNELS_VERIFY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Byte value cudaMemset writes to poison: 0xFFFFFFFF is a quiet NaN. */
#define GB_POISON_BYTE 0xFF
#define GB_POISON_BITS 0xFFFFFFFFu

/* Fills in[0..count-1] with the bit patterns of finite floats in
 * [-2, -1] u [1, 2], a hash of (index, seed): distinct enough that a
 * misplaced element is caught, never the poison. */
void gb_fill_input(uint32_t *in, long long count, uint32_t seed);

struct gb_verify_report {
    long long mismatches; /* elements that differ from what they must hold */
    long long unwritten;  /* of those, elements still holding the poison */
    long long first_row;  /* first mismatch (row, column), -1 if none */
    long long first_col;
};

/* Checks all n*n elements of out against in (both row-major n x n):
 * out[r][c] must equal in[c][r] when transposed, in[r][c] otherwise.
 * Fills r; returns the number of mismatches (0 means verified). */
long long gb_verify_matrix(const uint32_t *in, const uint32_t *out, long long n,
                           int transposed, struct gb_verify_report *r);

#ifdef __cplusplus
}
#endif

#endif
