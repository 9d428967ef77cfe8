/*
 * test_store_tmp.h - what the unit tests of the pool, the runs layer and
 * the alerts share: a fresh store in a directory of its own (mkdtemp, so
 * that tests run in parallel under ctest -j never meet), a queued run put
 * in it, and a wait on a condition variable with a deadline on the
 * monotonic clock (so that a test that hangs fails instead).  The store is
 * opened as gpubenchd opens it: with the judge's SQL functions
 * (store_functions.h), and a run's end is judged before it is stored.
 *
 * Static inline: each test is one file; nothing here is a library.
 */
#ifndef GPUBENCH_TEST_STORE_TMP_H
#define GPUBENCH_TEST_STORE_TMP_H

#include "judge_sql.h"
#include "run_judge.h"
#include "run_record.h"
#include "store.h"
#include "store_functions.h"
#include "store_queue.h"
#include "store_runs.h"
#include "timeutil.h"
#include "uuid7.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* What the fake worker (tests/fake_worker.c) calls GPU index. */
#define TEST_FAKE_UUID(index) "GPU-00000000-fake-4000-8000-00000000000" #index
#define TEST_FAKE_NAME "Fake GPU (test double)"

struct tmp_store {
    char dir[64];
    char path[96];
    struct store *s;
};

/* store_open as gpubenchd does it: the judge's SQL functions first. */
static inline int test_store_open(const char *path, struct store **s, char *err, size_t cap)
{
    store_functions_set(judge_sql_functions);
    return store_open(path, s, err, cap);
}

/* Opens a new store in a new directory under /tmp named after the test.
 * 0, or -1 with what failed on stderr. */
static inline int tmp_store_open(struct tmp_store *t, const char *name)
{
    char err[256];

    memset(t, 0, sizeof(*t));
    snprintf(t->dir, sizeof(t->dir), "/tmp/gpubench-%s-XXXXXX", name);
    if (mkdtemp(t->dir) == NULL) {
        perror("mkdtemp");
        t->dir[0] = '\0';
        return -1;
    }
    snprintf(t->path, sizeof(t->path), "%s/gpubench.db", t->dir);
    if (test_store_open(t->path, &t->s, err, sizeof(err)) != STORE_OK) {
        fprintf(stderr, "store_open %s: %s\n", t->path, err);
        t->s = NULL;
        return -1;
    }
    return 0;
}

/* Closes the store and removes its directory with what SQLite put there
 * (the database, its -wal and -shm). */
static inline void tmp_store_close(struct tmp_store *t)
{
    DIR *d;
    struct dirent *e;
    char file[sizeof(t->dir) + 300];

    store_close(t->s);
    t->s = NULL;
    if (t->dir[0] == '\0' || (d = opendir(t->dir)) == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(file, sizeof(file), "%s/%s", t->dir, e->d_name);
        unlink(file);
    }
    closedir(d);
    rmdir(t->dir);
    t->dir[0] = '\0';
}

/* Queues one run of benchmark with params (JSON text) for GPU index of
 * the fake worker; its new id into id.  STORE_OK or the store's code. */
static inline int tmp_store_queue(struct store *s, const char *benchmark, const char *params,
                                  int index, const char *uuid, char id[40])
{
    struct run_new r = {.benchmark = benchmark,
                        .params_json = params,
                        .host = "unit-host",
                        .device_index = index,
                        .device_uuid = uuid,
                        .device_name = TEST_FAKE_NAME,
                        .timeout_s = 60};

    if (uuid7_new(r.id) != 0)
        return STORE_ERROR;
    snprintf(id, 40, "%s", r.id);
    return store_insert_runs(s, &r, 1, 100);
}

/* Ends running run id as a runner's end is stored: status, the error
 * (code and message, or NULL), results and meta (JSON text, or NULL: none)
 * judged as a run's end is (judge_run_record, with the envelope read from
 * its row) and the verdicts text given (NULL: none).  The store's code,
 * or STORE_ERROR when the run could not be judged. */
static inline int tmp_finish_run(struct store *s, const char *id, const char *status,
                                 const char *results, const char *meta, const char *code,
                                 const char *message, const char *verdicts)
{
    struct run_record r = {0};
    cJSON *row = NULL;
    const cJSON *device, *params, *method;
    char now[32];
    int rc = STORE_ERROR;

    time_now_rfc3339(now, sizeof(now));
    if (run_record_set(&r.id, id) || run_record_set(&r.status, status) ||
        run_record_set(&r.finished_at, now) || run_record_set(&r.error_code, code) ||
        run_record_set(&r.error_message, message) || run_record_set(&r.judged.verdicts, verdicts))
        goto done;
    if (results) {
        if (store_get_run(s, id, &row) != STORE_OK)
            goto done;
        device = cJSON_GetObjectItem(row, "device");
        params = cJSON_GetObjectItem(row, "params");
        method = cJSON_GetObjectItem(row, "method");
        r.method = cJSON_IsNumber(method) ? (long long)method->valuedouble : 0;
        if (run_record_set(&r.benchmark,
                           cJSON_GetStringValue(cJSON_GetObjectItem(row, "benchmark"))) ||
            run_record_set(&r.device_name,
                           cJSON_GetStringValue(cJSON_GetObjectItem(device, "name"))) ||
            run_record_set(&r.params, cJSON_IsRaw(params) ? params->valuestring : "{}") ||
            run_record_take_trees(&r, cJSON_Parse(results), cJSON_Parse(meta ? meta : "{}")) ||
            r.results == NULL || judge_run_record(&r) != 0)
            goto done;
        /* judging starts afresh: the verdicts given are put back */
        if (run_record_set(&r.judged.verdicts, verdicts))
            goto done;
    }
    rc = store_finish_run(s, &r);

done:
    cJSON_Delete(row);
    run_record_clear(&r);
    return rc;
}

/* A condition variable on CLOCK_MONOTONIC, for test_deadline's times. */
static inline void test_cond_init(pthread_cond_t *cond)
{
    pthread_condattr_t attr;

    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(cond, &attr);
    pthread_condattr_destroy(&attr);
}

/* ms from now on CLOCK_MONOTONIC. */
static inline struct timespec test_deadline(int ms)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

#endif
