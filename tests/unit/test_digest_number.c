/* digest_number_text: printf's "%.0f" (whole numbers under 1e15) and
 * "%.9g" (any other) to the byte, over numbers of every magnitude, near
 * ties of the ninth digit, powers of ten and their neighbours. */
#include "digest_number.h"
#include "test.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t state = 0x9E3779B97F4A7C15ull;

static uint64_t next(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

/* 1 when digest_number_text writes what printf writes for v. */
static int same(double v)
{
    char want[64], got[DIGEST_NUMBER_CAP];

    if (v == floor(v) && fabs(v) < 1e15)
        snprintf(want, sizeof(want), "%.0f", v);
    else
        snprintf(want, sizeof(want), "%.9g", v);
    digest_number_text(got, sizeof(got), v);
    if (strcmp(want, got) != 0) {
        fprintf(stderr, "%.17g: printf \"%s\", digest_number_text \"%s\"\n", v, want, got);
        return 0;
    }
    return 1;
}

static int test_random_bits(void)
{
    for (int i = 0; i < 400000; i++) {
        uint64_t bits = next();
        double v;
        memcpy(&v, &bits, sizeof(v));
        if (isfinite(v))
            ASSERT(same(v));
    }
    return 0;
}

/* Magnitudes a digest holds (1e-25 to 1e25), as a decimal with 10 to 17
 * digits: many end in 5 past the ninth, a tie or within an ulp of one. */
static int test_decimals_near_ties(void)
{
    char text[64];

    for (int i = 0; i < 400000; i++) {
        int digits = 10 + (int)(next() % 8), exp10 = (int)(next() % 51) - 25;
        uint64_t mant = next() % 1000000000ull;
        int tail = digits - 9;
        char tail_text[16];

        for (int t = 0; t < tail; t++)
            tail_text[t] = (char)('0' + (t == 0 ? 5 : (next() % 4 == 0 ? (int)(next() % 10) : 0)));
        tail_text[tail] = '\0';
        snprintf(text, sizeof(text), "%s%llu%se%d", next() % 2 ? "-" : "",
                 (unsigned long long)(mant + 100000000ull) % 1000000000ull, tail_text, exp10);
        ASSERT(same(strtod(text, NULL)));
    }
    return 0;
}

static int test_edges(void)
{
    static const double fixed[] = {0.0, -0.0, 0.5, -2.5, 1e-3, 1.0 / 3,
                                   1e15, 1e15 - 1, -(1e15 - 1), 123456789.5, 999999999.5,
                                   9999999995.0, 0.000123456789, 0.0001, 0.00001,
                                   1e-19, 1e20, 1e-20, 1e21, 3.0e20, 12345678901.5};

    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        ASSERT(same(fixed[i]));
    for (int e = -30; e <= 30; e++) {
        double p = pow(10, e);
        ASSERT(same(p));
        ASSERT(same(nextafter(p, 0)));
        ASSERT(same(nextafter(p, INFINITY)));
        ASSERT(same(-p));
        ASSERT(same(p * 0.9999999995));
        ASSERT(same(p * 1.0000000005));
    }
    for (long long n = -2000; n <= 2000; n++)
        ASSERT(same((double)n / 8)); /* halves and eighths: exact ties */
    return 0;
}

TEST_MAIN({"random bit patterns", test_random_bits},
          {"decimals near a tie of the ninth digit", test_decimals_near_ties},
          {"zeros, powers of ten, their neighbours, exact ties", test_edges})
