/* The schema: a fresh database is built, a reopened one is left alone, and
 * one from a newer gpubench is refused without being touched. */
#include "migrate.h"
#include "store.h"
#include "store_queue.h"
#include "store_runs.h"
#include "test.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

static void temp_path(char *buf, size_t cap)
{
    snprintf(buf, cap, "/tmp/gpubench-test-migrate-%d.db", (int)getpid());
    unlink(buf);
}

static int user_version(const char *path)
{
    sqlite3 *db;
    int v;

    if (sqlite3_open(path, &db) != SQLITE_OK)
        return -1;
    v = migrate_version(db);
    sqlite3_close(db);
    return v;
}

static int test_fresh_and_reopen(void)
{
    char path[128], err[256];
    struct store *s = NULL;
    struct run_new r = {.id = "0190f1a2-0000-7000-8000-000000000001",
                        .benchmark = "smem_stride",
                        .params_json = "{}",
                        .host = "h",
                        .device_index = 0,
                        .timeout_s = 5};
    cJSON *run = NULL;

    temp_path(path, sizeof(path));
    ASSERT_EQ(store_open(path, &s, err, sizeof(err)), STORE_OK);
    ASSERT_EQ(user_version(path), migration_count);
    ASSERT_EQ(store_insert_runs(s, &r, 1, 10), STORE_OK);
    store_close(s);

    /* Reopening applies nothing and keeps the run. */
    ASSERT_EQ(store_open(path, &s, err, sizeof(err)), STORE_OK);
    ASSERT_EQ(user_version(path), migration_count);
    ASSERT_EQ(store_get_run(s, r.id, &run), STORE_OK);
    ASSERT_STR_EQ(cJSON_GetObjectItem(run, "status")->valuestring, "queued");
    cJSON_Delete(run);
    store_close(s);
    unlink(path);
    return 0;
}

static int test_newer_refused(void)
{
    char path[128], err[256], pragma[64];
    struct store *s = NULL;
    sqlite3 *db;

    temp_path(path, sizeof(path));
    ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
    snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", migration_count + 1);
    ASSERT_EQ(sqlite3_exec(db, pragma, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);

    err[0] = '\0';
    ASSERT_EQ(store_open(path, &s, err, sizeof(err)), STORE_ERROR);
    ASSERT(s == NULL);
    ASSERT(strstr(err, "newer gpubench") != NULL);
    /* Refused means untouched: no table was created. */
    ASSERT_EQ(user_version(path), migration_count + 1);
    ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
    ASSERT(sqlite3_exec(db, "SELECT 1 FROM runs", NULL, NULL, NULL) != SQLITE_OK);
    sqlite3_close(db);
    unlink(path);
    return 0;
}

static int test_queue_order_and_bound(void)
{
    char path[128], err[256];
    struct store *s = NULL;
    struct run_new r[3];
    struct run_job job;
    long depth;

    temp_path(path, sizeof(path));
    ASSERT_EQ(store_open(path, &s, err, sizeof(err)), STORE_OK);
    for (int i = 0; i < 3; i++) {
        memset(&r[i], 0, sizeof(r[i]));
        snprintf(r[i].id, sizeof(r[i].id), "0190f1a2-0000-7000-8000-00000000000%d", 3 - i);
        r[i].benchmark = "smem_stride";
        r[i].params_json = "{}";
        r[i].host = "h";
        r[i].timeout_s = 5;
    }
    ASSERT_EQ(store_insert_runs(s, r, 2, 2), STORE_OK);
    ASSERT_EQ(store_insert_runs(s, &r[2], 1, 2), STORE_FULL);
    ASSERT_EQ(store_queue_depth(s, 0, &depth), STORE_OK);
    ASSERT_EQ(depth, 2);
    /* First in, first out, whatever the ids say. */
    ASSERT_EQ(store_claim_next(s, 0, &job), STORE_OK);
    ASSERT_STR_EQ(job.id, r[0].id);
    store_job_clear(&job);
    ASSERT_EQ(store_claim_next(s, 1, &job), STORE_NOT_FOUND);
    store_close(s);
    unlink(path);
    return 0;
}

TEST_MAIN({"fresh database, then reopened", test_fresh_and_reopen},
          {"a newer database is refused untouched", test_newer_refused},
          {"queue order and bound", test_queue_order_and_bound})
