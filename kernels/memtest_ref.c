/*
 * memtest_ref.c - memtest's host side of the patterns and error records;
 * see memtest_ref.h.
 */
#include "memtest_ref.h"

#include <stdlib.h>
#include <string.h>

static const char *const pattern_names[GB_MT_PATTERNS] = {"inversions", "walking", "address",
                                                          "random"};

int gb_mt_pattern_parse(const char *name)
{
    for (int p = 0; name && p < GB_MT_PATTERNS; p++)
        if (strcmp(name, pattern_names[p]) == 0)
            return p;
    return -1;
}

const char *gb_mt_pattern_name(int pattern)
{
    return pattern >= 0 && pattern < GB_MT_PATTERNS ? pattern_names[pattern] : NULL;
}

void gb_mt_check_host(const uint64_t *words, size_t count, uint64_t base, int pattern,
                      int inverted, uint64_t seed, unsigned long long *errors,
                      struct gb_mt_error *first)
{
    for (size_t i = 0; i < count; i++) {
        uint64_t addr = base + 8 * (uint64_t)i, want = gb_mt_value(pattern, addr, seed);
        if (inverted)
            want = ~want;
        if (words[i] != want)
            gb_mt_note(first, (*errors)++, addr, want, words[i]);
    }
}

static int by_address(const void *a, const void *b)
{
    const struct gb_mt_error *x = a, *y = b;

    return (x->address > y->address) - (x->address < y->address);
}

void gb_mt_sort(struct gb_mt_error *first, int n)
{
    if (n > 1)
        qsort(first, (size_t)n, sizeof(*first), by_address);
}
