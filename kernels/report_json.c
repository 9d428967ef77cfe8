/*
 * report_json.c - timing fields of a row; see report_json.h.
 */
#include "report_json.h"

#include <math.h>

void gb_json_add_number(cJSON *obj, const char *name, double value)
{
    if (isfinite(value))
        cJSON_AddNumberToObject(obj, name, value);
    else
        cJSON_AddNullToObject(obj, name);
}

int gb_json_add_timing(cJSON *obj, const struct gb_samples *s, struct gb_stats *st)
{
    struct gb_stats local;
    cJSON *list;

    if (st == NULL)
        st = &local;
    if (gb_stats_compute(s->ms, s->count, st) != 0)
        return -1;
    gb_json_add_number(obj, "median_ms", st->median);
    gb_json_add_number(obj, "min_ms", st->min);
    gb_json_add_number(obj, "max_ms", st->max);
    gb_json_add_number(obj, "mean_ms", st->mean);
    gb_json_add_number(obj, "spread", st->spread);
    list = cJSON_CreateDoubleArray(s->ms, s->count);
    if (list == NULL || !cJSON_AddItemToObject(obj, "samples", list)) {
        cJSON_Delete(list);
        return -1;
    }
    return 0;
}
