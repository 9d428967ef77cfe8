/*
 * test_kernels_driver.c - the driver version from /proc text
 * (worker/proc_version.c), the throttle reason names (kernels/throttle.c),
 * the clock-drop flag and the driver fallback chain (worker/meta.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "meta.h"
#include "proc_version.h"
#include "test.h"
#include "throttle.h"

static const char *const proprietary =
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.154.05  Thu Dec 28 15:37:48 UTC 2023\n"
    "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n";
static const char *const open_module =
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.03  Release Build  "
    "(dvs-builder@U16-I2-C03-12-4)  Wed Oct  1 00:00:00 UTC 2025\n"
    "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n";

static int test_parse_formats(void)
{
    char v[32];

    ASSERT_EQ(gb_parse_proc_driver_version(proprietary, v, sizeof(v)), 0);
    ASSERT_STR_EQ(v, "535.154.05");
    /* "x86_64" must not be taken for a version (it has no dot) */
    ASSERT_EQ(gb_parse_proc_driver_version(open_module, v, sizeof(v)), 0);
    ASSERT_STR_EQ(v, "580.159.03");
    ASSERT_EQ(gb_parse_proc_driver_version("NVRM version: NVIDIA 595.84\n", v, sizeof(v)), 0);
    ASSERT_STR_EQ(v, "595.84");
    return 0;
}

static int test_parse_rejects(void)
{
    char v[32], tiny[4];

    ASSERT_EQ(gb_parse_proc_driver_version("", v, sizeof(v)), -1);
    ASSERT_EQ(gb_parse_proc_driver_version(NULL, v, sizeof(v)), -1);
    ASSERT_EQ(gb_parse_proc_driver_version("GCC version: 12.2.0\n", v, sizeof(v)), -1);
    /* the version must be on the NVRM line, not a later one */
    ASSERT_EQ(gb_parse_proc_driver_version("NVRM version: NVIDIA\nGCC 12.2.0\n", v,
                                           sizeof(v)),
              -1);
    ASSERT_EQ(gb_parse_proc_driver_version(proprietary, tiny, sizeof(tiny)), -1);
    return 0;
}

static int write_temp(char *path, size_t cap, const char *text)
{
    FILE *f;
    int fd;

    snprintf(path, cap, "/tmp/gb_proc_version_XXXXXX");
    fd = mkstemp(path);
    if (fd < 0)
        return -1;
    f = fdopen(fd, "w");
    if (f == NULL)
        return -1;
    fputs(text, f);
    fclose(f);
    return 0;
}

static int test_read_file(void)
{
    char path[64], v[32], why[256];

    ASSERT_EQ(write_temp(path, sizeof(path), open_module), 0);
    ASSERT_EQ(gb_read_proc_driver_version(path, v, sizeof(v), why, sizeof(why)), 0);
    ASSERT_STR_EQ(v, "580.159.03");
    unlink(path);
    ASSERT_EQ(gb_read_proc_driver_version(path, v, sizeof(v), why, sizeof(why)), -1);
    ASSERT(strstr(why, path) != NULL);
    return 0;
}

static int test_throttle_names(void)
{
    const char *names[8];

    ASSERT_EQ(gb_throttle_decode(0, names, 8), 0);
    ASSERT_EQ(gb_throttle_decode(0x4 | 0x40, names, 8), 2);
    ASSERT_STR_EQ(names[0], "sw_power_cap");
    ASSERT_STR_EQ(names[1], "hw_thermal_slowdown");
    ASSERT_EQ(gb_throttle_decode(0x1, names, 8), 1);
    ASSERT_STR_EQ(names[0], "gpu_idle");
    ASSERT_EQ(gb_throttle_decode(0x10000 | 0x8, names, 8), 2);
    ASSERT_STR_EQ(names[0], "hw_slowdown");
    ASSERT_STR_EQ(names[1], "unknown");
    /* cap 1: the count is still all of them, only one name written */
    names[1] = "untouched";
    ASSERT_EQ(gb_throttle_decode(0x4 | 0x40, names, 1), 2);
    ASSERT_STR_EQ(names[1], "untouched");
    ASSERT(gb_throttle_is_slowdown(0x4));
    ASSERT(gb_throttle_is_slowdown(0x80));
    ASSERT(!gb_throttle_is_slowdown(0x1 | 0x2 | 0x10));
    return 0;
}

static cJSON *state(double mhz)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "sm_clock_mhz", mhz);
    return o;
}

static int test_clock_dropped(void)
{
    cJSON *a = state(1980), *b = state(1900), *c = state(1965), *none = cJSON_CreateObject();
    char why[160];

    ASSERT_EQ(gb_clock_dropped(a, b, 0.03, why, sizeof(why)), 1); /* -4% */
    ASSERT_EQ(gb_clock_dropped(a, c, 0.03, why, sizeof(why)), 0); /* -0.8% */
    ASSERT_EQ(gb_clock_dropped(b, a, 0.03, why, sizeof(why)), 0); /* rose */
    ASSERT_EQ(gb_clock_dropped(a, none, 0.03, why, sizeof(why)), -1);
    ASSERT(strlen(why) > 0);
    ASSERT_EQ(gb_clock_dropped(NULL, a, 0.03, why, sizeof(why)), -1);
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(c);
    cJSON_Delete(none);
    return 0;
}

/* Without NVML the version comes from the /proc file, and without both
 * it is null with both reasons. */
static int test_driver_fallbacks(void)
{
    char path[64];
    cJSON *d;

    ASSERT_EQ(write_temp(path, sizeof(path), proprietary), 0);
    d = gb_driver_json(NULL, "NVML not loaded: test", path);
    ASSERT_STR_EQ(cJSON_GetObjectItem(d, "nvidia_version")->valuestring, "535.154.05");
    ASSERT_STR_EQ(cJSON_GetObjectItem(d, "source")->valuestring, "proc");
    cJSON_Delete(d);
    unlink(path);
    d = gb_driver_json(NULL, "NVML not loaded: test", path);
    ASSERT(cJSON_IsNull(cJSON_GetObjectItem(d, "nvidia_version")));
    ASSERT(cJSON_IsNull(cJSON_GetObjectItem(d, "source")));
    ASSERT(strstr(cJSON_GetObjectItem(d, "reason")->valuestring, "NVML not loaded: test"));
    ASSERT(strstr(cJSON_GetObjectItem(d, "reason")->valuestring, path));
    cJSON_Delete(d);
    return 0;
}

/* The meta object never claims what it did not read. */
static int test_meta_is_honest(void)
{
    struct gb_device_info dev;
    struct gb_meta_input in;
    cJSON *meta, *counters;

    memset(&dev, 0, sizeof(dev));
    snprintf(dev.name, sizeof(dev.name), "Test GPU");
    memset(&in, 0, sizeof(in));
    in.dev = &dev;
    in.nvml_reason = "NVML not loaded: test";
    in.state_before = state(1980);
    in.state_after = state(1800);
    in.started_at = "2026-01-01T00:00:00.000Z";
    in.finished_at = "2026-01-01T00:00:01.000Z";
    meta = gb_meta_build(&in);
    ASSERT(meta != NULL);
    ASSERT(in.state_before == NULL && in.state_after == NULL); /* taken over */
    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(meta, "clock_dropped")));
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(meta, "synthetic")));
    counters = cJSON_GetObjectItem(meta, "counters");
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(counters, "available")));
    ASSERT(cJSON_IsString(cJSON_GetObjectItem(counters, "reason")));
    ASSERT_STR_EQ(cJSON_GetObjectItem(cJSON_GetObjectItem(meta, "device"), "name")->valuestring,
                  "Test GPU");
    ASSERT(cJSON_IsObject(cJSON_GetObjectItem(meta, "build")));
    ASSERT(cJSON_IsString(cJSON_GetObjectItem(meta, "hostname")));
    cJSON_Delete(meta);
    return 0;
}

TEST_MAIN({"proc version: both module formats", test_parse_formats},
          {"proc version: rejects", test_parse_rejects},
          {"proc version: read file", test_read_file},
          {"throttle: names", test_throttle_names},
          {"clock dropped", test_clock_dropped},
          {"driver: fallbacks", test_driver_fallbacks},
          {"meta: honest", test_meta_is_honest})
