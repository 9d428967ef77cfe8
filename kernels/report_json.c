/*
 * report_json.c - timing fields of a row; see report_json.h.
 */
#include "report_json.h"

#include <math.h>

#include "throttle.h"

void gb_json_add_number(cJSON *obj, const char *name, double value)
{
    if (isfinite(value))
        cJSON_AddNumberToObject(obj, name, value);
    else
        cJSON_AddNullToObject(obj, name);
}

/* What NVML saw between the row's samples; nothing when it was not read
 * (absent means not measured). */
static int add_row_watch(cJSON *obj, const struct gb_row_watch *w)
{
    const char *names[16];
    cJSON *list;
    int count;

    if (w->mem_clock_mhz > 0)
        cJSON_AddNumberToObject(obj, "mem_clock_mhz", w->mem_clock_mhz);
    if (!w->throttle_read)
        return 0;
    list = cJSON_AddArrayToObject(obj, "throttle_reasons");
    if (list == NULL)
        return -1;
    count = gb_throttle_decode(w->throttle_mask, names, 16);
    for (int i = 0; i < count && i < 16; i++)
        if (!cJSON_AddItemToArray(list, cJSON_CreateString(names[i])))
            return -1;
    return 0;
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
    gb_json_add_number(obj, "ci_low_ms", st->ci_low);
    gb_json_add_number(obj, "ci_high_ms", st->ci_high);
    cJSON_AddNumberToObject(obj, "sample_count", s->count);
    if (s->precision > 0) {
        double half = st->median > 0 ? (st->ci_high - st->ci_low) / 2 / st->median : NAN;
        gb_json_add_number(obj, "ci_half_width", half);
        cJSON_AddBoolToObject(obj, "precision_reached", half <= s->precision);
    }
    if (add_row_watch(obj, &s->watch) != 0)
        return -1;
    list = cJSON_CreateDoubleArray(s->ms, s->count);
    if (list == NULL || !cJSON_AddItemToObject(obj, "samples", list)) {
        cJSON_Delete(list);
        return -1;
    }
    return 0;
}
