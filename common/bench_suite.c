/*
 * bench_suite.c - the suite table and the expansion of a suite's params;
 * see bench_suite.h.  Membership is read off the benchmark table so that
 * it cannot drift from it.
 */
#include "bench_suite.h"

#include <stdio.h>
#include <string.h>

/* health_deep's own members, after the health ones (bench_suite.h says
 * why): the default short forms that keep the suite under 5 minutes on an
 * H200. */
static const struct gb_suite_extra deep_extra[] = {
    {"known_answer", "{\"seconds\":20,\"quiet_wait_s\":5}"},
    {"memtest", "{\"fraction\":0.9,\"passes\":1,\"quiet_wait_s\":5}"},
    {"soak", "{\"seconds\":120,\"load\":\"both\",\"quiet_wait_s\":5}"},
    {NULL, NULL},
};

static const struct gb_suite suites[] = {
    {.name = "health",
     .description = "The nightly check of a card: a short form of every benchmark "
                    "that has one (its health_params), one run each under one "
                    "batch, queued back to back; with \"device\": \"all\", on "
                    "every card (a run that needs every GPU, p2p_bandwidth, "
                    "once for the node).",
     .expected_s = 18,
     .expected_source = "the health suite of one H200, measured through the daemon "
                        "(examples/h200_daemon_health)"},
    {.name = "health_deep",
     .description = "The weekly deep check of a card: the health suite's members, "
                    "then known_answer (20 s of exact answers on every SM), memtest "
                    "(one pass of four patterns over 90% of the free memory) and soak "
                    "(120 s of GEMM and HBM load held, last so that its heat does not "
                    "reach the other runs), under one batch.",
     .extra = deep_extra,
     .expected_s = 166,
     .expected_source = "the deep suite of one H200, measured through the daemon: 165.6 s, "
                        "known_answer 23.5 s, memtest 1.9 s, soak 121.7 s, the health "
                        "members 18 s (examples/h200_daemon_deep)"},
};

#define SUITE_COUNT (sizeof(suites) / sizeof(suites[0]))

size_t gb_suite_count(void)
{
    return SUITE_COUNT;
}

const struct gb_suite *gb_suite_at(size_t i)
{
    return i < SUITE_COUNT ? &suites[i] : NULL;
}

const struct gb_suite *gb_suite_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < SUITE_COUNT; i++)
        if (strcmp(suites[i].name, name) == 0)
            return &suites[i];
    return NULL;
}

int gb_suite_members(const struct gb_suite *s, const struct gb_benchmark **members,
                     int cap)
{
    int n = 0;

    for (size_t i = 0; i < gb_benchmark_count() && n < cap; i++) {
        const struct gb_benchmark *b = gb_benchmark_at(i);
        if (!b->test_only && b->health_params != NULL)
            members[n++] = b;
    }
    for (const struct gb_suite_extra *e = s ? s->extra : NULL; e && e->benchmark && n < cap; e++) {
        const struct gb_benchmark *b = gb_benchmark_find(e->benchmark);
        if (b != NULL)
            members[n++] = b;
    }
    return n;
}

static int takes_param(const struct gb_benchmark *b, const char *name)
{
    for (const struct gb_param *p = b->params; p->name; p++)
        if (strcmp(p->name, name) == 0)
            return 1;
    return 0;
}

/* The params member starts from in suite s: its extra params, else its
 * health_params, else none. */
static const char *base_params(const struct gb_suite *s, const struct gb_benchmark *member)
{
    for (const struct gb_suite_extra *e = s ? s->extra : NULL; e && e->benchmark; e++)
        if (strcmp(e->benchmark, member->name) == 0)
            return e->params;
    return member->health_params ? member->health_params : "{}";
}

cJSON *gb_suite_member_params(const struct gb_suite *s, const struct gb_benchmark *member,
                              const cJSON *params, struct gb_error *err)
{
    cJSON *merged = NULL, *out = NULL;
    const cJSON *given;

    merged = cJSON_Parse(base_params(s, member));
    if (!cJSON_IsObject(merged)) {
        gb_error_set(err, "internal", "", "the health_params of %s are not a JSON object",
                     member->name);
        goto done;
    }
    cJSON_ArrayForEach(given, params) {
        cJSON *copy;
        if (!takes_param(member, given->string))
            continue;
        copy = cJSON_Duplicate(given, 1);
        cJSON_DeleteItemFromObject(merged, given->string);
        if (copy == NULL || !cJSON_AddItemToObject(merged, given->string, copy)) {
            cJSON_Delete(copy);
            gb_error_set(err, "internal", "", "out of memory");
            goto done;
        }
    }
    out = gb_params_resolve(member, merged, err);
    if (out == NULL) {
        /* Say which member refused it: the same field may suit another. */
        char msg[sizeof(err->message)];
        snprintf(msg, sizeof(msg), "%s", err->message);
        snprintf(err->message, sizeof(err->message), "for %s: %.200s", member->name, msg);
    }

done:
    cJSON_Delete(merged);
    return out;
}

int gb_suite_check_params(const struct gb_suite *s, const cJSON *params,
                          struct gb_error *err)
{
    const struct gb_benchmark *members[GB_SUITE_MAX_MEMBERS];
    int n = gb_suite_members(s, members, GB_SUITE_MAX_MEMBERS);
    const cJSON *given;

    if (params != NULL && !cJSON_IsNull(params) && !cJSON_IsObject(params))
        return gb_error_set(err, "wrong_type", "params", "params must be a JSON object");
    if (gb_json_duplicate_key(params)) {
        char path[96];
        snprintf(path, sizeof(path), "params.%.80s", gb_json_duplicate_key(params));
        return gb_error_set(err, "duplicate", path, "%s is given twice", path);
    }
    cJSON_ArrayForEach(given, params) {
        int taken = 0;
        for (int i = 0; i < n && !taken; i++)
            taken = takes_param(members[i], given->string);
        if (!taken) {
            char path[96];
            snprintf(path, sizeof(path), "params.%.80s", given->string);
            return gb_error_set(err, "unknown_field", path,
                                "%s is not a parameter of any benchmark of the %s suite",
                                path, s->name);
        }
    }
    return 0;
}

cJSON *gb_suite_describe(const struct gb_suite *s)
{
    const struct gb_benchmark *members[GB_SUITE_MAX_MEMBERS];
    int n = gb_suite_members(s, members, GB_SUITE_MAX_MEMBERS);
    cJSON *obj = cJSON_CreateObject();
    cJSON *list = cJSON_AddArrayToObject(obj, "members");

    if (obj == NULL || list == NULL)
        goto fail;
    if (!cJSON_AddStringToObject(obj, "name", s->name) ||
        !cJSON_AddStringToObject(obj, "description", s->description) ||
        !cJSON_AddBoolToObject(obj, "suite", 1) ||
        !cJSON_AddNumberToObject(obj, "expected_s", s->expected_s) ||
        !cJSON_AddStringToObject(obj, "expected_source", s->expected_source))
        goto fail;
    for (int i = 0; i < n; i++) {
        cJSON *m = cJSON_CreateObject();
        cJSON *hp = cJSON_Parse(base_params(s, members[i]));
        if (m == NULL || !cJSON_AddItemToArray(list, m)) {
            cJSON_Delete(m);
            cJSON_Delete(hp);
            goto fail;
        }
        if (!cJSON_AddStringToObject(m, "name", members[i]->name) ||
            !cJSON_AddItemToObject(m, "health_params", hp ? hp : cJSON_CreateNull()) ||
            !cJSON_AddBoolToObject(m, "all_devices", members[i]->all_devices != 0))
            goto fail;
    }
    return obj;

fail:
    cJSON_Delete(obj);
    return NULL;
}

int gb_benchmark_offered(const struct gb_benchmark *b, int test_benchmarks)
{
    return b != NULL && (!b->test_only || test_benchmarks);
}

void gb_benchmark_names(int test_benchmarks, int suites, char *buf, size_t cap)
{
    size_t used = 0;

    if (cap == 0)
        return;
    buf[0] = '\0';
    for (size_t i = 0; i < gb_benchmark_count() && used < cap; i++) {
        const struct gb_benchmark *b = gb_benchmark_at(i);
        if (gb_benchmark_offered(b, test_benchmarks))
            used += (size_t)snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", b->name);
    }
    for (size_t i = 0; suites && i < gb_suite_count() && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s (a suite)", used ? ", " : "",
                                 gb_suite_at(i)->name);
}
