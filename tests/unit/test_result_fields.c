/* The table of result-row fields: it fits the readers' arrays, names are
 * unique, the CSV columns are the ones scripts were given before the
 * table existed (in that order, samples last), GET /benchmarks'
 * description carries each use, and every benchmark says which fields its
 * rows must carry (what an import is held to). */
#include "result_fields.h"
#include "bench_spec.h"
#include "test.h"

#include <stdlib.h>

static int test_shape(void)
{
    size_t n = gb_result_field_count();

    ASSERT(n > 0 && n <= GB_RESULT_FIELDS_MAX);
    for (size_t i = 0; i < n; i++) {
        ASSERT(gb_result_field_find(gb_result_field_at(i)->name) == gb_result_field_at(i));
        ASSERT(gb_result_field_at(i)->label != NULL && gb_result_field_at(i)->help != NULL);
    }
    ASSERT(gb_result_field_at(n) == NULL);
    ASSERT(gb_result_field_find("no_such_field") == NULL);
    return 0;
}

static int test_csv_order(void)
{
    static const char *const csv[] = {
        "stride", "variant", "pattern", "predicted_degree", "median_ms", "min_ms",
        "max_ms", "spread", "ratio", "gbps", "share_of_ceiling", "verified",
        "bank_conflicts", "wavefronts", "ratio_cycles", "sm_clock_mhz_measured",
        "mem_clock_mhz", "ci_low_ms", "ci_high_ms", "samples", "label",
        "predicted_sectors", "sectors_per_request", "value", "unit", "peak",
        "share_of_peak", "predicted_lines", "lines_per_request", "dram_bytes_per_request",
        /* after the run's trailing columns (GB_USE_CSV_LATE) */
        "mismatches", "checked", "sms_covered", "result_hash", "errors", "bytes_tested",
        "share_of_memcpy", "sm_clock_mhz", "power_w", "temperature_c",
        "algbw_gbps", "busbw_gbps", NULL};
    const char *const *want = csv;

    for (size_t i = 0; i < gb_result_field_count(); i++) {
        const struct gb_result_field *f = gb_result_field_at(i);
        if (!(f->uses & GB_USE_CSV))
            continue;
        ASSERT(*want != NULL);
        ASSERT_STR_EQ(f->name, *want);
        want++;
    }
    ASSERT(*want == NULL);
    return 0;
}

static int test_describe(void)
{
    cJSON *list = gb_result_fields_describe();
    const cJSON *f;
    int gauges = 0, keys = 0;

    ASSERT(cJSON_GetArraySize(list) == (int)gb_result_field_count());
    cJSON_ArrayForEach(f, list) {
        const char *gauge = cJSON_GetStringValue(cJSON_GetObjectItem(f, "gauge"));
        gauges += gauge != NULL;
        keys += cJSON_IsTrue(cJSON_GetObjectItem(f, "key"));
        if (gauge)
            ASSERT(strncmp(gauge, GB_GAUGE_PREFIX, strlen(GB_GAUGE_PREFIX)) == 0);
    }
    ASSERT_EQ(gauges, 12); /* with mismatches, errors, share_of_memcpy (issue 32), busbw_gbps */
    ASSERT_EQ(keys, 4);
    f = cJSON_GetArrayItem(list, 0);
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(f, "name")), "stride");
    cJSON_Delete(list);
    return 0;
}

/* A benchmark added without its rows' required fields would import
 * anything; test-only ones are the test double's. */
static int test_every_benchmark_has_row_rules(void)
{
    for (size_t i = 0; i < gb_benchmark_count(); i++) {
        const struct gb_benchmark *b = gb_benchmark_at(i);
        ASSERT(b->test_only || gb_result_rows_known(b->name));
    }
    ASSERT(!gb_result_rows_known("smem_strid"));
    return 0;
}

static int rows_check(const char *benchmark, const char *rows_json, struct gb_error *err)
{
    cJSON *rows = cJSON_Parse(rows_json);
    int rc = gb_result_rows_check(benchmark, rows, err);

    cJSON_Delete(rows);
    return rc;
}

static int test_rows_check(void)
{
    struct gb_error err;

    ASSERT_EQ(rows_check("smem_stride", "[{\"stride\":1,\"median_ms\":1,\"samples\":[1]}]", &err),
              0);
    ASSERT_EQ(rows_check("smem_stride", "[{\"stride\":1,\"samples\":[1]}]", &err), -1);
    ASSERT_STR_EQ(err.field, "results.rows[0].median_ms");
    ASSERT_STR_EQ(err.code, "missing_field");
    /* a row that was not measured carries no timing */
    ASSERT_EQ(rows_check("compute_peak",
                         "[{\"label\":\"gemm\",\"unit\":\"TFLOP/s\",\"value\":null,"
                         "\"available\":false}]",
                         &err),
              0);
    ASSERT_EQ(rows_check("compute_peak", "[{\"label\":\"gemm\",\"unit\":\"TFLOP/s\",\"value\":1}]",
                         &err),
              -1);
    ASSERT_STR_EQ(err.field, "results.rows[0].median_ms");
    /* a known field of the wrong type; an unknown one is a newer node's */
    ASSERT_EQ(rows_check("transpose",
                         "[{\"variant\":\"copy\",\"median_ms\":1,\"samples\":[1],\"new\":\"x\"},"
                         "{\"variant\":\"copy\",\"median_ms\":\"1\",\"samples\":[1]}]",
                         &err),
              -1);
    ASSERT_STR_EQ(err.field, "results.rows[1].median_ms");
    ASSERT_STR_EQ(err.code, "wrong_type");
    return 0;
}

/* Every field is found by its own name, and only by it (the lookup is a
 * search in a sorted copy of the table: a duplicate name or a bad sort
 * would find another). */
static int test_find_by_name(void)
{
    for (size_t i = 0; i < gb_result_field_count(); i++) {
        const struct gb_result_field *f = gb_result_field_at(i);
        ASSERT(gb_result_field_find(f->name) == f);
    }
    ASSERT(gb_result_field_find("no_such_field") == NULL);
    ASSERT(gb_result_field_find("") == NULL);
    ASSERT(gb_result_field_find(NULL) == NULL);
    return 0;
}

/* The one formatter of a row's fields (the terminal and the report): the
 * unit in each cell or in the header, shares as %, ratios with ×, a
 * row's own unit in the cell either way, "-" for no value. */
static int test_format(void)
{
    cJSON *row = cJSON_Parse("{\"label\": \"triad\", \"median_ms\": 0.18492, "
                             "\"value\": 4366.2, \"unit\": \"GB/s\", \"share_of_peak\": "
                             "0.79919, \"ratio\": 1.98, \"verified\": true, \"gbps\": null}");
    char buf[128];

    ASSERT(row != NULL);
    ASSERT(gb_result_field_format(gb_result_field_find("median_ms"), row, GB_UNIT_IN_CELL, buf,
                                  sizeof(buf)) == 0);
    ASSERT_STR_EQ(buf, "0.1849 ms");
    gb_result_field_format(gb_result_field_find("median_ms"), row, GB_UNIT_IN_HEADER, buf,
                           sizeof(buf));
    ASSERT_STR_EQ(buf, "0.1849");
    gb_result_field_header(gb_result_field_find("median_ms"), GB_UNIT_IN_HEADER, buf,
                           sizeof(buf));
    ASSERT_STR_EQ(buf, "median time (ms)");
    gb_result_field_header(gb_result_field_find("median_ms"), GB_UNIT_IN_CELL, buf, sizeof(buf));
    ASSERT_STR_EQ(buf, "Median (ms)");
    /* the row's own unit is in the cell wherever the header is */
    gb_result_field_format(gb_result_field_find("value"), row, GB_UNIT_IN_HEADER, buf,
                           sizeof(buf));
    ASSERT_STR_EQ(buf, "4366 GB/s");
    gb_result_field_format(gb_result_field_find("share_of_peak"), row, GB_UNIT_IN_CELL, buf,
                           sizeof(buf));
    ASSERT_STR_EQ(buf, "79.9%");
    gb_result_field_format(gb_result_field_find("ratio"), row, GB_UNIT_IN_HEADER, buf,
                           sizeof(buf));
    ASSERT_STR_EQ(buf, "1.98×"); /* ratio: 3 digits */
    gb_result_field_format(gb_result_field_find("verified"), row, GB_UNIT_IN_CELL, buf,
                           sizeof(buf));
    ASSERT_STR_EQ(buf, "yes");
    ASSERT(gb_result_field_format(gb_result_field_find("gbps"), row, GB_UNIT_IN_CELL, buf,
                                  sizeof(buf)) == -1);
    ASSERT_STR_EQ(buf, "-");
    cJSON_Delete(row);
    return 0;
}

/* The row key is the first key field some row has; p2p's grids are one
 * list, bandwidth first, the link grid (words) last. */
static int test_rows_key_and_matrices(void)
{
    cJSON *rows = cJSON_Parse("[{\"median_ms\": 1}, {\"stride\": 2, \"median_ms\": 1}]");
    cJSON *labelled = cJSON_Parse("[{\"label\": \"copy\", \"median_ms\": 1}]");

    ASSERT(rows && labelled);
    ASSERT_STR_EQ(gb_result_rows_key(rows)->name, "stride");
    ASSERT_STR_EQ(gb_result_rows_key(labelled)->name, "label");
    ASSERT(gb_result_rows_key(NULL) == NULL);
    ASSERT_STR_EQ(gb_result_matrix_at(0)->field, "gbps");
    ASSERT_STR_EQ(gb_result_matrix_at(1)->unit, "us");
    ASSERT(gb_result_matrix_at(2)->unit == NULL);
    ASSERT(gb_result_matrix_at(3) == NULL);
    cJSON_Delete(rows);
    cJSON_Delete(labelled);
    return 0;
}

TEST_MAIN({"shape", test_shape},
          {"format", test_format},
          {"rows key and matrices", test_rows_key_and_matrices},
          {"find by name", test_find_by_name},
          {"csv order", test_csv_order},
          {"describe", test_describe},
          {"every benchmark has row rules", test_every_benchmark_has_row_rules},
          {"rows check", test_rows_check})
