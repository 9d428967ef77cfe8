/* The table of result-row fields: it fits the readers' arrays, names are
 * unique, the CSV columns are the ones scripts were given before the
 * table existed (in that order, samples last), and GET /benchmarks'
 * description carries each use. */
#include "result_fields.h"
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
        NULL};
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
    ASSERT_EQ(gauges, 8);
    ASSERT_EQ(keys, 4);
    f = cJSON_GetArrayItem(list, 0);
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(f, "name")), "stride");
    cJSON_Delete(list);
    return 0;
}

TEST_MAIN({"shape", test_shape}, {"csv order", test_csv_order}, {"describe", test_describe})
