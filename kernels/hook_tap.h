/*
 * hook_tap.h - a benchmark's own look at the card during its timed
 * samples, without taking the job's hooks away (progress, the clock
 * states, the watch): the backend is given tap->hooks, whose calls go to
 * the job's hooks first and then to the tap's own.  pcie_bandwidth reads
 * the PCIe link this way, compute_peak the SM clock and the power limit.
 */
#ifndef GPUBENCH_KERNELS_HOOK_TAP_H
#define GPUBENCH_KERNELS_HOOK_TAP_H

#include "gb_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gb_hook_tap {
    struct gb_hooks hooks;                              /* what the backend is given */
    struct gb_hooks *inner;                             /* the job's */
    void (*in_flight)(void *arg);                       /* a timed sample runs */
    void (*between)(void *arg, struct gb_samples *row); /* it has ended */
    void *arg;
};

/* Ready to wrap inner (whose total the benchmark has set); either
 * callback may be NULL.  tap must stay where it is while in use
 * (tap->hooks.arg points at it). */
void gb_hook_tap_init(struct gb_hook_tap *tap, struct gb_hooks *inner,
                      void (*in_flight)(void *arg),
                      void (*between)(void *arg, struct gb_samples *row), void *arg);

/* After the backend: its counts (done, and total as the backend changed
 * it) back into the job's hooks. */
void gb_hook_tap_finish(struct gb_hook_tap *tap);

#ifdef __cplusplus
}
#endif

#endif
