/*
 * run_request.c - see run_request.h.
 */
#include "run_request.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const run_fields[] = {"benchmark", "params", "device",
                                         "label", "timeout_s", NULL};

static int offered(const struct gb_benchmark *b, int test_benchmarks)
{
    return b != NULL && (!b->test_only || test_benchmarks);
}

static void list_benchmarks(int test_benchmarks, char *buf, size_t cap)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < gb_benchmark_count() && used < cap; i++) {
        const struct gb_benchmark *b = gb_benchmark_at(i);
        if (offered(b, test_benchmarks))
            used += (size_t)snprintf(buf + used, cap - used, "%s%s",
                                     used ? ", " : "", b->name);
    }
    for (size_t i = 0; i < gb_suite_count() && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s (a suite)",
                                 used ? ", " : "", gb_suite_at(i)->name);
}

cJSON *json_parse_whole(const char *text, size_t len, size_t *at, int *trailing)
{
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithLengthOpts(text, len, &end, 0);

    *at = 0;
    *trailing = 0;
    if (v == NULL) {
        const char *err = cJSON_GetErrorPtr();
        *at = err && err >= text && err <= text + len ? (size_t)(err - text) : 0;
        return NULL;
    }
    while (end && end < text + len &&
           (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t'))
        end++;
    if (end && end < text + len) {
        *at = (size_t)(end - text);
        *trailing = 1;
        cJSON_Delete(v);
        return NULL;
    }
    return v;
}

cJSON *request_json_parse(const char *body, size_t len, struct gb_error *err)
{
    size_t at;
    int trailing;
    cJSON *v;

    if (body == NULL || len == 0) {
        gb_error_set(err, "malformed_json", "",
                     "the request has no body; send a JSON object, e.g. curl -H "
                     "'Content-Type: application/json' -d '{\"benchmark\":\"smem_stride\"}'");
        return NULL;
    }
    v = json_parse_whole(body, len, &at, &trailing);
    if (v == NULL && trailing)
        gb_error_set(err, "malformed_json", "",
                     "the body has text after its JSON value (at byte %zu)", at);
    else if (v == NULL)
        gb_error_set(err, "malformed_json", "",
                     "the body is not valid JSON (error at byte %zu)", at);
    return v;
}

static int check_fields(const cJSON *body, struct gb_error *err)
{
    const cJSON *f;

    if (!cJSON_IsObject(body))
        return gb_error_set(err, "wrong_type", "",
                            "the body must be a JSON object, e.g. "
                            "{\"benchmark\": \"smem_stride\"}");
    if (gb_json_duplicate_key(body)) {
        char field[72];
        snprintf(field, sizeof(field), "%.60s", gb_json_duplicate_key(body));
        return gb_error_set(err, "duplicate", field, "%s is given twice", field);
    }
    cJSON_ArrayForEach(f, body) {
        int known = 0;
        for (const char *const *name = run_fields; *name && !known; name++)
            known = strcmp(*name, f->string) == 0;
        if (!known) {
            char field[72];
            snprintf(field, sizeof(field), "%.60s", f->string);
            return gb_error_set(err, "unknown_field", field,
                                "%s is not a field of a run request (it takes: "
                                "benchmark, params, device, label, timeout_s)",
                                field);
        }
    }
    return 0;
}

static int check_benchmark(struct run_request *r, int test_benchmarks,
                           struct gb_error *err)
{
    const cJSON *name = cJSON_GetObjectItem(r->body, "benchmark");
    char names[256];

    list_benchmarks(test_benchmarks, names, sizeof(names));
    if (name == NULL)
        return gb_error_set(err, "missing_field", "benchmark",
                            "benchmark is required (one of: %s)", names);
    if (!cJSON_IsString(name))
        return gb_error_set(err, "wrong_type", "benchmark", "benchmark must be a string");
    r->suite = gb_suite_find(name->valuestring);
    if (r->suite != NULL)
        return 0;
    r->bench = gb_benchmark_find(name->valuestring);
    if (!offered(r->bench, test_benchmarks))
        return gb_error_set(err, "unknown_benchmark", "benchmark",
                            "there is no benchmark \"%.60s\" (there are: %s)",
                            name->valuestring, names);
    return 0;
}

static int check_extras(struct run_request *r, int max_timeout_s,
                        struct gb_error *err)
{
    const cJSON *l = cJSON_GetObjectItem(r->body, "label");
    const cJSON *t = cJSON_GetObjectItem(r->body, "timeout_s");
    const cJSON *d = cJSON_GetObjectItem(r->body, "device");

    r->timeout_s = max_timeout_s;
    if (l && !cJSON_IsNull(l)) {
        if (!cJSON_IsString(l))
            return gb_error_set(err, "wrong_type", "label", "label must be a string");
        if (strlen(l->valuestring) > RUN_LABEL_MAX)
            return gb_error_set(err, "out_of_bounds", "label", "label is %zu bytes; at most %d",
                                strlen(l->valuestring), RUN_LABEL_MAX);
        r->label = l->valuestring;
    }
    if (t && !cJSON_IsNull(t)) {
        if (!cJSON_IsNumber(t) || !isfinite(t->valuedouble) ||
            t->valuedouble != floor(t->valuedouble))
            return gb_error_set(err, "wrong_type", "timeout_s",
                                "timeout_s must be a whole number of seconds");
        if (t->valuedouble < 1 || t->valuedouble > max_timeout_s) {
            char given[GB_NUMBER_TEXT_MAX];
            gb_number_text(given, sizeof(given), t->valuedouble);
            return gb_error_set(err, "out_of_bounds", "timeout_s",
                                "timeout_s is %s; it must be from 1 to this daemon's "
                                "--run-timeout, %d",
                                given, max_timeout_s);
        }
        r->timeout_s = (int)t->valuedouble;
    }
    if (d && !cJSON_IsNull(d)) {
        if (!(cJSON_IsString(d) ||
              (cJSON_IsNumber(d) && d->valuedouble >= 0 && d->valuedouble <= 1e6 &&
               d->valuedouble == floor(d->valuedouble))))
            return gb_error_set(err, "wrong_type", "device",
                                "device must be a GPU index (0, 1, ...), a GPU UUID or \"all\"");
        r->device = d;
    }
    return 0;
}

static int resolve_one(struct run_request *r, struct gb_error *err)
{
    r->parts[0].bench = r->bench;
    r->parts[0].params = gb_params_resolve(r->bench, cJSON_GetObjectItem(r->body, "params"),
                                           err);
    if (r->parts[0].params == NULL)
        return -1;
    r->n_parts = 1;
    return 0;
}

/* One part per member of the suite, each member's params resolved on its
 * own; a requested param that no member takes is refused, like a typo. */
static int resolve_suite(struct run_request *r, struct gb_error *err)
{
    const struct gb_benchmark *members[GB_SUITE_MAX_MEMBERS];
    const cJSON *params = cJSON_GetObjectItem(r->body, "params");
    int n = gb_suite_members(r->suite, members, GB_SUITE_MAX_MEMBERS);

    if (n == 0)
        return gb_error_set(err, "unknown_benchmark", "benchmark",
                            "the %s suite has no benchmark on this daemon", r->suite->name);
    if (gb_suite_check_params(r->suite, params, err) != 0)
        return -1;
    for (int i = 0; i < n; i++) {
        r->parts[i].bench = members[i];
        r->parts[i].params = gb_suite_member_params(r->suite, members[i], params, err);
        if (r->parts[i].params == NULL)
            return -1;
        r->n_parts = i + 1;
    }
    return 0;
}

int run_request_parse(const char *body, size_t len, int max_timeout_s,
                      int test_benchmarks, struct run_request *r,
                      struct gb_error *err)
{
    memset(r, 0, sizeof(*r));
    r->body = request_json_parse(body, len, err);
    if (r->body == NULL || check_fields(r->body, err) != 0 ||
        check_benchmark(r, test_benchmarks, err) != 0)
        return -1;
    if (r->suite != NULL ? resolve_suite(r, err) != 0 : resolve_one(r, err) != 0)
        return -1;
    r->bench = r->parts[0].bench;
    r->params = r->parts[0].params;
    return check_extras(r, max_timeout_s, err);
}

void run_request_free(struct run_request *r)
{
    for (int i = 0; i < r->n_parts; i++)
        cJSON_Delete(r->parts[i].params);
    cJSON_Delete(r->body);
    memset(r, 0, sizeof(*r));
}
