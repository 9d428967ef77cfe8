/*
 * proc_version.h - the NVIDIA driver version from /proc/driver/nvidia/version,
 * the fallback where NVML cannot be loaded.
 *
 * The file's first line reads, depending on the kernel module flavour,
 *   NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  Thu ...
 *   NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.03  Release Build ...
 * The version is the first token after "NVRM version:" made of digits and
 * dots with at least one dot.  Unit-tested in tests/unit/test_kernels_driver.c.
 */
#ifndef GPUBENCH_WORKER_PROC_VERSION_H
#define GPUBENCH_WORKER_PROC_VERSION_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GB_PROC_DRIVER_VERSION_PATH "/proc/driver/nvidia/version"

/* Parses text (NUL-terminated file contents) and writes the version into
 * out (cap bytes).  Returns 0, or -1 when no version is found. */
int gb_parse_proc_driver_version(const char *text, char *out, size_t cap);

/* Reads path and parses it.  Returns 0, or -1 with a sentence in reason
 * (e.g. the file is missing: no NVIDIA kernel module loaded). */
int gb_read_proc_driver_version(const char *path, char *out, size_t cap,
                                char *reason, size_t reason_cap);

#ifdef __cplusplus
}
#endif

#endif
