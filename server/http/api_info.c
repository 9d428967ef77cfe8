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
#include "json_build.h"
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
    struct json_build jb = {0};
    cJSON *d = gb_benchmark_describe(b);
    cJSON *hp = b->health_params ? cJSON_Parse(b->health_params) : cJSON_CreateNull();

    if (d == NULL) {
        cJSON_Delete(hp);
        return NULL;
    }
    cJSON_DeleteItemFromObject(d, "health_params");
    cJSON_DeleteItemFromObject(d, "all_devices");
    jb_item(&jb, d, "health_params", hp); /* d's now, or deleted */
    jb_bool(&jb, d, "all_devices", b->all_devices != 0);
    if (jb_failed(&jb)) {
        cJSON_Delete(d);
        return NULL;
    }
    return d;
}

void api_benchmarks_get(struct http_request *req, struct http_reply *rep)
{
    struct json_build jb = {0};
    cJSON *suites, *body, *list;

    if (query_check(req, rep, no_query) != 0)
        return;
    body = jb_new_object(&jb);
    list = jb_array(&jb, body, "benchmarks");
    /* The page's status filter offers these; its row tables and compare
     * menu are built from the result fields. */
    jb_item(&jb, body, "run_statuses",
            cJSON_CreateStringArray(run_status_names, RUN_STATUS_COUNT));
    jb_item(&jb, body, "result_fields", gb_result_fields_describe());
    jb_item(&jb, body, "method_versions", gb_method_versions_describe());
    for (size_t i = 0; i < gb_benchmark_count() && !jb_failed(&jb); i++) {
        const struct gb_benchmark *b = gb_benchmark_at(i);
        if (!b->test_only || req->app->opt->test_benchmarks)
            jb_push(&jb, list, describe_benchmark(b));
    }
    /* Suites apart, so that a client listing what it can configure is not
     * handed one with no params of its own; each names its members. */
    suites = jb_array(&jb, body, "suites");
    for (size_t i = 0; i < gb_suite_count() && !jb_failed(&jb); i++)
        jb_push(&jb, suites, gb_suite_describe(gb_suite_at(i)));
    reply_built(rep, 200, &jb, body, "describing the benchmarks");
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

/* A NEW object of one warp's words and their bank loads; a failure
 * sticks in jb (the answer's), and jb_push then drops the partial one. */
static cJSON *describe_words(struct json_build *jb, const long words[GB_WARP_LANES])
{
    cJSON *p = jb_new_object(jb);
    cJSON *loads = jb_array(jb, p, "bank_loads");
    int per_bank[GB_SMEM_BANKS];

    gb_bank_loads(words, per_bank);
    jb_number(jb, p, "predicted_degree", gb_degree_for_words(words));
    jb_number(jb, p, "broadcast_lanes", gb_shared_lanes(words));
    for (int b = 0; b < GB_SMEM_BANKS; b++)
        jb_push(jb, loads, cJSON_CreateNumber(per_bank[b]));
    return p;
}

static cJSON *predict_stride(struct json_build *jb, long stride)
{
    long words[GB_WARP_LANES];
    cJSON *p;

    gb_stride_words(stride, words);
    p = describe_words(jb, words);
    jb_number(jb, p, "stride", (double)stride);
    /* The closed form and the general count must agree; say both. */
    jb_number(jb, p, "gcd_stride_32", gb_degree_for_stride(stride));
    return p;
}

/* The sector prediction of gmem_stride for one stride. */
static cJSON *predict_gmem(struct json_build *jb, long stride, int word_bytes)
{
    cJSON *p = jb_new_object(jb);

    jb_number(jb, p, "gmem_stride", (double)stride);
    jb_number(jb, p, "word_bytes", word_bytes);
    jb_number(jb, p, "predicted_sectors", gb_predict_gmem_sectors((int)stride, word_bytes));
    return p;
}

/* POST /predict {"gmem_stride": N} or {"gmem_strides": [...]}: 1 when
 * the body asked for global-memory sectors (the answer is added to out;
 * a failure sticks in jb), 0 when not. */
static int predict_gmem_body(struct json_build *jb, const cJSON *in, cJSON *out)
{
    const cJSON *one = cJSON_GetObjectItem(in, "gmem_stride");
    const cJSON *many = cJSON_GetObjectItem(in, "gmem_strides");
    const cJSON *wb = cJSON_GetObjectItem(in, "word_bytes");
    int word_bytes = cJSON_IsNumber(wb) ? wb->valueint : 4;
    cJSON *list;
    const cJSON *s;

    if (one == NULL && many == NULL)
        return 0;
    jb_number(jb, out, "sector_bytes", GB_GMEM_SECTOR_BYTES);
    list = jb_array(jb, out, "predictions");
    if (one != NULL)
        jb_push(jb, list, predict_gmem(jb, (long)one->valuedouble, word_bytes));
    cJSON_ArrayForEach(s, many)
        jb_push(jb, list, predict_gmem(jb, (long)s->valuedouble, word_bytes));
    return 1;
}

void api_predict_post(struct http_request *req, struct http_reply *rep)
{
    struct json_build jb = {0};
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
    out = jb_new_object(&jb);
    if (predict_gmem_body(&jb, in, out))
        goto reply;
    jb_number(&jb, out, "banks", GB_SMEM_BANKS);
    jb_number(&jb, out, "bank_width_bytes", 4);
    list = jb_array(&jb, out, "predictions");
    if ((v = cJSON_GetObjectItem(in, "stride")) != NULL) {
        jb_push(&jb, list, predict_stride(&jb, (long)v->valuedouble));
    } else if ((v = cJSON_GetObjectItem(in, "strides")) != NULL) {
        const cJSON *s;
        cJSON_ArrayForEach(s, v)
            jb_push(&jb, list, predict_stride(&jb, (long)s->valuedouble));
    } else {
        long words[GB_WARP_LANES];
        cJSON *p;
        int i = 0;
        cJSON_ArrayForEach(v, cJSON_GetObjectItem(in, "words"))
            words[i++] = (long)v->valuedouble;
        p = describe_words(&jb, words);
        jb_copy(&jb, p, in, "words");
        jb_push(&jb, list, p);
    }
reply:
    reply_built(rep, 200, &jb, out, "predicting");

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
static void add_tls(struct json_build *jb, cJSON *body, struct http_tls *tls)
{
    struct http_tls_status st;
    char expires[40];
    cJSON *o;

    if (tls == NULL) {
        jb_null(jb, body, "tls");
        return;
    }
    http_tls_status(tls, &st);
    time_format_rfc3339((int64_t)st.not_after * 1000, expires, sizeof(expires));
    o = jb_object(jb, body, "tls");
    jb_string(jb, o, "certificate_serial", st.serial);
    jb_string(jb, o, "certificate_expires_at", expires);
    jb_string(jb, o, "loaded_at", st.loaded_at);
    if (st.error[0])
        jb_string(jb, o, "reload_error", st.error);
    else
        jb_null(jb, o, "reload_error");
    jb_number(jb, o, "reload_failures", (double)st.reload_failures);
}

/* "heavy_reads": the heavy pool's load (heavy_pool.h). */
static void add_heavy_reads(struct json_build *jb, cJSON *body, struct heavy_pool *pool)
{
    struct heavy_pool_load load = {0};
    cJSON *o = jb_object(jb, body, "heavy_reads");

    if (pool)
        heavy_pool_load(pool, &load);
    jb_number(jb, o, "threads", load.threads);
    jb_number(jb, o, "running", load.running);
    jb_number(jb, o, "queued", load.queued);
    jb_number(jb, o, "queue_cap", load.queue_cap);
}

void api_healthz_get(struct http_request *req, struct http_reply *rep)
{
    struct app *app = req->app;
    int ping = store_ping(app->store);
    struct store_health h;
    const char *check = NULL, *problem;
    struct json_build jb = {0};
    cJSON *body, *reason;

    if (query_check(req, rep, no_query) != 0)
        return;
    body = jb_new_object(&jb);
    store_health_get(app->store, &h);
    problem = database_problem(ping, &h, &check);
    jb_string(&jb, body, "status", problem ? "degraded" : "ok");
    jb_string(&jb, body, "version", GPUBENCH_VERSION);
    jb_string(&jb, body, "commit", GPUBENCH_GIT_COMMIT);
    jb_string(&jb, body, "host", app->host);
    jb_string(&jb, body, "started_at", app->started_at);
    jb_number(&jb, body, "uptime_s",
              (double)(time_mono_ms() - app->started_mono_ms) / 1000.0);
    jb_string(&jb, body, "database", problem ? problem : "ok");
    jb_number(&jb, body, "gpus", gpu_pool_count(app->gpus));
    jb_string(&jb, body, "database_check", store_check_words[h.check]);
    if (h.checked_at[0])
        jb_string(&jb, body, "database_checked_at", h.checked_at);
    else
        jb_null(&jb, body, "database_checked_at");
    add_tls(&jb, body, app->tls);
    add_heavy_reads(&jb, body, app->heavy);
    if (problem) {
        reason = jb_object(&jb, body, "reason");
        jb_string(&jb, reason, "check", check);
        jb_string(&jb, reason, "code", problem);
        jb_string(&jb, reason, "message",
                  h.message[0] ? h.message : store_rc_words(ping));
        if (h.since[0])
            jb_string(&jb, reason, "since", h.since);
    } else {
        jb_null(&jb, body, "reason");
    }
    reply_built(rep, problem && strcmp(problem, "unreachable") == 0 ? 503 : 200, &jb, body,
                "describing the daemon's health");
}
