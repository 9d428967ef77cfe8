/*
 * predict.c - conflict degree of a warp access; see predict.h for the rule.
 */
#include "predict.h"

#include <limits.h>

int gb_degree_for_stride(long stride)
{
    long a, b = GB_SMEM_BANKS;

    if (stride < 1)
        return 0;
    a = stride % GB_SMEM_BANKS;
    while (a != 0) {
        long t = b % a;
        b = a;
        a = t;
    }
    return (int)b;
}

void gb_stride_words(long stride, long words[GB_WARP_LANES])
{
    for (int lane = 0; lane < GB_WARP_LANES; lane++)
        words[lane] = (long)lane * stride;
}

/* Counts each distinct word once in its bank: a word seen at a lower lane
 * is a broadcast and adds nothing.  32 lanes, so the quadratic scan is
 * 496 comparisons and needs no allocation. */
void gb_bank_loads(const long words[GB_WARP_LANES], int per_bank[GB_SMEM_BANKS])
{
    for (int b = 0; b < GB_SMEM_BANKS; b++)
        per_bank[b] = 0;
    for (int lane = 0; lane < GB_WARP_LANES; lane++) {
        int seen = 0;
        if (words[lane] < 0)
            continue;
        for (int prev = 0; prev < lane; prev++) {
            if (words[prev] == words[lane]) {
                seen = 1;
                break;
            }
        }
        if (!seen)
            per_bank[words[lane] % GB_SMEM_BANKS]++;
    }
}

int gb_degree_for_words(const long words[GB_WARP_LANES])
{
    int per_bank[GB_SMEM_BANKS];
    int degree = 0;

    for (int lane = 0; lane < GB_WARP_LANES; lane++)
        if (words[lane] < 0)
            return 0;
    gb_bank_loads(words, per_bank);
    for (int b = 0; b < GB_SMEM_BANKS; b++)
        if (per_bank[b] > degree)
            degree = per_bank[b];
    return degree;
}

int gb_shared_lanes(const long words[GB_WARP_LANES])
{
    int shared = 0;

    for (int lane = 1; lane < GB_WARP_LANES; lane++) {
        for (int prev = 0; prev < lane; prev++) {
            if (words[prev] == words[lane]) {
                shared++;
                break;
            }
        }
    }
    return shared;
}

/* Each lane's word covers bytes [start, start + word_bytes); every
 * unit_bytes-aligned unit any of those bytes falls in is counted once.
 * Lanes are in increasing address order (stride >= 0), so a unit repeats
 * only as the highest one seen so far: no table needed. */
static int distinct_units(int stride_words, int word_bytes, int unit_bytes)
{
    long long last = -1;
    int units = 0;

    if (stride_words < 0 || word_bytes < 1)
        return 0;
    for (int lane = 0; lane < GB_WARP_LANES; lane++) {
        long long start = (long long)lane * stride_words * word_bytes;
        long long first = start / unit_bytes;
        long long end = (start + word_bytes - 1) / unit_bytes;
        for (long long u = first; u <= end; u++) {
            if (u > last) {
                units++;
                last = u;
            }
        }
    }
    return units;
}

int gb_predict_gmem_sectors(int stride_words, int word_bytes)
{
    return distinct_units(stride_words, word_bytes, GB_GMEM_SECTOR_BYTES);
}

int gb_predict_gmem_lines(int stride_words, int word_bytes)
{
    return distinct_units(stride_words, word_bytes, GB_GMEM_LINE_BYTES);
}

/* Sector of each lane's word, counted once: 32 lanes, quadratic scan. */
int gb_sectors_for_words(const long words[GB_WARP_LANES])
{
    int sectors = 0;

    for (int lane = 0; lane < GB_WARP_LANES; lane++) {
        long sector;
        int seen = 0;
        if (words[lane] < 0)
            return 0;
        sector = words[lane] * 4 / GB_GMEM_SECTOR_BYTES;
        for (int prev = 0; prev < lane && !seen; prev++)
            seen = words[prev] * 4 / GB_GMEM_SECTOR_BYTES == sector;
        sectors += !seen;
    }
    return sectors;
}

int gb_sectors_for_stride(long stride)
{
    if (stride < 1 || stride > INT_MAX / (GB_WARP_LANES * 4))
        return 0;
    return gb_predict_gmem_sectors((int)stride, 4);
}

int gb_lines_for_stride(long stride)
{
    if (stride < 1 || stride > INT_MAX / (GB_WARP_LANES * 4))
        return 0;
    return gb_predict_gmem_lines((int)stride, 4);
}
