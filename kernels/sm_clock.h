/*
 * sm_clock.h - the SM clock and busy cycles of a smem_read launch, from
 * what each block recorded on its own SM (pure arithmetic, no GPU:
 * unit-tested in tests/unit/test_kernels_sm_clock.c).
 *
 * Each block of smem_read writes GB_SPAN_FIELDS numbers: clock64 and
 * %globaltimer (ns) just before its timed loop, the same two once all its
 * warps are done, and its SM id.  On one SM the busy interval runs from
 * the earliest start to the latest end of the blocks it ran (blocks
 * sharing an SM overlap, so no single block covers it), and that SM's
 * clock is the interval's cycles over the same interval's nanoseconds.
 *
 * Why not cycles over the CUDA-event time of the sample, as before: the
 * event time also holds the launch and the ramp of blocks across SMs,
 * about 12 us on an H200, so a 1 ms row read ~2% under the clock it ran
 * at and a 32 ms row read right: an idle card looked clock_unstable.
 */
#ifndef GPUBENCH_KERNELS_SM_CLOCK_H
#define GPUBENCH_KERNELS_SM_CLOCK_H

#ifdef __cplusplus
extern "C" {
#endif

/* One block's record: [start cycles, end cycles, start ns, end ns, SM id]. */
enum {
    GB_SPAN_START_CYCLES,
    GB_SPAN_END_CYCLES,
    GB_SPAN_START_NS,
    GB_SPAN_END_NS,
    GB_SPAN_SM,
    GB_SPAN_FIELDS
};

/* One launch: the SM with the longest busy interval (in its cycles), its
 * cycles and the nanoseconds of the same interval. */
struct gb_sm_busy {
    int sm;        /* -1 when no block had a valid SM id */
    double cycles; /* clock64 ticks from its first block's start to its
                      last block's end */
    double ns;     /* %globaltimer over the same two reads' blocks */
};

/* Reads spans[GB_SPAN_FIELDS * b + field] for blocks 0..blocks-1 of a
 * launch on a device of sm_count SMs.  first and last are scratch room
 * for sm_count block indices each (caller owns them).  A block whose SM id
 * is out of range is skipped.  Never fails; out->sm = -1 when no SM had a
 * block. */
void gb_sm_busy_of_launch(const long long *spans, int blocks, int sm_count, int *first,
                          int *last, struct gb_sm_busy *out);

/* The SM clock of one launch in MHz (cycles per microsecond); NAN when
 * the interval took no measurable time. */
double gb_sm_busy_mhz(const struct gb_sm_busy *b);

/* A row's summary over its n samples: the median busy cycles and the
 * median clock (cycles[i] / ns[i] each, in MHz), medians as in stats.h.
 * scratch holds n doubles (caller owns).  Samples with no interval
 * (ns <= 0) are left out of the clock; NAN where none is left. */
void gb_sm_clock_row(const double *cycles, const double *ns, int n, double *scratch,
                     double *busy_cycles, double *clock_mhz);

#ifdef __cplusplus
}
#endif

#endif
