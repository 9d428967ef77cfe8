/*
 * api_info.c - the endpoints that describe rather than run: GET
 * /benchmarks, POST /predict, GET /healthz (GET /devices and GET /peers:
 * api_devices.c, api_peers.c).
 *
 * POST /predict answers from common/predict.c, the same functions every
 * run's rows use, and touches no GPU.
 */
#include "bench_spec.h"
#include "bench_suite.h"
#include "gpu_pool.h"
#include "handlers.h"
#include "heavy_pool.h"
#include "predict.h"
#include "result_fields.h"
#include "run_status.h"
#include "store.h"
#include "timeutil.h"
#include "tls.h"
#include "version.h"

#include <stdio.h>
#include <string.h>

static const char *const no_query[] = {NULL};

/* gb_benchmark_describe with the health fields: health_params (the
 * suite's short form, or null) and all_devices.  Set here rather than in
 * the table's describe so that either may add them without the other. */
static cJSON *describe_benchmark(const struct gb_benchmark *b)
{
    cJSON *d = gb_benchmark_describe(b);
    cJSON *hp = b->health_params ? cJSON_Parse(b->health_params) : cJSON_CreateNull();

    if (d == NULL) {
        cJSON_Delete(hp);
        return NULL;
    }
    cJSON_DeleteItemFromObject(d, "health_params");
    cJSON_DeleteItemFromObject(d, "all_devices");
    if (hp == NULL || !cJSON_AddItemToObject(d, "health_params", hp))
        cJSON_Delete(hp);
    cJSON_AddBoolToObject(d, "all_devices", b->all_devices != 0);
    return d;
}

void api_benchmarks_get(struct http_request *req, struct http_reply *rep)
{
    cJSON *suites;
    cJSON *body = cJSON_CreateObject();
    cJSON *list = cJSON_AddArrayToObject(body, "benchmarks");
    cJSON *statuses = cJSON_CreateStringArray(run_status_names, RUN_STATUS_COUNT);

    if (query_check(req, rep, no_query) != 0) {
        cJSON_Delete(statuses);
        cJSON_Delete(body);
        return;
    }
    /* The page's status filter offers these; its row tables and compare
     * menu are built from the result fields. */
    cJSON_AddItemToObject(body, "run_statuses", statuses);
    if (!cJSON_AddItemToObject(body, "result_fields", gb_result_fields_describe()) ||
        !cJSON_AddItemToObject(body, "method_versions", gb_method_versions_describe())) {
        cJSON_Delete(body);
        reply_error(rep, 500, "internal", "", "out of memory");
        return;
    }
    for (size_t i = 0; i < gb_benchmark_count(); i++) {
        const struct gb_benchmark *b = gb_benchmark_at(i);
        if (!b->test_only || req->app->opt->test_benchmarks)
            cJSON_AddItemToArray(list, describe_benchmark(b));
    }
    /* Suites apart, so that a client listing what it can configure is not
     * handed one with no params of its own; each names its members. */
    suites = cJSON_AddArrayToObject(body, "suites");
    for (size_t i = 0; suites && i < gb_suite_count(); i++)
        cJSON_AddItemToArray(suites, gb_suite_describe(gb_suite_at(i)));
    reply_json(rep, 200, body);
}

/* The body of POST /predict, checked by the same table code as run
 * params: exactly one of stride, strides or words. */
static const struct gb_param predict_params[] = {
    {
        .name = "stride",
        .type = GB_PARAM_INT,
        .help = "one word stride: lane L reads word L*stride",
        .min = 1,
        .max = 1048576,
    },
    {
        .name = "strides",
        .type = GB_PARAM_INT_LIST,
        .help = "several word strides",
        .min = 1,
        .max = 1048576,
        .min_items = 1,
        .max_items = 1024,
    },
    {
        .name = "words",
        .type = GB_PARAM_INT_LIST,
        .help = "32 word indices, one a lane",
        .min = 0,
        .max = 2147483647.0,
        .min_items = 32,
        .max_items = 32,
    },
    {
        .name = "gmem_stride",
        .type = GB_PARAM_INT,
        .help = "global memory: lane L reads word L*gmem_stride; the distinct "
                "32-byte sectors one warp request touches",
        .min = 0,
        .max = 65536,
    },
    {
        .name = "gmem_strides",
        .type = GB_PARAM_INT_LIST,
        .help = "several global-memory word strides",
        .min = 0,
        .max = 65536,
        .min_items = 1,
        .max_items = 1024,
    },
    {
        .name = "word_bytes",
        .type = GB_PARAM_INT,
        .help = "with gmem_stride(s): the bytes each lane reads (default 4)",
        .min = 1,
        .max = 16,
    },
    {.name = NULL},
};

static const struct gb_benchmark predict_spec = {
    .name = "predict",
    .description = "POST /predict",
    .params = predict_params,
};

static cJSON *describe_words(const long words[GB_WARP_LANES])
{
    cJSON *p = cJSON_CreateObject();
    cJSON *loads = cJSON_AddArrayToObject(p, "bank_loads");
    int per_bank[GB_SMEM_BANKS];

    gb_bank_loads(words, per_bank);
    cJSON_AddNumberToObject(p, "predicted_degree", gb_degree_for_words(words));
    cJSON_AddNumberToObject(p, "broadcast_lanes", gb_shared_lanes(words));
    for (int b = 0; b < GB_SMEM_BANKS; b++)
        cJSON_AddItemToArray(loads, cJSON_CreateNumber(per_bank[b]));
    return p;
}

static cJSON *predict_stride(long stride)
{
    long words[GB_WARP_LANES];
    cJSON *p;

    gb_stride_words(stride, words);
    p = describe_words(words);
    cJSON_AddNumberToObject(p, "stride", (double)stride);
    /* The closed form and the general count must agree; say both. */
    cJSON_AddNumberToObject(p, "gcd_stride_32", gb_degree_for_stride(stride));
    return p;
}

/* The sector prediction of gmem_stride for one stride. */
static cJSON *predict_gmem(long stride, int word_bytes)
{
    cJSON *p = cJSON_CreateObject();

    cJSON_AddNumberToObject(p, "gmem_stride", (double)stride);
    cJSON_AddNumberToObject(p, "word_bytes", word_bytes);
    cJSON_AddNumberToObject(p, "predicted_sectors",
                            gb_predict_gmem_sectors((int)stride, word_bytes));
    return p;
}

/* POST /predict {"gmem_stride": N} or {"gmem_strides": [...]}: 1 when
 * the body asked for global-memory sectors (the answer is added to out),
 * 0 when not. */
static int predict_gmem_body(const cJSON *in, cJSON *out)
{
    const cJSON *one = cJSON_GetObjectItem(in, "gmem_stride");
    const cJSON *many = cJSON_GetObjectItem(in, "gmem_strides");
    const cJSON *wb = cJSON_GetObjectItem(in, "word_bytes");
    int word_bytes = cJSON_IsNumber(wb) ? wb->valueint : 4;
    cJSON *list;
    const cJSON *s;

    if (one == NULL && many == NULL)
        return 0;
    cJSON_AddNumberToObject(out, "sector_bytes", GB_GMEM_SECTOR_BYTES);
    list = cJSON_AddArrayToObject(out, "predictions");
    if (one != NULL)
        cJSON_AddItemToArray(list, predict_gmem((long)one->valuedouble, word_bytes));
    cJSON_ArrayForEach(s, many)
        cJSON_AddItemToArray(list, predict_gmem((long)s->valuedouble, word_bytes));
    return 1;
}

void api_predict_post(struct http_request *req, struct http_reply *rep)
{
    struct gb_error err;
    cJSON *body = NULL, *in = NULL, *out = NULL, *list;
    const cJSON *v;
    int given = 0;

    if (query_check(req, rep, no_query) != 0)
        return;
    body = body_json(req, rep);
    if (body == NULL)
        return;
    in = gb_params_resolve_at(&predict_spec, body, "", &err);
    if (in == NULL) {
        reply_error(rep, 400, err.code, err.field, "%s", err.message);
        goto done;
    }
    /* word_bytes qualifies gmem_stride(s); it is not a pattern itself. */
    given = cJSON_GetArraySize(in) - (cJSON_GetObjectItem(in, "word_bytes") != NULL);
    if (given != 1) {
        reply_error(rep, 400, given ? "conflicting_fields" : "missing_field", "",
                    "give exactly one of stride, strides (word strides) or "
                    "words (32 word indices, one a lane) for shared memory, or "
                    "gmem_stride or gmem_strides for global memory");
        goto done;
    }
    if (cJSON_GetObjectItem(in, "word_bytes") != NULL &&
        cJSON_GetObjectItem(in, "gmem_stride") == NULL &&
        cJSON_GetObjectItem(in, "gmem_strides") == NULL) {
        reply_error(rep, 400, "conflicting_fields", "word_bytes",
                    "word_bytes goes with gmem_stride or gmem_strides only");
        goto done;
    }
    out = cJSON_CreateObject();
    if (out == NULL) {
        reply_error(rep, 500, "internal", "", "out of memory");
        goto done;
    }
    if (predict_gmem_body(in, out)) {
        reply_json(rep, 200, out);
        goto done;
    }
    cJSON_AddNumberToObject(out, "banks", GB_SMEM_BANKS);
    cJSON_AddNumberToObject(out, "bank_width_bytes", 4);
    list = cJSON_AddArrayToObject(out, "predictions");
    if ((v = cJSON_GetObjectItem(in, "stride")) != NULL) {
        cJSON_AddItemToArray(list, predict_stride((long)v->valuedouble));
    } else if ((v = cJSON_GetObjectItem(in, "strides")) != NULL) {
        const cJSON *s;
        cJSON_ArrayForEach(s, v)
            cJSON_AddItemToArray(list, predict_stride((long)s->valuedouble));
    } else {
        long words[GB_WARP_LANES];
        cJSON *p;
        int i = 0;
        cJSON_ArrayForEach(v, cJSON_GetObjectItem(in, "words"))
            words[i++] = (long)v->valuedouble;
        p = describe_words(words);
        cJSON_AddItemToObject(p, "words", cJSON_Duplicate(cJSON_GetObjectItem(in, "words"), 1));
        cJSON_AddItemToArray(list, p);
    }
    reply_json(rep, 200, out);

done:
    cJSON_Delete(in);
    cJSON_Delete(body);
}

/* What /healthz says of the database: the check that failed first (the
 * database not answering, then damage, then a full disk), or NULL. */
static const char *database_problem(int ping, const struct store_health *h,
                                    const char **check)
{
    if (ping == STORE_CORRUPT || h->corrupt) {
        *check = "database_integrity";
        return "database_corrupt";
    }
    if (ping != STORE_OK) {
        *check = "database";
        return "unreachable";
    }
    if (h->no_space) {
        *check = "database_space";
        return "storage_full";
    }
    return NULL;
}

/* 200 while the daemon can serve, "degraded" with the reason when the
 * database is damaged or its disk full (reads may still work); 503 only
 * when the database does not answer at all. */
/* The certificate served and whether the newest files were taken; null
 * without --web-config. */
static void add_tls(cJSON *body, struct http_tls *tls)
{
    struct http_tls_status st;
    char expires[40];
    cJSON *o;

    if (tls == NULL) {
        cJSON_AddNullToObject(body, "tls");
        return;
    }
    http_tls_status(tls, &st);
    time_format_rfc3339((int64_t)st.not_after * 1000, expires, sizeof(expires));
    o = cJSON_AddObjectToObject(body, "tls");
    cJSON_AddStringToObject(o, "certificate_serial", st.serial);
    cJSON_AddStringToObject(o, "certificate_expires_at", expires);
    cJSON_AddStringToObject(o, "loaded_at", st.loaded_at);
    if (st.error[0])
        cJSON_AddStringToObject(o, "reload_error", st.error);
    else
        cJSON_AddNullToObject(o, "reload_error");
    cJSON_AddNumberToObject(o, "reload_failures", (double)st.reload_failures);
}

/* "heavy_reads": the heavy pool's load (heavy_pool.h). */
static void add_heavy_reads(cJSON *body, struct heavy_pool *pool)
{
    struct heavy_pool_load load = {0};
    cJSON *o = cJSON_AddObjectToObject(body, "heavy_reads");

    if (pool)
        heavy_pool_load(pool, &load);
    cJSON_AddNumberToObject(o, "threads", load.threads);
    cJSON_AddNumberToObject(o, "running", load.running);
    cJSON_AddNumberToObject(o, "queued", load.queued);
    cJSON_AddNumberToObject(o, "queue_cap", load.queue_cap);
}

void api_healthz_get(struct http_request *req, struct http_reply *rep)
{
    struct app *app = req->app;
    int ping = store_ping(app->store);
    struct store_health h;
    const char *check = NULL, *problem;
    cJSON *body = cJSON_CreateObject(), *reason;

    if (query_check(req, rep, no_query) != 0) {
        cJSON_Delete(body);
        return;
    }
    store_health_get(app->store, &h);
    problem = database_problem(ping, &h, &check);
    cJSON_AddStringToObject(body, "status", problem ? "degraded" : "ok");
    cJSON_AddStringToObject(body, "version", GPUBENCH_VERSION);
    cJSON_AddStringToObject(body, "commit", GPUBENCH_GIT_COMMIT);
    cJSON_AddStringToObject(body, "host", app->host);
    cJSON_AddStringToObject(body, "started_at", app->started_at);
    cJSON_AddNumberToObject(body, "uptime_s",
                            (double)(time_mono_ms() - app->started_mono_ms) / 1000.0);
    cJSON_AddStringToObject(body, "database", problem ? problem : "ok");
    cJSON_AddNumberToObject(body, "gpus", gpu_pool_count(app->gpus));
    cJSON_AddStringToObject(body, "database_check", store_check_words[h.check]);
    if (h.checked_at[0])
        cJSON_AddStringToObject(body, "database_checked_at", h.checked_at);
    else
        cJSON_AddNullToObject(body, "database_checked_at");
    add_tls(body, app->tls);
    add_heavy_reads(body, app->heavy);
    if (problem) {
        reason = cJSON_AddObjectToObject(body, "reason");
        cJSON_AddStringToObject(reason, "check", check);
        cJSON_AddStringToObject(reason, "code", problem);
        cJSON_AddStringToObject(reason, "message",
                                h.message[0] ? h.message : store_rc_words(ping));
        if (h.since[0])
            cJSON_AddStringToObject(reason, "since", h.since);
    } else {
        cJSON_AddNullToObject(body, "reason");
    }
    reply_json(rep, problem && strcmp(problem, "unreachable") == 0 ? 503 : 200, body);
}
