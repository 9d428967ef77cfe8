/*
 * predict.h - the conflict degree of a warp's shared-memory access, decided
 * before anything runs.
 *
 * Shared memory has 32 banks of 4-byte words; word w lives in bank w % 32.
 * A warp's request is served in as many passes as its busiest bank needs,
 * and a bank needs one pass per DISTINCT word it is asked for: lanes that
 * read the same word are served together (a broadcast), not serialised.
 *
 * These are the only functions that compute a prediction; the server's
 * POST /predict, the rows of every run and the worker's own checks all call
 * them, so the claim cannot drift between two copies.  No allocation; pure.
 */
#ifndef GPUBENCH_COMMON_PREDICT_H
#define GPUBENCH_COMMON_PREDICT_H

#ifdef __cplusplus
extern "C" {
#endif

#define GB_WARP_LANES 32
#define GB_SMEM_BANKS 32

/* gcd(stride, 32) for stride >= 1: the degree of "lane L reads word
 * L * stride".  Returns 0 for stride < 1 (no such access). */
int gb_degree_for_stride(long stride);

/* The largest number of distinct words any bank is asked for, over the
 * 32 word indices in words[] (one a lane, each >= 0).  Returns 0 if any
 * index is negative. */
int gb_degree_for_words(const long words[GB_WARP_LANES]);

/* Fills words[L] = L * stride: the access that smem_stride makes. */
void gb_stride_words(long stride, long words[GB_WARP_LANES]);

/* Number of lanes whose word is also read by a lower lane: 0 means every
 * lane reads a distinct word (no broadcast hides in the pattern). */
int gb_shared_lanes(const long words[GB_WARP_LANES]);

/* per_bank[b] = number of distinct words bank b is asked for. */
void gb_bank_loads(const long words[GB_WARP_LANES], int per_bank[GB_SMEM_BANKS]);

/* Global memory (gmem_stride): a warp's load is served in
 * 32-byte sectors.  The number of DISTINCT 32-byte sectors touched when
 * lane L reads the word_bytes-wide word at index L * stride_words, the
 * first at byte 0: 4 for stride 1 of 4-byte words, 32 once the lanes are
 * 32 bytes or more apart.  0 when stride_words < 0 or word_bytes < 1;
 * stride 0 (every lane the same word) is 1 sector, or more when one word
 * spans several. */
#define GB_GMEM_SECTOR_BYTES 32
int gb_predict_gmem_sectors(int stride_words, int word_bytes);

/* The same for 32-bit words given by index, lane L's word words[L] from a
 * base aligned to 128 bytes (a pattern, not a stride).  Returns 0 if any
 * index is negative. */
int gb_sectors_for_words(const long words[GB_WARP_LANES]);

/* gb_predict_gmem_sectors(stride, 4): what the worker's gmem_stride rows
 * predict.  0 for stride < 1. */
int gb_sectors_for_stride(long stride);

/* The same count in 128-byte cache lines: the L1's tag lookups (set
 * accesses) a warp's load needs, one per line it touches.  Past 8 words
 * apart every lane has its own sector (32), but the lines keep growing to
 * 32 at 32 words apart; on an H200 the time follows whichever costs more
 * (kernels/README.md: counted with l1tex__t_set_accesses). */
#define GB_GMEM_LINE_BYTES 128
int gb_predict_gmem_lines(int stride_words, int word_bytes);
int gb_lines_for_stride(long stride);

#ifdef __cplusplus
}
#endif

#endif
