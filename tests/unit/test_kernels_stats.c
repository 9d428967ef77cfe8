/*
 * test_kernels_stats.c - the worker's statistics (kernels/stats.c) and the
 * calibration of the work per sample (kernels/calibrate.c).
 */
#include <stdint.h>
#include <stdlib.h>

#include "calibrate.h"
#include "rounds.h"
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
    ASSERT_EQ(work, 1024); /* 525 -> 1024 */
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
    ASSERT_EQ(work, 4); /* 0 is taken as 1, then 1 * 2.1 up to a power of 2 */
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
    ASSERT_EQ(work, 524288); /* 0.005 + 524288 * 2e-6 = 1.054 ms */
    return 0;
}

/* Exact ranks of the order-statistic interval, checked against the
 * binomial tables: n = 6 is the first with a 95% interval ([min, max],
 * 1 - 2/64); n = 20 gives ranks 6 and 15 (coverage 0.9586); under 6 no
 * interval reaches 95% and [min, max] is given with its true coverage. */
static int test_ci_exact_ranks(void)
{
    int lo = 0, hi = 0;

    ASSERT_NEAR(gb_median_ci_ranks(5, 0.95, &lo, &hi), 1 - 2.0 / 32, 1e-12);
    ASSERT_EQ(lo, 1);
    ASSERT_EQ(hi, 5);
    ASSERT_NEAR(gb_median_ci_ranks(6, 0.95, &lo, &hi), 1 - 2.0 / 64, 1e-12);
    ASSERT_EQ(lo, 1);
    ASSERT_EQ(hi, 6);
    ASSERT_NEAR(gb_median_ci_ranks(10, 0.95, &lo, &hi), 1 - 2 * 11.0 / 1024, 1e-12);
    ASSERT_EQ(lo, 2);
    ASSERT_EQ(hi, 9);
    ASSERT_NEAR(gb_median_ci_ranks(20, 0.95, &lo, &hi), 0.958610535, 1e-8);
    ASSERT_EQ(lo, 6);
    ASSERT_EQ(hi, 15);
    /* large n: near the normal approximation n/2 -+ 0.98 sqrt(n) */
    ASSERT(gb_median_ci_ranks(10000, 0.95, &lo, &hi) >= 0.95);
    ASSERT(lo >= 4900 && lo <= 4902);
    ASSERT_EQ(hi, 10001 - lo);
    ASSERT(gb_median_ci_ranks(0, 0.95, &lo, &hi) < 0);
    ASSERT(gb_median_ci_ranks(10, 1.0, &lo, &hi) < 0);
    return 0;
}

/* splitmix64: a seeded generator, so the simulation is the same run to
 * run. */
static uint64_t rng_state;
static double uniform(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return ((z >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(void)
{
    return sqrt(-2 * log(uniform())) * cos(6.283185307179586 * uniform());
}

enum dist {
    NORMAL,
    EXPONENTIAL,
    GPU_LIKE,
    TICKS,
    DIST_COUNT,
};

/* A draw and the distribution's true median: a normal; an exponential
 * (skewed); a GPU-like time; a
 * normal rounded to quarter ticks (ties, as event timers give). The
 * GPU-like one is a floor of 1 ms plus an exponential tail. */
static double draw(enum dist d, double *median)
{
    switch (d) {
    case NORMAL:
        *median = 0;
        return normal();
    case EXPONENTIAL:
        *median = log(2.0);
        return -log(uniform());
    case GPU_LIKE:
        *median = 1.0 + 0.001 * log(2.0);
        return 1.0 - 0.001 * log(uniform());
    case TICKS:
        *median = 0;
        return round(normal() * 4) / 4;
    default:
        *median = 0;
        return 0;
    }
}

/* The promise of the interval: over 2000 seeded trials of each known
 * distribution, the true median lies inside in at least ~95% of them
 * (exact coverage 0.9586 at n = 20: a shortfall to 0.94 would be 4
 * standard errors).  An interval built on a normal model or a narrower
 * rank pair fails this on the skewed and tied ones. */
static int test_ci_coverage(void)
{
    const int sizes[] = {20, 51};
    double x[64];

    rng_state = 20261130;
    for (int d = 0; d < DIST_COUNT; d++) {
        for (int s = 0; s < 2; s++) {
            int n = sizes[s], inside = 0, trials = 2000;
            for (int t = 0; t < trials; t++) {
                struct gb_stats st;
                double median = 0;
                for (int i = 0; i < n; i++)
                    x[i] = draw((enum dist)d, &median);
                ASSERT_EQ(gb_stats_compute(x, n, &st), 0);
                ASSERT(st.ci_low <= st.median && st.median <= st.ci_high);
                inside += st.ci_low <= median && median <= st.ci_high;
            }
            if ((double)inside / trials < 0.94) {
                fprintf(stderr, "distribution %d, n %d: coverage %.4f\n", d, n,
                        (double)inside / trials);
                ASSERT((double)inside / trials >= 0.94);
            }
        }
    }
    return 0;
}

static struct gb_samples samples_of(double *ms, int count, int capacity)
{
    struct gb_samples s;

    memset(&s, 0, sizeof(s));
    s.ms = ms;
    s.count = count;
    s.capacity = capacity;
    return s;
}

/* The rounds of a precision run: none without precision; another round
 * while a row's interval is wider than asked; never past a row's room
 * (max_samples) or the deadline; none once every row is precise. */
static int test_rounds(void)
{
    double tight[40], wide[40];
    struct gb_samples rows[2];
    struct gb_measure_opts o = {20, 1.0, 0, 200, 0};

    for (int i = 0; i < 40; i++) {
        tight[i] = 1.0 + 0.0001 * (i % 7);
        wide[i] = 1.0 + 0.05 * (i % 7);
    }
    rows[0] = samples_of(tight, 20, 200);
    rows[1] = samples_of(wide, 20, 200);
    ASSERT_EQ(gb_rounds_capacity(&o), 20);
    ASSERT_EQ(gb_rounds_next(rows, 2, &o, 0), 0);
    o.precision = 0.002;
    ASSERT_EQ(gb_rounds_capacity(&o), 200);
    ASSERT(gb_rounds_half_width(&rows[0]) <= 0.002);
    ASSERT(gb_rounds_half_width(&rows[1]) > 0.002);
    ASSERT_EQ(gb_rounds_next(rows, 2, &o, 0), 20);
    ASSERT_EQ(gb_rounds_next(rows, 1, &o, 0), 0); /* the tight row alone */
    rows[1].capacity = 30;                        /* 10 left */
    ASSERT_EQ(gb_rounds_next(rows, 2, &o, 0), 10);
    rows[1].capacity = 20; /* full */
    ASSERT_EQ(gb_rounds_next(rows, 2, &o, 0), 0);
    rows[1].capacity = 200;
    o.deadline_s = 100;
    ASSERT_EQ(gb_rounds_next(rows, 2, &o, 99.9), 20);
    ASSERT_EQ(gb_rounds_next(rows, 2, &o, 100), 0);
    return 0;
}

TEST_MAIN({"stats: odd count", test_odd_count},
          {"ci: exact ranks", test_ci_exact_ranks},
          {"ci: coverage on known distributions", test_ci_coverage},
          {"rounds: precision rounds", test_rounds},
          {"stats: even count", test_even_count},
          {"stats: single and empty", test_single_and_empty},
          {"calibrate: done when long enough", test_calibrate_done_when_long_enough},
          {"calibrate: grows", test_calibrate_grows},
          {"calibrate: cap", test_calibrate_cap},
          {"calibrate: converges", test_calibrate_converges})
