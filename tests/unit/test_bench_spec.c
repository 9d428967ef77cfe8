/* Parameter validation of common/bench_spec.c: defaults, and each way a
 * request can be wrong, with the field it must name. */
#include "alloc_fail.h"
#include "bench_spec.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cJSON *resolve(const char *bench, const char *json, struct gb_error *err)
{
    cJSON *in = json ? cJSON_Parse(json) : NULL;
    cJSON *out = gb_params_resolve(gb_benchmark_find(bench), in, err);

    cJSON_Delete(in);
    return out;
}

static int expect_error(const char *bench, const char *json, const char *code,
                        const char *field)
{
    struct gb_error err;
    cJSON *out = resolve(bench, json, &err);

    if (out != NULL) {
        fprintf(stderr, "accepted %s\n", json);
        cJSON_Delete(out);
        return 1;
    }
    if (strcmp(err.code, code) != 0 || strcmp(err.field, field) != 0) {
        fprintf(stderr, "%s: got %s at %s (%s), want %s at %s\n", json,
                err.code, err.field, err.message, code, field);
        return 1;
    }
    return 0;
}

static int test_defaults_filled(void)
{
    struct gb_error err;
    cJSON *out = resolve("smem_stride", NULL, &err);
    cJSON *strides;

    ASSERT(out != NULL);
    strides = cJSON_GetObjectItem(out, "strides");
    ASSERT_EQ(cJSON_GetArraySize(strides), 7);
    ASSERT_EQ(cJSON_GetArrayItem(strides, 6)->valueint, 33);
    ASSERT_EQ(cJSON_GetObjectItem(out, "samples")->valueint, 20);
    ASSERT_NEAR(cJSON_GetObjectItem(out, "min_sample_ms")->valuedouble, 1.0, 0);
    cJSON_Delete(out);

    out = resolve("transpose", "{\"n\": 1024}", &err);
    ASSERT(out != NULL);
    ASSERT_EQ(cJSON_GetObjectItem(out, "n")->valueint, 1024);
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(out, "variants")), 4);
    cJSON_Delete(out);
    return 0;
}

/* Issue 13: every measuring benchmark waits for a quiet card by default,
 * up to 30 s; precision is optional (absent, not 0, when not asked) and
 * max_samples defaults to 200; each is bounded and named when wrong. */
static int test_quiet_and_precision(void)
{
    const char *benches[] = {"smem_stride", "smem_pattern", "transpose"};
    struct gb_error err;
    cJSON *out;

    for (int i = 0; i < 3; i++) {
        out = resolve(benches[i], NULL, &err);
        ASSERT(out != NULL);
        ASSERT_STR_EQ(cJSON_GetObjectItem(out, "quiet")->valuestring, "wait");
        ASSERT_NEAR(cJSON_GetObjectItem(out, "quiet_wait_s")->valuedouble, 30, 0);
        ASSERT(cJSON_GetObjectItem(out, "precision") == NULL);
        ASSERT_EQ(cJSON_GetObjectItem(out, "max_samples")->valueint, 200);
        cJSON_Delete(out);
    }
    out = resolve("smem_stride", "{\"quiet\":\"check\",\"quiet_wait_s\":0,"
                                 "\"precision\":0.002,\"max_samples\":500}",
                  &err);
    ASSERT(out != NULL);
    ASSERT_NEAR(cJSON_GetObjectItem(out, "precision")->valuedouble, 0.002, 0);
    cJSON_Delete(out);
    ASSERT(expect_error("smem_stride", "{\"quiet\":\"later\"}", "out_of_bounds",
                        "params.quiet") == 0);
    ASSERT(expect_error("smem_stride", "{\"quiet_wait_s\":601}", "out_of_bounds",
                        "params.quiet_wait_s") == 0);
    ASSERT(expect_error("transpose", "{\"precision\":0.0001}", "out_of_bounds",
                        "params.precision") == 0);
    ASSERT(expect_error("smem_pattern", "{\"max_samples\":10}", "out_of_bounds",
                        "params.max_samples") == 0);
    return 0;
}

static int test_given_values_kept(void)
{
    struct gb_error err;
    cJSON *out = resolve("smem_stride", "{\"strides\":[1,2,32,33],\"samples\":5}", &err);

    ASSERT(out != NULL);
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(out, "strides")), 4);
    ASSERT_EQ(cJSON_GetObjectItem(out, "samples")->valueint, 5);
    cJSON_Delete(out);
    return 0;
}

static int test_errors_name_the_field(void)
{
    static const struct {
        const char *bench, *params, *code, *field;
    } cases[] = {
        {"smem_stride", "{\"stides\":[1]}", "unknown_field", "params.stides"},
        {"smem_stride", "{\"strides\":\"1\"}", "wrong_type", "params.strides"},
        {"smem_stride", "{\"strides\":[1,2,4,0]}", "out_of_bounds", "params.strides[3]"},
        {"smem_stride", "{\"strides\":[1,2,4,1025]}", "out_of_bounds", "params.strides[3]"},
        {"smem_stride", "{\"strides\":[1,2.5]}", "wrong_type", "params.strides[1]"},
        {"smem_stride", "{\"strides\":[1,true]}", "wrong_type", "params.strides[1]"},
        {"smem_stride", "{\"strides\":[]}", "out_of_bounds", "params.strides"},
        {"smem_stride", "{\"strides\":[4,2,4]}", "duplicate", "params.strides[2]"},
        {"smem_stride", "{\"samples\":2}", "out_of_bounds", "params.samples"},
        {"smem_stride", "[1,2]", "wrong_type", "params"},
        {"smem_pattern", "{\"words\":[1,2,3]}", "out_of_bounds", "params.words"},
        {"transpose", "{\"n\":1000}", "out_of_bounds", "params.n"},
        {"transpose", "{\"variants\":[\"tile34\"]}", "out_of_bounds", "params.variants[0]"},
        {"transpose", "{\"variants\":[\"copy\",\"copy\"]}", "duplicate", "params.variants[1]"},
        {"transpose", "{\"n\":\"8192\"}", "wrong_type", "params.n"},
        {"transpose", "{\"n\":1024,\"n\":2048}", "duplicate", "params.n"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ASSERT_EQ(expect_error(cases[i].bench, cases[i].params, cases[i].code, cases[i].field), 0);
    return 0;
}

/* The message of the error params (JSON) make against b under prefix
 * equals want; 0 when it does. */
static int expect_message(const struct gb_benchmark *b, const char *prefix, const char *json,
                          const char *want)
{
    struct gb_error err;
    cJSON *in = cJSON_Parse(json);
    cJSON *out = gb_params_resolve_at(b, in, prefix, &err);

    cJSON_Delete(in);
    if (out != NULL) {
        fprintf(stderr, "accepted %s\n", json);
        cJSON_Delete(out);
        return 1;
    }
    if (strcmp(err.message, want) != 0) {
        fprintf(stderr, "%s:\n  got  \"%s\"\n  want \"%s\"\n", json, err.message, want);
        return 1;
    }
    return 0;
}

/* Issue 26: a bound message prints whole numbers whole ("1048577", never
 * %g's "1.04858e+06", which reads as if 1048577 were inside 1..1048576)
 * and other numbers in as many digits as tell them apart (%g printed
 * 1000.0001 as "1000", above a bound of 1000). */
static int test_bound_messages_print_numbers_exactly(void)
{
    /* POST /predict's stride (server/http/api_info.c), top-level fields. */
    static const struct gb_param predict_like[] = {
        {.name = "stride", .type = GB_PARAM_INT, .help = "", .min = 1, .max = 1048576},
        {.name = "words",
         .type = GB_PARAM_INT_LIST,
         .help = "",
         .min = 0,
         .max = 2147483647.0,
         .min_items = 1,
         .max_items = 32},
        {.name = NULL},
    };
    static const struct gb_benchmark predict = {.name = "predict", .params = predict_like};
    const struct gb_benchmark *pcie = gb_benchmark_find("pcie_bandwidth");
    const struct gb_benchmark *stride = gb_benchmark_find("smem_stride");
    const struct gb_benchmark *transpose = gb_benchmark_find("transpose");

    ASSERT(expect_message(&predict, "", "{\"stride\":1048577}",
                          "stride is 1048577; it must be between 1 and 1048576") == 0);
    ASSERT(expect_message(&predict, "", "{\"stride\":1048576.5}",
                          "stride must be an integer, not 1048576.5") == 0);
    ASSERT(expect_message(&predict, "", "{\"words\":[2147483648]}",
                          "words[0] is 2147483648; it must be between 0 and 2147483647") == 0);
    ASSERT(expect_message(pcie, "params.", "{\"sizes_kib\":[64,4194305]}",
                          "params.sizes_kib[1] is 4194305; it must be between 4 and "
                          "4194304") == 0);
    ASSERT(expect_message(transpose, "params.", "{\"n\":1048576}",
                          "params.n is 1048576; it must be between 256 and 32768") == 0);
    ASSERT(expect_message(stride, "params.", "{\"min_sample_ms\":1000.0001}",
                          "params.min_sample_ms is 1000.0001; it must be between 0.05 and "
                          "1000") == 0);
    ASSERT(expect_message(stride, "params.", "{\"precision\":0.0001}",
                          "params.precision is 0.0001; it must be between 0.0005 and 0.5") == 0);
    ASSERT(expect_message(stride, "params.", "{\"strides\":[1,2.5]}",
                          "params.strides[1] must be an integer, not 2.5") == 0);
    ASSERT(expect_message(stride, "params.", "{\"samples\":-10000000}",
                          "params.samples is -10000000; it must be between 3 and 1000") == 0);
    return 0;
}

/* l2_fetch_bytes takes 0 (the driver's) or a power of two up to 128. */
static int test_power_of_two(void)
{
    static const char *const ok[] = {"{\"l2_fetch_bytes\":0}", "{\"l2_fetch_bytes\":32}",
                                     "{\"l2_fetch_bytes\":64}", "{\"l2_fetch_bytes\":128}"};
    struct gb_error err;

    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        cJSON *out = resolve("gmem_stride", ok[i], &err);
        ASSERT(out != NULL);
        cJSON_Delete(out);
    }
    ASSERT_EQ(expect_error("gmem_stride", "{\"l2_fetch_bytes\":96}", "out_of_bounds",
                           "params.l2_fetch_bytes"),
              0);
    ASSERT_EQ(expect_error("gmem_stride", "{\"l2_fetch_bytes\":48}", "out_of_bounds",
                           "params.l2_fetch_bytes"),
              0);
    ASSERT_EQ(expect_error("gmem_stride", "{\"l2_fetch_bytes\":256}", "out_of_bounds",
                           "params.l2_fetch_bytes"),
              0);
    return 0;
}

static int test_prefix_for_top_level(void)
{
    static const struct gb_param ps[] = {
        {.name = "stride", .type = GB_PARAM_INT, .min = 1, .max = 10},
        {.name = NULL}};
    static const struct gb_benchmark b = {.name = "x", .params = ps};
    struct gb_error err;
    cJSON *in = cJSON_Parse("{\"stride\": 11}");
    cJSON *empty = cJSON_CreateObject();
    cJSON *out = gb_params_resolve_at(&b, in, "", &err);

    ASSERT(out == NULL);
    ASSERT_STR_EQ(err.field, "stride");
    /* An optional parameter with no default is left out, not invented. */
    out = gb_params_resolve_at(&b, empty, "", &err);
    ASSERT(out != NULL);
    ASSERT_EQ(cJSON_GetArraySize(out), 0);
    cJSON_Delete(out);
    cJSON_Delete(in);
    cJSON_Delete(empty);
    return 0;
}

static int test_describe_lists_bounds(void)
{
    cJSON *d = gb_benchmark_describe(gb_benchmark_find("smem_stride"));
    cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItem(d, "params"), 0);

    ASSERT_STR_EQ(cJSON_GetObjectItem(p, "name")->valuestring, "strides");
    ASSERT_EQ(cJSON_GetObjectItem(p, "min")->valueint, 1);
    ASSERT_EQ(cJSON_GetObjectItem(p, "max")->valueint, 1024);
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(p, "default")), 7);
    cJSON_Delete(d);
    ASSERT(gb_benchmark_find("nope") == NULL);
    return 0;
}

static int test_duplicate_keys(void)
{
    cJSON *dup = cJSON_Parse("{\"a\":1,\"b\":2,\"a\":3}");
    cJSON *ok = cJSON_Parse("{\"a\":1,\"b\":{\"a\":2}}");

    ASSERT_STR_EQ(gb_json_duplicate_key(dup), "a");
    ASSERT(gb_json_duplicate_key(ok) == NULL);
    ASSERT(gb_json_duplicate_key(NULL) == NULL);
    cJSON_Delete(dup);
    cJSON_Delete(ok);
    return 0;
}

/* Issue 21: which parameters join the comparability key. */
static int test_measures_flags(void)
{
    static const char *const measure[] = {"strides", "words", "n", "variants", "array_mib",
                                          "kinds", "gemm_n", "sizes_kib", "memory", "size_mib",
                                          "footprint_mib", "l2_fetch_bytes",
                                          /* issue 32's deep checks */
                                          "seconds", "fraction", "patterns", "passes", "load",
                                          /* issue 37 */ "bytes", "dtype",
                                          NULL};
    int seen = 0;

    for (size_t i = 0; i < gb_benchmark_count(); i++)
        for (const struct gb_param *p = gb_benchmark_at(i)->params; p->name; p++) {
            int want = 0;
            for (int k = 0; measure[k]; k++)
                want |= strcmp(measure[k], p->name) == 0;
            if (p->measures != want)
                fprintf(stderr, "%s.%s measures %d\n", gb_benchmark_at(i)->name, p->name,
                        p->measures);
            ASSERT_EQ(p->measures, want);
            seen += want;
        }
    ASSERT_EQ(seen, 22); /* strides, kinds and seconds twice; nccl_allreduce's two */
    return 0;
}

/* The key's params: measuring ones only, defaults filled in, unknown kept. */
static int test_params_key(void)
{
    const struct gb_benchmark *b = gb_benchmark_find("smem_stride");
    cJSON *a = cJSON_Parse("{\"strides\":[1,2,4,8,16,32,33],\"samples\":20,"
                           "\"quiet_wait_s\":3,\"counters\":\"auto\"}");
    cJSON *none = cJSON_Parse("{\"quiet_wait_s\":30}");
    cJSON *odd = cJSON_Parse("{\"strides\":[1],\"future\":7}");
    cJSON *ka = gb_params_key(b, a), *kn = gb_params_key(b, none), *ko = gb_params_key(b, odd);
    char *text = cJSON_PrintUnformatted(ko);

    ASSERT(cJSON_Compare(ka, kn, 1));
    ASSERT_EQ(cJSON_GetArraySize(ka), 1);
    ASSERT_STR_EQ(text, "{\"strides\":[1],\"future\":7}");
    free(text);
    cJSON_Delete(a);
    cJSON_Delete(none);
    cJSON_Delete(odd);
    cJSON_Delete(ka);
    cJSON_Delete(kn);
    cJSON_Delete(ko);
    return 0;
}

/* The method a recorded version implies: none before 0.2.0. */
static int test_method_of_version(void)
{
    const struct gb_benchmark *hbm = gb_benchmark_find("hbm_bandwidth");

    ASSERT(gb_benchmark_method(hbm) >= 1);
    ASSERT_EQ(gb_method_of_version(hbm, "0.1.0"), 0);
    ASSERT_EQ(gb_method_of_version(hbm, NULL), 0);
    ASSERT_EQ(gb_method_of_version(hbm, "dev"), 0);
    ASSERT_EQ(gb_method_of_version(hbm, "0.2.0"), gb_benchmark_method(hbm));
    ASSERT_EQ(gb_method_of_version(hbm, "0.10.1-rc1"), gb_benchmark_method(hbm));
    for (size_t i = 0; i < gb_benchmark_count(); i++) {
        const struct gb_method *m = gb_benchmark_at(i)->methods;
        ASSERT(m != NULL && m->method == 1);
        for (; m->method; m++)
            ASSERT(m->change != NULL && m->change[0]);
    }
    return 0;
}

static cJSON *describe_of(void *ctx)
{
    return gb_benchmark_describe(ctx);
}

/* GET /benchmarks' entries under a failing allocator (alloc_fail.h): each
 * benchmark's description whole, or NULL; never one with a param or a
 * field missing. */
static int test_describe_under_failing_allocs(void)
{
    for (size_t i = 0; i < gb_benchmark_count(); i++) {
        const struct gb_benchmark *b = gb_benchmark_at(i);

        ASSERT_EQ(alloc_fail_whole_or_null(b->name, describe_of, (void *)b), 0);
    }
    return 0;
}

TEST_MAIN({"defaults are filled in", test_defaults_filled},
          {"descriptions under failing allocations", test_describe_under_failing_allocs},
          {"which parameters measure", test_measures_flags},
          {"the key's params", test_params_key},
          {"the method a version implies", test_method_of_version},
          {"quiet and precision parameters", test_quiet_and_precision},
          {"repeated keys are found", test_duplicate_keys},
          {"given values are kept", test_given_values_kept},
          {"each error names its field", test_errors_name_the_field},
          {"bound messages print numbers exactly", test_bound_messages_print_numbers_exactly},
          {"0 or a power of two", test_power_of_two},
          {"top-level prefix and optional params", test_prefix_for_top_level},
          {"describe lists type, default and bounds", test_describe_lists_bounds})
