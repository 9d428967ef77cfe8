/*
 * test_verdicts.c - server/judge/verdicts.c, pure: samples are judged per
 * unit of work (issue 21), so two runs of one card at one speed whose
 * calibration landed on different work are `same`, and the answer says
 * what its times are per.
 */
#include "alloc_fail.h"
#include "test.h"

#include <cjson/cJSON.h>
#include <stdio.h>

#include "verdicts.h"

/* A done smem_stride run as the store gives it to a verdict: stride 1 and
 * 32 rows with 20 samples each at us1 and us32 microseconds an iteration
 * (a small fixed ripple), iters iterations a sample, stated in the summary
 * as the worker states it. */
static cJSON *smem_run(const char *id, int iters, double us1, double us32)
{
    cJSON *run = cJSON_CreateObject(), *results, *rows;
    const double us[2] = {us1, us32};
    const int strides[2] = {1, 32};

    cJSON_AddStringToObject(run, "id", id);
    cJSON_AddStringToObject(run, "benchmark", "smem_stride");
    cJSON_AddStringToObject(run, "status", "done");
    cJSON_AddItemToObject(run, "params", cJSON_Parse("{\"strides\":[1,32],\"min_sample_ms\":1}"));
    cJSON_AddStringToObject(cJSON_AddObjectToObject(run, "device"), "name", "NVIDIA H200");
    results = cJSON_AddObjectToObject(run, "results");
    rows = cJSON_AddArrayToObject(results, "rows");
    for (int r = 0; r < 2; r++) {
        cJSON *row = cJSON_CreateObject(), *samples;
        cJSON_AddNumberToObject(row, "stride", strides[r]);
        cJSON_AddNumberToObject(row, "median_ms", us[r] * 1e-3 * iters);
        cJSON_AddNumberToObject(row, "sm_clock_mhz_measured", 1980);
        samples = cJSON_AddArrayToObject(row, "samples");
        for (int i = 0; i < 20; i++)
            cJSON_AddItemToArray(samples, cJSON_CreateNumber(us[r] * 1e-3 * iters *
                                                             (1 + 1e-4 * ((i * 7) % 11 - 5))));
        cJSON_AddItemToArray(rows, row);
    }
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(results, "summary"),
                                                    "launch"),
                            "iterations_per_sample", iters);
    return run;
}

static int test_per_unit_of_work(void)
{
    cJSON *base = cJSON_CreateArray(), *cand = cJSON_CreateArray(), *out;
    struct verdict_group a = {.selector = "a", .runs = base};
    struct verdict_group b = {.selector = "b", .runs = cand};
    const cJSON *row;

    cJSON_AddItemToArray(base, smem_run("r1", 1024, 1.0, 32.0));
    cJSON_AddItemToArray(cand, smem_run("r2", 4096, 1.0, 32.0));
    out = verdicts_compare("smem_stride", &a, &b, 0.01, 0);
    ASSERT(out != NULL);
    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(out, "comparable")));
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(out, "time_per")), "iteration");
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(out, "verdict")), "same");
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(out, "rows")), 2);
    cJSON_ArrayForEach(row, cJSON_GetObjectItem(out, "rows")) {
        double bm = cJSON_GetNumberValue(cJSON_GetObjectItem(row, "baseline_median_ms"));
        double cm = cJSON_GetNumberValue(cJSON_GetObjectItem(row, "candidate_median_ms"));
        ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(row, "verdict")), "same");
        ASSERT_NEAR(bm, cm, 1e-12);
        ASSERT(bm < 33e-3); /* per iteration, not per sample */
    }
    cJSON_Delete(out);

    /* the same work, 4x slower an iteration: slower, as before */
    cJSON_DeleteItemFromArray(cand, 0);
    cJSON_AddItemToArray(cand, smem_run("r3", 1024, 4.0, 128.0));
    out = verdicts_compare("smem_stride", &a, &b, 0.01, 0);
    ASSERT(out != NULL);
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(out, "verdict")), "slower");
    cJSON_Delete(out);
    cJSON_Delete(base);
    cJSON_Delete(cand);
    return 0;
}

/* g[0] a card's history, g[1] a run, g[2] a run of another key. */
static cJSON *compare_of(void *g)
{
    const struct verdict_group *groups = g;

    return verdicts_compare("smem_stride", &groups[0], &groups[1], 0.01, 0);
}

static cJSON *differing_of(void *g)
{
    const struct verdict_group *groups = g;

    return verdicts_compare("smem_stride", &groups[0], &groups[2], 0.01, 0);
}

static cJSON *history_of(void *g)
{
    const struct verdict_group *groups = g;

    return verdicts_history("smem_stride", &groups[0], &groups[1], 0.01);
}

/* Every cJSON allocation of a comparison, of one between groups that
 * differ and of a run's history verdict (stored with the run) failed in
 * turn: each answer is the whole one or NULL, never one with a field or a
 * row missing (AddressSanitizer's pass sees a leak on the way out). */
static int test_allocation_fails_in_turn(void)
{
    cJSON *hist = cJSON_CreateArray(), *run = cJSON_CreateArray(), *other = cJSON_CreateArray();
    struct verdict_group g[3] = {
        {.selector = "history", .runs = hist},
        {.selector = "run", .runs = run},
        {.selector = "other", .runs = other},
    };
    char id[16];

    for (int i = 0; i < 6; i++) {
        snprintf(id, sizeof(id), "h%d", i);
        cJSON_AddItemToArray(hist, smem_run(id, 1024, 1.0 + 0.01 * i, 32.0));
    }
    cJSON_AddItemToArray(run, smem_run("r", 1024, 1.2, 32.0));
    cJSON_AddItemToArray(other, smem_run("o", 1024, 1.0, 32.0));
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(other, 0), "params",
                              cJSON_Parse("{\"strides\":[1,32],\"min_sample_ms\":2}"));
    ASSERT_EQ(alloc_fail_whole_or_null("verdicts_compare", compare_of, g), 0);
    ASSERT_EQ(alloc_fail_whole_or_null("verdicts_compare, keys differ", differing_of, g), 0);
    ASSERT_EQ(alloc_fail_whole_or_null("verdicts_history", history_of, g), 0);
    cJSON_Delete(hist);
    cJSON_Delete(run);
    cJSON_Delete(other);
    return 0;
}

TEST_MAIN({"per_unit_of_work", test_per_unit_of_work},
          {"allocation_fails_in_turn", test_allocation_fails_in_turn})
