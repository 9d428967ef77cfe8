/*
 * test_expect_deep.c - the deep checks' judging (issue 32): the exact
 * checks of known_answer and memtest name the SM or the address and need
 * no card model, memtest's ECC rise fails its own check, soak's summary is
 * judged against its model's floors and ceiling and its slowdowns for any
 * model, and a deep check's own findings leave its run valid (validity's
 * notes) while the same rows of another benchmark do not.
 */
#include "alloc_fail.h"
#include "expect.h"
#include "test.h"
#include "validity.h"

#include <stdlib.h>

/* The check of row in checks, or NULL (a check's row is its label). */
static const cJSON *check_of(const cJSON *checks, const char *row)
{
    for (const cJSON *c = checks ? checks->child : NULL; c; c = c->next)
        if (row && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "row")), row) == 0)
            return c;
    return NULL;
}

static const char *message_of(const cJSON *checks, const char *row)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(check_of(checks, row), "message"));
}

/* known_answer with 3 mismatches on SMs 17 and 40 in fp32_fma, none in
 * fp64_fma, and a cublas_bf16 that could not run. */
static const char known_answer_run[] =
    "{\"rows\": ["
    "{\"label\": \"fp32_fma\", \"unit\": \"mismatches\", \"value\": 3, \"mismatches\": 3,"
    " \"first_mismatches\": [{\"sm\": 17, \"element\": 1}, {\"sm\": 40, \"element\": 2},"
    " {\"sm\": 17, \"element\": 3}], \"verified\": false},"
    "{\"label\": \"fp64_fma\", \"unit\": \"mismatches\", \"value\": 0, \"mismatches\": 0,"
    " \"first_mismatches\": [], \"verified\": true},"
    "{\"label\": \"cublas_bf16\", \"unit\": \"mismatches\", \"available\": false,"
    " \"reason\": \"no cuBLAS\"}]}";

static int test_known_answer(void)
{
    cJSON *results = cJSON_Parse(known_answer_run);
    cJSON *checks = gb_checks_judge("known_answer", results, NULL); /* no model at all */
    const cJSON *bad = check_of(checks, "fp32_fma"), *good = check_of(checks, "fp64_fma");

    ASSERT(gb_expect_benchmark_checked("known_answer"));
    ASSERT_EQ(cJSON_GetArraySize(checks), 2); /* the kind that could not run: no check */
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(bad, "pass")));
    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(bad, "exact")));
    ASSERT_EQ(cJSON_GetNumberValue(cJSON_GetObjectItem(bad, "ceiling")), 0);
    ASSERT(cJSON_GetObjectItem(bad, "floor") == NULL);
    ASSERT_STR_EQ(message_of(checks, "fp32_fma"),
                  "known_answer fp32_fma: 3 mismatches on SMs 17, 40");
    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(good, "pass")));
    ASSERT(cJSON_GetObjectItem(good, "message") == NULL);
    ASSERT_EQ(gb_checks_failed(checks), 1);
    cJSON_Delete(checks);
    cJSON_Delete(results);
    return 0;
}

static const char memtest_run[] =
    "{\"rows\": ["
    "{\"label\": \"walking\", \"unit\": \"GB/s\", \"value\": 3400, \"errors\": 2,"
    " \"first_errors\": [{\"address\": \"0x1f4000\"}, {\"address\": \"0x1fc000\"}]},"
    "{\"label\": \"address\", \"unit\": \"GB/s\", \"value\": 3500, \"errors\": 0,"
    " \"first_errors\": []}],"
    " \"summary\": {\"ecc_before\": {\"volatile_corrected\": 4, \"volatile_uncorrected\": null,"
    " \"remapped_rows_correctable\": 1}, \"ecc_after\": {\"volatile_corrected\": 6,"
    " \"volatile_uncorrected\": null, \"remapped_rows_correctable\": 2},"
    " \"ecc_increase\": true}}";

static int test_memtest(void)
{
    cJSON *results = cJSON_Parse(memtest_run);
    cJSON *checks = gb_checks_judge("memtest", results, NULL);
    const cJSON *ecc = check_of(checks, "ecc");

    ASSERT_STR_EQ(message_of(checks, "walking"), "memtest walking: 2 errors, first at 0x1f4000");
    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(check_of(checks, "address"), "pass")));
    ASSERT_EQ(cJSON_GetNumberValue(cJSON_GetObjectItem(ecc, "value")), 3);
    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(ecc, "exact")));
    ASSERT_STR_EQ(message_of(checks, "ecc"),
                  "memtest ecc: the ECC counters rose during the test (volatile_corrected +2, "
                  "remapped_rows_correctable +1)");
    cJSON_Delete(checks);
    /* counters unchanged: the ecc check passes */
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(results, "summary"), "ecc_after",
                              cJSON_Duplicate(cJSON_GetObjectItem(cJSON_GetObjectItem(
                                                                      results, "summary"),
                                                                  "ecc_before"),
                                              1));
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(results, "summary"), "ecc_increase",
                              cJSON_CreateFalse());
    checks = gb_checks_judge("memtest", results, NULL);
    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(check_of(checks, "ecc"), "pass")));
    cJSON_Delete(checks);
    cJSON_Delete(results);
    return 0;
}

/* A soak's summary: sustained shares, the hottest second, NVML's
 * threshold and a series with a thermal slowdown in its last 2 s. */
static cJSON *soak_results(double gemm_share, double hottest, int slowed)
{
    char text[1200];

    snprintf(text, sizeof(text),
             "{\"rows\": [], \"summary\": {\"sustained_share\": {\"gemm\": %g, \"hbm\": 0.99},"
             " \"max_temperature_c\": %g, \"slowdown_temperature_c\": 88,"
             " \"first_slowdown_s\": %s, \"first_slowdown_reason\": %s, \"series\": ["
             "{\"t\": 1, \"throttle_reasons\": [\"sw_power_cap\"]},"
             "{\"t\": 2, \"throttle_reasons\": [\"sw_power_cap\"%s]},"
             "{\"t\": 3, \"throttle_reasons\": [%s]}]}}",
             gemm_share, hottest, slowed ? "1" : "null",
             slowed ? "\"hw_thermal_slowdown\"" : "null",
             slowed ? ", \"hw_thermal_slowdown\"" : "", slowed ? "\"hw_slowdown\"" : "");
    return cJSON_Parse(text);
}

static int test_soak(void)
{
    cJSON *meta = cJSON_Parse("{\"device\": {\"name\": \"NVIDIA H200\"}}");
    cJSON *unknown = cJSON_Parse("{\"device\": {\"name\": \"Some GPU\"}}");
    cJSON *good = soak_results(0.97, 71, 0), *bad = soak_results(0.8, 88, 1);
    cJSON *checks = gb_checks_judge("soak", good, meta);
    const cJSON *temp = check_of(checks, "max_temperature_c");

    ASSERT(good && bad && checks);
    ASSERT_EQ(gb_checks_failed(checks), 0);
    ASSERT_EQ(cJSON_GetArraySize(checks), 4);
    ASSERT_EQ(cJSON_GetNumberValue(cJSON_GetObjectItem(temp, "ceiling")), 87);
    ASSERT(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(temp, "source")), "88 C") != NULL);
    ASSERT_EQ(cJSON_GetNumberValue(
                  cJSON_GetObjectItem(check_of(checks, "gemm sustained_share"), "floor")),
              0.9);
    ASSERT_EQ(cJSON_GetNumberValue(cJSON_GetObjectItem(check_of(checks, "slowdown"), "value")),
              0); /* sw_power_cap is no slowdown */
    cJSON_Delete(checks);
    checks = gb_checks_judge("soak", bad, meta);
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(check_of(checks, "gemm sustained_share"), "pass")));
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(check_of(checks, "max_temperature_c"), "pass")));
    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(check_of(checks, "hbm sustained_share"), "pass")));
    ASSERT(!cJSON_IsTrue(cJSON_GetObjectItem(check_of(checks, "slowdown"), "exact")));
    ASSERT_STR_EQ(message_of(checks, "slowdown"),
                  "soak: hw_thermal_slowdown from 1 s (2 s of slowdown)");
    cJSON_Delete(checks);
    /* a model without floors: its floors not judged, its slowdowns are */
    checks = gb_checks_judge("soak", bad, unknown);
    ASSERT(cJSON_IsNull(cJSON_GetObjectItem(check_of(checks, "gemm sustained_share"), "pass")));
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(check_of(checks, "slowdown"), "pass")));
    ASSERT_EQ(gb_checks_failed(checks), 1);
    cJSON_Delete(checks);
    cJSON_Delete(good);
    cJSON_Delete(bad);
    cJSON_Delete(meta);
    cJSON_Delete(unknown);
    return 0;
}

/* What a deep check is there to find leaves its run valid, as a note;
 * the same rows under another benchmark are a reason. */
static int test_validity_notes(void)
{
    cJSON *results = cJSON_Parse(known_answer_run);
    cJSON *meta = cJSON_Parse(
        "{\"watch\": {\"available\": true, \"throttle_reasons\": [\"hw_thermal_slowdown\"],"
        " \"throttle_reasons_outside_rows\": [\"hw_thermal_slowdown\"],"
        " \"ecc_volatile\": {\"before\": {\"corrected\": 0, \"uncorrected\": 0},"
        " \"after\": {\"corrected\": 1, \"uncorrected\": 0}}}}");
    cJSON *v = gb_validity_judge_benchmark("known_answer", results, meta);
    const cJSON *notes = cJSON_GetObjectItem(v, "notes");
    const cJSON *reasons = cJSON_GetObjectItem(v, "reasons");

    /* known_answer finds wrong answers, not slowdowns nor ECC errors */
    ASSERT_EQ(gb_validity_flag(v), 0);
    ASSERT_EQ(cJSON_GetArraySize(reasons), 2);
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(notes, 0), "code")),
                  "unverified");
    cJSON_Delete(v);
    v = gb_validity_judge_benchmark("memtest", results, meta);
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(v, "reasons")), 1); /* throttled */
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(v, "notes")), 2);
    cJSON_Delete(v);
    v = gb_validity_judge_benchmark("soak", results, meta);
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(v, "reasons")), 2); /* unverified, ecc */
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(
                      cJSON_GetArrayItem(cJSON_GetObjectItem(v, "notes"), 0), "code")),
                  "throttled"); /* a thermal slowdown: judged by its checks */
    cJSON_Delete(v);
    /* a soak's GEMM at the power cap and nothing else: compute_peak's note */
    cJSON_Delete(meta);
    meta = cJSON_Parse("{\"watch\": {\"available\": true, "
                       "\"throttle_reasons\": [\"sw_power_cap\"], "
                       "\"throttle_reasons_outside_rows\": [\"sw_power_cap\"]}}");
    v = gb_validity_judge_benchmark("soak", NULL, meta);
    ASSERT_EQ(gb_validity_flag(v), 1);
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(
                      cJSON_GetArrayItem(cJSON_GetObjectItem(v, "notes"), 0), "code")),
                  "power_capped");
    cJSON_Delete(v);
    /* the same rows of another benchmark: unverified is a reason */
    v = gb_validity_judge(results, NULL);
    ASSERT_EQ(gb_validity_flag(v), 0);
    cJSON_Delete(v);
    v = gb_validity_judge_benchmark("known_answer", results, NULL);
    ASSERT(gb_validity_flag(v) != 0);
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(v, "notes")), 1);
    cJSON_Delete(v);
    cJSON_Delete(results);
    cJSON_Delete(meta);
    return 0;
}

static cJSON *memtest_checks_of(void *ctx)
{
    return gb_checks_judge("memtest", ctx, NULL);
}

static cJSON *soak_checks_of(void *ctx)
{
    return gb_checks_judge("soak", ctx, NULL);
}

/* Every allocation failed in turn: the checks whole, or NULL. */
static int test_allocation_fails_in_turn(void)
{
    cJSON *memtest = cJSON_Parse(memtest_run), *soak = soak_results(0.8, 90, 1);

    ASSERT_EQ(alloc_fail_whole_or_null("memtest checks", memtest_checks_of, memtest), 0);
    ASSERT_EQ(alloc_fail_whole_or_null("soak checks", soak_checks_of, soak), 0);
    cJSON_Delete(memtest);
    cJSON_Delete(soak);
    return 0;
}

TEST_MAIN({"known_answer", test_known_answer}, {"memtest", test_memtest}, {"soak", test_soak},
          {"validity_notes", test_validity_notes},
          {"allocation_fails_in_turn", test_allocation_fails_in_turn})
