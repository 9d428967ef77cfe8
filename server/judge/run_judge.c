/*
 * run_judge.c - see run_judge.h.  Every text it makes is printed once from
 * the trees the record already holds: nothing here parses the results.
 */
#include "run_judge.h"

#include "bench_spec.h"
#include "compare.h"
#include "expect.h"
#include "json_span.h"
#include "judge_sql.h"
#include "validity.h"
#include "work_units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Removes every "samples" array under item: the lists of samples stay in
 * the rows and the results; a summary for listing does without them. */
static void drop_samples(cJSON *item)
{
    cJSON *child;

    cJSON_DeleteItemFromObjectCaseSensitive(item, "samples");
    cJSON_ArrayForEach(child, item)
        if (cJSON_IsObject(child) || cJSON_IsArray(child))
            drop_samples(child);
}

/* A string of meta at path (two names), copied into *field; a value that
 * is not a string is none.  0, or -1 when memory ran out. */
static int meta_string(char **field, const cJSON *meta, const char *object, const char *name)
{
    return run_record_set(field,
                          cJSON_GetStringValue(cJSON_GetObjectItem(
                              cJSON_GetObjectItem(meta, object), name)));
}

/* Prints item into *text and deletes it; a NULL item is a failure. */
static int print_into(char **text, cJSON *item)
{
    *text = item ? cJSON_PrintUnformatted(item) : NULL;
    cJSON_Delete(item);
    return *text ? 0 : -1;
}

/* 1 when a member called "samples" is anywhere under item. */
static int holds_samples(const cJSON *item)
{
    const cJSON *child;

    cJSON_ArrayForEach(child, item) {
        if (child->string && strcmp(child->string, "samples") == 0)
            return 1;
        if ((cJSON_IsObject(child) || cJSON_IsArray(child)) && holds_samples(child))
            return 1;
    }
    return 0;
}

/* The summary as reads keep it, into *text: without its samples, and
 * without soak's one-second series (up to an hour of entries: it stays in
 * the results, for its run page; a list of runs does without it).  A
 * summary that holds neither is the results text's own bytes
 * (json_span.h), not printed again; one that does is those bytes without
 * the members (json_copy_without), or, where that cannot be sure, copied
 * as a tree, pruned and printed.  *slim is the pruned tree (NULL where it
 * was not made: the digest then reads the summary itself, the same to it:
 * the units of work it reads are neither samples nor series).  0, or -1
 * when memory ran out. */
static int judge_summary(const struct run_record *r, const cJSON *summary, cJSON **slim,
                         char **text)
{
    size_t start, len;

    int found;

    *slim = NULL;
    found = r->results_text && json_member_span(r->results_text, strlen(r->results_text),
                                                "summary", &start, &len) == 0;
    if (!holds_samples(summary) && !cJSON_GetObjectItemCaseSensitive(summary, "series")) {
        if (found)
            return (*text = strndup(r->results_text + start, len)) ? 0 : -1;
        return (*text = cJSON_PrintUnformatted(summary)) ? 0 : -1;
    }
    /* The summary's bytes without those members (json_span.h); where
     * that cannot be sure to match the pruned tree, the tree pruned. */
    if (found && (*text = json_copy_without(r->results_text + start, len, "samples",
                                            "series")) != NULL)
        return 0;
    if ((*slim = cJSON_Duplicate(summary, 1)) == NULL)
        return -1;
    drop_samples(*slim);
    cJSON_DeleteItemFromObjectCaseSensitive(*slim, "series");
    return (*text = cJSON_PrintUnformatted(*slim)) ? 0 : -1;
}

/* What reads use of the results: the summary without samples and the
 * rows' digest, read through that summary as the store's readers do. */
static int judge_results(struct run_record *r, struct run_judged *j)
{
    const cJSON *summary = cJSON_GetObjectItem(r->results, "summary");
    const cJSON *rows = cJSON_GetObjectItem(r->results, "rows");
    cJSON *slim = NULL;
    int rc = -1;

    if (summary && judge_summary(r, summary, &slim, &j->summary) != 0)
        goto done;
    if (rows && print_into(&j->digest, compare_row_digest(r->benchmark, rows,
                                                          slim ? slim : summary)) != 0)
        goto done;
    rc = 0;

done:
    cJSON_Delete(slim);
    return rc;
}

/* A valid done run's rows as points of its card x key x row series
 * (change_series.h): each row with a key and a positive median, per unit
 * of work (work_units.h), in log.  0, or -1 when memory ran out. */
static int judge_points(struct run_record *r, struct run_judged *j)
{
    const cJSON *summary = cJSON_GetObjectItem(r->results, "summary");
    const cJSON *rows = cJSON_GetObjectItem(r->results, "rows"), *row;
    int n = cJSON_GetArraySize(rows);

    if (j->valid == 0 || j->verdict_key == NULL || r->device_uuid == NULL || n == 0)
        return 0;
    if ((j->points = calloc((size_t)n, sizeof(*j->points))) == NULL)
        return -1;
    cJSON_ArrayForEach(row, rows) {
        const char *field = compare_row_key(row);
        const cJSON *m = cJSON_GetObjectItem(row, "median_ms");
        if (field == NULL || !cJSON_IsNumber(m) || !(m->valuedouble > 0))
            continue;
        struct run_point *p = &j->points[j->n_points];
        if ((p->row_key = cJSON_PrintUnformatted(cJSON_GetObjectItem(row, field))) == NULL)
            return -1;
        p->x = log(m->valuedouble / gb_work_units(r->benchmark, summary, row));
        j->n_points++;
    }
    return 0;
}

int judge_run_points(struct run_record *r, int valid, const char *verdict_key)
{
    run_record_clear_judged(r);
    r->judged.valid = valid;
    if (run_record_set(&r->judged.verdict_key, verdict_key) != 0 ||
        judge_points(r, &r->judged) != 0) {
        run_record_clear_judged(r);
        return -1;
    }
    return 0;
}

int judge_run_record(struct run_record *r)
{
    struct run_judged *j = &r->judged;
    const cJSON *build = cJSON_GetObjectItem(r->meta, "build");
    cJSON *validity = NULL, *checks = NULL;
    int rc = -1;

    run_record_clear_judged(r);
    if (r->benchmark == NULL)
        goto done;
    /* The method it carries, else the one its gpubench version implies
     * (bench_spec.h); 0 where it cannot be known. */
    j->method = r->method > 0 ? r->method
                              : gb_method_of_version(gb_benchmark_find(r->benchmark),
                                                     cJSON_GetStringValue(cJSON_GetObjectItem(
                                                         build, "gpubench_version")));
    j->valid = -1;
    j->checks_failed = -1;
    if (r->results == NULL) {
        rc = 0;
        goto done;
    }
    if ((validity = gb_validity_judge_benchmark(r->benchmark, r->results, r->meta)) == NULL)
        goto done;
    j->valid = gb_validity_flag(validity);
    if (print_into(&j->validity, validity) != 0)
        goto done;
    if (gb_expect_benchmark_checked(r->benchmark)) {
        if ((checks = gb_checks_judge(r->benchmark, r->results, r->meta)) == NULL)
            goto done;
        j->checks_failed = gb_checks_failed(checks);
        if (print_into(&j->checks, checks) != 0)
            goto done;
    }
    if (judge_results(r, j) != 0 ||
        meta_string(&j->driver_version, r->meta, "driver", "nvidia_version") != 0 ||
        meta_string(&j->cuda_version, r->meta, "cuda", "runtime_version") != 0 ||
        meta_string(&j->build, r->meta, "build", "git_commit") != 0)
        goto done;
    /* The key of a done run: what its verdicts and the fleet's group by. */
    if (r->status && strcmp(r->status, "done") == 0 &&
        (j->verdict_key = judge_verdict_key(r->benchmark, r->device_name, r->params,
                                            j->method, j->build)) == NULL)
        goto done;
    if (judge_points(r, j) != 0)
        goto done;
    rc = 0;

done:
    if (rc != 0)
        run_record_clear_judged(r);
    return rc;
}
