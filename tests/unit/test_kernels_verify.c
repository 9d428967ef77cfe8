/*
 * test_kernels_verify.c - the transpose inputs and the element-by-element
 * output check (kernels/verify.c), and the rank compaction of word indices
 * (kernels/compact.c) checked against common/predict.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compact.h"
#include "predict.h"
#include "test.h"
#include "verify.h"

static uint32_t *matrix(long long n)
{
    return calloc((size_t)(n * n), sizeof(uint32_t));
}

static void transpose_host(const uint32_t *in, uint32_t *out, long long n)
{
    for (long long r = 0; r < n; r++)
        for (long long c = 0; c < n; c++)
            out[r * n + c] = in[c * n + r];
}

static int test_fill_is_finite_and_varied(void)
{
    enum { N = 4096 };
    uint32_t a[N], b[N];
    int same = 0, neighbours_equal = 0;

    gb_fill_input(a, N, 1);
    gb_fill_input(b, N, 2);
    for (int i = 0; i < N; i++) {
        uint32_t exponent = (a[i] >> 23) & 0xFF;
        ASSERT_EQ(exponent, 127); /* magnitude in [1, 2): finite, non-zero */
        ASSERT(a[i] != GB_POISON_BITS);
        same += a[i] == b[i];
        neighbours_equal += i > 0 && a[i] == a[i - 1];
    }
    ASSERT(same < 8);             /* the seed matters */
    ASSERT(neighbours_equal < 4); /* nearby indices differ */
    gb_fill_input(b, N, 1);
    ASSERT(memcmp(a, b, sizeof(a)) == 0); /* and is deterministic */
    return 0;
}

static int test_correct_outputs_pass(void)
{
    long long n = 96; /* not a multiple of the check's 64 block */
    uint32_t *in = matrix(n), *out = matrix(n);
    struct gb_verify_report r;

    ASSERT(in && out);
    gb_fill_input(in, n * n, 7);
    transpose_host(in, out, n);
    ASSERT_EQ(gb_verify_matrix(in, out, n, 1, &r), 0);
    ASSERT_EQ(r.first_row, -1);
    memcpy(out, in, (size_t)(n * n) * sizeof(uint32_t));
    ASSERT_EQ(gb_verify_matrix(in, out, n, 0, &r), 0);
    /* a copy is not a transpose */
    ASSERT(gb_verify_matrix(in, out, n, 1, &r) > 0);
    free(in);
    free(out);
    return 0;
}

static int test_unwritten_element_fails(void)
{
    long long n = 128;
    uint32_t *in = matrix(n), *out = matrix(n);
    struct gb_verify_report r;

    ASSERT(in && out);
    gb_fill_input(in, n * n, 3);
    transpose_host(in, out, n);
    out[100 * n + 5] = GB_POISON_BITS; /* never written */
    out[3 * n + 120] ^= 1;             /* written wrong */
    ASSERT_EQ(gb_verify_matrix(in, out, n, 1, &r), 2);
    ASSERT_EQ(r.mismatches, 2);
    ASSERT_EQ(r.unwritten, 1);
    /* the first in row-major order, though its block is visited later */
    ASSERT_EQ(r.first_row, 3);
    ASSERT_EQ(r.first_col, 120);
    free(in);
    free(out);
    return 0;
}

/* The seed's broken kernel: half the columns never written. */
static int test_half_columns_unwritten(void)
{
    long long n = 64;
    uint32_t *in = matrix(n), *out = matrix(n);
    struct gb_verify_report r;

    ASSERT(in && out);
    gb_fill_input(in, n * n, 9);
    transpose_host(in, out, n);
    for (long long row = 0; row < n; row++)
        for (long long col = 1; col < n; col += 2)
            out[row * n + col] = GB_POISON_BITS;
    ASSERT_EQ(gb_verify_matrix(in, out, n, 1, &r), n * n / 2);
    ASSERT_EQ(r.unwritten, n * n / 2);
    ASSERT_EQ(r.first_row, 0);
    ASSERT_EQ(r.first_col, 1);
    free(in);
    free(out);
    return 0;
}

static int test_words_needed(void)
{
    long w[GB_WARP_LANES];

    gb_stride_words(1024, w);
    ASSERT_EQ(gb_words_needed(w), 31 * 1024 + 1);
    w[3] = -1;
    ASSERT_EQ(gb_words_needed(w), 0);
    return 0;
}

/* Compaction keeps each lane's bank, keeps distinct words distinct and
 * shared words shared, so the prediction cannot change. */
static int check_compaction(const long words[GB_WARP_LANES], long max_words)
{
    long out[GB_WARP_LANES];
    long needed = gb_compact_words(words, out);

    ASSERT(needed <= max_words);
    ASSERT_EQ(needed, gb_words_needed(out));
    for (int a = 0; a < GB_WARP_LANES; a++) {
        ASSERT_EQ(out[a] % 32, words[a] % 32);
        for (int b = 0; b < GB_WARP_LANES; b++)
            ASSERT_EQ(out[a] == out[b], words[a] == words[b]);
    }
    ASSERT_EQ(gb_degree_for_words(out), gb_degree_for_words(words));
    ASSERT_EQ(gb_shared_lanes(out), gb_shared_lanes(words));
    return 0;
}

static int test_compaction_preserves(void)
{
    long w[GB_WARP_LANES];
    long strides[] = {1, 2, 32, 33, 64, 65, 1000, 1024};

    for (size_t i = 0; i < sizeof(strides) / sizeof(strides[0]); i++) {
        gb_stride_words(strides[i], w);
        if (check_compaction(w, 32 * 32))
            return 1;
    }
    /* stride 1024: 32 rows used, so exactly 32 rows after; degree 32 */
    gb_stride_words(1024, w);
    {
        long out[GB_WARP_LANES];
        ASSERT_EQ(gb_compact_words(w, out), 31 * 32 + 1);
        ASSERT_EQ(out[31], 31 * 32);
    }
    /* a broadcast far out: 16 words in two rows near 65535 */
    for (int lane = 0; lane < GB_WARP_LANES; lane++)
        w[lane] = 65000 + (lane * 2) % 32;
    if (check_compaction(w, 64))
        return 1;
    /* in place: rows 2031 and 2032 become 0 and 1; 65030 is word 6 of row
     * 2032, so word 32 + 6 after */
    ASSERT_EQ(gb_compact_words(w, w), 39);
    ASSERT_EQ(w[0], 8);
    ASSERT_EQ(w[15], 38);
    return 0;
}

TEST_MAIN({"fill: finite and varied", test_fill_is_finite_and_varied},
          {"verify: correct outputs pass", test_correct_outputs_pass},
          {"verify: unwritten element fails", test_unwritten_element_fails},
          {"verify: half the columns unwritten", test_half_columns_unwritten},
          {"compact: words needed", test_words_needed},
          {"compact: preserves banks and sharing", test_compaction_preserves})
