/*
 * meta.h - the metadata stored with every run: the card, the driver, CUDA,
 * how the worker was built, the card's state before and after, and an
 * honest word on what was not measured (hardware counters, with the reason
 * from counters_report.h).
 */
#ifndef GPUBENCH_WORKER_META_H
#define GPUBENCH_WORKER_META_H

#include <stddef.h>
#include <cjson/cJSON.h>

#include "counters.h"
#include "gb_kernels.h"
#include "nvml_state.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An SM clock that fell by more than this share between the first and
 * the last timed sample flags the run (the timings mix two clocks). */
#define GB_CLOCK_DROP_TOLERANCE 0.03

struct gb_meta_input {
    const struct gb_device_info *dev;
    struct gb_nvml *nvml;    /* NULL where NVML is missing */
    const char *nvml_reason; /* why it is missing */
    cJSON *state_before;     /* taken over by gb_meta_build */
    cJSON *state_after;      /* taken over by gb_meta_build */
    const char *started_at, *finished_at;
    const struct gb_counters_state *counters; /* NULL: no counter pass */
};

/* A NEW meta object (caller owns); the two states become part of it, also
 * when NULL is returned (out of memory). */
cJSON *gb_meta_build(struct gb_meta_input *in);

/* {"nvidia_version", "source": "nvml" | "proc" | null, "reason"}: NVML
 * first, then /proc/driver/nvidia/version.  A NEW object. */
cJSON *gb_driver_json(struct gb_nvml *nvml, const char *nvml_reason,
                      const char *proc_path);

/* 1 when after's sm_clock_mhz is below before's by more than tolerance,
 * 0 when not, -1 when either is unknown (reason says why). */
int gb_clock_dropped(const cJSON *before, const cJSON *after, double tolerance,
                     char *reason, size_t reason_cap);

/* The current time as RFC 3339 UTC with milliseconds. */
void gb_rfc3339_now(char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
