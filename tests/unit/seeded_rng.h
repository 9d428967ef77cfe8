/*
 * seeded_rng.h - the simulations' random numbers (test_shift.c,
 * test_changepoint.c, bench/store/change_time.c): xorshift64* and
 * Box-Muller, seeded by setting rng_state, so that every machine draws the
 * same numbers and a measured rate is the same on every run.  Each file
 * that includes it has its own state.
 */
#ifndef GPUBENCH_TESTS_SEEDED_RNG_H
#define GPUBENCH_TESTS_SEEDED_RNG_H

#include <math.h>
#include <stdint.h>

static uint64_t rng_state;

static double uniform01(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return ((rng_state * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}

static double gaussian(void)
{
    double u = uniform01(), v = uniform01();

    if (u < 1e-300)
        u = 1e-300;
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

#endif
