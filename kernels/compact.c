/*
 * compact.c - rank compaction of a warp's word indices; see compact.h for
 * why it preserves the measurement.
 */
#include "compact.h"

long gb_words_needed(const long words[GB_WARP_LANES])
{
    long max = -1;

    for (int lane = 0; lane < GB_WARP_LANES; lane++) {
        if (words[lane] < 0)
            return 0;
        if (words[lane] > max)
            max = words[lane];
    }
    return max + 1;
}

long gb_compact_words(const long in[GB_WARP_LANES], long out[GB_WARP_LANES])
{
    long rows[GB_WARP_LANES];
    long result[GB_WARP_LANES];

    for (int lane = 0; lane < GB_WARP_LANES; lane++)
        rows[lane] = in[lane] / GB_WARP_LANES;
    for (int lane = 0; lane < GB_WARP_LANES; lane++) {
        /* rank = how many distinct used rows lie below this lane's row */
        long rank = 0;
        for (int other = 0; other < GB_WARP_LANES; other++) {
            int first = 1;
            if (rows[other] >= rows[lane])
                continue;
            for (int prev = 0; prev < other; prev++) {
                if (rows[prev] == rows[other]) {
                    first = 0;
                    break;
                }
            }
            rank += first;
        }
        result[lane] = rank * GB_WARP_LANES + in[lane] % GB_WARP_LANES;
    }
    for (int lane = 0; lane < GB_WARP_LANES; lane++)
        out[lane] = result[lane];
    return gb_words_needed(out);
}
