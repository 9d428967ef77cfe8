/*
 * change_time.c - what the change-point series (issue 34) cost a run's
 * store: RUNS runs of one card x key (an H200 smem_stride template, its
 * medians and samples given lognormal run-to-run noise of 1.09% and a 3%
 * step half way), imported through the real path (run_batch_add, then
 * run_batch_store: judged once, then written with their series stepped in
 * the same transaction), into a fresh database twice: once as stored, once
 * with the records' series points taken out before the write (no series).
 * The difference is the series' whole cost; the changes found are listed.
 *
 *   gpubench-change-time DIR TEMPLATES.ndjson [RUNS [BIG-DB]]
 *
 * DIR gets two databases (removed first); with BIG-DB (a store made by
 * gpubench-make-db), both imports go into it instead, each on a card of
 * its own, to show that a run's series cost does not grow with the store.
 * Synthetic filler, not results.
 */
#include "judge_sql.h"
#include "seeded_rng.h"
#include "run_finish.h"
#include "store.h"
#include "store_changes.h"
#include "store_functions.h"
#include "store_runs.h"
#include "timeutil.h"
#include "uuid7.h"

#include <math.h>
#include <stdint.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BATCH 1000

/* This process's CPU time, ms: the machine's other load is not counted. */
static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static const cJSON *find_template(const char *path, cJSON **all)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;

    *all = cJSON_CreateArray();
    if (f == NULL || *all == NULL)
        return NULL;
    while (getline(&line, &cap, f) > 0) {
        cJSON *run = cJSON_Parse(line);
        const char *b = cJSON_GetStringValue(cJSON_GetObjectItem(run, "benchmark"));
        const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(run, "status"));
        if (b && st && strcmp(b, "smem_stride") == 0 && strcmp(st, "done") == 0) {
            cJSON_AddItemToArray(*all, run);
            break;
        }
        cJSON_Delete(run);
    }
    free(line);
    fclose(f);
    return cJSON_GetArrayItem(*all, 0);
}

static void scale_number(cJSON *obj, const char *name, double f)
{
    cJSON *v = cJSON_GetObjectItem(obj, name);
    if (cJSON_IsNumber(v))
        cJSON_SetNumberValue(v, v->valuedouble * f);
}

/* Run i: the template at day i, its times scaled by the run's level. */
static cJSON *make_run(const cJSON *tmpl, long i, long count, int64_t t0_ms, const char *uuid)
{
    cJSON *run = cJSON_Duplicate(tmpl, 1), *row, *s;
    int64_t ms = t0_ms + (int64_t)i * 86400000LL;
    double f = exp(0.0109 * gaussian()) * (i >= count / 2 ? 1.03 : 1.0);
    uint8_t rnd[8] = {0};
    char id[UUID7_STRLEN + 1], when[32];

    memcpy(rnd, &i, sizeof(i) < sizeof(rnd) ? sizeof(i) : sizeof(rnd));
    rnd[7] = (uint8_t)uuid[strlen(uuid) - 1]; /* the two cards' runs differ */
    uuid7_format((uint64_t)ms, (uint16_t)(i & 0x0fff), rnd, id);
    time_format_rfc3339(ms, when, sizeof(when));
    cJSON_ReplaceItemInObject(run, "id", cJSON_CreateString(id));
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(run, "device"), "uuid", cJSON_CreateString(uuid));
    cJSON_ReplaceItemInObject(run, "created_at", cJSON_CreateString(when));
    cJSON_ReplaceItemInObject(run, "started_at", cJSON_CreateString(when));
    cJSON_ReplaceItemInObject(run, "finished_at", cJSON_CreateString(when));
    cJSON_ArrayForEach(row, cJSON_GetObjectItem(cJSON_GetObjectItem(run, "results"), "rows")) {
        scale_number(row, "median_ms", f);
        scale_number(row, "min_ms", f);
        scale_number(row, "max_ms", f);
        scale_number(row, "ci_low_ms", f);
        scale_number(row, "ci_high_ms", f);
        cJSON_ArrayForEach(s, cJSON_GetObjectItem(row, "samples"))
            cJSON_SetNumberValue(s, s->valuedouble * f);
    }
    return run;
}

/* Imports count runs into a new database at path; without_series takes
 * each record's points out before the write.  Milliseconds spent in the
 * writes (run_batch_store), or -1. */
static double import_all(const char *path, int fresh, const cJSON *tmpl, long count,
                         int without_series, double *judge_ms)
{
    /* a card of its own for each import (and each run of the bench) */
    char uuid[64];
    snprintf(uuid, sizeof(uuid), "GPU-change-time-%04lld-4000-8000-%012d",
             (long long)(time_now_unix_ms() / 1000 % 10000), without_series ? 0 : 1);
    struct store *s = NULL;
    struct run_batch b = {0};
    char err[512];
    double store_ms = 0;
    /* into a big store, times of its own each time: its runs are new ids */
    int64_t t0 = fresh ? 1700000000000LL : time_now_unix_ms() - count * 86400000LL;

    *judge_ms = 0;
    rng_state = 88172645463325252ull;
    if (fresh)
        unlink(path);
    if (store_open(path, &s, err, sizeof(err)) != STORE_OK) {
        fprintf(stderr, "gpubench-change-time: %s\n", err);
        return -1;
    }
    for (long done = 0; done < count;) {
        double a = cpu_ms();
        for (int k = 0; k < BATCH && done < count; k++, done++) {
            cJSON *run = make_run(tmpl, done, count, t0, uuid);
            if (run == NULL || run_batch_add(&b, run, NULL, 0, "bench") != 0)
                return -1;
            cJSON_Delete(run);
        }
        for (int k = 0; without_series && k < b.n; k++) {
            struct run_judged *j = &b.recs[k].judged;
            for (int p = 0; p < j->n_points; p++)
                free(j->points[p].row_key);
            free(j->points);
            j->points = NULL;
            j->n_points = 0;
        }
        double m = cpu_ms();
        struct import_tally tally;
        if (run_batch_store(&b, s, &tally) != STORE_OK)
            return -1;
        *judge_ms += m - a;
        store_ms += cpu_ms() - m;
    }
    run_batch_clear(&b);
    if (!without_series) {
        struct change_select sel = {.uuid = uuid, .limit = 100};
        cJSON *list = NULL, *c;
        if (store_changes_list(s, &sel, &list) == STORE_OK) {
            printf("changes found: %d\n", cJSON_GetArraySize(list));
            cJSON_ArrayForEach(c, list) {
                char *row = cJSON_PrintUnformatted(cJSON_GetObjectItem(c, "row"));
                printf("  %s row %s at %s: %+.2f%%\n",
                       cJSON_GetStringValue(cJSON_GetObjectItem(c, "kind")), row ? row : "?",
                       cJSON_GetStringValue(cJSON_GetObjectItem(c, "at")),
                       100 * cJSON_GetNumberValue(cJSON_GetObjectItem(c, "shift")));
                free(row);
            }
        }
        cJSON_Delete(list);
    }
    store_close(s);
    return store_ms;
}

int main(int argc, char **argv)
{
    char with_path[4096], without_path[4096];
    double judge_with, judge_without;
    cJSON *all = NULL;

    if (argc < 3) {
        fprintf(stderr, "usage: gpubench-change-time DIR TEMPLATES.ndjson [RUNS]\n");
        return 2;
    }
    long count = argc > 3 ? atol(argv[3]) : 10000;
    const cJSON *tmpl = find_template(argv[2], &all);
    if (tmpl == NULL) {
        fprintf(stderr, "gpubench-change-time: no done smem_stride run in %s\n", argv[2]);
        return 1;
    }
    snprintf(with_path, sizeof(with_path), "%s/change-time-with.db", argv[1]);
    snprintf(without_path, sizeof(without_path), "%s/change-time-without.db", argv[1]);
    store_functions_set(judge_sql_functions);
    const char *big = argc > 4 ? argv[4] : NULL;
    double without = import_all(big ? big : without_path, !big, tmpl, count, 1, &judge_without);
    double with = import_all(big ? big : with_path, !big, tmpl, count, 0, &judge_with);
    if (with < 0 || without < 0)
        return 1;
    int rows = cJSON_GetArraySize(
        cJSON_GetObjectItem(cJSON_GetObjectItem(tmpl, "results"), "rows"));
    printf("%ld runs of one card x key (%d rows), imported %d a batch into %s:\n", count, rows,
           BATCH, big ? big : "a new database");
    printf("  writes (CPU) with the series %.0f ms, without %.0f ms: the series cost %.0f ms "
           "(%.1f us a run, %.1f us a row)\n",
           with, without, with - without, 1e3 * (with - without) / count,
           1e3 * (with - without) / count / (rows ? rows : 1));
    printf("  judging (CPU: parse, validity, digest, points) %.0f ms with, %.0f ms without\n",
           judge_with, judge_without);
    cJSON_Delete(all);
    return 0;
}
