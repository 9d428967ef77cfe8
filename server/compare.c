/*
 * compare.c - see compare.h.  Series are kept in a cJSON array while they
 * are built; each holds, per row key, the list of values seen, reduced to
 * medians at the end.  A comparison covers at most a few thousand runs,
 * so plain linear scans keep this short and obviously right.
 */
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const key_fields[] = {"stride", "variant", "pattern", NULL};

/* The measured fields aggregated per key: the median over runs of each. */
static const char *const median_fields[] = {"median_ms", "ratio", "gbps",
                                            "share_of_ceiling",
                                            "bank_conflicts", "wavefronts",
                                            "predicted_degree", NULL};

cJSON *compare_row_digest(const cJSON *rows)
{
    static const char *const extra[] = {"min_ms", "max_ms", NULL};
    static const char *const *const lists[] = {key_fields, median_fields, extra};
    cJSON *out = cJSON_CreateArray();
    const cJSON *row;

    cJSON_ArrayForEach(row, rows) {
        cJSON *d = cJSON_CreateObject();
        for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++)
            for (const char *const *f = lists[l]; *f; f++) {
                const cJSON *v = cJSON_GetObjectItem(row, *f);
                if (v && !cJSON_IsNull(v))
                    cJSON_AddItemToObject(d, *f, cJSON_Duplicate(v, 0));
            }
        cJSON_AddItemToArray(out, d);
    }
    return out;
}

const char *compare_row_key(const cJSON *row)
{
    for (const char *const *k = key_fields; *k; k++)
        if (cJSON_GetObjectItem(row, *k))
            return *k;
    return NULL;
}

static const char *str_at(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItem(obj, a);

    if (b)
        v = cJSON_GetObjectItem(v, b);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The median of the numbers in arr (sorted in place), or NAN if none. */
static double median_of(const cJSON *arr)
{
    int n = cJSON_GetArraySize(arr), i = 0;
    double *v, m;
    const cJSON *x;

    if (n == 0)
        return NAN;
    v = malloc(sizeof(double) * (size_t)n);
    if (v == NULL)
        return NAN;
    cJSON_ArrayForEach(x, arr)
        v[i++] = x->valuedouble;
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    free(v);
    return m;
}

static double extreme_of(const cJSON *arr, int want_max)
{
    double best = NAN;
    const cJSON *x;

    cJSON_ArrayForEach(x, arr)
        if (isnan(best) || (want_max ? x->valuedouble > best : x->valuedouble < best))
            best = x->valuedouble;
    return best;
}

/* The comparability key: benchmark, params, card model, driver, CUDA. */
static char *comparability_key(const char *benchmark, const cJSON *run)
{
    const cJSON *meta = cJSON_GetObjectItem(run, "meta");
    char *params = cJSON_PrintUnformatted(cJSON_GetObjectItem(run, "params"));
    const char *model = str_at(run, "device", "name");
    const char *driver = str_at(meta, "driver", "nvidia_version");
    const char *cuda = str_at(meta, "cuda", "runtime_version");
    size_t n;
    char *key;

    if (params == NULL)
        return NULL;
    n = strlen(benchmark) + strlen(params) + 64 +
        strlen(model ? model : "") + strlen(driver ? driver : "") + strlen(cuda ? cuda : "");
    key = malloc(n);
    if (key)
        snprintf(key, n, "%s|%s|%s|driver %s|cuda %s", benchmark, params,
                 model ? model : "?", driver ? driver : "?", cuda ? cuda : "?");
    free(params);
    return key;
}

/* The series of run's card under key, made if new. */
static cJSON *series_for(cJSON *series, const char *key, const cJSON *run)
{
    const char *uuid = str_at(run, "device", "uuid");
    const char *host = str_at(run, "host", NULL);
    const cJSON *meta = cJSON_GetObjectItem(run, "meta");
    const char *driver = str_at(meta, "driver", "nvidia_version");
    const char *cuda = str_at(meta, "cuda", "runtime_version");
    cJSON *s, *card;

    cJSON_ArrayForEach(s, series) {
        const cJSON *c = cJSON_GetObjectItem(s, "card");
        if (strcmp(cJSON_GetObjectItem(s, "comparability_key")->valuestring, key) == 0 &&
            strcmp(str_at(c, "uuid", NULL) ? str_at(c, "uuid", NULL) : "", uuid ? uuid : "") == 0 &&
            strcmp(str_at(c, "host", NULL) ? str_at(c, "host", NULL) : "", host ? host : "") == 0)
            return s;
    }
    s = cJSON_CreateObject();
    card = cJSON_AddObjectToObject(s, "card");
    cJSON_AddStringToObject(card, "name", str_at(run, "device", "name") ? str_at(run, "device", "name") : "?");
    cJSON_AddStringToObject(card, "uuid", uuid ? uuid : "");
    cJSON_AddStringToObject(card, "host", host ? host : "");
    if (driver)
        cJSON_AddStringToObject(s, "driver", driver);
    else
        cJSON_AddNullToObject(s, "driver");
    if (cuda)
        cJSON_AddStringToObject(s, "cuda", cuda);
    else
        cJSON_AddNullToObject(s, "cuda");
    cJSON_AddItemToObject(s, "params", cJSON_Duplicate(cJSON_GetObjectItem(run, "params"), 1));
    cJSON_AddStringToObject(s, "comparability_key", key);
    cJSON_AddBoolToObject(s, "synthetic", cJSON_IsTrue(cJSON_GetObjectItem(meta, "synthetic")));
    cJSON_AddArrayToObject(s, "runs");
    cJSON_AddObjectToObject(s, "acc");  /* key text -> {field: [values]} */
    cJSON_AddItemToArray(series, s);
    return s;
}

static void key_text(const cJSON *v, char *buf, size_t cap)
{
    if (cJSON_IsString(v))
        snprintf(buf, cap, "s:%s", v->valuestring);
    else
        snprintf(buf, cap, "n:%.17g", v->valuedouble);
}

/* Remembers key value v in keys, once, in first-seen order. */
static void note_key(cJSON *keys, const cJSON *v)
{
    const cJSON *k;

    cJSON_ArrayForEach(k, keys)
        if (cJSON_Compare(k, v, 1))
            return;
    cJSON_AddItemToArray(keys, cJSON_Duplicate(v, 1));
}

static void add_value(cJSON *acc, const char *field, double v)
{
    cJSON *list = cJSON_GetObjectItem(acc, field);

    if (list == NULL)
        list = cJSON_AddArrayToObject(acc, field);
    cJSON_AddItemToArray(list, cJSON_CreateNumber(v));
}

static void accumulate(cJSON *s, const cJSON *rows, const char *key_field,
                       cJSON *keys)
{
    cJSON *acc_all = cJSON_GetObjectItem(s, "acc");
    const cJSON *row;

    cJSON_ArrayForEach(row, rows) {
        const cJSON *kv = cJSON_GetObjectItem(row, key_field);
        char kt[96];
        cJSON *acc;

        if (kv == NULL)
            continue;
        note_key(keys, kv);
        key_text(kv, kt, sizeof(kt));
        acc = cJSON_GetObjectItem(acc_all, kt);
        if (acc == NULL) {
            acc = cJSON_AddObjectToObject(acc_all, kt);
            cJSON_AddItemToObject(acc, "key", cJSON_Duplicate(kv, 1));
        }
        for (const char *const *f = median_fields; *f; f++) {
            const cJSON *v = cJSON_GetObjectItem(row, *f);
            if (cJSON_IsNumber(v))
                add_value(acc, *f, v->valuedouble);
        }
        if (cJSON_IsNumber(cJSON_GetObjectItem(row, "min_ms")))
            add_value(acc, "min_ms", cJSON_GetObjectItem(row, "min_ms")->valuedouble);
        if (cJSON_IsNumber(cJSON_GetObjectItem(row, "max_ms")))
            add_value(acc, "max_ms", cJSON_GetObjectItem(row, "max_ms")->valuedouble);
    }
}

static void add_number_or_null(cJSON *obj, const char *name, double v)
{
    if (isnan(v))
        return;
    cJSON_AddNumberToObject(obj, name, v);
}

/* Turns a series' accumulated lists into its rows, in keys order. */
static void reduce(cJSON *s, const cJSON *keys)
{
    cJSON *acc_all = cJSON_DetachItemFromObject(s, "acc");
    cJSON *rows = cJSON_AddArrayToObject(s, "rows");
    const cJSON *k;

    cJSON_ArrayForEach(k, keys) {
        char kt[96];
        const cJSON *acc;
        cJSON *row;
        double med, lo, hi;

        key_text(k, kt, sizeof(kt));
        acc = cJSON_GetObjectItem(acc_all, kt);
        if (acc == NULL)
            continue;
        row = cJSON_CreateObject();
        cJSON_AddItemToObject(row, "key", cJSON_Duplicate(k, 1));
        cJSON_AddNumberToObject(row, "n", cJSON_GetArraySize(cJSON_GetObjectItem(acc, "median_ms")));
        for (const char *const *f = median_fields; *f; f++)
            add_number_or_null(row, *f, median_of(cJSON_GetObjectItem(acc, *f)));
        lo = extreme_of(cJSON_GetObjectItem(acc, "min_ms"), 0);
        hi = extreme_of(cJSON_GetObjectItem(acc, "max_ms"), 1);
        med = median_of(cJSON_GetObjectItem(acc, "median_ms"));
        add_number_or_null(row, "min_ms", lo);
        add_number_or_null(row, "max_ms", hi);
        if (!isnan(lo) && !isnan(hi) && med > 0)
            cJSON_AddNumberToObject(row, "spread", (hi - lo) / med);
        cJSON_AddItemToArray(rows, row);
    }
    cJSON_Delete(acc_all);
}

static int cmp_keys(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;

    return cmp_double(&x->valuedouble, &y->valuedouble);
}

/* Numeric keys ascending; string keys (variants) as first seen. */
static cJSON *sort_keys(cJSON *keys)
{
    int n = cJSON_GetArraySize(keys), i = 0;
    const cJSON **v;
    cJSON *out;
    const cJSON *k;

    cJSON_ArrayForEach(k, keys)
        if (!cJSON_IsNumber(k))
            return keys;
    v = malloc(sizeof(*v) * (size_t)(n ? n : 1));
    if (v == NULL)
        return keys;
    cJSON_ArrayForEach(k, keys)
        v[i++] = k;
    qsort(v, (size_t)n, sizeof(*v), cmp_keys);
    out = cJSON_CreateArray();
    for (i = 0; i < n; i++)
        cJSON_AddItemToArray(out, cJSON_Duplicate(v[i], 1));
    free(v);
    cJSON_Delete(keys);
    return out;
}

cJSON *compare_build(const char *benchmark, const cJSON *runs, int latest)
{
    cJSON *out = cJSON_CreateObject();
    cJSON *series = cJSON_CreateArray();
    cJSON *keys = cJSON_CreateArray();
    const char *key_field = NULL;
    const cJSON *run;
    cJSON *s;

    if (out == NULL || series == NULL || keys == NULL) {
        cJSON_Delete(out);
        cJSON_Delete(series);
        cJSON_Delete(keys);
        return NULL;
    }
    cJSON_ArrayForEach(run, runs) {
        const cJSON *rows = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "results"), "rows");
        const char *status = str_at(run, "status", NULL);
        const char *bench = str_at(run, "benchmark", NULL);
        char *ckey;

        if (!status || strcmp(status, "done") != 0 || !bench ||
            strcmp(bench, benchmark) != 0 || !cJSON_IsArray(rows))
            continue;
        if (key_field == NULL)
            key_field = compare_row_key(cJSON_GetArrayItem(rows, 0));
        if (key_field == NULL)
            continue;
        ckey = comparability_key(benchmark, run);
        if (ckey == NULL)
            continue;
        s = series_for(series, ckey, run);
        free(ckey);
        if (cJSON_GetArraySize(cJSON_GetObjectItem(s, "runs")) >= latest)
            continue;
        cJSON_AddItemToArray(cJSON_GetObjectItem(s, "runs"),
                             cJSON_CreateString(str_at(run, "id", NULL)));
        accumulate(s, rows, key_field, keys);
    }
    keys = sort_keys(keys);
    cJSON_ArrayForEach(s, series)
        reduce(s, keys);
    cJSON_AddStringToObject(out, "benchmark", benchmark);
    if (key_field)
        cJSON_AddStringToObject(out, "key", key_field);
    else
        cJSON_AddNullToObject(out, "key");
    cJSON_AddItemToObject(out, "keys", keys);
    cJSON_AddItemToObject(out, "series", series);
    return out;
}
