/*
 * device_json.h - a GPU's description as JSON: the entries of `--list`,
 * the device of the ready line and of every run's meta (one writer, so
 * the three never disagree).
 */
#ifndef GPUBENCH_WORKER_DEVICE_JSON_H
#define GPUBENCH_WORKER_DEVICE_JSON_H

#include <cjson/cJSON.h>

#include "gb_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A NEW object (caller owns; NULL when out of memory). */
cJSON *gb_device_json(const struct gb_device_info *d);

/* A NEW {"devices": [...]} object for `--list`, with "reason" when the
 * list is empty or a device could not be read. */
cJSON *gb_device_list_json(void);

/* What `--list`, `run` and `serve` say when the runtime cannot reach a GPU
 * because no NVIDIA kernel module is loaded (the CUDA runtime calls that
 * "insufficient driver", which sends a newcomer looking for an upgrade). */
#define GB_NO_DRIVER_SENTENCE \
    "no NVIDIA driver is loaded on this machine (/proc/driver/nvidia/version is missing)"

/* 1 when this worker has CUDA but the machine has no NVIDIA driver loaded. */
int gb_driver_missing(void);

#ifdef __cplusplus
}
#endif

#endif
