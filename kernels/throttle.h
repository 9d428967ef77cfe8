/*
 * throttle.h - names for NVML's clock throttle ("clocks event") reason bits.
 *
 * NVML reports why the clocks are below their maximum as a bit mask
 * (nvmlClocksThrottleReason* / nvmlClocksEventReason*); a stored run carries
 * names a person can read.  Pure; unit-tested in
 * tests/unit/test_kernels_driver.c.
 */
#ifndef GPUBENCH_KERNELS_THROTTLE_H
#define GPUBENCH_KERNELS_THROTTLE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the names of the bits set in mask to names[0..cap-1] (static
 * strings, in bit order; bits NVML does not define give one "unknown")
 * and returns how many were set, which may exceed cap (only cap written). */
int gb_throttle_decode(unsigned long long mask, const char *names[], int cap);

/* Whether mask holds a reason that lowers clocks under load (power, thermal
 * or hardware slowdown), as opposed to idle or a setting. */
int gb_throttle_is_slowdown(unsigned long long mask);

#ifdef __cplusplus
}
#endif

#endif
