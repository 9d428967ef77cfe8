/*
 * perf_report.c - the generic row of the memory, compute and link benchmarks; see
 * perf_report.h.
 */
#include "perf_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_json.h"
#include "stats.h"

void gb_perf_ops_free(struct gb_perf_op *ops, int count)
{
    for (int i = 0; ops != NULL && i < count; i++) {
        free(ops[i].s.ms);
        ops[i].s.ms = NULL;
        ops[i].s.count = ops[i].s.capacity = 0;
    }
}

double gb_perf_rate(const struct gb_perf_op *op, double unit_scale)
{
    struct gb_stats st;

    if (op->s.count < 1 || gb_stats_compute(op->s.ms, op->s.count, &st) != 0 || !(st.median > 0))
        return NAN;
    return op->amount / (st.median * 1e-3) / unit_scale;
}

cJSON *gb_perf_add_row(cJSON *list, const struct gb_perf_op *op, const char *unit,
                       double unit_scale, double peak, const char *peak_source)
{
    cJSON *o = cJSON_CreateObject();
    struct gb_stats st;
    int latency = strcmp(unit, "us") == 0;
    double value;

    if (o == NULL || !cJSON_AddItemToArray(list, o)) {
        cJSON_Delete(o);
        return NULL;
    }
    cJSON_AddStringToObject(o, "label", op->label);
    cJSON_AddStringToObject(o, "unit", unit);
    if (peak > 0)
        gb_json_add_number(o, "peak", peak);
    else
        cJSON_AddNullToObject(o, "peak");
    cJSON_AddStringToObject(o, "peak_source", peak_source ? peak_source : "");
    cJSON_AddBoolToObject(o, "available", op->available != 0);
    if (!op->available || op->s.count < 1) {
        cJSON_AddNullToObject(o, "value");
        cJSON_AddNullToObject(o, "share_of_peak");
        cJSON_AddStringToObject(o, "reason", op->reason);
        return o;
    }
    if (gb_json_add_timing(o, &op->s, &st) != 0)
        return NULL;
    value = latency ? st.median * 1e3 : gb_perf_rate(op, unit_scale);
    gb_json_add_number(o, "value", value);
    if (peak > 0)
        gb_json_add_number(o, "share_of_peak", value / peak);
    else
        cJSON_AddNullToObject(o, "share_of_peak");
    cJSON_AddNumberToObject(o, "work_per_sample", (double)op->s.work);
    cJSON_AddBoolToObject(o, "verified", op->checked > 0 && op->mismatches == 0);
    cJSON_AddNumberToObject(o, "elements_checked", (double)op->checked);
    return o;
}

int gb_perf_result_begin(cJSON **result, cJSON **rows, cJSON **summary)
{
    *result = cJSON_CreateObject();
    *rows = *result ? cJSON_AddArrayToObject(*result, "rows") : NULL;
    *summary = *result ? cJSON_AddObjectToObject(*result, "summary") : NULL;
    return *rows != NULL && *summary != NULL ? 0 : -1;
}

void gb_perf_summary_closing(cJSON *summary, const char *method)
{
    cJSON_AddStringToObject(summary, "ci_method", GB_CI_METHOD);
    cJSON_AddStringToObject(summary, "method", method);
}

int gb_perf_result_end(int rc, cJSON **result, struct gb_perf_op *ops, int count,
                       struct gb_job_error *err)
{
    if (rc == GB_PERF_OOM)
        gb_job_fail(err, "internal", "out of memory building the result");
    gb_perf_ops_free(ops, count);
    if (rc == 0)
        return 0;
    cJSON_Delete(*result);
    *result = NULL;
    return -1;
}
