/*
 * smem_pattern.c - a custom warp access: 32 word indices, one a lane.
 *
 * The predicted degree is the most DISTINCT words any bank is asked for
 * (common/predict.c), so lanes that share a word count once: the original example's
 * `tx * 2 % 32` pattern is a broadcast and predicts 1.  The row says how
 * many lanes share a word and how many distinct words each bank serves.
 * The ratio is to a stride-1 baseline measured in the same run, with the
 * same kernel and the same work.
 */
#include <string.h>

#include "predict.h"
#include "smem_common.h"
#include "stats.h"

cJSON *gb_smem_pattern_report(const struct gb_smem_row *rows, const struct gb_smem_timing *t,
                              const struct gb_device_info *dev)
{
    const struct gb_smem_row *p = &rows[1];
    cJSON *result = cJSON_CreateObject();
    cJSON *list = cJSON_AddArrayToObject(result, "rows");
    cJSON *o;
    int per_bank[GB_SMEM_BANKS], words[GB_WARP_LANES], fitted[GB_WARP_LANES];
    struct gb_stats base;

    if (result == NULL || list == NULL)
        goto fail;
    o = cJSON_CreateObject();
    if (o == NULL || !cJSON_AddItemToArray(list, o)) {
        cJSON_Delete(o);
        goto fail;
    }
    if (gb_stats_compute(t->rows[0].ms, t->rows[0].count, &base) != 0)
        goto fail;
    gb_bank_loads(p->words, per_bank);
    for (int lane = 0; lane < GB_WARP_LANES; lane++) {
        words[lane] = (int)p->words[lane];
        fitted[lane] = (int)p->fitted[lane];
    }
    cJSON_AddStringToObject(o, "variant", "pattern");
    cJSON_AddItemToObject(o, "words", cJSON_CreateIntArray(words, GB_WARP_LANES));
    cJSON_AddNumberToObject(o, "predicted_degree", p->predicted_degree);
    cJSON_AddNumberToObject(o, "broadcast_lanes", p->broadcast_lanes);
    cJSON_AddNumberToObject(o, "distinct_words", GB_WARP_LANES - p->broadcast_lanes);
    cJSON_AddItemToObject(o, "bank_loads", cJSON_CreateIntArray(per_bank, GB_SMEM_BANKS));
    cJSON_AddBoolToObject(o, "address_compacted", p->compacted);
    if (p->compacted)
        cJSON_AddItemToObject(o, "words_read", cJSON_CreateIntArray(fitted, GB_WARP_LANES));
    if (gb_smem_add_measurement(o, t, 1, p->predicted_degree, base.median, 0,
                                dev->sm_count) != 0)
        goto fail;
    if (gb_smem_add_summary(result, list, t, rows, 0, 0, dev) != 0)
        goto fail;
    return result;

fail:
    cJSON_Delete(result);
    return NULL;
}

int gb_bench_smem_pattern(const struct gb_bench_env *env, const cJSON *params,
                          cJSON **result, struct gb_job_error *err)
{
    long words[GB_WARP_LANES], baseline[GB_WARP_LANES];
    struct gb_smem_row rows[2];
    struct gb_smem_timing t;
    int rc = -1;

    *result = NULL;
    memset(&t, 0, sizeof(t));
    if (gb_bench_long_list(params, "words", words, GB_WARP_LANES) != GB_WARP_LANES)
        return gb_job_fail(err, "invalid_params", "params.words must hold 32 indices");
    gb_stride_words(1, baseline);
    gb_smem_row_init(&rows[0], baseline);
    gb_smem_row_init(&rows[1], words);
    if (gb_smem_run(env, rows, 2, 0, params, &t, err) != 0)
        goto out;
    *result = gb_smem_pattern_report(rows, &t, env->dev);
    if (*result == NULL) {
        gb_job_fail(err, "internal", "out of memory building the result");
        goto out;
    }
    rc = 0;

out:
    gb_smem_timing_free(&t);
    return rc;
}
