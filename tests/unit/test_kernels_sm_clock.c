/*
 * test_kernels_sm_clock.c - the SM clock and busy cycles of a smem_read
 * launch from its blocks' clock64 / %globaltimer records (kernels/sm_clock.c).
 * No GPU: the records are written by hand.
 */
#include <math.h>

#include "sm_clock.h"
#include "test.h"

/* One block's record (sm_clock.h's order). */
#define BLOCK(c0, c1, n0, n1, sm) \
    {                             \
        c0, c1, n0, n1, sm        \
    }

/* Two blocks overlap on SM 0, one runs on SM 1, one reports SM 7 of a
 * 2-SM device.  SM 0's span runs from block 1's start to block 0's end:
 * 2,000,000 cycles in 1,000,000 ns of the SAME two reads (2000 MHz),
 * whatever the other blocks' timers say; SM 7's longer span is ignored. */
static int test_longest_sm_same_interval(void)
{
    const long long spans[][GB_SPAN_FIELDS] = {
        BLOCK(1000, 2000900, 500500, 1500400, 0),
        BLOCK(900, 2000000, 500400, 1499900, 0),
        BLOCK(5000, 1005000, 502000, 1002000, 1),
        BLOCK(0, 90000000, 0, 45000000, 7),
    };
    int first[2], last[2];
    struct gb_sm_busy b;

    gb_sm_busy_of_launch(&spans[0][0], 4, 2, first, last, &b);
    ASSERT_EQ(b.sm, 0);
    ASSERT_NEAR(b.cycles, 2000900 - 900, 1e-9);
    ASSERT_NEAR(b.ns, 1500400 - 500400, 1e-9);
    ASSERT_NEAR(gb_sm_busy_mhz(&b), 2000.0, 1e-9);
    return 0;
}

/* The idle H200: a 1 ms row and a 32 ms row at the same 1975 MHz.
 * Their sample event times also hold ~12 us of launch and ramp, so cycles
 * over event time read 1951.6 and 1974.3 MHz (a false 1.2% step); the
 * clock measured on the SM reads 1975 for both. */
static int test_short_and_long_rows_same_clock(void)
{
    const double mhz = 1975.0, overhead_ms = 0.012;
    const double busy_ms[] = {1.0, 32.0};
    double clocks[2];

    for (int i = 0; i < 2; i++) {
        long long ns = (long long)(busy_ms[i] * 1e6);
        long long cycles = (long long)(busy_ms[i] * 1e3 * mhz);
        const long long spans[][GB_SPAN_FIELDS] = {
            BLOCK(7000, 7000 + cycles, 123456789, 123456789 + ns, 0),
            BLOCK(7100, 7000 + cycles / 2, 123456840, 123456789 + ns / 2, 1),
        };
        int first[2], last[2];
        struct gb_sm_busy b;
        double event_ms = busy_ms[i] + overhead_ms;

        gb_sm_busy_of_launch(&spans[0][0], 2, 2, first, last, &b);
        clocks[i] = gb_sm_busy_mhz(&b);
        ASSERT_NEAR(clocks[i], mhz, 1e-6);
        /* what the event time would have said: a lower bound */
        ASSERT(b.cycles / (event_ms * 1e3) < mhz - 0.5);
    }
    ASSERT_NEAR(clocks[0] / clocks[1], 1.0, 1e-9);
    return 0;
}

/* No block on a valid SM: no interval, no clock. */
static int test_no_valid_sm(void)
{
    const long long spans[][GB_SPAN_FIELDS] = {BLOCK(0, 100, 0, 50, -1), BLOCK(0, 100, 0, 50, 3)};
    int first[2], last[2];
    struct gb_sm_busy b;

    gb_sm_busy_of_launch(&spans[0][0], 2, 2, first, last, &b);
    ASSERT_EQ(b.sm, -1);
    ASSERT(isnan(gb_sm_busy_mhz(&b)));
    return 0;
}

/* A row over its samples: the median busy cycles and the median of the
 * per-sample clocks (not the clock of the median cycles); a sample with
 * no nanoseconds counts in the cycles only. */
static int test_row_medians(void)
{
    const double cycles[] = {2000, 1990, 2100, 1000, 1980};
    const double ns[] = {1000, 1000, 1000, 1000, 0};
    double scratch[5], busy, mhz;

    /* clocks: 2000, 1990, 2100, 1000 MHz (cycles over microseconds) */
    gb_sm_clock_row(cycles, ns, 5, scratch, &busy, &mhz);
    ASSERT_NEAR(busy, 1990, 1e-9);
    ASSERT_NEAR(mhz, (1990.0 + 2000.0) / 2, 1e-9);
    gb_sm_clock_row(cycles, ns, 3, scratch, &busy, &mhz);
    ASSERT_NEAR(busy, 2000, 1e-9);
    ASSERT_NEAR(mhz, 2000.0, 1e-9);
    gb_sm_clock_row(&cycles[4], &ns[4], 1, scratch, &busy, &mhz);
    ASSERT_NEAR(busy, 1980, 1e-9);
    ASSERT(isnan(mhz));
    return 0;
}

TEST_MAIN({"longest SM, same interval", test_longest_sm_same_interval},
          {"short and long rows, same clock", test_short_and_long_rows_same_clock},
          {"no valid SM", test_no_valid_sm},
          {"row medians", test_row_medians})
