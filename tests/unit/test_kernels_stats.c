/*
 * test_kernels_stats.c - the worker's statistics (kernels/stats.c) and the
 * calibration of the work per sample (kernels/calibrate.c).
 */
#include "calibrate.h"
#include "stats.h"
#include "test.h"

static int test_odd_count(void)
{
    const double x[] = {3.0, 1.0, 2.0, 10.0, 4.0};
    struct gb_stats s;

    ASSERT_EQ(gb_stats_compute(x, 5, &s), 0);
    ASSERT_EQ(s.n, 5);
    ASSERT_NEAR(s.min, 1.0, 1e-12);
    ASSERT_NEAR(s.max, 10.0, 1e-12);
    ASSERT_NEAR(s.median, 3.0, 1e-12);
    ASSERT_NEAR(s.mean, 4.0, 1e-12);
    ASSERT_NEAR(s.spread, 9.0 / 3.0, 1e-12);
    /* the caller's samples keep their measured order */
    ASSERT_NEAR(x[0], 3.0, 0);
    ASSERT_NEAR(x[3], 10.0, 0);
    return 0;
}

static int test_even_count(void)
{
    const double x[] = {4.0, 1.0, 3.0, 2.0};
    struct gb_stats s;

    ASSERT_EQ(gb_stats_compute(x, 4, &s), 0);
    ASSERT_NEAR(s.median, 2.5, 1e-12);
    ASSERT_NEAR(s.spread, 3.0 / 2.5, 1e-12);
    return 0;
}

static int test_single_and_empty(void)
{
    const double x[] = {0.25};
    struct gb_stats s;

    ASSERT_EQ(gb_stats_compute(x, 1, &s), 0);
    ASSERT_NEAR(s.median, 0.25, 0);
    ASSERT_NEAR(s.spread, 0, 0);
    ASSERT_EQ(gb_stats_compute(x, 0, &s), -1);
    ASSERT_EQ(gb_stats_compute(NULL, 3, &s), -1);
    return 0;
}

static int test_calibrate_done_when_long_enough(void)
{
    long work = 100;

    ASSERT_EQ(gb_calibrate_step(&work, 1.0, 1.0, 1000000), 1);
    ASSERT_EQ(work, 100);
    ASSERT_EQ(gb_calibrate_step(&work, 5.0, 1.0, 1000000), 1);
    ASSERT_EQ(work, 100);
    return 0;
}

static int test_calibrate_grows(void)
{
    long work = 100;

    /* 0.1 ms of a 1 ms target: aim 5% past it, 1050, up to a power of 2 */
    ASSERT_EQ(gb_calibrate_step(&work, 0.1, 1.0, 1000000), 0);
    ASSERT_EQ(work, 2048);
    work = 100;
    ASSERT_EQ(gb_calibrate_step(&work, 0.2, 1.0, 1000000), 0);
    ASSERT_EQ(work, 1024);  /* 525 -> 1024 */
    /* just short of the target still at least doubles */
    work = 128;
    ASSERT_EQ(gb_calibrate_step(&work, 0.99, 1.0, 1000000), 0);
    ASSERT_EQ(work, 256);
    /* a zero reading grows by the largest step, 64 */
    work = 4;
    ASSERT_EQ(gb_calibrate_step(&work, 0.0, 1.0, 1000000), 0);
    ASSERT_EQ(work, 256);
    /* far too short is capped at 64x per step */
    work = 16;
    ASSERT_EQ(gb_calibrate_step(&work, 0.0001, 1.0, 1000000), 0);
    ASSERT_EQ(work, 1024);
    return 0;
}

static int test_calibrate_cap(void)
{
    long work = 900;

    ASSERT_EQ(gb_calibrate_step(&work, 0.1, 1.0, 1000), 0);
    ASSERT_EQ(work, 1000);
    /* at the cap it stops even though the sample is short */
    ASSERT_EQ(gb_calibrate_step(&work, 0.11, 1.0, 1000), 1);
    ASSERT_EQ(work, 1000);
    work = 0;
    ASSERT_EQ(gb_calibrate_step(&work, 0.5, 1.0, 1000), 0);
    ASSERT_EQ(work, 4);  /* 0 is taken as 1, then 1 * 2.1 up to a power of 2 */
    return 0;
}

/* A launch that costs 5 us of overhead plus 2 ns per unit: the loop must
 * end with a sample of at least the target, and not wildly over it. */
static int test_calibrate_converges(void)
{
    long work = 1;
    int rounds = 0;
    double ms;

    for (;;) {
        ms = 0.005 + work * 2e-6;
        rounds++;
        if (gb_calibrate_step(&work, ms, 1.0, 1L << 30))
            break;
    }
    ASSERT(ms >= 1.0);
    ASSERT(ms < 1.2);
    ASSERT(rounds < 10);
    ASSERT_EQ(work, 524288);  /* 0.005 + 524288 * 2e-6 = 1.054 ms */
    return 0;
}

TEST_MAIN({"stats: odd count", test_odd_count},
          {"stats: even count", test_even_count},
          {"stats: single and empty", test_single_and_empty},
          {"calibrate: done when long enough", test_calibrate_done_when_long_enough},
          {"calibrate: grows", test_calibrate_grows},
          {"calibrate: cap", test_calibrate_cap},
          {"calibrate: converges", test_calibrate_converges})
