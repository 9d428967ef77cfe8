/* compare_build: grouping by card and comparability key, medians over
 * runs, key order, and runs that must be left out. */
#include "alloc_fail.h"
#include "compare.h"
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cJSON *run(const char *id, const char *uuid, const char *driver,
                  const char *status, double ms_stride1, double ms_stride32)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"id\":\"%s\",\"benchmark\":\"smem_stride\",\"status\":\"%s\","
             "\"host\":\"h\",\"params\":{\"strides\":[32,1]},"
             "\"device\":{\"uuid\":\"%s\",\"name\":\"Card\"},"
             "\"meta\":{\"driver\":{\"nvidia_version\":\"%s\"},"
             "\"cuda\":{\"runtime_version\":\"13.0\"}},"
             "\"results\":{\"rows\":["
             "{\"stride\":32,\"median_ms\":%g,\"min_ms\":%g,\"max_ms\":%g,\"ratio\":%g},"
             "{\"stride\":1,\"median_ms\":%g,\"min_ms\":%g,\"max_ms\":%g,\"ratio\":1}]}}",
             id, status, uuid, driver, ms_stride32, ms_stride32 * 0.9,
             ms_stride32 * 1.1, ms_stride32 / ms_stride1, ms_stride1,
             ms_stride1 * 0.9, ms_stride1 * 1.1);
    return cJSON_Parse(text);
}

/* The answer as a client reads it: printed, then parsed. */
static cJSON *as_client_sees(cJSON *out)
{
    char *text = cJSON_PrintUnformatted(out);
    cJSON *back = cJSON_Parse(text);

    free(text);
    cJSON_Delete(out);
    return back;
}

static const cJSON *row_at(const cJSON *series, int i)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(series, "rows"), i);
}

static int test_groups_and_medians(void)
{
    cJSON *runs = cJSON_CreateArray();
    cJSON *out, *series, *a;

    cJSON_AddItemToArray(runs, run("r5", "GPU-a", "580", "done", 1.0, 30.0));
    cJSON_AddItemToArray(runs, run("r4", "GPU-a", "580", "done", 3.0, 32.0));
    cJSON_AddItemToArray(runs, run("r3", "GPU-a", "580", "done", 2.0, 31.0));
    cJSON_AddItemToArray(runs, run("r2", "GPU-b", "580", "done", 1.0, 8.0));
    cJSON_AddItemToArray(runs, run("r1", "GPU-a", "570", "done", 1.0, 8.0));   /* other driver */
    cJSON_AddItemToArray(runs, run("r0", "GPU-a", "580", "failed", 9.0, 9.0)); /* not done */
    out = as_client_sees(compare_build("smem_stride", runs, 10, 1, NULL, NULL));
    ASSERT(out != NULL);
    ASSERT_STR_EQ(cJSON_GetObjectItem(out, "key")->valuestring, "stride");
    /* Keys in numeric order, whatever order the rows came in. */
    ASSERT_EQ(cJSON_GetArrayItem(cJSON_GetObjectItem(out, "keys"), 0)->valueint, 1);
    ASSERT_EQ(cJSON_GetArrayItem(cJSON_GetObjectItem(out, "keys"), 1)->valueint, 32);
    series = cJSON_GetObjectItem(out, "series");
    ASSERT_EQ(cJSON_GetArraySize(series), 3);
    a = cJSON_GetArrayItem(series, 0);
    ASSERT_STR_EQ(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "card"), "uuid")->valuestring,
                  "GPU-a");
    ASSERT_STR_EQ(cJSON_GetObjectItem(a, "driver")->valuestring, "580");
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(a, "runs")), 3);
    ASSERT_EQ(cJSON_GetObjectItem(row_at(a, 0), "n")->valueint, 3);
    ASSERT_NEAR(cJSON_GetObjectItem(row_at(a, 0), "median_ms")->valuedouble, 2.0, 1e-12);
    ASSERT_NEAR(cJSON_GetObjectItem(row_at(a, 1), "median_ms")->valuedouble, 31.0, 1e-12);
    /* min and max are over every run's min and max. */
    ASSERT_NEAR(cJSON_GetObjectItem(row_at(a, 0), "min_ms")->valuedouble, 0.9, 1e-12);
    ASSERT_NEAR(cJSON_GetObjectItem(row_at(a, 0), "max_ms")->valuedouble, 3.3, 1e-12);
    ASSERT_NEAR(cJSON_GetObjectItem(row_at(a, 0), "spread")->valuedouble, (3.3 - 0.9) / 2.0, 1e-12);
    cJSON_Delete(out);

    /* latest keeps the newest runs of a series only. */
    out = as_client_sees(compare_build("smem_stride", runs, 1, 1, NULL, NULL));
    a = cJSON_GetArrayItem(cJSON_GetObjectItem(out, "series"), 0);
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(a, "runs")), 1);
    ASSERT_STR_EQ(cJSON_GetArrayItem(cJSON_GetObjectItem(a, "runs"), 0)->valuestring, "r5");
    ASSERT_NEAR(cJSON_GetObjectItem(row_at(a, 0), "median_ms")->valuedouble, 1.0, 1e-12);
    cJSON_Delete(out);

    /* Another benchmark's name finds nothing. */
    out = as_client_sees(compare_build("transpose", runs, 10, 1, NULL, NULL));
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(out, "series")), 0);
    cJSON_Delete(out);
    cJSON_Delete(runs);
    return 0;
}

/* Runs given without rows have them read through the callback, and only
 * for the runs their series keeps. */
static int fetches;

static cJSON *rows_of(void *ctx, const char *id)
{
    (void)id;
    fetches++;
    return cJSON_Duplicate((const cJSON *)ctx, 1);
}

static int test_rows_read_only_for_kept_runs(void)
{
    cJSON *runs = cJSON_CreateArray();
    cJSON *template = run("x", "GPU-a", "580", "done", 1.0, 30.0);
    cJSON *rows = cJSON_GetObjectItem(cJSON_GetObjectItem(template, "results"), "rows");
    cJSON *out, *a;

    for (int i = 0; i < 5; i++) {
        cJSON *r = run("r", "GPU-a", "580", "done", 1.0, 30.0);
        cJSON_DeleteItemFromObject(r, "results");
        cJSON_AddItemToArray(runs, r);
    }
    fetches = 0;
    out = as_client_sees(compare_build("smem_stride", runs, 2, 1, rows_of, rows));
    ASSERT_EQ(fetches, 2);
    a = cJSON_GetArrayItem(cJSON_GetObjectItem(out, "series"), 0);
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(a, "runs")), 2);
    ASSERT_NEAR(cJSON_GetObjectItem(row_at(a, 1), "median_ms")->valuedouble, 30.0, 1e-9);
    cJSON_Delete(out);
    cJSON_Delete(runs);
    cJSON_Delete(template);
    return 0;
}

/* An invalid run is left out and counted (and takes no place among the
 * latest); an unjudged one is kept; include_invalid brings it back. */
static int test_invalid_runs_left_out(void)
{
    cJSON *runs = cJSON_CreateArray();
    cJSON *bad = run("r3", "GPU-a", "580", "done", 1.0, 47.2);
    cJSON *unknown = run("r1", "GPU-a", "580", "done", 1.0, 31.0);
    cJSON *out, *a;

    cJSON_AddBoolToObject(cJSON_AddObjectToObject(bad, "validity"), "valid", 0);
    cJSON_AddNullToObject(cJSON_AddObjectToObject(unknown, "validity"), "valid");
    cJSON_AddItemToArray(runs, bad);
    cJSON_AddItemToArray(runs, run("r2", "GPU-a", "580", "done", 1.0, 32.0));
    cJSON_AddItemToArray(runs, unknown);
    out = as_client_sees(compare_build("smem_stride", runs, 2, 0, NULL, NULL));
    a = cJSON_GetArrayItem(cJSON_GetObjectItem(out, "series"), 0);
    ASSERT_EQ(cJSON_GetObjectItem(out, "excluded_invalid")->valueint, 1);
    ASSERT_EQ(cJSON_GetObjectItem(a, "excluded_invalid")->valueint, 1);
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(a, "runs")), 2);
    ASSERT_STR_EQ(cJSON_GetArrayItem(cJSON_GetObjectItem(a, "runs"), 1)->valuestring, "r1");
    ASSERT_NEAR(cJSON_GetObjectItem(row_at(a, 1), "median_ms")->valuedouble, 31.5, 1e-9);
    cJSON_Delete(out);
    out = as_client_sees(compare_build("smem_stride", runs, 2, 1, NULL, NULL));
    a = cJSON_GetArrayItem(cJSON_GetObjectItem(out, "series"), 0);
    ASSERT_EQ(cJSON_GetObjectItem(out, "excluded_invalid")->valueint, 0);
    ASSERT_STR_EQ(cJSON_GetArrayItem(cJSON_GetObjectItem(a, "runs"), 0)->valuestring, "r3");
    cJSON_Delete(out);
    cJSON_Delete(runs);
    return 0;
}

/* Issue 21: two runs of one card at one speed (1 and 32 us an iteration)
 * whose calibration landed on 1024 and 4096 iterations a sample: one
 * series whose times are per iteration, the two runs' medians equal.  The
 * count comes from the run's summary (launch.iterations_per_sample, as
 * every worker writes it) or from the row itself (a digest row). */
static int test_per_unit_of_work(void)
{
    cJSON *runs = cJSON_CreateArray(), *r, *out, *a;
    cJSON *rows, *results;

    r = run("r2", "GPU-a", "580", "done", 1024 * 1e-3, 1024 * 32e-3);
    cJSON_AddItemToObject(cJSON_GetObjectItem(r, "results"), "summary",
                          cJSON_Parse("{\"launch\":{\"iterations_per_sample\":1024}}"));
    cJSON_AddItemToArray(runs, r);
    r = run("r1", "GPU-a", "580", "done", 4096 * 1e-3, 4096 * 32e-3);
    rows = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "results"), "rows");
    cJSON_ArrayForEach(a, rows)
        cJSON_AddNumberToObject(a, "iterations_per_sample", 4096);
    cJSON_AddItemToArray(runs, r);
    out = as_client_sees(compare_build("smem_stride", runs, 10, 1, NULL, NULL));
    ASSERT(out != NULL);
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(out, "time_per")), "iteration");
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(out, "series")), 1);
    a = cJSON_GetArrayItem(cJSON_GetObjectItem(out, "series"), 0);
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(a, "runs")), 2);
    ASSERT_NEAR(cJSON_GetObjectItem(row_at(a, 0), "median_ms")->valuedouble, 1e-3, 1e-12);
    ASSERT_NEAR(cJSON_GetObjectItem(row_at(a, 1), "median_ms")->valuedouble, 32e-3, 1e-12);
    ASSERT_NEAR(cJSON_GetObjectItem(row_at(a, 1), "min_ms")->valuedouble, 0.9 * 32e-3, 1e-12);
    ASSERT_NEAR(cJSON_GetObjectItem(row_at(a, 1), "max_ms")->valuedouble, 1.1 * 32e-3, 1e-12);
    ASSERT_NEAR(cJSON_GetObjectItem(row_at(a, 1), "spread")->valuedouble, 0.2, 1e-9);
    /* the ratio is within a run: not divided */
    ASSERT_NEAR(cJSON_GetObjectItem(row_at(a, 1), "ratio")->valuedouble, 32, 1e-9);
    cJSON_Delete(out);

    /* the digest says the units of every row, from the summary */
    results = cJSON_GetObjectItem(cJSON_GetArrayItem(runs, 0), "results");
    rows = as_client_sees(compare_row_digest("smem_stride", cJSON_GetObjectItem(results, "rows"),
                                             cJSON_GetObjectItem(results, "summary")));
    ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 1), "iterations_per_sample")->valueint,
              1024);
    cJSON_Delete(rows);
    cJSON_Delete(runs);
    return 0;
}

/* A digest's numbers are the text "%.0f" prints for a whole number under
 * 1e15 (-0 and the largest included), "%.9g" for any other: digests are
 * compared as text across nodes, so a byte of difference splits a card's
 * history. */
static int test_digest_number_text(void)
{
    static const double values[] = {0.0, -0.0, 1.0, -1.0, 7.0, 10.0,
                                    1024.0, -4096.0, 1e14, -1e14, 99999.0, 1e15 - 1,
                                    -(1e15 - 1), 1e15, 123456789012.0, 0.5, -2.5, 1e-3,
                                    3.0e20, 1.0 / 3, 12345678901.5};
    char expected[96], text[64];

    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        double v = values[i];
        cJSON *rows = cJSON_CreateArray(), *row = cJSON_CreateObject(), *d;
        char *printed;

        ASSERT(rows != NULL && row != NULL);
        ASSERT(cJSON_AddNumberToObject(row, "stride", v) != NULL);
        ASSERT(cJSON_AddItemToArray(rows, row));
        d = compare_row_digest("smem_stride", rows, NULL);
        ASSERT(d != NULL);
        printed = cJSON_PrintUnformatted(d);
        ASSERT(printed != NULL);
        if (v == floor(v) && fabs(v) < 1e15)
            snprintf(text, sizeof(text), "%.0f", v);
        else
            snprintf(text, sizeof(text), "%.9g", v);
        /* the row's member, after the units a sample held */
        snprintf(expected, sizeof(expected), "\"stride\":%s}]", text);
        ASSERT_STR_EQ(strstr(printed, "\"stride\":"), expected);
        free(printed);
        cJSON_Delete(d);
        cJSON_Delete(rows);
    }
    return 0;
}

static cJSON *build_of(void *runs)
{
    return compare_build("smem_stride", runs, 10, 1, NULL, NULL);
}

static cJSON *digest_of(void *runs)
{
    const cJSON *results = cJSON_GetObjectItem(cJSON_GetArrayItem(runs, 0), "results");

    return compare_row_digest("smem_stride", cJSON_GetObjectItem(results, "rows"), NULL);
}

/* Every cJSON allocation of the answer and of a stored digest failed in
 * turn: each is the whole one or NULL, never one with a field or a row
 * missing (AddressSanitizer's pass sees a leak on the way out). */
static int test_allocation_fails_in_turn(void)
{
    cJSON *runs = cJSON_CreateArray();

    cJSON_AddItemToArray(runs, run("r3", "GPU-a", "580", "done", 1.0, 30.0));
    cJSON_AddItemToArray(runs, run("r2", "GPU-a", "580", "done", 3.0, 32.0));
    cJSON_AddItemToArray(runs, run("r1", "GPU-b", "570", "done", 1.0, 8.0));
    ASSERT_EQ(alloc_fail_whole_or_null("compare_build", build_of, runs), 0);
    ASSERT_EQ(alloc_fail_whole_or_null("compare_row_digest", digest_of, runs), 0);
    cJSON_Delete(runs);
    return 0;
}

TEST_MAIN({"series by card and key, medians over runs", test_groups_and_medians},
          {"rows are read only for the runs kept", test_rows_read_only_for_kept_runs},
          {"invalid runs left out and counted", test_invalid_runs_left_out},
          {"times per unit of work", test_per_unit_of_work},
          {"a digest's numbers as printf writes them", test_digest_number_text},
          {"each allocation failed in turn", test_allocation_fails_in_turn})
