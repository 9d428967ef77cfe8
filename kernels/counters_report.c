/*
 * counters_report.c - hardware counters in a run's JSON; see
 * counters_report.h.
 */
#include "counters_report.h"

#include <stdio.h>

#include "report_json.h"

int gb_counters_add_row(cJSON *row, const struct gb_counter_values *v, double requests,
                        int degree)
{
    double expected = gb_expected_bank_conflicts(requests, degree);
    int read = v != NULL && v->read, agree;

    if (row == NULL)
        return -1;
    cJSON_AddNumberToObject(row, "expected_shared_load_requests", requests);
    cJSON_AddNumberToObject(row, "expected_bank_conflicts", expected);
    cJSON_AddNumberToObject(row, "expected_wavefronts", gb_expected_wavefronts(requests, degree));
    for (int m = 0; m < GB_CM_COUNT; m++) {
        if (read)
            gb_json_add_number(row, gb_counter_metric_field(m), v->v[m]);
        else
            cJSON_AddNullToObject(row, gb_counter_metric_field(m));
    }
    if (!read) {
        cJSON_AddNullToObject(row, "measured_degree");
        cJSON_AddNullToObject(row, "counters_agree");
        return 0;
    }
    gb_json_add_number(row, "measured_degree",
                       gb_measured_degree(v->v[GB_CM_LD_WAVEFRONTS], v->v[GB_CM_LD_REQUESTS]));
    agree = gb_counts_agree(v->v[GB_CM_LD_CONFLICTS], expected, requests);
    cJSON_AddBoolToObject(row, "counters_agree", agree);
    return agree;
}

cJSON *gb_counters_summary(const cJSON *rows, const char *launch)
{
    cJSON *o = cJSON_CreateObject();
    const cJSON *row;
    int count = 0, read = 0, agreeing = 0;

    if (o == NULL)
        return NULL;
    cJSON_ArrayForEach(row, rows) {
        const cJSON *agree = cJSON_GetObjectItemCaseSensitive(row, "counters_agree");
        count++;
        read += cJSON_IsBool(agree);
        agreeing += cJSON_IsTrue(agree);
    }
    cJSON_AddBoolToObject(o, "read", count > 0 && read == count);
    if (count > 0 && read == count) {
        cJSON_AddNumberToObject(o, "rows_agreeing", agreeing);
        cJSON_AddNumberToObject(o, "rows", count);
        cJSON_AddBoolToObject(o, "all_agree", agreeing == count);
    }
    cJSON_AddStringToObject(o, "launch", launch);
    cJSON_AddStringToObject(o, "expected",
                            "a warp request of conflict degree d is served in d "
                            "wavefronts: expected_bank_conflicts = requests x (d - 1), "
                            "from the predicted degree and the launch shape");
    return o;
}

cJSON *gb_counters_meta_json(const struct gb_counters_state *given)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *names;
    char reason[640];
    struct gb_counters_state none;
    const struct gb_counters_state *st = given;
    int available;

    if (o == NULL)
        return NULL;
    if (st == NULL) {
        gb_counters_state_init(&none, GB_COUNTERS_AUTO);
        gb_counters_state_finish(&none);
        st = &none;
    }
    available = st->status == GB_COUNTERS_READ && st->launches > 0;
    cJSON_AddStringToObject(o, "mode", gb_counters_mode_name(st->mode));
    cJSON_AddBoolToObject(o, "available", available);
    if (!available) {
        gb_counters_reason(st, reason, sizeof(reason));
        cJSON_AddStringToObject(o, "reason", reason);
    }
    if (st->library[0] != '\0')
        cJSON_AddStringToObject(o, "library", st->library);
    else
        cJSON_AddNullToObject(o, "library");
    names = cJSON_AddArrayToObject(o, "metrics");
    for (int m = 0; names != NULL && m < GB_CM_COUNT; m++)
        cJSON_AddItemToArray(names, cJSON_CreateString(gb_counter_metric_name(m)));
    if (available)
        cJSON_AddNumberToObject(o, "passes", st->passes);
    cJSON_AddNumberToObject(o, "agree_tolerance", GB_COUNTERS_AGREE_TOL);
    cJSON_AddStringToObject(o, "method",
                            "CUPTI Range Profiler and Profiler Host APIs (loaded with "
                            "dlopen), one user range around one launch per row, user "
                            "replay, in a pass of its own after the timed samples");
    return o;
}
