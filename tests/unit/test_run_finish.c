/*
 * test_run_finish.c - a run's end judged once and kept whole, or not at
 * all, when memory runs out (issue 31): every cJSON allocation of an
 * import, of a pulled page's run and of a measured run's end is failed in
 * turn (alloc_fail.h, curl's torture mode); each attempt must either
 * store the run whole (done, with its results, validity and digest) or
 * leave nothing of it, and never crash.  Also: a pulled run's results are
 * kept as the bytes they came in (json_span), and the key the end stores
 * is the one the SQL function computes from the stored columns.
 *
 * The runs are the real H200 health runs of examples/.
 */
#include "alloc_fail.h"
#include "import_check.h"
#include "run_finish.h"
#include "store_queue.h"
#include "store_runs.h"
#include "test.h"
#include "test_store_tmp.h"

#include <stdlib.h>

#ifndef GB_EXAMPLES
#error "GB_EXAMPLES: the examples folder (tests/CMakeLists.txt)"
#endif
#define HEALTH GB_EXAMPLES "/h200_daemon_health/health_runs.ndjson"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    long n;

    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0 || (text = malloc((size_t)n + 1)) == NULL ||
        fread(text, 1, (size_t)n, f) != (size_t)n) {
        free(text);
        text = NULL;
    } else {
        text[n] = '\0';
        *len = (size_t)n;
    }
    if (f)
        fclose(f);
    return text;
}

/* The example runs, checked as an import checks them (NEW array). */
static cJSON *example_runs(void)
{
    size_t len = 0;
    char *text = slurp(HEALTH, &len);
    struct gb_error err;
    struct import_rules rules = {.now_ms = time_now_unix_ms(), .max_skew_ms = 300000};
    cJSON *runs = text ? import_parse_ndjson(text, len, &rules, &err) : NULL;

    free(text);
    return runs;
}

/* Gives every run of runs a new id, so that each attempt inserts. */
static int fresh_ids(cJSON *runs)
{
    cJSON *run;

    cJSON_ArrayForEach(run, runs) {
        char id[40];
        if (uuid7_new(id) != 0 || !cJSON_ReplaceItemInObject(run, "id", cJSON_CreateString(id)))
            return -1;
    }
    return 0;
}

/* 1 when run id is stored whole: done, results and validity and digest
 * there; 0 when it is not stored at all; -1 when only part of it is. */
static int stored_whole(struct store *s, const char *id)
{
    cJSON *run = NULL, *rows = NULL;
    int rc = store_get_run(s, id, &run), whole;

    if (rc == STORE_NOT_FOUND)
        return 0;
    whole = rc == STORE_OK &&
            cJSON_IsObject(cJSON_GetObjectItem(run, "results")) &&
            cJSON_IsObject(cJSON_GetObjectItem(run, "meta")) &&
            cJSON_IsBool(cJSON_GetObjectItem(cJSON_GetObjectItem(run, "validity"), "valid")) &&
            store_run_rows(s, id, &rows) == STORE_OK && cJSON_GetArraySize(rows) > 0;
    if (!whole) {
        char *text = cJSON_PrintUnformatted(cJSON_GetObjectItem(run, "validity"));
        fprintf(stderr, "run %s as stored: status %s, validity %.300s, %d digest rows\n", id,
                cJSON_GetStringValue(cJSON_GetObjectItem(run, "status")),
                text ? text : "(none)", cJSON_GetArraySize(rows));
        free(text);
    }
    cJSON_Delete(rows);
    cJSON_Delete(run);
    return whole ? 1 : -1;
}

/* Every allocation of an import of the example runs failed in turn: each
 * attempt stores all of them whole or none. */
static int test_import_under_failing_allocations(void)
{
    struct tmp_store t;
    cJSON *runs = example_runs(), *copy = NULL, *run;
    long total;
    struct import_tally tally;
    int ok = 0, refused = 0;

    ASSERT(runs != NULL && cJSON_GetArraySize(runs) == 6);
    ASSERT_EQ(tmp_store_open(&t, "unit-finish-import"), 0);
    copy = cJSON_Duplicate(runs, 1);
    ASSERT(copy && fresh_ids(copy) == 0);
    alloc_fail_arm(0);
    ASSERT_EQ(run_finish_import(t.s, NULL, copy, "import", &tally), STORE_OK);
    total = alloc_fail_count();
    ASSERT_EQ(tally.inserted, 6);
    cJSON_ArrayForEach(run, copy)
        ASSERT_EQ(stored_whole(t.s, cJSON_GetStringValue(cJSON_GetObjectItem(run, "id"))), 1);
    cJSON_Delete(copy);
    for (long n = 1; n <= total; n++) {
        int rc, want;
        copy = cJSON_Duplicate(runs, 1);
        ASSERT(copy && fresh_ids(copy) == 0);
        alloc_fail_arm(n);
        rc = run_finish_import(t.s, NULL, copy, "import", &tally);
        alloc_fail_arm(0);
        want = rc == STORE_OK ? 1 : 0;
        ok += rc == STORE_OK;
        refused += rc != STORE_OK;
        cJSON_ArrayForEach(run, copy) {
            const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(run, "id"));
            if (stored_whole(t.s, id) != want) {
                fprintf(stderr, "allocation %ld of %ld: run %s is not %s\n", n, total, id,
                        want ? "whole" : "absent");
                cJSON_Delete(copy);
                return 1;
            }
        }
        cJSON_Delete(copy);
    }
    printf("import: %ld allocations failed in turn: %d refused, %d stored whole\n", total,
           refused, ok);
    ASSERT(refused > 0);
    cJSON_Delete(runs);
    tmp_store_close(&t);
    return 0;
}

/* A pulled page's run: added to a batch from its line (its results kept
 * as the line's bytes), every allocation failed in turn; the batch is
 * either one run longer or as it was, and stores whole. */
static int test_pull_batch_under_failing_allocations(void)
{
    struct tmp_store t;
    struct run_batch b = {0};
    cJSON *runs = example_runs(), *run = NULL;
    char *line = NULL;
    long total = 0;
    struct import_tally tally;
    int kept = 0;

    ASSERT(runs != NULL);
    ASSERT_EQ(tmp_store_open(&t, "unit-finish-pull"), 0);
    for (long n = 0; n == 0 || n <= total; n++) {
        int rc, before = b.n;
        if (fresh_ids(runs) != 0)
            return 1;
        line = cJSON_PrintUnformatted(cJSON_GetArrayItem(runs, 1));
        if (line == NULL || (run = cJSON_Parse(line)) == NULL)
            return 1;
        alloc_fail_arm(n);
        rc = run_batch_add(&b, run, line, strlen(line), "http://peer.example:8080");
        if (n == 0)
            total = alloc_fail_count();
        alloc_fail_arm(0);
        if (n == 0) {
            /* the results kept are the line's own bytes, not a print */
            ASSERT_EQ(rc, 0);
            ASSERT(strstr(line, b.recs[0].results_text) != NULL);
            ASSERT_STR_EQ(b.recs[0].origin, "http://peer.example:8080");
        }
        ASSERT_EQ(b.n, rc == 0 ? before + 1 : before);
        kept += rc == 0;
        cJSON_Delete(run);
        free(line);
    }
    ASSERT(kept < total); /* some attempts did fail */
    ASSERT_EQ(run_batch_store(&b, t.s, &tally), STORE_OK);
    ASSERT_EQ(tally.inserted, kept);
    ASSERT_EQ(b.n, 0);
    run_batch_clear(&b);
    cJSON_Delete(runs);
    tmp_store_close(&t);
    return 0;
}

/* A measured run's end (run_finish_judge then store_finish_run, as
 * run_end.c does), every allocation failed in turn: judged and stored
 * whole, or not judged and still running (run_end.c then fails it, or
 * tries again). */
static int test_measured_end_under_failing_allocations(void)
{
    struct tmp_store t;
    struct run_finish_ctx ctx = {.history_runs = 10};
    cJSON *runs = example_runs(), *src;
    long total = 0;
    int judged_ok = 0;

    ASSERT(runs != NULL);
    ASSERT_EQ(tmp_store_open(&t, "unit-finish-end"), 0);
    src = cJSON_GetArrayItem(runs, 5); /* smem_stride */
    ctx.store = t.s;
    for (long n = 0; n == 0 || n <= total; n++) {
        struct run_record r = {0};
        struct run_job job;
        cJSON *judged = NULL, *verdicts = NULL, *run = NULL;
        char id[40], *params = cJSON_PrintUnformatted(cJSON_GetObjectItem(src, "params"));
        int rc;

        ASSERT(params != NULL);
        ASSERT_EQ(tmp_store_queue(t.s, "smem_stride", params, 0, TEST_FAKE_UUID(0), id), STORE_OK);
        free(params);
        ASSERT_EQ(store_claim_next(t.s, 0, &job), STORE_OK);
        ASSERT_STR_EQ(job.id, id);
        store_job_clear(&job);
        ASSERT(run_record_set(&r.id, id) == 0 && run_record_set(&r.status, "done") == 0 &&
               run_record_set(&r.finished_at, "2026-12-03T10:00:00.000Z") == 0);
        ASSERT_EQ(run_record_take_trees(&r, cJSON_Duplicate(cJSON_GetObjectItem(src, "results"), 1),
                                        cJSON_Duplicate(cJSON_GetObjectItem(src, "meta"), 1)),
                  0);
        alloc_fail_arm(n);
        rc = run_finish_judge(&ctx, &r, 1, &judged, &verdicts);
        if (n == 0)
            total = alloc_fail_count();
        alloc_fail_arm(0);
        if (rc == 0) {
            judged_ok++;
            ASSERT(judged != NULL);
            ASSERT_EQ(store_finish_run(t.s, &r), STORE_OK);
            ASSERT_EQ(stored_whole(t.s, id), 1);
        } else {
            ASSERT_EQ(store_get_run(t.s, id, &run), STORE_OK);
            ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(run, "status")), "running");
            ASSERT(cJSON_IsNull(cJSON_GetObjectItem(run, "results")));
            cJSON_Delete(run);
        }
        cJSON_Delete(judged);
        cJSON_Delete(verdicts);
        run_record_clear(&r);
    }
    printf("a run's end: %ld allocations failed in turn, %d judged and stored whole\n", total,
           judged_ok);
    ASSERT(judged_ok < total + 1);
    cJSON_Delete(runs);
    tmp_store_close(&t);
    return 0;
}

/* The key a run's end stores (judge_verdict_key from the record) is the
 * one gb_verdict_key computes from its stored columns: the reads that
 * find a run's history and fleet compare the two. */
static int test_stored_key_is_the_sql_key(void)
{
    struct tmp_store t;
    cJSON *runs = example_runs();
    struct import_tally tally;
    long same = -1, total = -1;

    ASSERT(runs != NULL);
    ASSERT_EQ(tmp_store_open(&t, "unit-finish-key"), 0);
    ASSERT_EQ(run_finish_import(t.s, NULL, runs, "import", &tally), STORE_OK);
    ASSERT_EQ(tally.inserted, 6);
    {
        sqlite3 *db = NULL;
        sqlite3_stmt *st = NULL;
        ASSERT_EQ(sqlite3_open(t.path, &db), SQLITE_OK);
        ASSERT_EQ(judge_sql_functions(db), 0);
        ASSERT_EQ(sqlite3_prepare_v2(db,
                                     "SELECT count(*), sum(verdict_key = gb_verdict_key(benchmark, "
                                     "device_name, params, method, build)) FROM runs",
                                     -1, &st, NULL),
                  SQLITE_OK);
        ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
        total = sqlite3_column_int64(st, 0);
        same = sqlite3_column_int64(st, 1);
        sqlite3_finalize(st);
        sqlite3_close(db);
    }
    ASSERT_EQ(total, 6);
    ASSERT_EQ(same, 6);
    cJSON_Delete(runs);
    tmp_store_close(&t);
    return 0;
}

TEST_MAIN({"import: each allocation failed in turn", test_import_under_failing_allocations},
          {"pulled run: each allocation failed in turn", test_pull_batch_under_failing_allocations},
          {"a run's end: each allocation failed in turn",
           test_measured_end_under_failing_allocations},
          {"the stored key is the SQL function's", test_stored_key_is_the_sql_key})
