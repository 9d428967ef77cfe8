/* The conflict-degree rule of common/predict.c, on the cases the seed
 * entry names and the ones that catch a broadcast counted as a conflict. */
#include "predict.h"
#include "test.h"

static int test_stride_is_gcd(void)
{
    static const struct {
        long stride;
        int degree;
    } cases[] = {
        {1, 1},
        {2, 2},
        {4, 4},
        {8, 8},
        {16, 16},
        {31, 1},
        {32, 32},
        {33, 1},
        {63, 1},
        {64, 32},
        {65, 1},
        {96, 32},
        {48, 16},
        {6, 2},
        {1024, 32},
        {12, 4},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ASSERT_EQ(gb_degree_for_stride(cases[i].stride), cases[i].degree);
    ASSERT_EQ(gb_degree_for_stride(0), 0);
    ASSERT_EQ(gb_degree_for_stride(-4), 0);
    return 0;
}

/* The closed form must agree with counting distinct words per bank. */
static int test_stride_matches_word_count(void)
{
    long words[GB_WARP_LANES];

    for (long s = 1; s <= 1024; s++) {
        gb_stride_words(s, words);
        ASSERT_EQ(gb_degree_for_words(words), gb_degree_for_stride(s));
        ASSERT_EQ(gb_shared_lanes(words), 0);
    }
    return 0;
}

/* The seed's tx * 2 % 32: lanes tx and tx + 16 share a word, a broadcast. */
static int test_seed_pattern_is_broadcast(void)
{
    long words[GB_WARP_LANES];

    for (int tx = 0; tx < GB_WARP_LANES; tx++)
        words[tx] = tx * 2 % 32;
    ASSERT_EQ(gb_degree_for_words(words), 1);
    ASSERT_EQ(gb_shared_lanes(words), 16);
    return 0;
}

static int test_all_lanes_one_word(void)
{
    long words[GB_WARP_LANES];

    for (int l = 0; l < GB_WARP_LANES; l++)
        words[l] = 77;
    ASSERT_EQ(gb_degree_for_words(words), 1);
    ASSERT_EQ(gb_shared_lanes(words), 31);
    return 0;
}

static int test_distinct_words_one_bank(void)
{
    long words[GB_WARP_LANES];
    int loads[GB_SMEM_BANKS];

    for (int l = 0; l < GB_WARP_LANES; l++)
        words[l] = 5 + 32L * l;
    ASSERT_EQ(gb_degree_for_words(words), 32);
    gb_bank_loads(words, loads);
    ASSERT_EQ(loads[5], 32);
    ASSERT_EQ(loads[4], 0);
    return 0;
}

/* Half the lanes on one word, the rest spread: a bank holding one shared
 * word and one other word is degree 2, not 17. */
static int test_mixed_broadcast_and_conflict(void)
{
    long words[GB_WARP_LANES];

    for (int l = 0; l < 16; l++)
        words[l] = 0;
    for (int l = 16; l < 32; l++)
        words[l] = l; /* banks 16..31, one word each */
    words[31] = 32;   /* bank 0 again: a second distinct word */
    ASSERT_EQ(gb_degree_for_words(words), 2);
    words[0] = -1;
    ASSERT_EQ(gb_degree_for_words(words), 0);
    return 0;
}

TEST_MAIN({"stride degree is gcd(stride, 32)", test_stride_is_gcd},
          {"closed form matches the word count", test_stride_matches_word_count},
          {"tx*2%32 is a broadcast, degree 1", test_seed_pattern_is_broadcast},
          {"32 lanes on one word is degree 1", test_all_lanes_one_word},
          {"32 distinct words in one bank is 32", test_distinct_words_one_bank},
          {"broadcast and conflict mixed", test_mixed_broadcast_and_conflict})
