/*
 * throttle.c - decode NVML's throttle reason mask; see throttle.h.  The bit
 * values are NVML's published constants (nvml.h), copied here because the
 * worker loads NVML at run time and does not need its header to build.
 */
#include "throttle.h"

#include <stddef.h>

struct reason {
    unsigned long long bit;
    const char *name;
    int slowdown;
};

static const struct reason reasons[] = {
    {0x1ULL, "gpu_idle", 0},
    {0x2ULL, "applications_clocks_setting", 0},
    {0x4ULL, "sw_power_cap", 1},
    {0x8ULL, "hw_slowdown", 1},
    {0x10ULL, "sync_boost", 0},
    {0x20ULL, "sw_thermal_slowdown", 1},
    {0x40ULL, "hw_thermal_slowdown", 1},
    {0x80ULL, "hw_power_brake_slowdown", 1},
    {0x100ULL, "display_clock_setting", 0},
};

#define REASON_COUNT (sizeof(reasons) / sizeof(reasons[0]))

int gb_throttle_decode(unsigned long long mask, const char *names[], int cap)
{
    unsigned long long known = 0;
    int count = 0;

    for (size_t i = 0; i < REASON_COUNT; i++) {
        known |= reasons[i].bit;
        if (mask & reasons[i].bit) {
            if (count < cap)
                names[count] = reasons[i].name;
            count++;
        }
    }
    if (mask & ~known) {
        if (count < cap)
            names[count] = "unknown";
        count++;
    }
    return count;
}

int gb_throttle_is_slowdown(unsigned long long mask)
{
    for (size_t i = 0; i < REASON_COUNT; i++)
        if (reasons[i].slowdown && (mask & reasons[i].bit))
            return 1;
    return 0;
}
