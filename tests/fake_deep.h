/*
 * fake_deep.h - the test double's SYNTHETIC rows for issue 32's deep checks
 * (known_answer, memtest, soak), in the row shapes of docs/DEEP_CHECKS.md.
 * The numbers are made up, near an H200's; nothing here was measured and
 * nothing waits: a soak of 120 s answers at once with 120 one-second
 * entries.
 *
 * What the double plants, by the control word (fake_worker.c's
 * GPUBENCH_FAKE_CONTROL; once:WORD for one job):
 *   mismatch_sm=N      known_answer: 3 mismatches on SM N in the first kind
 *                      asked for (fp32_fma by default), its result_hash
 *                      another card's
 *   memtest_error=0xA  memtest: 2 errors in the walking pattern, the first
 *                      at byte address 0xA
 *   memtest_ecc        memtest: one volatile corrected ECC error counted
 *                      during the run (summary.ecc_increase)
 *   soak_thermal       soak: hw_thermal_slowdown from second 60, the GEMM
 *                      at 0.8 of its first rate, 89 C against NVML's 88 C
 *                      slowdown threshold
 * GPUBENCH_FAKE_SM_COUNT (default 4, the double's card) is the SMs that
 * known_answer covers; a planted SM past it is clamped to the last one.
 */
#ifndef GPUBENCH_FAKE_DEEP_H
#define GPUBENCH_FAKE_DEEP_H

#include <cjson/cJSON.h>

/* 1 when bench is a deep check the double draws here. */
int fake_deep_knows(const char *bench);

/* The result of bench ({"rows", "summary"}) for params (resolved) under
 * the control word mode, on a card of memory_bytes and sm_count SMs.  A
 * NEW object the caller owns; NULL out of memory. */
cJSON *fake_deep_result(const char *bench, const cJSON *params, const char *mode,
                        double memory_bytes, int sm_count);

#endif
