/* The schema: a fresh database is built, a reopened one is left alone, and
 * one from a newer gpubench is refused without being touched. */
#include "bench_spec.h"
#include "migrate.h"
#include "store.h"
#include "judge_sql.h"
#include "store_queue.h"
#include "store_runs.h"
#include "test.h"
#include "test_store_tmp.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    ASSERT_EQ(test_store_open(path, &s, err, sizeof(err)), STORE_OK);
    ASSERT_EQ(user_version(path), migration_count);
    ASSERT_EQ(store_insert_runs(s, &r, 1, 10), STORE_OK);
    store_close(s);

    /* Reopening applies nothing and keeps the run. */
    ASSERT_EQ(test_store_open(path, &s, err, sizeof(err)), STORE_OK);
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
    ASSERT_EQ(test_store_open(path, &s, err, sizeof(err)), STORE_ERROR);
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
    ASSERT_EQ(test_store_open(path, &s, err, sizeof(err)), STORE_OK);
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

/* The first value of query on db, as an integer (-1 on an error). */
static long long one_int(sqlite3 *db, const char *query)
{
    sqlite3_stmt *st = NULL;
    long long v = -1;

    if (sqlite3_prepare_v2(db, query, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -2 : sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* A database as 0008 left it, with done runs of 0.2.0 (another
 * quiet_wait_s, one without its defaulted params) and of 0.1.0 on two
 * builds: 0009 gives each its method and one key per measurement, and
 * rebuilds the fleet to match; the plain sqlite3 library, without the
 * key's functions, still reads the result. */
static int test_0008_database_gets_methods(void)
{
    static const char *const runs[][4] = {
        /* id suffix, params, gpubench version, build */
        {"1", "{\"strides\":[1,32],\"samples\":20,\"quiet_wait_s\":3,\"counters\":\"auto\"}",
         "0.2.0", "aaa"},
        {"2", "{\"strides\":[1,32],\"quiet_wait_s\":30}", "0.2.0", "aaa"},
        {"3", "{\"strides\":[1,32]}", "0.1.0", "bbb"},
        {"4", "{\"strides\":[1,32]}", "0.1.0", "bbb-dirty"},
    };
    char path[128], err[256], sql[1024];
    struct store *s = NULL;
    sqlite3 *db;

    temp_path(path, sizeof(path));
    ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
    ASSERT_STR_EQ(migrations[7].name, "0008_alert_webhook.sql");
    for (int i = 0; i < 8; i++) {
        ASSERT_EQ(sqlite3_exec(db, migrations[i].sql, NULL, NULL, NULL), SQLITE_OK);
    }
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 8", NULL, NULL, NULL), SQLITE_OK);
    for (int i = 0; i < 4; i++) {
        snprintf(sql, sizeof(sql),
                 "INSERT INTO runs (id, benchmark, params, host, device_index, device_uuid, "
                 "device_name, status, timeout_s, created_at, final_seq, valid, verdict_key) "
                 "VALUES ('0190f1a2-0000-7000-8000-00000000000%s', 'smem_stride', '%s', 'h', 0, "
                 "'GPU-%s', 'H200', 'done', 5, '2026-01-01T00:00:00.000Z', %d, 1, "
                 "'smem_stride' || char(31) || 'H200' || char(31) || json('%s'));"
                 "INSERT INTO run_results (run_id, results, meta) VALUES "
                 "('0190f1a2-0000-7000-8000-00000000000%s', '{\"rows\":[]}', "
                 "'{\"build\":{\"gpubench_version\":\"%s\",\"git_commit\":\"%s\"}}');"
                 "INSERT INTO fleet_latest (verdict_key, benchmark, host, device_uuid, run_id) "
                 "SELECT verdict_key, benchmark, host, device_uuid, id FROM runs WHERE id = "
                 "'0190f1a2-0000-7000-8000-00000000000%s';",
                 runs[i][0], runs[i][1], runs[i][0], i + 1, runs[i][1], runs[i][0], runs[i][2],
                 runs[i][3], runs[i][0]);
        ASSERT_EQ(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    }
    sqlite3_close(db);

    ASSERT_EQ(test_store_open(path, &s, err, sizeof(err)), STORE_OK);
    store_close(s);
    ASSERT_EQ(user_version(path), migration_count);
    /* Read back with the plain library: nothing in the schema needs the
     * daemon's functions. */
    ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
    ASSERT_EQ(one_int(db, "SELECT method FROM runs WHERE id LIKE '%1'"),
              gb_benchmark_method(gb_benchmark_find("smem_stride")));
    ASSERT_EQ(one_int(db, "SELECT method FROM runs WHERE id LIKE '%2'"),
              gb_benchmark_method(gb_benchmark_find("smem_stride")));
    ASSERT_EQ(one_int(db, "SELECT method FROM runs WHERE id LIKE '%3'"), -2); /* NULL */
    ASSERT_EQ(one_int(db, "SELECT count(*) FROM runs WHERE build = 'bbb-dirty'"), 1);
    /* one key for runs 1 and 2; 3 and 4 apart from them and each other */
    ASSERT_EQ(one_int(db, "SELECT count(DISTINCT verdict_key) FROM runs"), 3);
    ASSERT_EQ(one_int(db, "SELECT count(*) FROM runs a JOIN runs b ON a.verdict_key = "
                          "b.verdict_key WHERE a.id LIKE '%1' AND b.id LIKE '%2'"),
              1);
    ASSERT_EQ(one_int(db, "SELECT count(*) FROM runs WHERE instr(verdict_key, 'quiet_wait_s') "
                          "OR instr(verdict_key, 'counters') OR instr(verdict_key, 'samples')"),
              0);
    ASSERT_EQ(one_int(db, "SELECT count(*) FROM runs WHERE instr(verdict_key, "
                          "'\"min_sample_ms\"') = 0 AND instr(verdict_key, '\"method\"') > 0"),
              4);
    /* the fleet: each card's newest run of each new key, nothing stale */
    ASSERT_EQ(one_int(db, "SELECT count(*) FROM fleet_latest"), 4);
    ASSERT_EQ(one_int(db, "SELECT count(*) FROM fleet_latest f JOIN runs r ON r.id = f.run_id "
                          "AND r.verdict_key = f.verdict_key"),
              4);
    sqlite3_close(db);
    unlink(path);
    return 0;
}

/* A database as 0011 left it, with a done hbm_bandwidth run of an H200
 * whose triad missed its floor, a run of a benchmark without floors and an
 * alert: 0012 judges the stored runs' checks and keeps the alert, which
 * may then be of kind floor. */
static int test_0011_database_gets_checks(void)
{
    static const char results[] =
        "{\"rows\":[{\"label\":\"triad\",\"kernel\":\"triad\",\"unit\":\"GB/s\","
        "\"value\":3100},{\"label\":\"memcpy\",\"kernel\":\"memcpy\",\"unit\":\"GB/s\","
        "\"value\":4200}]}";
    char path[128], err[256], sql[1024];
    struct store *s = NULL;
    sqlite3 *db;

    temp_path(path, sizeof(path));
    ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
    ASSERT_STR_EQ(migrations[10].name, "0011_peer_skipped.sql");
    ASSERT_EQ(judge_sql_functions(db), 0); /* 0009 re-keys with them */
    for (int i = 0; i < 11; i++)
        ASSERT_EQ(sqlite3_exec(db, migrations[i].sql, NULL, NULL, NULL), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 11", NULL, NULL, NULL), SQLITE_OK);
    for (int i = 0; i < 2; i++) {
        snprintf(sql, sizeof(sql),
                 "INSERT INTO runs (id, benchmark, params, host, device_index, device_uuid, "
                 "device_name, status, timeout_s, created_at, final_seq, valid) "
                 "VALUES ('0190f1a2-0000-7000-8000-00000000000%d', '%s', '{}', 'h', 0, "
                 "'GPU-1', 'NVIDIA H200', 'done', 5, '2026-01-01T00:00:00.000Z', %d, 1);"
                 "INSERT INTO run_results (run_id, results, meta) VALUES "
                 "('0190f1a2-0000-7000-8000-00000000000%d', '%s', "
                 "'{\"device\":{\"name\":\"NVIDIA H200\"}}');",
                 i + 1, i ? "smem_stride" : "hbm_bandwidth", i + 1, i + 1, results);
        ASSERT_EQ(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    }
    ASSERT_EQ(sqlite3_exec(db,
                           "INSERT INTO alerts (id, kind, state, host, device_uuid, benchmark, "
                           "verdict_key, row_key, verdict, run_id, confirms_left, detected_at) "
                           "VALUES (7, 'history', 'confirmed', 'h', 'GPU-1', 'hbm_bandwidth', "
                           "'k', '\"triad\"', 'slower', 'r', 0, '2026-01-01T00:00:00.000Z')",
                           NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(db);

    ASSERT_EQ(test_store_open(path, &s, err, sizeof(err)), STORE_OK);
    store_close(s);
    ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
    ASSERT_EQ(one_int(db, "SELECT checks_failed FROM runs WHERE id LIKE '%1'"), 1);
    ASSERT_EQ(one_int(db, "SELECT json_array_length(checks) FROM runs WHERE id LIKE '%1'"), 2);
    ASSERT_EQ(one_int(db, "SELECT count(*) FROM runs WHERE id LIKE '%2' AND checks IS NULL "
                          "AND checks_failed IS NULL"),
              1);
    ASSERT_EQ(one_int(db, "SELECT count(*) FROM alerts WHERE id = 7 AND state = 'confirmed'"), 1);
    ASSERT_EQ(sqlite3_exec(db,
                           "INSERT INTO alerts (kind, state, host, device_uuid, benchmark, "
                           "verdict_key, row_key, verdict, run_id, confirms_left, detected_at) "
                           "VALUES ('floor', 'detected', 'h', 'GPU-1', 'hbm_bandwidth', 'k', "
                           "'\"triad\"', 'below_floor', 'r', 1, '2026-01-01T00:00:00.000Z')",
                           NULL, NULL, NULL),
              SQLITE_OK);
    ASSERT_EQ(one_int(db, "SELECT max(id) FROM alerts"), 8);
    sqlite3_close(db);
    unlink(path);
    return 0;
}

TEST_MAIN({"fresh database, then reopened", test_fresh_and_reopen},
          {"a 0008 database gets methods and one key per measurement",
           test_0008_database_gets_methods},
          {"a 0011 database gets its runs' checks and floor alerts",
           test_0011_database_gets_checks},
          {"a newer database is refused untouched", test_newer_refused},
          {"queue order and bound", test_queue_order_and_bound})
