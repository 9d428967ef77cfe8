/*
 * bench_params.c - reading resolved parameters; see bench.h.  The values
 * were checked by gb_params_resolve, so these only copy them out.
 */
#include "bench.h"

int gb_bench_long_list(const cJSON *params, const char *name, long *out, int cap)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(params, name);
    const cJSON *item;
    int n = 0;

    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) > cap)
        return -1;
    cJSON_ArrayForEach(item, list)
        out[n++] = (long)item->valuedouble;
    return n;
}

void gb_bench_measure_opts(const struct gb_bench_env *env, const cJSON *params,
                           struct gb_measure_opts *opts)
{
    const cJSON *samples = cJSON_GetObjectItemCaseSensitive(params, "samples");
    const cJSON *min_ms = cJSON_GetObjectItemCaseSensitive(params, "min_sample_ms");
    const cJSON *precision = cJSON_GetObjectItemCaseSensitive(params, "precision");
    const cJSON *max_samples = cJSON_GetObjectItemCaseSensitive(params, "max_samples");

    opts->samples = cJSON_IsNumber(samples) ? (int)samples->valuedouble : 20;
    opts->min_sample_ms = cJSON_IsNumber(min_ms) ? min_ms->valuedouble : 1.0;
    opts->precision = cJSON_IsNumber(precision) ? precision->valuedouble : 0;
    opts->max_samples = cJSON_IsNumber(max_samples) ? (int)max_samples->valuedouble : 200;
    opts->deadline_s = env != NULL ? env->deadline_s : 0;
}
