/*
 * expect_deep.h - the checks of issue 32's deep checks (docs/DEEP_CHECKS.md),
 * for common/expect.c's judge.
 *
 * known_answer and memtest compare exact answers: a result that differs
 * from the host's in any bit, or a word that reads back other than it was
 * written, is a fact about the card and no noise, so their checks need no
 * card model ("ceiling": 0 mismatches or errors) and carry "exact": true:
 * the daemon confirms such a failure at once, without a confirming run
 * (server/runs/alerts.h), and its "message" names the SM or the address
 * ("known_answer fp32_fma: 3 mismatches on SM 17").  memtest's ECC counters
 * going up during the run are an exact check too (row "ecc").
 *
 * soak's floors are per model (expect.c's tables, rows of the run's
 * summary: "gemm sustained_share", "hbm sustained_share",
 * "max_temperature_c"); its "slowdown" check (seconds of the series with a
 * thermal or hardware slowdown, ceiling 0) needs no model and is judged as
 * floors are, with confirming runs.  sw_power_cap, the GEMM's cap, is not a
 * slowdown here: validity notes it.
 */
#ifndef GPUBENCH_COMMON_EXPECT_DEEP_H
#define GPUBENCH_COMMON_EXPECT_DEEP_H

#include "json_build.h"

#include <cjson/cJSON.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether benchmark's checks are exact (known_answer, memtest). */
int gb_deep_exact(const char *benchmark);

/* Pushes the exact checks of a known_answer or memtest run's results onto
 * out (one a row with a count, and memtest's "ecc"). */
void gb_deep_exact_checks(struct json_build *jb, cJSON *out, const char *benchmark,
                          const cJSON *results);

/* soak's summary as rows for the floors ({"label", "value", "unit"}, and
 * slowdown_temperature_c on max_temperature_c's): a NEW array, or NULL out
 * of memory. */
cJSON *gb_deep_soak_rows(const cJSON *results);

/* Pushes soak's model-free "slowdown" check onto out, when the run has a
 * series or a first_slowdown_reason to judge. */
void gb_deep_soak_slowdown(struct json_build *jb, cJSON *out, const cJSON *results);

#ifdef __cplusplus
}
#endif

#endif
