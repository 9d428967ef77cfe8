/*
 * digest_number.c - see digest_number.h.
 *
 * The nine digits: e, the decimal exponent, is guessed from the binary
 * one and corrected until m = |v| * 10^(8-e) lies in [1e8, 1e9).  10^k is
 * exact in a double up to 10^22 and within half an ulp beyond; the one
 * multiplication (or division) adds half an ulp: m is within 2.3e-7 of
 * the exact product, so its rounding to a whole number is printf's
 * wherever m is further than 1e-6 from a half.  The arithmetic is plain
 * double (no long double, which valgrind runs at double precision, so
 * a profile takes the same path as the daemon).
 */
#include "digest_number.h"

#include <math.h>
#include <stdio.h>

/* "%.0f" of v, a whole number under 1e15 in magnitude (-0 included). */
static void whole_text(char *text, double v)
{
    char digits[24];
    unsigned long long u = (unsigned long long)fabs(v);
    int n = 0;

    do
        digits[n++] = (char)('0' + u % 10);
    while ((u /= 10) > 0);
    if (signbit(v))
        *text++ = '-';
    while (n > 0)
        *text++ = digits[--n];
    *text = '\0';
}

/* |v|'s nine significant digits (a whole number in [1e8, 1e9)) rounded
 * as printf rounds them, and its decimal exponent after that rounding.
 * 0, or -1 where that is not certain here. */
static int nine_digits(double v, unsigned long *digits, int *exp10)
{
    static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
                                 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
                                 1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27};
    double a = fabs(v), m = 0, r, f;
    int e = (int)floor(ilogb(a) * 0.30102999566398120), tries;

    if (!(a >= 1e-19 && a < 1e20))
        return -1;
    for (tries = 0; tries < 3; tries++) {
        int k = 8 - e;
        if (k < -27 || k > 27)
            return -1;
        m = k >= 0 ? a * p10[k] : a / p10[-k];
        if (m < 1e8)
            e--;
        else if (m >= 1e9)
            e++;
        else
            break;
    }
    if (tries == 3)
        return -1;
    r = floor(m);
    f = m - r; /* exact: m < 2^30 */
    if (fabs(f - 0.5) < 1e-6)
        return -1; /* too near a tie to know */
    *digits = (unsigned long)r + (f > 0.5);
    *exp10 = e;
    if (*digits == 1000000000UL) {
        *digits = 100000000UL;
        (*exp10)++;
    }
    return 0;
}

/* "%.9g" of v from its digits and exponent x, as printf lays them out. */
static void g9_text(char *text, double v, unsigned long digits, int x)
{
    char d[9];
    int n = 9;

    for (int i = 8; i >= 0; i--, digits /= 10)
        d[i] = (char)('0' + digits % 10);
    while (n > 1 && d[n - 1] == '0')
        n--; /* %g drops the fraction's trailing zeros */
    if (signbit(v))
        *text++ = '-';
    if (x < -4 || x >= 9) {
        *text++ = d[0];
        if (n > 1)
            *text++ = '.';
        for (int i = 1; i < n; i++)
            *text++ = d[i];
        sprintf(text, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
        return;
    }
    if (x >= 0) {
        for (int i = 0; i <= x; i++)
            *text++ = i < 9 ? d[i] : '0';
        if (n > x + 1)
            *text++ = '.';
        for (int i = x + 1; i < n; i++)
            *text++ = d[i];
    } else {
        *text++ = '0';
        *text++ = '.';
        for (int i = -1; i > x; i--)
            *text++ = '0';
        for (int i = 0; i < n; i++)
            *text++ = d[i];
    }
    *text = '\0';
}

void digest_number_text(char *text, size_t cap, double v)
{
    unsigned long digits;
    int x;

    if (v == floor(v) && fabs(v) < 1e15)
        whole_text(text, v); /* counts stay exact */
    else if (nine_digits(v, &digits, &x) == 0)
        g9_text(text, v, digits, x);
    else
        snprintf(text, cap, "%.9g", v);
}
