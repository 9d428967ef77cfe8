/*
 * nvml_state.h - the card's state (clocks, temperature, power limit,
 * throttle reasons, ECC) and the driver version, read through NVML.
 *
 * NVML is loaded at run time with dlopen("libnvidia-ml.so.1"), never
 * linked: the worker must start where the library is missing (a build
 * machine, a container without the driver's utilities) and then says why
 * it has no state.  Nothing here writes a setting: the card is measured as
 * it is found.
 */
#ifndef GPUBENCH_KERNELS_NVML_STATE_H
#define GPUBENCH_KERNELS_NVML_STATE_H

#include <stddef.h>
#include <cjson/cJSON.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gb_nvml;

/* Loads and initialises NVML.  Returns a handle the caller frees with
 * gb_nvml_close, or NULL with a sentence in reason. */
struct gb_nvml *gb_nvml_open(char *reason, size_t reason_cap);
void gb_nvml_close(struct gb_nvml *nvml);

/* The driver version ("580.159.03").  Returns 0, or -1 with reason. */
int gb_nvml_driver_version(struct gb_nvml *nvml, char *out, size_t cap,
                           char *reason, size_t reason_cap);

/* A NEW object (caller owns) describing the state of the GPU at
 * pci_bus_id now: {"available": true, "when": when, "sm_clock_mhz", ...};
 * with nvml NULL or the GPU not found, {"available": false, "reason": ...}.
 * Fields NVML refuses are null.  NULL only when out of memory. */
cJSON *gb_nvml_card_state(struct gb_nvml *nvml, const char *pci_bus_id,
                          const char *when, const char *unavailable_reason);

#ifdef __cplusplus
}
#endif

#endif
