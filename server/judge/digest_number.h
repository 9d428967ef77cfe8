/*
 * digest_number.h - the text of a number in a stored digest and a
 * comparison (compare.c): a whole number under 1e15 as "%.0f" prints it
 * (counts stay exact), any other as "%.9g" (medians of timings carry
 * nothing past the ninth digit).
 *
 * Digests are compared as text across nodes, so the text must be
 * printf's to the byte.  It is written here without printf wherever that
 * can be known for certain, because printf's way through its
 * floating-point code costs some two thousand instructions a number, and
 * a hub writes thirty of them a pulled run:
 *   - a whole number: its digits, from an integer;
 *   - any other between 1e-19 and 1e20: its nine digits from one long
 *     double multiplication by an exact power of ten (error under 1e-10
 *     of a unit in the ninth digit), rounded, then laid out as %g lays
 *     them out.  Where the rounding is close to a tie (within 1e-6 of
 *     one) or the exponent is in doubt, printf writes it instead.
 */
#ifndef GPUBENCH_JUDGE_DIGEST_NUMBER_H
#define GPUBENCH_JUDGE_DIGEST_NUMBER_H

#include <stddef.h>

/* The smallest buffer digest_number_text takes. */
#define DIGEST_NUMBER_CAP 32

/* v's text as above into text (cap >= DIGEST_NUMBER_CAP bytes); v must be
 * finite. */
void digest_number_text(char *text, size_t cap, double v);

#endif
