/*
 * nvml_watch.h - one reading of an idle card for the daemon's watch probe:
 * the line {"event":"watch","reading":{...}} the worker answers
 * {"watch":true} with, and what `gpubench-worker watch` prints.
 *
 * Plain C, no CUDA: the real worker and the test double (tests/fake_worker.c,
 * with the stand-in NVML of tests/fake_nvml.c) share it, so the daemon's
 * tests read the same JSON the card gives.  The fields are the contract's
 * (docs: README "Watching cards"); each is null where NVML lacks it.
 */
#ifndef GPUBENCH_KERNELS_NVML_WATCH_H
#define GPUBENCH_KERNELS_NVML_WATCH_H

#include <cjson/cJSON.h>

#include "nvml_state.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A NEW reading object (caller deletes) of the GPU at pci_bus_id now:
 * {"t", "available", ...}; with nvml NULL or the GPU not found,
 * {"t", "available": false, "reason"} (unavailable_reason when nvml is
 * NULL).  NULL only when out of memory. */
cJSON *gb_nvml_watch_reading(struct gb_nvml *nvml, const char *pci_bus_id,
                             const char *unavailable_reason);

#ifdef __cplusplus
}
#endif

#endif
