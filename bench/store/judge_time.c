/*
 * judge_time.c - how long a run's verdicts take at its end (issue 14's
 * target: 20 ms at p99) on a database of many runs (gpubench-make-db).
 *
 *   gpubench-judge-time DB-PATH [COUNT [HISTORY]]
 *
 * Judges the newest COUNT (default 300) valid done runs of the database
 * again, each as a run's end is (runs/run_finish.c's run_finish_judge: the
 * run judged once, then its verdicts: its card's
 * last HISTORY (default 10, the daemon's) valid runs of its key read with
 * every sample and compared sample by sample, and every other card's
 * newest run of the key), and prints the times' percentiles with what each
 * judged against.
 * Read only: nothing is written.  The newest runs are the ones a daemon
 * judges (their card's history and their fleet are full).
 */
#include "judge_sql.h"
#include "run_finish.h"
#include "store.h"
#include "store_functions.h"
#include "store_runs.h"
#include "timeutil.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ID_LEN 40

static double now_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(const double *sorted, int n, double p)
{
    int k = (int)(p / 100.0 * (n - 1) + 0.5);
    return sorted[k < n ? k : n - 1];
}

/* The newest count valid done runs' ids, into ids (count * ID_LEN). */
static int newest_ids(const char *path, int count, char *ids)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int n = 0;

    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
                           "SELECT id FROM runs WHERE verdict_key IS NOT NULL AND valid IS NOT 0 "
                           "ORDER BY id DESC LIMIT ?1",
                           -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "gpubench-judge-time: %s\n", sqlite3_errmsg(db));
        sqlite3_close(db);
        return -1;
    }
    sqlite3_bind_int(st, 1, count);
    while (n < count && sqlite3_step(st) == SQLITE_ROW)
        snprintf(ids + (size_t)n++ * ID_LEN, ID_LEN, "%s", sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

int main(int argc, char **argv)
{
    struct store *store = NULL;
    int history_runs;
    char err[512], *ids;
    double *ms;
    long history_total = 0, fleet_total = 0;
    int count = argc > 2 ? atoi(argv[2]) : 300, n, done = 0, rc = 1;

    if (argc < 2 || count < 1) {
        fprintf(stderr, "usage: gpubench-judge-time DB-PATH [COUNT [HISTORY]]\n");
        return 2;
    }
    history_runs = argc > 3 ? atoi(argv[3]) : 10;
    ids = calloc((size_t)count, ID_LEN);
    ms = calloc((size_t)count, sizeof(double));
    if (ids == NULL || ms == NULL || (n = newest_ids(argv[1], count, ids)) <= 0)
        goto done;
    store_functions_set(judge_sql_functions);
    if (store_open(argv[1], &store, err, sizeof(err)) != STORE_OK) {
        fprintf(stderr, "gpubench-judge-time: %s\n", err);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        const char *id = ids + (size_t)i * ID_LEN;
        const struct run_finish_ctx ctx = {.store = store, .history_runs = history_runs};
        struct run_record r = {0};
        cJSON *run = NULL, *judged = NULL, *v = NULL;
        double t0;
        if (store_get_run(store, id, &run) != STORE_OK || run_record_set(&r.id, id) != 0 ||
            run_record_set(&r.status, "done") != 0 ||
            run_record_take_trees(&r, cJSON_DetachItemFromObject(run, "results"),
                                  cJSON_DetachItemFromObject(run, "meta")) != 0) {
            fprintf(stderr, "gpubench-judge-time: run %s unreadable\n", id);
            goto next;
        }
        t0 = now_ms(); /* what a run's end pays: judged once, from its trees */
        if (run_finish_judge(&ctx, &r, 1, &judged, &v) != 0 || v == NULL) {
            fprintf(stderr, "gpubench-judge-time: run %s not judged\n", id);
            goto next;
        }
        ms[done] = now_ms() - t0;
        history_total += cJSON_GetArraySize(
            cJSON_GetObjectItem(cJSON_GetObjectItem(v, "history"), "runs"));
        fleet_total += (long)cJSON_GetNumberValue(
            cJSON_GetObjectItem(cJSON_GetObjectItem(v, "fleet"), "cards"));
        done++;
    next:
        cJSON_Delete(v);
        cJSON_Delete(judged);
        cJSON_Delete(run);
        run_record_clear(&r);
    }
    if (done == 0)
        goto done;
    qsort(ms, (size_t)done, sizeof(double), cmp_double);
    printf("| a run's verdicts at its end (%.1f history runs, %.1f fleet cards on average) "
           "| %d | %.2f | %.2f | %.2f | 20 ms: %s |\n",
           (double)history_total / done, (double)fleet_total / done, done, pct(ms, done, 50),
           pct(ms, done, 99), ms[done - 1], pct(ms, done, 99) <= 20 ? "met" : "MISSED");
    rc = 0;

done:
    if (store)
        store_close(store);
    free(ids);
    free(ms);
    return rc;
}
