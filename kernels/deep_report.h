/*
 * deep_report.h - the rows and summaries of the deep checks
 * (known_answer, memtest, soak) from what their backend measured
 * (gb_deep.h), as docs/DEEP_CHECKS.md spells them.  No CUDA and no NVML
 * calls here (deep_bench.c reads NVML and hands the readings in), so the
 * unit tests build every row, mismatches and memory errors included, from
 * synthetic results (tests/unit/test_kernels_known_answer.c).
 *
 * Each returns a NEW {"rows": [...], "summary": {...}} the caller deletes,
 * or NULL when memory ran out (nothing partial is returned).
 */
#ifndef GPUBENCH_KERNELS_DEEP_REPORT_H
#define GPUBENCH_KERNELS_DEEP_REPORT_H

#include <cjson/cJSON.h>

#include "gb_deep.h"
#include "nvml_state.h"

#ifdef __cplusplus
extern "C" {
#endif

/* res[i] is kinds[i]'s (enum gb_ka_kind). */
cJSON *gb_ka_report(const int *kinds, const struct gb_ka_result *res, int count);

/* The ECC and row-remap counters before and after the memory test;
 * read: both readings were taken (else every counter is null and reason
 * says why; the pointer must outlive the call). */
struct gb_mt_ecc {
    int read;
    struct gb_nvml_health before, after;
    const char *reason;
};
cJSON *gb_memtest_report(const struct gb_memtest_result *m, int passes,
                         const struct gb_mt_ecc *ecc);

/* s[0..res->seconds-1] holds each second's rates and NVML readings;
 * slowdown_temperature_c < 0: NVML did not give it; nvml_reason is
 * written when no second had throttle reasons. */
cJSON *gb_soak_report(const struct gb_soak_result *res, const struct gb_soak_second *s,
                      double slowdown_temperature_c, const char *nvml_reason);

#ifdef __cplusplus
}
#endif

#endif
