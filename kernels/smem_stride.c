/*
 * smem_stride.c - the stride sweep: lane L reads 32-bit word L * stride.
 *
 * Every row's conflict degree, gcd(stride, 32), is predicted before the
 * launch.  Every lane of a row must read a distinct word (checked: a
 * broadcast is not a conflict, and a row that hid one would report a
 * degree it does not have).  The ratio is to stride 1 measured in the same
 * run; where stride 1 was not asked for it is measured anyway, first, and
 * the summary says so.
 */
#include <stdio.h>
#include <string.h>

#include "predict.h"
#include "smem_common.h"
#include "stats.h"

#define MAX_STRIDES 64

cJSON *gb_smem_stride_report(const long *strides, int count, const struct gb_smem_row *rows,
                             int first_row, int baseline_row, const struct gb_smem_timing *t,
                             const struct gb_device_info *dev)
{
    cJSON *result = cJSON_CreateObject();
    cJSON *list = cJSON_AddArrayToObject(result, "rows");
    struct gb_stats base;

    if (result == NULL || list == NULL ||
        gb_stats_compute(t->rows[baseline_row].ms, t->rows[baseline_row].count, &base) != 0)
        goto fail;
    for (int i = 0; i < count; i++) {
        const struct gb_smem_row *row = &rows[first_row + i];
        cJSON *o = cJSON_CreateObject();
        if (o == NULL || !cJSON_AddItemToArray(list, o)) {
            cJSON_Delete(o);
            goto fail;
        }
        cJSON_AddNumberToObject(o, "stride", (double)strides[i]);
        cJSON_AddNumberToObject(o, "predicted_degree", row->predicted_degree);
        cJSON_AddBoolToObject(o, "distinct_words", row->broadcast_lanes == 0);
        cJSON_AddBoolToObject(o, "address_compacted", row->compacted);
        if (gb_smem_add_measurement(o, t, first_row + i, row->predicted_degree,
                                    base.median, baseline_row, dev->sm_count) != 0)
            goto fail;
    }
    if (gb_smem_add_summary(result, list, t, rows, baseline_row, first_row == 0, dev) != 0)
        goto fail;
    return result;

fail:
    cJSON_Delete(result);
    return NULL;
}

int gb_bench_smem_stride(const struct gb_bench_env *env, const cJSON *params,
                         cJSON **result, struct gb_job_error *err)
{
    long strides[MAX_STRIDES], words[GB_WARP_LANES];
    struct gb_smem_row rows[MAX_STRIDES + 1];
    struct gb_smem_timing t;
    int count, first_row = 1, baseline_row = 0, rc = -1;

    *result = NULL;
    memset(&t, 0, sizeof(t));
    count = gb_bench_long_list(params, "strides", strides, MAX_STRIDES);
    if (count < 1)
        return gb_job_fail(err, "invalid_params", "params.strides is missing");
    for (int i = 0; i < count; i++) {
        if (strides[i] == 1) {
            first_row = 0;
            baseline_row = i;
        }
    }
    /* rows[0] is the extra stride-1 baseline when stride 1 was not asked. */
    gb_stride_words(1, words);
    gb_smem_row_init(&rows[0], words);
    for (int i = 0; i < count; i++) {
        struct gb_smem_row *row = &rows[first_row + i];
        gb_stride_words(strides[i], words);
        gb_smem_row_init(row, words);
        if (row->broadcast_lanes != 0) {
            gb_job_fail(err, "invalid_params",
                        "stride %ld makes %d lanes share a word: that is a "
                        "broadcast, not a conflict",
                        strides[i], row->broadcast_lanes);
            snprintf(err->field, sizeof(err->field), "params.strides[%d]", i);
            goto out;
        }
    }
    if (gb_smem_run(env, rows, count + first_row, baseline_row, params, &t, err) != 0)
        goto out;
    *result = gb_smem_stride_report(strides, count, rows, first_row, baseline_row, &t, env->dev);
    if (*result == NULL) {
        gb_job_fail(err, "internal", "out of memory building the result");
        goto out;
    }
    rc = 0;

out:
    gb_smem_timing_free(&t);
    return rc;
}
