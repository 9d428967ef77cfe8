/*
 * validity.h - whether a stored run can be trusted: the verdict the daemon
 * writes beside a run's results (issue 13; fields fixed in the worker/server
 * contract, see README "Validity").
 *
 * The worker REPORTS what it saw (meta.watch, and per row its clocks,
 * throttle reasons and samples); this file JUDGES it, with no I/O, so the
 * same rules serve a run finished here, an import and a peer's pull, and are
 * unit-tested on their own (tests/unit/test_validity.c).
 *
 * The verdict: {"valid": true|false|null, "reasons": [{"code", "message",
 * ...details}]}.  Codes: contended, throttled, clock_unstable, ecc_errors,
 * noisy, busy_start, link_degraded (meta.link below its maximum generation
 * or width; judged with or without meta.watch), unverified (a row whose
 * output check failed, "verified": false; also without meta.watch).  valid is null when
 * meta.watch is absent (a run made before the watch existed, or by a worker
 * without it) and nothing else is wrong: treated as valid,
 * shown as unknown.
 *
 * Beside the reasons, "notes": [{"code", "message", ...}] (present only
 * when there is one) says what a reader should know without it making the
 * run invalid.  Codes: a deep check's own findings under their reason's
 * code (gb_validity_judge_benchmark); power_capped (rows marked power_bound, compute_peak's
 * tensor GEMMs, ran at the card's power cap, sw_power_cap: expected of a
 * GEMM at full rate, so not a throttled reason; details: rows, and
 * enforced_power_limit_w from meta where the worker read it).
 */
#ifndef GPUBENCH_COMMON_VALIDITY_H
#define GPUBENCH_COMMON_VALIDITY_H

#include <cjson/cJSON.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A row's SM clock further than this from the median of the run's row
 * clocks makes the run clock_unstable (the contract's 2%). */
#define GB_VALIDITY_CLOCK_TOLERANCE 0.02

/* The noisy bound on a row's robust spread (see validity.c for why 10%). */
#define GB_VALIDITY_NOISY_SPREAD80 0.10
/* The bound on the max-min spread, used only for a row without samples. */
#define GB_VALIDITY_NOISY_SPREAD 0.25

/* Judges a run from its results ({"rows": [...]}) and meta; either may be
 * NULL.  Returns a NEW object the caller owns (cJSON_Delete), whole, or
 * NULL when out of memory (never a verdict with a part missing: it is
 * stored). */
cJSON *gb_validity_judge(const cJSON *results, const cJSON *meta);

/* The same, for a run of benchmark (NULL: as gb_validity_judge): a deep
 * check's own findings (known_answer's and memtest's verified: false,
 * memtest's ecc_errors, soak's throttled) are notes, not reasons, since
 * they are what the run is there to find; its checks judge them
 * (common/expect.h). */
cJSON *gb_validity_judge_benchmark(const char *benchmark, const cJSON *results,
                                   const cJSON *meta);

/* The verdict's valid as a stored flag: 1 (true), 0 (false), -1 (null or
 * no verdict). */
int gb_validity_flag(const cJSON *validity);

/* The spread of the middle 80% of samples[0..n-1] (sorted in place):
 * (10th - 90th percentile, interpolated) over the median; -1 when n < 2 or
 * the median is not positive. */
double gb_validity_spread80(double *samples, int n);

#ifdef __cplusplus
}
#endif

#endif
