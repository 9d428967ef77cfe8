/*
 * soak_report.h - soak's windows over its one-second series
 * (docs/DEEP_CHECKS.md): the first 10 s, the last 30 s, the worst 10 s of
 * each load, the share sustained and the first slowdown.  Pure (readings
 * in, figures out); unit-tested by tests/unit/test_kernels_known_answer.c.
 */
#ifndef GPUBENCH_KERNELS_SOAK_REPORT_H
#define GPUBENCH_KERNELS_SOAK_REPORT_H

#ifdef __cplusplus
extern "C" {
#endif

enum gb_soak_load { GB_SOAK_GEMM,
                    GB_SOAK_HBM,
                    GB_SOAK_LOADS };

/* One second of the soak.  rate[load] < 0: that load was not running; a
 * reading < 0: NVML did not give it. */
struct gb_soak_second {
    double rate[GB_SOAK_LOADS]; /* TFLOP/s, GB/s */
    double sm_clock_mhz, mem_clock_mhz, power_w, temperature_c;
    int throttle_read;
    unsigned long long throttle_mask;
};

/* A window's means (over the seconds that had each reading; < 0 where none
 * had it) and the union of its throttle reasons. */
struct gb_soak_window {
    int start, len;
    double rate, sm_clock_mhz, mem_clock_mhz, power_w, temperature_c;
    unsigned long long throttle_mask;
};

#define GB_SOAK_FIRST_S 10
#define GB_SOAK_LAST_S 30
#define GB_SOAK_WORST_S 10

/* The window [start, start + len) of s[0..n-1] (clipped to it), load's rate. */
void gb_soak_window(const struct gb_soak_second *s, int n, int start, int len, int load,
                    struct gb_soak_window *w);

/* The first, last and worst (lowest mean rate of any len-second window)
 * windows of load. */
void gb_soak_windows(const struct gb_soak_second *s, int n, int load, struct gb_soak_window *first,
                     struct gb_soak_window *last, struct gb_soak_window *worst);

/* The first second whose throttle reasons hold a thermal or hardware
 * slowdown (hw_slowdown, hw_thermal_slowdown, sw_thermal_slowdown,
 * hw_power_brake_slowdown; a power cap is not one), its mask's slowdown
 * bits in *mask; -1 when none. */
int gb_soak_first_slowdown(const struct gb_soak_second *s, int n, unsigned long long *mask);

/* NVML's slowdown bits (the reasons above) and its power cap bit. */
#define GB_SOAK_SLOWDOWN_BITS 0xE8ULL
#define GB_SOAK_POWER_CAP_BIT 0x4ULL

#ifdef __cplusplus
}
#endif

#endif
