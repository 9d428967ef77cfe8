/*
 * compare.c - see compare.h.
 *
 * One pass over the runs: each run finds its series through a small hash
 * table (key: comparability key, card UUID, host), and each row's measured
 * fields are appended to plain arrays of doubles, one per series, row key
 * and field.  Only at the end are the arrays reduced to medians and the
 * answer built as JSON.  A comparison covers a few thousand runs at most.
 */
#include "compare.h"
#include "bench_spec.h"
#include "digest_number.h"
#include "hash.h"
#include "json_build.h"
#include "result_fields.h"
#include "run_status.h"
#include "work_units.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KEYS 1024 /* distinct row keys in one comparison */
#define SLOTS 4096    /* hash slots for series; more series go unhashed */

/* The key fields and the aggregated ones are those the table of result
 * fields (common/result_fields.c) marks GB_USE_KEY and GB_USE_MEDIAN,
 * _LOWEST or _HIGHEST; accumulated values are kept per table index. */
#define AGGREGATED (GB_USE_MEDIAN | GB_USE_LOWEST | GB_USE_HIGHEST)
#define F_COUNT GB_RESULT_FIELDS_MAX

struct values {
    double *v;
    int n, cap;
};

struct series {
    char *lookup; /* comparability key | uuid | host */
    cJSON *out;   /* the answer's series object */
    cJSON *runs;  /* its "runs" array */
    int nruns;
    int excluded_invalid;         /* runs left out for their verdict */
    struct values *acc[MAX_KEYS]; /* per key index: F_COUNT value lists */
};

struct build {
    const char *benchmark;
    struct series *s;
    int ns, cap;
    int slots[SLOTS];      /* index + 1 into s; 0 empty */
    cJSON *keys[MAX_KEYS]; /* the key values, first seen first */
    char *key_text[MAX_KEYS];
    int nkeys;
    int median_ms, min_ms, max_ms; /* their indices in the field table */
    int is_time[F_COUNT];          /* per field index: gb_field_is_time */
};

/* Adds v (when it is a number) with 9 significant digits (a whole number
 * exactly), written here
 * rather than by cJSON: cJSON prints each double twice and reads it back to
 * choose between 15 and 17 digits, which is most of the time a large
 * comparison takes; medians of timings carry nothing past the ninth. */
static void add_number(struct json_build *jb, cJSON *obj, const char *name, double v)
{
    char text[DIGEST_NUMBER_CAP];

    if (!isfinite(v))
        return;
    digest_number_text(text, sizeof(text), v);
    jb_item(jb, obj, name, cJSON_CreateRaw(text));
}

cJSON *compare_row_digest(const char *benchmark, const cJSON *rows, const cJSON *summary)
{
    const struct gb_work_unit *unit = gb_work_unit(benchmark);
    struct json_build jb = {0};
    cJSON *out = jb_new_array(&jb);
    const cJSON *row;

    cJSON_ArrayForEach(row, rows) {
        cJSON *d = jb_new_object(&jb);
        /* The units a sample held, so that a digest row says by itself
         * what its times are of (work_units.h). */
        if (!unit->per_unit && unit->row_field)
            add_number(&jb, d, unit->row_field, gb_work_units(benchmark, summary, row));
        /* The row's own members, each looked up in the field table once
         * (a row holds a few of its many fields), in the row's order: those
         * comparisons, /metrics' gauges and the fleet's hashes read. */
        const cJSON *v;
        cJSON_ArrayForEach(v, row) {
            const struct gb_result_field *f = v->string ? gb_result_field_find(v->string) : NULL;
            if (f == NULL || cJSON_IsNull(v) ||
                !(f->uses & (GB_USE_KEY | AGGREGATED | GB_USE_GAUGE | GB_USE_DIGEST)))
                continue;
            /* Numbers with the nine digits a comparison shows: a
             * shorter text, read back faster, many times. */
            if (cJSON_IsNumber(v))
                add_number(&jb, d, f->name, v->valuedouble);
            else
                jb_item(&jb, d, f->name, cJSON_Duplicate(v, 0));
        }
        /* the unit of a row's value (GB/s, TFLOP/s), for the fleet's */
        if (cJSON_IsNumber(cJSON_GetObjectItem(row, "value")) &&
            cJSON_GetStringValue(cJSON_GetObjectItem(row, "unit")))
            jb_string(&jb, d, "unit", cJSON_GetStringValue(cJSON_GetObjectItem(row, "unit")));
        jb_push(&jb, out, d);
    }
    if (jb_failed(&jb)) {
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}

const char *compare_row_key(const cJSON *row)
{
    for (size_t i = 0; i < gb_result_field_count(); i++) {
        const struct gb_result_field *f = gb_result_field_at(i);
        if ((f->uses & GB_USE_KEY) && cJSON_GetObjectItem(row, f->name))
            return f->name;
    }
    return NULL;
}

static const char *str_at(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItem(obj, a);

    if (b)
        v = cJSON_GetObjectItem(v, b);
    return cJSON_GetStringValue(v);
}

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double median(struct values *v)
{
    if (v == NULL || v->n == 0)
        return NAN;
    qsort(v->v, (size_t)v->n, sizeof(double), cmp_double);
    return v->n % 2 ? v->v[v->n / 2] : (v->v[v->n / 2 - 1] + v->v[v->n / 2]) / 2;
}

static double extreme(const struct values *v, int want_max)
{
    double best = NAN;

    for (int i = 0; v && i < v->n; i++)
        if (isnan(best) || (want_max ? v->v[i] > best : v->v[i] < best))
            best = v->v[i];
    return best;
}

/* Appends x to v; a value that finds no room fails jb (a median of
 * some of the values is not the answer's). */
static void push(struct json_build *jb, struct values *v, double x)
{
    if (v->n == v->cap) {
        int cap = v->cap ? 2 * v->cap : 8;
        double *p = realloc(v->v, sizeof(double) * (size_t)cap);
        if (p == NULL) {
            jb_fail(jb);
            return;
        }
        v->v = p;
        v->cap = cap;
    }
    v->v[v->n++] = x;
}

const struct compare_key_field compare_key_fields[] = {
    {"benchmark", "benchmark", NULL, 1},
    {"method", "method", NULL, 1},
    {"params", "params", NULL, 1},
    {"card_model", "device", "name", 1},
    {"driver", "meta", "driver", 0},
    {"cuda", "meta", "cuda", 0},
    {NULL, NULL, NULL, 0},
};

cJSON *compare_method_of(const cJSON *method, const char *build)
{
    char text[160];

    if (cJSON_IsNumber(method) && method->valuedouble >= 1)
        return cJSON_CreateNumber(method->valuedouble);
    snprintf(text, sizeof(text), "unknown: build %.120s", build ? build : "?");
    return cJSON_CreateString(text);
}

static cJSON *method_value(const cJSON *run)
{
    const char *commit = cJSON_GetStringValue(cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(run, "meta"), "build"), "git_commit"));

    return compare_method_of(cJSON_GetObjectItem(run, "method"), commit);
}

/* The params part: those that change what is measured, defaults filled in
 * (gb_params_key), whatever else the run stored left out. */
static cJSON *params_value(const cJSON *run, const cJSON *params)
{
    const struct gb_benchmark *b =
        gb_benchmark_find(cJSON_GetStringValue(cJSON_GetObjectItem(run, "benchmark")));
    cJSON *parsed = cJSON_IsRaw(params) ? cJSON_Parse(params->valuestring) : NULL;
    cJSON *key = gb_params_key(b, parsed ? parsed : params);

    cJSON_Delete(parsed);
    return key;
}

cJSON *compare_key_value(const cJSON *run, const struct compare_key_field *f)
{
    const cJSON *v = cJSON_GetObjectItem(run, f->a);

    if (strcmp(f->name, "method") == 0)
        return method_value(run);
    if (strcmp(f->name, "params") == 0)
        return params_value(run, v);
    if (f->b)
        v = cJSON_GetObjectItem(v, f->b);
    /* driver and cuda: the version strings inside their objects. */
    if (strcmp(f->name, "driver") == 0)
        v = cJSON_GetObjectItem(v, "nvidia_version");
    else if (strcmp(f->name, "cuda") == 0)
        v = cJSON_GetObjectItem(v, "runtime_version");
    return v && !cJSON_IsNull(v) ? cJSON_Duplicate(v, 1) : cJSON_CreateNull();
}

char *compare_verdict_key_text(const cJSON *run)
{
    cJSON *key = cJSON_CreateObject();
    char *text = NULL;

    for (const struct compare_key_field *f = compare_key_fields; key && f->name; f++) {
        cJSON *v;
        if (!f->decides_verdict)
            continue;
        v = compare_key_value(run, f);
        if (v == NULL || !cJSON_AddItemToObject(key, f->name, v)) {
            cJSON_Delete(v);
            goto done;
        }
    }
    text = key ? cJSON_PrintUnformatted(key) : NULL;

done:
    cJSON_Delete(key);
    return text;
}

/* The comparability key, every field of compare_key_fields joined: runs
 * of one series agree on all of them. */
static char *comparability_key(const char *benchmark, const cJSON *run)
{
    size_t cap = strlen(benchmark) + 64, used = 0;
    char *key = malloc(cap);

    for (const struct compare_key_field *f = compare_key_fields; key && f->name; f++) {
        cJSON *v = compare_key_value(run, f);
        char *text = v ? cJSON_PrintUnformatted(v) : NULL;
        size_t need = text ? strlen(text) + strlen(f->name) + 3 : 0;
        char *grown = text && used + need >= cap ? realloc(key, cap = 2 * (used + need)) : key;

        cJSON_Delete(v);
        if (text == NULL || grown == NULL) {
            free(text);
            free(grown ? grown : key);
            return NULL;
        }
        key = grown;
        used += (size_t)snprintf(key + used, cap - used, "%s%s=%s", used ? "|" : "",
                                 f->name, text);
        free(text);
    }
    return key;
}

/* A NEW series object (what jb managed of it: the caller asks jb). */
static cJSON *new_series_object(struct json_build *jb, const char *ckey, const cJSON *run)
{
    const cJSON *meta = cJSON_GetObjectItem(run, "meta");
    const cJSON *params = cJSON_GetObjectItem(run, "params");
    const char *name = str_at(run, "device", "name");
    cJSON *s = jb_new_object(jb);
    cJSON *card = jb_object(jb, s, "card");

    jb_string(jb, card, "name", name ? name : "?");
    jb_string(jb, card, "uuid", or_empty(str_at(run, "device", "uuid")));
    jb_string(jb, card, "host", or_empty(str_at(run, "host", NULL)));
    /* null when the run does not say */
    jb_string(jb, s, "driver", str_at(meta, "driver", "nvidia_version"));
    jb_string(jb, s, "cuda", str_at(meta, "cuda", "runtime_version"));
    if (params)
        jb_item(jb, s, "params", cJSON_Duplicate(params, 1));
    jb_string(jb, s, "comparability_key", ckey);
    jb_bool(jb, s, "synthetic", cJSON_IsTrue(cJSON_GetObjectItem(meta, "synthetic")));
    return s;
}

/* The series of run's card under ckey, made if new; NULL if out of memory
 * (and jb failed). */
static struct series *series_for(struct build *b, struct json_build *jb, const char *ckey,
                                 const cJSON *run)
{
    const char *uuid = or_empty(str_at(run, "device", "uuid"));
    const char *host = or_empty(str_at(run, "host", NULL));
    size_t n = strlen(ckey) + strlen(uuid) + strlen(host) + 3;
    char *lookup = malloc(n);
    uint32_t slot;
    struct series *s;

    if (lookup == NULL) {
        jb_fail(jb);
        return NULL;
    }
    snprintf(lookup, n, "%s|%s|%s", ckey, uuid, host);
    slot = hash_fnv1a(lookup) % SLOTS;
    for (int probes = 0; probes < SLOTS && b->slots[slot]; probes++) {
        s = &b->s[b->slots[slot] - 1];
        if (strcmp(s->lookup, lookup) == 0) {
            free(lookup);
            return s;
        }
        slot = (slot + 1) % SLOTS;
    }
    if (b->ns == b->cap) {
        int cap = b->cap ? 2 * b->cap : 16;
        struct series *p = realloc(b->s, sizeof(*p) * (size_t)cap);
        if (p == NULL) {
            free(lookup);
            jb_fail(jb);
            return NULL;
        }
        b->s = p;
        b->cap = cap;
    }
    s = &b->s[b->ns];
    memset(s, 0, sizeof(*s));
    s->lookup = lookup;
    s->out = new_series_object(jb, ckey, run);
    s->runs = jb_array(jb, s->out, "runs");
    b->ns++;
    if (b->slots[slot] == 0)
        b->slots[slot] = b->ns;
    return s;
}

/* The index of row key v, remembered in first-seen order; -1 when there
 * are already MAX_KEYS, or out of memory (and jb failed). */
static int key_index(struct build *b, struct json_build *jb, const cJSON *v)
{
    char text[96];

    if (cJSON_IsString(v))
        snprintf(text, sizeof(text), "s:%s", v->valuestring);
    else
        snprintf(text, sizeof(text), "n:%.17g", v->valuedouble);
    for (int i = 0; i < b->nkeys; i++)
        if (strcmp(b->key_text[i], text) == 0)
            return i;
    if (b->nkeys == MAX_KEYS)
        return -1;
    b->key_text[b->nkeys] = strdup(text);
    b->keys[b->nkeys] = cJSON_Duplicate(v, 0);
    if (b->key_text[b->nkeys] == NULL || b->keys[b->nkeys] == NULL) {
        free(b->key_text[b->nkeys]);
        cJSON_Delete(b->keys[b->nkeys]);
        jb_fail(jb);
        return -1;
    }
    return b->nkeys++;
}

/* Each row's aggregated fields into s, its times per unit of work
 * (work_units.h): runs whose calibration landed on other work compare. */
static void accumulate(struct build *b, struct json_build *jb, struct series *s,
                       const cJSON *rows, const cJSON *summary, const char *key_field)
{
    const cJSON *row;

    cJSON_ArrayForEach(row, rows) {
        const cJSON *kv = cJSON_GetObjectItem(row, key_field);
        int k = kv ? key_index(b, jb, kv) : -1;
        double units = gb_work_units(b->benchmark, summary, row);
        struct values *acc;

        if (k < 0)
            continue;
        if (s->acc[k] == NULL && (s->acc[k] = calloc(F_COUNT, sizeof(struct values))) == NULL) {
            jb_fail(jb);
            continue;
        }
        acc = s->acc[k];
        for (size_t f = 0; f < gb_result_field_count() && f < F_COUNT; f++) {
            const struct gb_result_field *field = gb_result_field_at(f);
            const cJSON *v = cJSON_GetObjectItem(row, field->name);
            if ((field->uses & AGGREGATED) && cJSON_IsNumber(v))
                push(jb, &acc[f], b->is_time[f] ? v->valuedouble / units : v->valuedouble);
        }
    }
}

/* Key order: numeric keys ascending; string keys (variants) first seen. */
static void key_order(const struct build *b, int *order)
{
    int numeric = 1;

    for (int i = 0; i < b->nkeys; i++) {
        order[i] = i;
        numeric &= cJSON_IsNumber(b->keys[i]);
    }
    if (!numeric)
        return;
    for (int i = 1; i < b->nkeys; i++) /* insertion sort: a few dozen keys */
        for (int j = i; j > 0 && b->keys[order[j - 1]]->valuedouble >
                                     b->keys[order[j]]->valuedouble;
             j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
}

static void reduce(struct json_build *jb, struct series *s, const struct build *b,
                   const int *order)
{
    cJSON *rows = jb_array(jb, s->out, "rows");

    for (int i = 0; i < b->nkeys; i++) {
        struct values *acc = s->acc[order[i]];
        cJSON *row;
        double med, lo, hi;

        if (acc == NULL)
            continue;
        row = jb_new_object(jb);
        jb_item(jb, row, "key", cJSON_Duplicate(b->keys[order[i]], 0));
        add_number(jb, row, "n", acc[b->median_ms].n);
        for (size_t f = 0; f < gb_result_field_count() && f < F_COUNT; f++) {
            const struct gb_result_field *field = gb_result_field_at(f);
            if (field->uses & GB_USE_MEDIAN)
                add_number(jb, row, field->name, median(&acc[f]));
        }
        for (size_t f = 0; f < gb_result_field_count() && f < F_COUNT; f++) {
            const struct gb_result_field *field = gb_result_field_at(f);
            if (field->uses & (GB_USE_LOWEST | GB_USE_HIGHEST))
                add_number(jb, row, field->name,
                           extreme(&acc[f], (field->uses & GB_USE_HIGHEST) != 0));
        }
        /* The spread of the lowest and highest times around the median. */
        lo = extreme(&acc[b->min_ms], 0);
        hi = extreme(&acc[b->max_ms], 1);
        med = median(&acc[b->median_ms]);
        if (!isnan(lo) && !isnan(hi) && med > 0)
            add_number(jb, row, "spread", (hi - lo) / med);
        jb_push(jb, rows, row);
    }
}

/* The index of the field called name in the field table. */
static int field_index(const char *name)
{
    const struct gb_result_field *f = gb_result_field_find(name);

    return f ? (int)(f - gb_result_field_at(0)) : 0;
}

static void free_build(struct build *b)
{
    for (int i = 0; i < b->ns; i++) {
        for (int k = 0; k < MAX_KEYS; k++) {
            if (b->s[i].acc[k] == NULL)
                continue;
            for (int f = 0; f < F_COUNT; f++)
                free(b->s[i].acc[k][f].v);
            free(b->s[i].acc[k]);
        }
        free(b->s[i].lookup);
        cJSON_Delete(b->s[i].out);
    }
    free(b->s);
    for (int i = 0; i < b->nkeys; i++) {
        free(b->key_text[i]);
        cJSON_Delete(b->keys[i]);
    }
    free(b);
}

/* A run whose verdict says it cannot be trusted (valid false); a run
 * never judged (null) is treated as valid. */
static int judged_invalid(const cJSON *run)
{
    return cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(run, "validity"), "valid"));
}

cJSON *compare_build(const char *benchmark, const cJSON *runs, int latest,
                     int include_invalid, compare_rows_fn rows_of, void *ctx)
{
    struct build *b = calloc(1, sizeof(*b));
    struct json_build jb = {0};
    cJSON *out = jb_new_object(&jb), *series, *keys;
    const char *key_field = NULL;
    int order[MAX_KEYS], excluded = 0;
    const cJSON *run;

    if (b == NULL || out == NULL) {
        free(b);
        cJSON_Delete(out);
        return NULL;
    }
    b->benchmark = benchmark;
    for (size_t f = 0; f < gb_result_field_count() && f < F_COUNT; f++)
        b->is_time[f] = gb_field_is_time(gb_result_field_at(f)->name);
    b->median_ms = field_index("median_ms");
    b->min_ms = field_index("min_ms");
    b->max_ms = field_index("max_ms");
    cJSON_ArrayForEach(run, runs) {
        const cJSON *rows = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "results"), "rows");
        const char *status = str_at(run, "status", NULL);
        const char *bench = str_at(run, "benchmark", NULL);
        cJSON *fetched = NULL;
        struct series *s;
        char *ckey;

        if (run_status_parse(status) != RUN_DONE || !bench ||
            strcmp(bench, benchmark) != 0 || (!cJSON_IsArray(rows) && rows_of == NULL))
            continue;
        ckey = comparability_key(benchmark, run);
        if (ckey == NULL)
            jb_fail(&jb);
        s = ckey ? series_for(b, &jb, ckey, run) : NULL;
        free(ckey);
        if (s == NULL || s->nruns >= latest)
            continue;
        /* Left out, and counted, only where it would have been kept. */
        if (!include_invalid && judged_invalid(run)) {
            s->excluded_invalid++;
            excluded++;
            continue;
        }
        /* Rows are read only for the runs a series keeps. */
        if (!cJSON_IsArray(rows)) {
            fetched = rows_of(ctx, or_empty(str_at(run, "id", NULL)));
            rows = fetched;
        }
        if (key_field == NULL && cJSON_IsArray(rows))
            key_field = compare_row_key(cJSON_GetArrayItem(rows, 0));
        if (key_field != NULL && cJSON_IsArray(rows)) {
            s->nruns++;
            jb_push(&jb, s->runs, cJSON_CreateString(or_empty(str_at(run, "id", NULL))));
            accumulate(b, &jb, s, rows,
                       cJSON_GetObjectItem(cJSON_GetObjectItem(run, "results"), "summary"),
                       key_field);
        }
        cJSON_Delete(fetched);
    }
    key_order(b, order);
    jb_string(&jb, out, "benchmark", benchmark);
    jb_string(&jb, out, "time_per", gb_work_unit(benchmark)->unit);
    jb_string(&jb, out, "key", key_field); /* null when no row had one */
    keys = jb_array(&jb, out, "keys");
    for (int i = 0; i < b->nkeys; i++)
        jb_push(&jb, keys, cJSON_Duplicate(b->keys[order[i]], 0));
    jb_bool(&jb, out, "include_invalid", include_invalid);
    jb_number(&jb, out, "excluded_invalid", excluded);
    series = jb_array(&jb, out, "series");
    for (int i = 0; i < b->ns; i++) {
        jb_number(&jb, b->s[i].out, "excluded_invalid", b->s[i].excluded_invalid);
        reduce(&jb, &b->s[i], b, order);
        jb_push(&jb, series, b->s[i].out);
        b->s[i].out = NULL; /* the answer owns it now, or it is deleted */
    }
    free_build(b);
    if (jb_failed(&jb)) {
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}
