/*
 * verdicts.c - see verdicts.h.
 *
 * Each group is reduced to its kept runs, then, in one pass over each
 * group's runs, each row key (stride, variant, pattern) to two pools of
 * samples, every sample of every kept run, in time per unit of work
 * (common/work_units.h) and, where every such row carries its measured SM
 * clock, in cycles (that time x MHz x 1000).
 * gb_shift_compare judges the pools; the run-level verdict is the worst
 * row's (gb_verdict_severity: slower, then inconclusive, then faster,
 * then same), naming the rows that have it.  A run judged against its
 * card's history (verdicts_history) also keeps each run's median per unit
 * of each row, and gb_history_verdict asks whether the run's lies beyond
 * the spread of the history's (common/shift.h says why).
 */
#include "verdicts.h"

#include "compare.h"
#include "json_build.h"
#include "shift.h"
#include "work_units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 1024 /* distinct row keys judged in one comparison */

/* A pool of samples, grown by doubling. */
struct pool {
    double *v;
    int n, cap;
};

static int pool_push(struct pool *p, double x)
{
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 64;
        double *grown = realloc(p->v, sizeof(double) * (size_t)cap);
        if (grown == NULL)
            return -1;
        p->v = grown;
        p->cap = cap;
    }
    p->v[p->n++] = x;
    return 0;
}

/* One group as kept: its runs, and its key fields' values. */
struct kept {
    cJSON *runs; /* NEW array of borrowed-by-reference run items */
    cJSON *key;  /* NEW object: key field -> value (first run's) */
    int invalid, other_key;
};

static int invalid_run(const cJSON *run)
{
    return cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(run, "validity"), "valid"));
}

static int done_run_of(const cJSON *run, const char *benchmark)
{
    const char *status = cJSON_GetStringValue(cJSON_GetObjectItem(run, "status"));
    const char *bench = cJSON_GetStringValue(cJSON_GetObjectItem(run, "benchmark"));

    return status && strcmp(status, "done") == 0 && bench &&
           (benchmark == NULL || strcmp(bench, benchmark) == 0);
}

/* The verdict-deciding key fields of run, as a NEW object (NULL out of
 * memory). */
static cJSON *verdict_key(const cJSON *run)
{
    struct json_build jb = {0};
    cJSON *key = jb_new_object(&jb);

    for (const struct compare_key_field *f = compare_key_fields; f->name; f++)
        if (f->decides_verdict)
            jb_item(&jb, key, f->name, compare_key_value(run, f));
    if (jb_failed(&jb)) {
        cJSON_Delete(key);
        return NULL;
    }
    return key;
}

/* Keeps the runs of g to judge; 0, or -1 out of memory. */
static int keep_runs(const struct verdict_group *g, const char *benchmark,
                     int include_invalid, struct kept *k)
{
    const cJSON *run;

    memset(k, 0, sizeof(*k));
    if ((k->runs = cJSON_CreateArray()) == NULL)
        return -1;
    cJSON_ArrayForEach(run, g->runs) {
        cJSON *key;
        if (!done_run_of(run, benchmark))
            continue;
        if (!include_invalid && invalid_run(run)) {
            k->invalid++;
            continue;
        }
        if ((key = verdict_key(run)) == NULL)
            return -1;
        if (k->key == NULL) {
            k->key = key;
        } else {
            int same = cJSON_Compare(k->key, key, 1);
            cJSON_Delete(key);
            if (!same) {
                k->other_key++;
                continue;
            }
        }
        if (!cJSON_AddItemReferenceToArray(k->runs, (cJSON *)run))
            return -1;
    }
    return 0;
}

static void add_difference(struct json_build *jb, cJSON *list, const char *field, const cJSON *a,
                           const cJSON *b)
{
    cJSON *d = jb_new_object(jb);

    jb_string(jb, d, "field", field);
    jb_item(jb, d, "baseline", a ? cJSON_Duplicate(a, 1) : cJSON_CreateNull());
    jb_item(jb, d, "candidate", b ? cJSON_Duplicate(b, 1) : cJSON_CreateNull());
    jb_push(jb, list, d);
}

/* Where the two keys differ, field by field; params member by member: a
 * NEW array, whole unless jb failed. */
static cJSON *differences(struct json_build *jb, const cJSON *a, const cJSON *b)
{
    cJSON *list = jb_new_array(jb);
    const cJSON *f;

    cJSON_ArrayForEach(f, a) {
        const cJSON *g = cJSON_GetObjectItem(b, f->string);
        const cJSON *m;
        char name[160];
        if (cJSON_Compare(f, g, 1))
            continue;
        if (!cJSON_IsObject(f) || !cJSON_IsObject(g)) {
            add_difference(jb, list, f->string, f, g);
            continue;
        }
        cJSON_ArrayForEach(m, f)
            if (!cJSON_Compare(m, cJSON_GetObjectItem(g, m->string), 1)) {
                snprintf(name, sizeof(name), "%s.%s", f->string, m->string);
                add_difference(jb, list, name, m, cJSON_GetObjectItem(g, m->string));
            }
        cJSON_ArrayForEach(m, g)
            if (cJSON_GetObjectItem(f, m->string) == NULL) {
                snprintf(name, sizeof(name), "%s.%s", f->string, m->string);
                add_difference(jb, list, name, NULL, m);
            }
    }
    return list;
}

static int by_number(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* keys (numbers) in ascending order: their values copied out once,
 * sorted and written back in one walk (the list is linked: indexing it
 * in a sort would be cubic).  Memory that ran out fails jb. */
static void sort_numbers(struct json_build *jb, cJSON *keys)
{
    int n = cJSON_GetArraySize(keys), i = 0;
    double *v = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    cJSON *k;

    if (v == NULL) {
        jb_fail(jb);
        return;
    }
    cJSON_ArrayForEach(k, keys)
        v[i++] = k->valuedouble;
    qsort(v, (size_t)n, sizeof(double), by_number);
    i = 0;
    cJSON_ArrayForEach(k, keys)
        cJSON_SetNumberValue(k, v[i++]);
    free(v);
}

/* The row keys of the kept runs, as in /compare: numbers ascending,
 * strings first seen first.  *field gets the key's name.  A NEW array,
 * whole unless jb failed. */
static cJSON *row_keys(struct json_build *jb, const struct kept *a, const struct kept *b,
                       const char **field)
{
    cJSON *keys = jb_new_array(jb);
    const struct kept *groups[2] = {a, b};
    int numeric = 1;

    *field = NULL;
    for (int g = 0; g < 2 && keys; g++) {
        const cJSON *run, *row;
        cJSON_ArrayForEach(run, groups[g]->runs)
            cJSON_ArrayForEach(row, cJSON_GetObjectItem(cJSON_GetObjectItem(run, "results"),
                                                        "rows")) {
                const cJSON *kv, *seen;
                int dup = 0;
                if (*field == NULL)
                    *field = compare_row_key(row);
                if (*field == NULL || (kv = cJSON_GetObjectItem(row, *field)) == NULL)
                    continue;
                cJSON_ArrayForEach(seen, keys)
                    dup |= cJSON_Compare(seen, kv, 1);
                if (!dup && cJSON_GetArraySize(keys) < MAX_ROWS) {
                    jb_push(jb, keys, cJSON_Duplicate(kv, 0));
                    numeric &= cJSON_IsNumber(kv);
                }
            }
    }
    if (numeric)
        sort_numbers(jb, keys);
    return keys;
}

/* One group's samples of every row key: time[i] and cycles[i] for key i
 * of the row keys, and medians[i] each run's median of time[i]'s samples;
 * clocked[i] (shared by both groups) goes 0 at the first row of key i
 * without its clock. */
struct pools {
    struct pool *time, *cycles, *medians;
};

static int pools_init(struct pools *p, int nkeys)
{
    p->time = calloc((size_t)(nkeys ? nkeys : 1), sizeof(struct pool));
    p->cycles = calloc((size_t)(nkeys ? nkeys : 1), sizeof(struct pool));
    p->medians = calloc((size_t)(nkeys ? nkeys : 1), sizeof(struct pool));
    return p->time && p->cycles && p->medians ? 0 : -1;
}

static void pools_free(struct pools *p, int nkeys)
{
    for (int i = 0; p->time && p->cycles && p->medians && i < nkeys; i++) {
        free(p->time[i].v);
        free(p->cycles[i].v);
        free(p->medians[i].v);
    }
    free(p->time);
    free(p->cycles);
    free(p->medians);
}

/* Every sample of k's runs into the pool of its row's key (a row without
 * samples gives its median), in one pass over the runs: in time, and in
 * cycles while every row of that key has its clock; both per unit of work
 * (work_units.h), so that runs whose calibration landed on other work
 * pool the same speed as the same value.  0, or -1 out of memory. */
static int pool_rows(const struct kept *k, const char *benchmark, const char *field,
                     const cJSON *keys, int nkeys, struct pools *p, int *clocked)
{
    const cJSON *run, *row;

    cJSON_ArrayForEach(run, k->runs) {
        const cJSON *results = cJSON_GetObjectItem(run, "results");
        const cJSON *summary = cJSON_GetObjectItem(results, "summary");
        cJSON_ArrayForEach(row, cJSON_GetObjectItem(results, "rows")) {
            const cJSON *kv = cJSON_GetObjectItem(row, field), *key, *samples, *clock, *median,
                        *s;
            double units = gb_work_units(benchmark, summary, row);
            int i = 0, first;
            if (kv == NULL)
                continue;
            for (key = keys->child; key && !cJSON_Compare(key, kv, 1); key = key->next)
                i++;
            if (key == NULL || i >= nkeys)
                continue;
            samples = cJSON_GetObjectItem(row, "samples");
            clock = cJSON_GetObjectItem(row, "sm_clock_mhz_measured");
            median = cJSON_GetObjectItem(row, "median_ms");
            if (!cJSON_IsNumber(clock) || !(clock->valuedouble > 0))
                clocked[i] = 0;
            if (!cJSON_IsArray(samples) || cJSON_GetArraySize(samples) == 0)
                samples = NULL;
            if (samples == NULL && !cJSON_IsNumber(median))
                continue;
            first = p->time[i].n;
            for (s = samples ? samples->child : median; s; s = samples ? s->next : NULL) {
                double t;
                if (!cJSON_IsNumber(s))
                    continue;
                t = s->valuedouble / units;
                if (pool_push(&p->time[i], t) != 0 ||
                    (clocked[i] && pool_push(&p->cycles[i], t * clock->valuedouble * 1e3) != 0))
                    return -1;
            }
            /* the run's median (the pool's order matters to nothing) */
            if (p->time[i].n > first &&
                pool_push(&p->medians[i], gb_median_inplace(p->time[i].v + first,
                                                            p->time[i].n - first)) != 0)
                return -1;
        }
    }
    return 0;
}

/* The shift and interval of s into obj, under verdict (s's own, or the
 * history's that replaces it), null where a figure is not finite. */
static void add_shift(struct json_build *jb, cJSON *obj, const struct gb_shift *s,
                      enum gb_verdict verdict)
{
    jb_string(jb, obj, "verdict", gb_verdict_name(verdict));
    jb_number_or_null(jb, obj, "shift", s->shift);
    jb_number_or_null(jb, obj, "ci_low", s->ci_low);
    jb_number_or_null(jb, obj, "ci_high", s->ci_high);
    jb_number(jb, obj, "n_baseline", s->n_baseline);
    jb_number(jb, obj, "n_candidate", s->n_candidate);
    if (s->more_samples > 0)
        jb_number(jb, obj, "more_samples", (double)s->more_samples);
    else
        jb_null(jb, obj, "more_samples");
    jb_string(jb, obj, "undecidable", gb_undecidable_reason(s->undecidable)); /* or null */
}

static double pool_median(struct pool *p)
{
    return p->n ? gb_median_inplace(p->v, p->n) : NAN;
}

/* Row key (index i) of a run (b) against its card's history (a): the
 * robust z of the run's median among the history runs' into *z (NAN when
 * not finite), and *verdict, the pooled verdict, becomes the history
 * verdict (gb_history_verdict); -1 out of memory. */
static int history_verdict(struct pools *a, struct pools *b, int i, enum gb_verdict *verdict,
                           double *z)
{
    struct pool *h = &a->medians[i], *run = &b->medians[i];

    *z = NAN;
    if (h->n > 0 && run->n > 0 &&
        gb_robust_z_among(gb_median_inplace(run->v, run->n), h->v, h->n, z, NULL) != 0)
        return -1;
    if (run->n > 0 && h->n > 0)
        *verdict = gb_history_verdict(*verdict, h->n, *z);
    else /* the row is missing from one side: nothing to judge it by */
        *verdict = h->n < GB_HISTORY_MIN_RUNS ? GB_TOO_FEW_RUNS : GB_INCONCLUSIVE;
    return 0;
}

/* Row key kv (index i) judged from both groups' pools; as a history
 * verdict when history: then "verdict" is the history's, the pooled one
 * is in "pooled_verdict", with "z" (null when not finite) and
 * "history_runs".  A NEW object for jb_push, whole unless jb failed;
 * NULL (and jb failed) when the row could not be judged.  *verdict gets
 * its verdict. */
static cJSON *judge_row(struct json_build *jb, struct pools *a, struct pools *b, int i,
                        const cJSON *kv, int clocked, double margin, int history,
                        enum gb_verdict *verdict)
{
    struct gb_shift s, sc;
    double z;
    cJSON *row;

    if (gb_shift_compare(a->time[i].v, a->time[i].n, b->time[i].v, b->time[i].n, margin, &s) <
        0) {
        jb_fail(jb);
        return NULL;
    }
    *verdict = s.verdict;
    if (history && history_verdict(a, b, i, verdict, &z) != 0) {
        jb_fail(jb);
        return NULL;
    }
    row = jb_new_object(jb);
    jb_item(jb, row, "key", cJSON_Duplicate(kv, 0));
    add_shift(jb, row, &s, *verdict);
    if (history) {
        jb_string(jb, row, "pooled_verdict", gb_verdict_name(s.verdict));
        jb_number_or_null(jb, row, "z", z);
        jb_number(jb, row, "history_runs", a->medians[i].n);
    }
    if (clocked && gb_shift_compare(a->cycles[i].v, a->cycles[i].n, b->cycles[i].v,
                                    b->cycles[i].n, margin, &sc) >= 0)
        add_shift(jb, jb_object(jb, row, "cycles"), &sc, sc.verdict);
    else
        jb_null(jb, row, "cycles");
    /* The medians, for reading the shift back as times. */
    jb_number_or_null(jb, row, "baseline_median_ms", pool_median(&a->time[i]));
    jb_number_or_null(jb, row, "candidate_median_ms", pool_median(&b->time[i]));
    return row;
}

/* A group as the answer shows it: a NEW object for jb_item. */
static cJSON *group_object(struct json_build *jb, const struct verdict_group *g,
                           const struct kept *k)
{
    cJSON *o = jb_new_object(jb), *ids = jb_array(jb, o, "runs");
    const cJSON *run;

    jb_string(jb, o, "selector", g->selector ? g->selector : "");
    cJSON_ArrayForEach(run, k->runs) {
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(run, "id"));
        if (id != NULL)
            jb_push(jb, ids, cJSON_CreateString(id));
    }
    jb_number(jb, o, "n_runs", cJSON_GetArraySize(k->runs));
    jb_number(jb, o, "excluded_invalid", k->invalid);
    jb_number(jb, o, "excluded_other_key", k->other_key + g->other_key_unread);
    jb_item(jb, o, "key", k->key ? cJSON_Duplicate(k->key, 1) : cJSON_CreateNull());
    return o;
}

const char *verdicts_benchmark_of(const cJSON *runs)
{
    const cJSON *run;

    cJSON_ArrayForEach(run, runs)
        if (done_run_of(run, NULL))
            return cJSON_GetStringValue(cJSON_GetObjectItem(run, "benchmark"));
    return NULL;
}

/* verdicts_compare's answer, or verdicts_history's when history: whole,
 * or NULL. */
static cJSON *judge(const char *benchmark, const struct verdict_group *baseline,
                    const struct verdict_group *candidate, double margin, int include_invalid,
                    int history)
{
    struct kept a = {0}, b = {0};
    struct json_build jb = {0};
    cJSON *out = jb_new_object(&jb), *diff, *keys = NULL, *rows, *worst_rows;
    const char *field = NULL;
    enum gb_verdict worst = GB_SAME;
    struct pools pa = {0}, pb = {0};
    const cJSON *kv;
    int nkeys = 0, ki = 0, ndiff, *clocked = NULL;

    if (benchmark == NULL)
        benchmark = verdicts_benchmark_of(baseline->runs);
    if (out == NULL || keep_runs(baseline, benchmark, include_invalid, &a) != 0 ||
        keep_runs(candidate, benchmark, include_invalid, &b) != 0) {
        jb_fail(&jb);
        goto done;
    }
    jb_string(&jb, out, "benchmark", benchmark); /* null when none is known */
    jb_string(&jb, out, "method", GB_SHIFT_METHOD);
    /* what the times of the rows (their medians) are per */
    jb_string(&jb, out, "time_per", gb_work_unit(benchmark)->unit);
    jb_number_or_null(&jb, out, "margin", margin);
    jb_bool(&jb, out, "include_invalid", include_invalid);
    jb_number(&jb, out, "excluded_invalid", a.invalid + b.invalid);
    jb_item(&jb, out, "baseline", group_object(&jb, baseline, &a));
    jb_item(&jb, out, "candidate", group_object(&jb, candidate, &b));
    if (a.key == NULL || b.key == NULL) {
        /* Nothing left to judge on one side: said, not guessed. */
        jb_bool(&jb, out, "comparable", 0);
        jb_string(&jb, out, "reason",
                  a.key == NULL ? "the baseline has no done, valid runs of the benchmark"
                                : "the candidate has no done, valid runs of the benchmark");
        jb_array(&jb, out, "differences");
        jb_null(&jb, out, "verdict");
        jb_array(&jb, out, "rows");
        goto done;
    }
    diff = differences(&jb, a.key, b.key);
    ndiff = cJSON_GetArraySize(diff);
    jb_bool(&jb, out, "comparable", ndiff == 0);
    jb_item(&jb, out, "differences", diff); /* owned or deleted */
    if (ndiff > 0) {
        jb_null(&jb, out, "verdict");
        jb_array(&jb, out, "rows");
        goto done;
    }
    keys = row_keys(&jb, &a, &b, &field);
    jb_string(&jb, out, "key", field); /* null when no row has one */
    if (jb_failed(&jb))
        goto done;
    nkeys = cJSON_GetArraySize(keys);
    if ((clocked = malloc(sizeof(int) * (size_t)(nkeys ? nkeys : 1))) == NULL ||
        pools_init(&pa, nkeys) != 0 || pools_init(&pb, nkeys) != 0) {
        jb_fail(&jb);
        goto done;
    }
    for (int i = 0; i < nkeys; i++)
        clocked[i] = 1;
    if (field && (pool_rows(&a, benchmark, field, keys, nkeys, &pa, clocked) != 0 ||
                  pool_rows(&b, benchmark, field, keys, nkeys, &pb, clocked) != 0)) {
        jb_fail(&jb);
        goto done;
    }
    rows = jb_new_array(&jb);
    worst_rows = jb_new_array(&jb);
    cJSON_ArrayForEach(kv, keys) {
        enum gb_verdict v = GB_INCONCLUSIVE;
        cJSON *row = judge_row(&jb, &pa, &pb, ki, kv, clocked[ki], margin, history, &v);
        ki++;
        if (jb_failed(&jb)) {
            cJSON_Delete(row);
            break;
        }
        jb_push(&jb, rows, row);
        if (gb_verdict_severity(v) > gb_verdict_severity(worst)) {
            worst = v;
            cJSON_Delete(worst_rows);
            worst_rows = jb_new_array(&jb);
        }
        if (v == worst)
            jb_push(&jb, worst_rows, cJSON_Duplicate(kv, 0));
    }
    if (history) {
        /* below the minimum every row is too_few_runs: said with the counts */
        jb_bool(&jb, out, "too_few_runs", cJSON_GetArraySize(a.runs) < GB_HISTORY_MIN_RUNS);
        jb_number(&jb, out, "runs_needed", GB_HISTORY_MIN_RUNS);
    }
    if (cJSON_GetArraySize(rows) == 0)
        jb_null(&jb, out, "verdict");
    else
        jb_string(&jb, out, "verdict", gb_verdict_name(worst));
    jb_item(&jb, out, "verdict_rows", worst_rows); /* owned or deleted */
    jb_item(&jb, out, "rows", rows);

done:
    pools_free(&pa, nkeys);
    pools_free(&pb, nkeys);
    free(clocked);
    cJSON_Delete(keys);
    cJSON_Delete(a.runs);
    cJSON_Delete(a.key);
    cJSON_Delete(b.runs);
    cJSON_Delete(b.key);
    if (jb_failed(&jb)) {
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}

cJSON *verdicts_compare(const char *benchmark, const struct verdict_group *baseline,
                        const struct verdict_group *candidate, double margin,
                        int include_invalid)
{
    return judge(benchmark, baseline, candidate, margin, include_invalid, 0);
}

cJSON *verdicts_history(const char *benchmark, const struct verdict_group *history,
                        const struct verdict_group *run, double margin)
{
    return judge(benchmark, history, run, margin, 0, 1);
}
