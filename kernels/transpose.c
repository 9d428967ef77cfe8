/*
 * transpose.c - the tiled transpose against a copy ceiling.
 *
 * GB/s counts bytes read plus written (2 * n * n * 4 per launch).  The
 * ceiling is the better of a device-to-device cudaMemcpy and the copy
 * kernel, both measured in this run (the copy kernel also when `copy` was
 * not asked for).  A variant over 100% of the ceiling means the ceiling is
 * wrong: the run says so (summary.ceiling_suspect) rather than clamping.
 * Every kernel's output is checked element by element before it is timed;
 * a wrong or unwritten element fails the run (verification_failed).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "counters_report.h"
#include "predict.h"
#include "report_json.h"
#include "transpose_report.h"

static const char *const kernel_names[GB_TRANSPOSE_KERNEL_COUNT] = {
    "copy",
    "tile32",
    "tile33",
    "tile32_swizzle",
};

const char *gb_transpose_kernel_name(enum gb_transpose_kernel k)
{
    return (int)k >= 0 && k < GB_TRANSPOSE_KERNEL_COUNT ? kernel_names[k] : "?";
}

int gb_transpose_tile_degree(enum gb_transpose_kernel k)
{
    long words[GB_WARP_LANES];
    int pad = k == GB_TRANSPOSE_TILE33 ? 1 : 0;

    if (k == GB_TRANSPOSE_COPY)
        return 0;
    /* The column read out of the tile: lane L reads tile[L][c], here c = 0
     * (every c gives the same degree). */
    for (int lane = 0; lane < GB_WARP_LANES; lane++)
        words[lane] = (long)lane * (32 + pad) +
                      (k == GB_TRANSPOSE_TILE32_SWIZZLE ? (0 ^ lane) : 0);
    return gb_degree_for_words(words);
}

double gb_transpose_tile_requests(enum gb_transpose_kernel k, long long n)
{
    /* (n/32)^2 blocks x 8 warps x 4 column reads a thread. */
    return gb_transpose_tile_degree(k) > 0 ? (double)n * (double)n / GB_WARP_LANES : 0;
}

static double gbps(double bytes, double ms)
{
    return bytes / (ms * 1e-3) / 1e9;
}

static int add_row(cJSON *list, const struct gb_samples *s, const struct gb_counter_values *cv,
                   enum gb_transpose_kernel k, long long n, double bytes, double ceiling,
                   cJSON *over)
{
    cJSON *o = cJSON_CreateObject();
    struct gb_stats st;
    double rate, share;
    int degree = gb_transpose_tile_degree(k);

    if (o == NULL || !cJSON_AddItemToArray(list, o)) {
        cJSON_Delete(o);
        return -1;
    }
    cJSON_AddStringToObject(o, "variant", gb_transpose_kernel_name(k));
    if (degree > 0)
        cJSON_AddNumberToObject(o, "predicted_degree", degree);
    else
        cJSON_AddNullToObject(o, "predicted_degree");
    if (gb_json_add_timing(o, s, &st) != 0)
        return -1;
    rate = gbps(bytes, st.median);
    share = rate / ceiling;
    cJSON_AddNumberToObject(o, "launches_per_sample", (double)s->work);
    gb_json_add_number(o, "gbps", rate);
    gb_json_add_number(o, "gbps_at_min", gbps(bytes, st.min));
    gb_json_add_number(o, "share_of_ceiling", share);
    cJSON_AddBoolToObject(o, "verified", 1);
    cJSON_AddNumberToObject(o, "elements_checked", (double)(n * n));
    if (share > 1.0)
        cJSON_AddItemToArray(over, cJSON_CreateString(gb_transpose_kernel_name(k)));
    return gb_counters_add_row(o, cv, gb_transpose_tile_requests(k, n), degree) < 0 ? -1 : 0;
}

/* Index of the copy kernel in the plan, or -1. */
static int copy_index(const enum gb_transpose_kernel *kernels, int count)
{
    for (int i = 0; i < count; i++)
        if (kernels[i] == GB_TRANSPOSE_COPY)
            return i;
    return -1;
}

static cJSON *ceiling_json(double memcpy_rate, double copy_rate)
{
    cJSON *o = cJSON_CreateObject();

    if (o == NULL)
        return NULL;
    gb_json_add_number(o, "gbps", memcpy_rate > copy_rate ? memcpy_rate : copy_rate);
    cJSON_AddStringToObject(o, "source",
                            memcpy_rate > copy_rate ? "cudaMemcpy device to device"
                                                    : "copy kernel");
    gb_json_add_number(o, "memcpy_gbps", memcpy_rate);
    gb_json_add_number(o, "copy_kernel_gbps", copy_rate);
    return o;
}

/* Timing of an operation that is not a row (memcpy, or copy when not
 * asked) kept in the summary with its samples. */
static int add_timing_object(cJSON *summary, const char *name, const struct gb_samples *s,
                             double bytes)
{
    cJSON *o = cJSON_CreateObject();
    struct gb_stats st;

    if (o == NULL || !cJSON_AddItemToObject(summary, name, o)) {
        cJSON_Delete(o);
        return -1;
    }
    if (gb_json_add_timing(o, s, &st) != 0)
        return -1;
    cJSON_AddNumberToObject(o, "launches_per_sample", (double)s->work);
    gb_json_add_number(o, "gbps", gbps(bytes, st.median));
    return 0;
}

cJSON *gb_transpose_report(int n, const enum gb_transpose_kernel *kernels, int count,
                           int copy_in_rows, const struct gb_transpose_timing *t)
{
    cJSON *result = cJSON_CreateObject();
    cJSON *list = cJSON_AddArrayToObject(result, "rows");
    cJSON *summary = cJSON_AddObjectToObject(result, "summary");
    cJSON *over = cJSON_CreateArray();
    double bytes = 2.0 * n * n * sizeof(float), memcpy_rate, copy_rate, ceiling;
    struct gb_stats st;
    int ci = copy_index(kernels, count);

    if (result == NULL || list == NULL || summary == NULL || over == NULL || ci < 0 ||
        gb_stats_compute(t->memcpy_d2d.ms, t->memcpy_d2d.count, &st) != 0)
        goto fail;
    memcpy_rate = gbps(bytes, st.median);
    if (gb_stats_compute(t->kernels[ci].ms, t->kernels[ci].count, &st) != 0)
        goto fail;
    copy_rate = gbps(bytes, st.median);
    ceiling = memcpy_rate > copy_rate ? memcpy_rate : copy_rate;
    for (int i = 0; i < count; i++) {
        if (i == ci && !copy_in_rows)
            continue;
        if (add_row(list, &t->kernels[i], t->counters ? &t->counters[i] : NULL, kernels[i], n,
                    bytes, ceiling, over) != 0)
            goto fail;
    }
    cJSON_AddNumberToObject(summary, "n", n);
    cJSON_AddNumberToObject(summary, "bytes_per_launch", bytes);
    cJSON_AddItemToObject(summary, "ceiling", ceiling_json(memcpy_rate, copy_rate));
    if (add_timing_object(summary, "memcpy", &t->memcpy_d2d, bytes) != 0 ||
        (!copy_in_rows && add_timing_object(summary, "copy_kernel", &t->kernels[ci], bytes) != 0))
        goto fail;
    cJSON_AddBoolToObject(summary, "ceiling_suspect", cJSON_GetArraySize(over) > 0);
    cJSON_AddItemToObject(summary, "counters",
                          gb_counters_summary(list, "one launch of each variant (a whole "
                                                    "n x n transpose), after the timed samples, "
                                                    "one block an SM (beside other blocks the "
                                                    "hardware also counts their collisions in a "
                                                    "bank as conflicts); counts are per launch; "
                                                    "the requests are the tile's column reads"));
    cJSON_AddStringToObject(summary, "ci_method", GB_CI_METHOD);
    cJSON_AddItemToObject(summary, "over_ceiling", over);
    over = NULL;
    cJSON_AddStringToObject(summary, "method",
                            "32x32 tiles, 32x8 threads; output poisoned (NaN) "
                            "and every element checked on the host before "
                            "timing; CUDA events, warm-up, launches per sample "
                            "calibrated, all samples kept; GB/s counts bytes "
                            "read plus written");
    return result;

fail:
    cJSON_Delete(over);
    cJSON_Delete(result);
    return NULL;
}

/* Reads the variants into kernels[]; the copy kernel is added first when
 * not asked (the ceiling needs it).  Returns the count. */
static int plan_kernels(const cJSON *params, enum gb_transpose_kernel *kernels,
                        int *copy_in_rows)
{
    const cJSON *variants = cJSON_GetObjectItemCaseSensitive(params, "variants");
    const cJSON *v;
    int count = 0;

    *copy_in_rows = 0;
    cJSON_ArrayForEach(v, variants)
        if (cJSON_IsString(v) && strcmp(v->valuestring, "copy") == 0)
            *copy_in_rows = 1;
    if (!*copy_in_rows)
        kernels[count++] = GB_TRANSPOSE_COPY;
    cJSON_ArrayForEach(v, variants) {
        for (int k = 0; cJSON_IsString(v) && k < GB_TRANSPOSE_KERNEL_COUNT; k++) {
            if (strcmp(v->valuestring, kernel_names[k]) == 0 &&
                count < GB_TRANSPOSE_KERNEL_COUNT)
                kernels[count++] = (enum gb_transpose_kernel)k;
        }
    }
    return count;
}

static int fail_verification(struct gb_job_error *err, const struct gb_transpose_timing *t,
                             const enum gb_transpose_kernel *kernels, long long n)
{
    const struct gb_verify_report *r = &t->verify[t->failed_kernel];

    return gb_job_fail(err, "verification_failed",
                       "%s: %lld of %lld output elements are wrong (%lld never "
                       "written); the first at row %lld, column %lld",
                       gb_transpose_kernel_name(kernels[t->failed_kernel]),
                       r->mismatches, n * n, r->unwritten, r->first_row, r->first_col);
}

int gb_bench_transpose(const struct gb_bench_env *env, const cJSON *params,
                       cJSON **result, struct gb_job_error *err)
{
    enum gb_transpose_kernel kernels[GB_TRANSPOSE_KERNEL_COUNT];
    struct gb_transpose_plan plan;
    struct gb_transpose_timing t;
    struct gb_measure_opts opts;
    struct gb_cuda_error cuda;
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(params, "n");
    int copy_in_rows, rc = -1, measured;

    *result = NULL;
    memset(&t, 0, sizeof(t));
    memset(&cuda, 0, sizeof(cuda));
    gb_bench_measure_opts(env, params, &opts);
    plan.n = cJSON_IsNumber(n) ? (int)n->valuedouble : 0;
    plan.kernels = kernels;
    plan.count = plan_kernels(params, kernels, &copy_in_rows);
    /* Fresh inputs each run: a kernel must transpose any matrix. */
    plan.seed = (uint32_t)time(NULL) ^ ((uint32_t)getpid() << 16);
    plan.counters = env->counters;
    if (plan.n < 32 || plan.n % 32 != 0)
        return gb_job_fail(err, "invalid_params", "params.n must be a multiple of 32");
    if (2.0 * plan.n * plan.n * sizeof(float) > 0.9 * (double)env->dev->memory_bytes)
        return gb_job_fail(err, "invalid_params",
                           "n = %d needs two %.1f GB matrices; %s has %.1f GB", plan.n,
                           plan.n * (double)plan.n * 4 / 1e9, env->dev->name,
                           env->dev->memory_bytes / 1e9);
    env->hooks->total = (plan.count + 1) * opts.samples;
    measured = gb_transpose_measure(env->dev->index, &plan, &opts, env->hooks, &t, &cuda);
    if (measured < 0) {
        gb_job_fail_cuda(err, &cuda);
        goto out;
    }
    if (measured > 0) {
        fail_verification(err, &t, kernels, plan.n);
        goto out;
    }
    *result = gb_transpose_report(plan.n, kernels, plan.count, copy_in_rows, &t);
    if (*result == NULL) {
        gb_job_fail(err, "internal", "out of memory building the result");
        goto out;
    }
    cJSON_AddNumberToObject(cJSON_GetObjectItemCaseSensitive(*result, "summary"),
                            "input_seed", plan.seed);
    rc = 0;

out:
    gb_transpose_timing_free(&t);
    return rc;
}
