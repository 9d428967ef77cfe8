/*
 * memtest_ref.h - memtest's patterns and its error records
 * (docs/DEEP_CHECKS.md).  The inline functions are compiled for the GPU
 * (memtest_kernels.cu) and the host (memtest_ref.c, the unit test), so
 * the value a word must hold is one formula on both sides.
 *
 * Every pattern is three passes over the region, 64-bit words:
 *   write     word <- v(addr)
 *   invert    check word == v(addr), then word <- ~v(addr)
 *   check     check word == ~v(addr)
 * so each word is written twice and read twice (4 x bytes_tested of
 * traffic), and every bit is seen at 0 and at 1.  v(addr) per pattern:
 *   inversions  0 (then all ones: moving inversions of zeros and ones)
 *   walking     1 << ((addr / 8) mod 64) (a walking one; then the walking zero)
 *   address     addr (address in address; then its complement)
 *   random      a hash of addr and `seed`, regenerated on read
 *
 * Pure (no CUDA, no JSON); unit-tested by tests/unit/test_kernels_known_answer.c.
 */
#ifndef GPUBENCH_KERNELS_MEMTEST_REF_H
#define GPUBENCH_KERNELS_MEMTEST_REF_H

#include <stddef.h>
#include <stdint.h>

#include "known_answer_ref.h" /* GB_HD */

#ifdef __cplusplus
extern "C" {
#endif

enum gb_mt_pattern { GB_MT_INVERSIONS,
                     GB_MT_WALKING,
                     GB_MT_ADDRESS,
                     GB_MT_RANDOM,
                     GB_MT_PATTERNS };

int gb_mt_pattern_parse(const char *name);
const char *gb_mt_pattern_name(int pattern);

/* The value the word at device address addr holds after the write pass. */
GB_HD static inline uint64_t gb_mt_value(int pattern, uint64_t addr, uint64_t seed)
{
    switch (pattern) {
    case GB_MT_WALKING:
        return 1ull << ((addr >> 3) & 63);
    case GB_MT_ADDRESS:
        return addr;
    case GB_MT_RANDOM: { /* two multiplies a word: cheap enough to regenerate at HBM speed */
        uint64_t x = (addr >> 3) * 0x9E3779B97F4A7C15ull + seed;
        x ^= x >> 31;
        x *= 0xD6E8FEB86659FD93ull;
        return x ^ (x >> 32);
    }
    default:
        return 0;
    }
}

/* One word that read back wrong. */
#define GB_MT_MAX_RECORDS 16
struct gb_mt_error {
    uint64_t address, expected, got;
};

/* Writes record slot (the count before it was advanced, as the GPU's
 * atomicAdd gives it) when it is one of the first. */
GB_HD static inline void gb_mt_note(struct gb_mt_error *first, unsigned long long slot,
                                    uint64_t address, uint64_t expected, uint64_t got)
{
    if (slot < GB_MT_MAX_RECORDS) {
        first[slot].address = address;
        first[slot].expected = expected;
        first[slot].got = got;
    }
}

/* The host's check of words (at device address base): every word that is
 * not v(addr) (inverted: ~v(addr)) is counted in *count and noted in
 * first.  What the GPU's check kernel does, for the unit tests and for a
 * region read back to the host. */
void gb_mt_check_host(const uint64_t *words, size_t count, uint64_t base, int pattern,
                      int inverted, uint64_t seed, unsigned long long *errors,
                      struct gb_mt_error *first);

/* Sorts the noted records by address; n = min(errors, GB_MT_MAX_RECORDS). */
void gb_mt_sort(struct gb_mt_error *first, int n);

#ifdef __cplusplus
}
#endif

#endif
