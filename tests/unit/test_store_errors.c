/* The store's failures: SQLite's codes mapped to the store's (a full disk,
 * a damaged file), a run's end or progress refused when the run is not
 * running (nothing written), the offline integrity check, a run whose
 * stored JSON no longer parses served as one damaged run (issue 31), and
 * the reads under a failing allocator (a whole run or an error, never a
 * run with a field missing). */
#include "alloc_fail.h"
#include "dynbuf.h"
#include "store.h"
#include "store_alerts.h"
#include "store_baselines.h"
#include "store_coverage.h"
#include "store_copy.h"
#include "store_queue.h"
#include "store_runs.h"
#include "store_verdicts.h"
#include "test.h"
#include "test_store_tmp.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void temp_path(char *buf, size_t cap, const char *what)
{
    snprintf(buf, cap, "/tmp/gpubench-test-store-errors-%s-%d.db", what, (int)getpid());
    unlink(buf);
}

static void remove_db(const char *path)
{
    char side[200];

    unlink(path);
    snprintf(side, sizeof(side), "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof(side), "%s-shm", path);
    unlink(side);
}

static int test_mapping(void)
{
    ASSERT_EQ(store_rc_from_sqlite(SQLITE_FULL, 0), STORE_NO_SPACE);
    ASSERT_EQ(store_rc_from_sqlite(SQLITE_IOERR_WRITE, ENOSPC), STORE_NO_SPACE);
    ASSERT_EQ(store_rc_from_sqlite(SQLITE_IOERR_FSYNC, EDQUOT), STORE_NO_SPACE);
    ASSERT_EQ(store_rc_from_sqlite(SQLITE_IOERR_SHMSIZE, ENOSPC), STORE_NO_SPACE);
    ASSERT_EQ(store_rc_from_sqlite(SQLITE_IOERR_WRITE, EIO), STORE_ERROR);
    ASSERT_EQ(store_rc_from_sqlite(SQLITE_CORRUPT, 0), STORE_CORRUPT);
    ASSERT_EQ(store_rc_from_sqlite(SQLITE_CORRUPT_INDEX, 0), STORE_CORRUPT);
    ASSERT_EQ(store_rc_from_sqlite(SQLITE_NOTADB, 0), STORE_CORRUPT);
    ASSERT_EQ(store_rc_from_sqlite(SQLITE_BUSY, 0), STORE_ERROR);
    ASSERT_EQ(store_rc_from_sqlite(SQLITE_CONSTRAINT_UNIQUE, 0), STORE_ERROR);
    ASSERT(strstr(store_rc_words(STORE_NO_SPACE), "full") != NULL);
    ASSERT(strstr(store_rc_words(STORE_CORRUPT), "damaged") != NULL);
    return 0;
}

static const char *status_of(struct store *s, const char *id, char status[16])
{
    return store_run_status(s, id, status) == STORE_OK ? status : "(unreadable)";
}

static int test_end_needs_running(void)
{
    char path[160], err[256], status[16];
    struct store *s = NULL;
    struct run_new r = {.id = "0190f1a2-0000-7000-8000-000000000002",
                        .benchmark = "smem_stride",
                        .params_json = "{}",
                        .host = "h",
                        .device_index = 0,
                        .timeout_s = 5};
    struct run_job job;
    struct store_health h;
    cJSON *run = NULL;
    int rc = 1;

    temp_path(path, sizeof(path), "end");
    ASSERT_EQ(test_store_open(path, &s, err, sizeof(err)), STORE_OK);
    if (store_insert_runs(s, &r, 1, 10) != STORE_OK)
        goto done;
    /* Queued, not running: an end or progress for it is refused and
     * writes nothing (its results must not land on it). */
    if (tmp_finish_run(s, r.id, "done", "{\"rows\":[]}", "{}", NULL, NULL, NULL) !=
            STORE_CONFLICT ||
        store_set_progress(s, r.id, 1, 2, NULL) != STORE_CONFLICT ||
        store_requeue_run(s, r.id) != STORE_CONFLICT)
        goto done;
    if (store_get_run(s, r.id, &run) != STORE_OK ||
        strcmp(cJSON_GetObjectItem(run, "status")->valuestring, "queued") != 0 ||
        !cJSON_IsNull(cJSON_GetObjectItem(run, "results")) ||
        !cJSON_IsNull(cJSON_GetObjectItem(run, "progress")))
        goto done;
    if (store_claim_next(s, 0, &job) != STORE_OK)
        goto done;
    store_job_clear(&job);
    if (store_set_progress(s, r.id, 1, 2, NULL) != STORE_OK ||
        tmp_finish_run(s, r.id, "done", "{\"rows\":[]}", "{}", NULL, NULL, NULL) != STORE_OK ||
        strcmp(status_of(s, r.id, status), "done") != 0)
        goto done;
    /* Ended: a second end (a failure written late) changes nothing. */
    if (tmp_finish_run(s, r.id, "failed", NULL, NULL, "x", "y", NULL) != STORE_CONFLICT ||
        strcmp(status_of(s, r.id, status), "done") != 0)
        goto done;
    store_health_get(s, &h);
    if (h.no_space || h.corrupt)
        goto done;
    rc = 0;

done:
    if (rc)
        fprintf(stderr, "test_end_needs_running: failed (status %s)\n",
                s ? status_of(s, r.id, status) : "-");
    cJSON_Delete(run);
    store_close(s);
    remove_db(path);
    return rc;
}

static int test_check_file(void)
{
    char path[160], err[256];
    struct store *s = NULL;
    FILE *out = tmpfile(), *f;
    struct store_file_check res;
    char noise[8192];

    ASSERT(out != NULL);
    temp_path(path, sizeof(path), "check");
    ASSERT_EQ(test_store_open(path, &s, err, sizeof(err)), STORE_OK);
    store_close(s);
    ASSERT_EQ(store_check_file(path, out, &res, err, sizeof(err)), STORE_OK);
    ASSERT_EQ(res.state, STORE_FILE_INTACT);
    /* Its header gone: nothing tells it from a file that never was a
     * database, and --check-db says both. */
    for (size_t i = 0; i < sizeof(noise); i++)
        noise[i] = (char)(i * 131 + 7);
    f = fopen(path, "r+b");
    ASSERT(f != NULL);
    ASSERT_EQ(fwrite(noise, 1, sizeof(noise), f), sizeof(noise));
    fclose(f);
    ASSERT_EQ(store_check_file(path, out, &res, err, sizeof(err)), STORE_OK);
    ASSERT_EQ(res.state, STORE_FILE_NOT_GPUBENCH);
    ASSERT(strstr(res.why, "first page was overwritten") != NULL);
    fclose(out);
    remove_db(path);
    return 0;
}

/* A stored JSON value damaged on disk (bytes of a results page changed,
 * its b-tree whole): SQLite's JSON functions refuse it with a plain error,
 * which must still be answered as a damaged database (database_corrupt),
 * never as an internal error: read in C (a run as a verdict reads it) and
 * read through json_extract in SQL (a card's verdict group). */
static int test_damaged_json_value(void)
{
    char path[160], err[256];
    struct store *s = NULL;
    struct run_new r = {.id = "0190f1a2-0000-7000-8000-000000000003",
                        .benchmark = "smem_stride",
                        .params_json = "{}",
                        .host = "h",
                        .device_index = 0,
                        .device_uuid = "GPU-test",
                        .device_name = "Test GPU",
                        .timeout_s = 5};
    struct run_select sel = {.benchmark = "smem_stride", .card = "GPU-test", .limit = 10};
    struct run_job job;
    struct store_health h;
    sqlite3 *db = NULL;
    cJSON *runs = NULL;
    int other = 0;

    temp_path(path, sizeof(path), "json");
    ASSERT_EQ(test_store_open(path, &s, err, sizeof(err)), STORE_OK);
    ASSERT_EQ(store_insert_runs(s, &r, 1, 10), STORE_OK);
    ASSERT_EQ(store_claim_next(s, 0, &job), STORE_OK);
    store_job_clear(&job);
    ASSERT_EQ(tmp_finish_run(s, r.id, "done", "{\"rows\":[{\"stride\":1,\"ms\":2}]}", "{}",
                             NULL, NULL, NULL),
              STORE_OK);
    ASSERT_EQ(store_select_verdict_runs(s, &sel, 1, &runs, &other), STORE_OK);
    ASSERT_EQ(cJSON_GetArraySize(runs), 1);
    cJSON_Delete(runs);
    runs = NULL;
    store_close(s);
    s = NULL;

    /* the damage: what a bad sector leaves inside a record */
    ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "UPDATE run_results SET results = '{\"rows\":[{\"st\x01'",
                           NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(db);

    ASSERT_EQ(test_store_open(path, &s, err, sizeof(err)), STORE_OK);
    ASSERT_EQ(store_select_verdict_runs(s, &sel, 1, &runs, &other), STORE_CORRUPT);
    ASSERT(runs == NULL);
    ASSERT_EQ(store_get_verdict_run(s, r.id, &runs), STORE_CORRUPT);
    ASSERT(runs == NULL);
    store_health_get(s, &h);
    ASSERT(h.corrupt);
    store_close(s);
    remove_db(path);
    return 0;
}

/* Three finished runs in a new store at path; ids[i] their ids. */
static int three_done_runs(const char *path, const char *const ids[3])
{
    char err[256];
    struct store *s = NULL;
    struct run_job job;
    int rc = 1;

    ASSERT_EQ(test_store_open(path, &s, err, sizeof(err)), STORE_OK);
    for (int i = 0; i < 3; i++) {
        struct run_new r = {.benchmark = "smem_stride",
                            .params_json = "{\"strides\":[1,2]}",
                            .host = "h",
                            .device_index = 0,
                            .timeout_s = 5};
        snprintf(r.id, sizeof(r.id), "%s", ids[i]);
        if (store_insert_runs(s, &r, 1, 10) != STORE_OK ||
            store_claim_next(s, 0, &job) != STORE_OK)
            goto done;
        store_job_clear(&job);
        if (tmp_finish_run(s, ids[i], "done", "{\"rows\":[{\"stride\":1,\"ms\":2}]}",
                           "{\"synthetic\":true}", NULL, NULL, NULL) != STORE_OK)
            goto done;
    }
    rc = 0;

done:
    store_close(s);
    return rc;
}

static const char *const three_ids[3] = {"0190f1a2-0000-7000-8000-000000000011",
                                         "0190f1a2-0000-7000-8000-000000000012",
                                         "0190f1a2-0000-7000-8000-000000000013"};

/* 1 when run is marked damaged with exactly the one column named. */
static int damaged_with(const cJSON *run, const char *column)
{
    const cJSON *cols = cJSON_GetObjectItem(run, "damaged_columns");

    return cJSON_IsTrue(cJSON_GetObjectItem(run, "damaged")) && cJSON_GetArraySize(cols) == 1 &&
           strcmp(cJSON_GetStringValue(cJSON_GetArrayItem(cols, 0)), column) == 0;
}

/* One run's stored results cut short (what the issue measured): it is
 * served, single and in the list, as a run marked damaged with its results
 * null and everything else it has; the list goes on past it; the damage
 * shows in the health, naming the run. */
static int test_damaged_run_served(void)
{
    char path[160], err[256], next[40];
    struct store *s = NULL;
    struct run_filter full = {.limit = 10, .full = 1}, list = {.limit = 10};
    struct store_health h;
    sqlite3 *db = NULL;
    cJSON *run = NULL, *runs = NULL, *r;
    int damaged = 0;

    temp_path(path, sizeof(path), "served");
    ASSERT_EQ(three_done_runs(path, three_ids), 0);
    ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "UPDATE run_results SET results = substr(results, 1, 12) "
                               "WHERE run_id = '0190f1a2-0000-7000-8000-000000000012'",
                           NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(db);

    ASSERT_EQ(test_store_open(path, &s, err, sizeof(err)), STORE_OK);
    ASSERT_EQ(store_get_run(s, three_ids[1], &run), STORE_OK);
    ASSERT(damaged_with(run, "results"));
    ASSERT(cJSON_IsNull(cJSON_GetObjectItem(run, "results")));
    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(run, "meta"), "synthetic")));
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(run, "status")), "done");
    cJSON_Delete(run);
    run = NULL;
    /* raw (printed as stored): the text that is not JSON is never printed */
    ASSERT_EQ(store_get_run_raw(s, three_ids[1], &run), STORE_OK);
    ASSERT(damaged_with(run, "results"));
    ASSERT(cJSON_IsNull(cJSON_GetObjectItem(run, "results")));
    cJSON_Delete(run);
    run = NULL;
    /* an intact run is not marked */
    ASSERT_EQ(store_get_run(s, three_ids[0], &run), STORE_OK);
    ASSERT(cJSON_GetObjectItem(run, "damaged") == NULL);
    ASSERT(cJSON_GetObjectItem(run, "damaged_columns") == NULL);
    cJSON_Delete(run);

    ASSERT_EQ(store_list_runs(s, &full, &runs, next), STORE_OK);
    ASSERT_EQ(cJSON_GetArraySize(runs), 3);
    cJSON_ArrayForEach(r, runs) {
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r, "id")), three_ids[1]) == 0) {
            ASSERT(damaged_with(r, "results"));
            damaged++;
        } else {
            ASSERT(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "results"),
                                                          "rows")) == 1);
        }
    }
    ASSERT_EQ(damaged, 1);
    cJSON_Delete(runs);
    ASSERT_EQ(store_list_runs(s, &list, &runs, next), STORE_OK);
    ASSERT_EQ(cJSON_GetArraySize(runs), 3);
    cJSON_Delete(runs);

    store_health_get(s, &h);
    ASSERT(h.corrupt);
    ASSERT(strstr(h.message, three_ids[1]) != NULL);
    ASSERT(strstr(h.message, "results") != NULL);
    store_close(s);
    remove_db(path);
    return 0;
}

/* The reads under a failing allocator: each allocation of cJSON's fails
 * in turn; every answer is the whole run (as printed without failures) or
 * an error, never a crash or a run with a field missing. */
static int test_reads_under_failing_allocs(void)
{
    char path[160], err[256], next[40];
    struct store *s = NULL;
    struct run_filter full = {.limit = 10, .full = 1};
    cJSON *run = NULL, *runs = NULL;
    char *whole_run, *whole_list;
    long total_run, total_list;

    temp_path(path, sizeof(path), "alloc");
    ASSERT_EQ(three_done_runs(path, three_ids), 0);
    ASSERT_EQ(test_store_open(path, &s, err, sizeof(err)), STORE_OK);
    alloc_fail_arm(0);
    ASSERT_EQ(store_get_run(s, three_ids[0], &run), STORE_OK);
    total_run = alloc_fail_count();
    whole_run = cJSON_PrintUnformatted(run);
    cJSON_Delete(run);
    alloc_fail_arm(0);
    ASSERT_EQ(store_list_runs(s, &full, &runs, next), STORE_OK);
    total_list = alloc_fail_count();
    whole_list = cJSON_PrintUnformatted(runs);
    cJSON_Delete(runs);
    ASSERT(whole_run != NULL && whole_list != NULL && total_run > 30);
    for (long n = 1; n <= total_run + total_list; n++) {
        int list = n > total_run;
        char *text;
        int rc;

        alloc_fail_arm(list ? n - total_run : n);
        run = NULL;
        rc = list ? store_list_runs(s, &full, &run, next)
                  : store_get_run(s, three_ids[0], &run);
        alloc_fail_arm(0);
        if (rc != STORE_OK) {
            ASSERT(run == NULL);
            continue;
        }
        text = cJSON_PrintUnformatted(run);
        cJSON_Delete(run);
        if (text == NULL || strcmp(text, list ? whole_list : whole_run) != 0) {
            fprintf(stderr, "allocation %ld failed unseen: %s\n", n, text ? text : "-");
            free(text);
            return 1;
        }
        free(text);
    }
    free(whole_run);
    free(whole_list);
    store_close(s);
    remove_db(path);
    return 0;
}

/* A list page's entries without a cache: none kept, each printed as built. */
static int no_entry_kept(void *ctx, const char *id, struct dynbuf *out)
{
    (void)ctx, (void)id, (void)out;
    return 0;
}

static int entry_printed(void *ctx, const char *id, int final, cJSON *entry, struct dynbuf *out)
{
    char *text = entry ? cJSON_PrintUnformatted(entry) : NULL;
    int rc = text && dynbuf_add(out, text, strlen(text)) == 0 ? 0 : -1;

    (void)ctx, (void)id, (void) final;
    free(text);
    cJSON_Delete(entry);
    return rc;
}

/* store_list_page, the text of a page, under a failing allocator: each
 * answer is the whole page or an error, never a page with an entry or a
 * field missing. */
static int test_list_page_under_failing_allocs(void)
{
    const struct store_entries entries = {NULL, no_entry_kept, entry_printed};
    struct run_filter list = {.limit = 10};
    char path[160], err[256], next[40];
    struct dynbuf whole, page;
    struct store *s = NULL;
    long total;

    temp_path(path, sizeof(path), "alloc_page");
    ASSERT_EQ(three_done_runs(path, three_ids), 0);
    ASSERT_EQ(test_store_open(path, &s, err, sizeof(err)), STORE_OK);
    dynbuf_init(&whole, 1 << 20);
    alloc_fail_arm(0);
    ASSERT_EQ(store_list_page(s, &list, &entries, &whole, next), STORE_OK);
    total = alloc_fail_count();
    ASSERT(total > 30 && whole.len > 100 && whole.data[0] == '[' &&
           whole.data[whole.len - 1] == ']');
    for (int i = 0; i < 3; i++)
        ASSERT(strstr(whole.data, three_ids[i]) != NULL);
    for (long n = 1; n <= total; n++) {
        int rc, same;

        dynbuf_init(&page, 1 << 20);
        alloc_fail_arm(n);
        rc = store_list_page(s, &list, &entries, &page, next);
        alloc_fail_arm(0);
        same = page.len == whole.len && memcmp(page.data, whole.data, whole.len) == 0;
        dynbuf_free(&page);
        if (rc == STORE_OK && !same) {
            fprintf(stderr, "allocation %ld failed unseen in a list page\n", n);
            return 1;
        }
    }
    dynbuf_free(&whole);
    store_close(s);
    remove_db(path);
    return 0;
}

/* The store's other producers of served answers, each read once with
 * nothing failing and then with each of its allocations failing in turn:
 * every answer is the whole one or an error with nothing handed back. */
static int alerts_all(struct store *s, cJSON **out)
{
    return store_alerts_list(s, 0, 100, out);
}

static int fleet_cards(struct store *s, cJSON **out)
{
    return store_fleet_cards(s, NULL, out);
}

static int fleet_peers(struct store *s, cJSON **out)
{
    return store_fleet_peers(s, three_ids[0], out);
}

static int baselines_all(struct store *s, cJSON **out)
{
    return store_baseline_get(s, NULL, out);
}

static int baseline_one(struct store *s, cJSON **out)
{
    return store_baseline_get(s, "b", out);
}

static int coverage_all(struct store *s, cJSON **out)
{
    return store_coverage_cells(s, NULL, out);
}

static int verdict_run(struct store *s, cJSON **out)
{
    return store_get_verdict_run(s, three_ids[1], out);
}

static int whole_or_error(const char *what, struct store *s, int (*read)(struct store *, cJSON **))
{
    cJSON *out = NULL;
    char *whole, *text;
    long total;
    int rc;

    alloc_fail_arm(0);
    rc = read(s, &out);
    total = alloc_fail_count();
    whole = out ? cJSON_PrintUnformatted(out) : NULL;
    cJSON_Delete(out);
    if (rc != STORE_OK || whole == NULL || total == 0) {
        fprintf(stderr, "%s: no answer with nothing failing (rc %d)\n", what, rc);
        free(whole);
        return 1;
    }
    for (long n = 1; n <= total; n++) {
        out = NULL;
        alloc_fail_arm(n);
        rc = read(s, &out);
        alloc_fail_arm(0);
        if (rc != STORE_OK) {
            if (out != NULL) {
                fprintf(stderr, "%s: allocation %ld failed: an error, yet a tree\n", what, n);
                return 1;
            }
            continue;
        }
        text = cJSON_PrintUnformatted(out);
        cJSON_Delete(out);
        if (text == NULL || strcmp(text, whole) != 0) {
            fprintf(stderr, "%s: allocation %ld of %ld failed unseen: %s\n", what, n, total,
                    text ? text : "-");
            free(text);
            free(whole);
            return 1;
        }
        free(text);
    }
    free(whole);
    return 0;
}

static int test_producers_under_failing_allocs(void)
{
    const struct alert_new a = {.kind = "history",
                                .run_id = three_ids[2],
                                .row_key = "{\"stride\":1}",
                                .verdict = "slower",
                                .shift = 0.25,
                                .z = NAN,
                                .confirms_left = 1};
    const struct alert_card_event e = {"h", "GPU-1", NULL, "xid:79", "XID 79"};
    char path[160], err[256], created[32];
    struct store *s = NULL;
    sqlite3 *db = NULL;
    long long id;
    cJSON *list = NULL;

    temp_path(path, sizeof(path), "alloc_producers");
    ASSERT_EQ(three_done_runs(path, three_ids), 0);
    /* the runs' card, which an alert names */
    ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "UPDATE runs SET device_uuid = 'GPU-1', device_name = 'H200'",
                           NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(db);
    ASSERT_EQ(test_store_open(path, &s, err, sizeof(err)), STORE_OK);
    ASSERT_EQ(store_alert_detect(s, &a, &id), STORE_OK);
    ASSERT_EQ(store_alert_card_event(s, &e, &id), STORE_OK);
    ASSERT_EQ(store_baseline_insert(s, "b", "{\"benchmark\":\"smem_stride\"}",
                                    "[\"0190f1a2-0000-7000-8000-000000000011\"]", created),
              STORE_OK);
    ASSERT_EQ(alerts_all(s, &list), STORE_OK);
    ASSERT_EQ(cJSON_GetArraySize(list), 2);
    cJSON_Delete(list);
    ASSERT_EQ(whole_or_error("store_alerts_list", s, alerts_all), 0);
    ASSERT_EQ(whole_or_error("store_fleet_cards", s, fleet_cards), 0);
    ASSERT_EQ(whole_or_error("store_fleet_peers", s, fleet_peers), 0);
    ASSERT_EQ(whole_or_error("store_baseline_get (all)", s, baselines_all), 0);
    ASSERT_EQ(whole_or_error("store_baseline_get (one)", s, baseline_one), 0);
    ASSERT_EQ(whole_or_error("store_coverage_cells", s, coverage_all), 0);
    ASSERT_EQ(whole_or_error("store_get_verdict_run", s, verdict_run), 0);
    store_close(s);
    remove_db(path);
    return 0;
}

TEST_MAIN({"mapping", test_mapping}, {"end_needs_running", test_end_needs_running},
          {"check_file", test_check_file}, {"damaged_json_value", test_damaged_json_value},
          {"damaged_run_served", test_damaged_run_served},
          {"reads_under_failing_allocs", test_reads_under_failing_allocs},
          {"list_page_under_failing_allocs", test_list_page_under_failing_allocs},
          {"producers_under_failing_allocs", test_producers_under_failing_allocs})
