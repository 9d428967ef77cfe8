/*
 * calibrate.h - how much work one timed sample needs.
 *
 * A sample must last at least min_sample_ms so that launch overhead and
 * event resolution are noise.  The caller times one sample at the current
 * work (loop iterations or launches), then asks gb_calibrate_step for the
 * next work to try, until it says the current one is enough.  Pure
 * arithmetic; unit-tested in tests/unit/test_kernels_stats.c.
 */
#ifndef GPUBENCH_KERNELS_CALIBRATE_H
#define GPUBENCH_KERNELS_CALIBRATE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Returns 1 when a sample of *work that took measured_ms is long enough
 * (measured_ms >= target_ms), or *work already equals max_work; *work is
 * then left as is.  Otherwise sets *work to a larger value and returns 0:
 * time again.  The larger value aims 5% past the target, grows at least
 * 2 and at most 64 times, is rounded up to a power of two and capped at
 * max_work.  Powers of two make two runs on one card settle on the same
 * work, so their medians compare directly.  work < 1 is treated as 1. */
int gb_calibrate_step(long *work, double measured_ms, double target_ms,
                      long max_work);

#ifdef __cplusplus
}
#endif

#endif
