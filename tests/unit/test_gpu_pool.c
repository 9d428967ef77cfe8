/*
 * test_gpu_pool.c - the GPU pool (server/exec/gpu_pool.c) through its hooks,
 * with the worker's test double (tests/fake_worker.c) as its worker and a
 * fresh store.  The pool keeps only its loop and hands a run's end to the
 * layer above through struct gpu_pool_hooks; these tests are that layer:
 * hooks that record every call (from the runner thread, so under a mutex,
 * with a condition variable to wait on), so that they fail if the pool
 * skipped a hook, called them out of order, stored other verdicts than the
 * judge gave, judged a failed run, or hung at stop.
 *
 * Linked with gb_exec alone: nothing of runs/ takes part.
 */
#include "gpu_pool.h"
#include "store.h"
#include "store_queue.h"
#include "store_runs.h"
#include "test.h"
#include "test_store_tmp.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef GB_FAKE_WORKER
#error "GB_FAKE_WORKER: the path of gpubench-fake-worker (tests/CMakeLists.txt)"
#endif

#define MAX_CALLS 32
#define WAIT_MS 30000 /* a run of the test double takes milliseconds; slack for TSan */
#define JUDGED_MAGIC 0x6a756467

enum hook {
    HOOK_JUDGE,
    HOOK_STORED,
    HOOK_ENDED,
};

/* One hook call as the pool made it. */
struct call {
    enum hook hook;
    char id[40];
    char status[16];    /* run_stored */
    int stored;         /* run_stored */
    char judged_id[40]; /* run_stored: the run run_judge made judged for; "" for NULL */
    char host[64];      /* run_judge: meta.host as the pool gave it */
    int rows;           /* run_judge: how many result rows */
};

/* What run_judge hands run_stored (through the pool), which frees it. */
struct judged {
    int magic;
    char id[40];
};

static struct recorder {
    pthread_mutex_t lock; /* guards what follows */
    pthread_cond_t cond;  /* signalled on every call */
    struct call calls[MAX_CALLS];
    int n;
} rec;

static void rec_reset(void)
{
    pthread_mutex_init(&rec.lock, NULL);
    test_cond_init(&rec.cond);
    rec.n = 0;
}

static void rec_destroy(void)
{
    pthread_cond_destroy(&rec.cond);
    pthread_mutex_destroy(&rec.lock);
}

static void rec_add(const struct call *c)
{
    pthread_mutex_lock(&rec.lock);
    if (rec.n < MAX_CALLS)
        rec.calls[rec.n++] = *c;
    pthread_cond_broadcast(&rec.cond);
    pthread_mutex_unlock(&rec.lock);
}

/* The verdicts run_judge gives run id: particular to it, so that the
 * store's copy can only have come from this call.  malloc'ed. */
static char *verdicts_for(const char *id)
{
    char *text = malloc(160);

    if (text)
        snprintf(text, 160, "{\"judged\":true,\"by\":\"test_gpu_pool\",\"run\":\"%s\"}", id);
    return text;
}

static char *hook_judge(void *ctx, const char *id, const char *results, const char *meta,
                        void **judged)
{
    struct call c = {.hook = HOOK_JUDGE};
    cJSON *r = cJSON_Parse(results), *m = cJSON_Parse(meta);
    struct judged *j = malloc(sizeof(*j));
    const char *host = cJSON_GetStringValue(cJSON_GetObjectItem(m, "host"));

    (void)ctx;
    snprintf(c.id, sizeof(c.id), "%s", id);
    snprintf(c.host, sizeof(c.host), "%s", host ? host : "");
    c.rows = cJSON_GetArraySize(cJSON_GetObjectItem(r, "rows"));
    cJSON_Delete(r);
    cJSON_Delete(m);
    if (j) {
        j->magic = JUDGED_MAGIC;
        snprintf(j->id, sizeof(j->id), "%s", id);
    }
    *judged = j;
    rec_add(&c);
    return verdicts_for(id);
}

static void hook_stored(void *ctx, const char *id, const char *status, int stored, void *arg)
{
    struct call c = {.hook = HOOK_STORED, .stored = stored};
    struct judged *j = arg;

    (void)ctx;
    snprintf(c.id, sizeof(c.id), "%s", id);
    snprintf(c.status, sizeof(c.status), "%s", status);
    if (j)
        snprintf(c.judged_id, sizeof(c.judged_id), "%s",
                 j->magic == JUDGED_MAGIC ? j->id : "(not run_judge's)");
    free(j);
    rec_add(&c);
}

static void hook_ended(void *ctx, const char *id)
{
    struct call c = {.hook = HOOK_ENDED};

    (void)ctx;
    snprintf(c.id, sizeof(c.id), "%s", id);
    rec_add(&c);
}

/* Waits until run_ended was called for id: 0, or -1 after WAIT_MS. */
static int wait_ended(const char *id)
{
    struct timespec until = test_deadline(WAIT_MS);
    int found = 0, timed_out = 0;

    pthread_mutex_lock(&rec.lock);
    while (!found && !timed_out) {
        for (int i = 0; i < rec.n && !found; i++)
            found = rec.calls[i].hook == HOOK_ENDED && strcmp(rec.calls[i].id, id) == 0;
        if (!found)
            timed_out = pthread_cond_timedwait(&rec.cond, &rec.lock, &until) != 0;
    }
    pthread_mutex_unlock(&rec.lock);
    return found ? 0 : -1;
}

/* The calls for run id, in order, copied into out (room for MAX_CALLS). */
static int calls_for(const char *id, struct call *out)
{
    int n = 0;

    pthread_mutex_lock(&rec.lock);
    for (int i = 0; i < rec.n; i++)
        if (strcmp(rec.calls[i].id, id) == 0)
            out[n++] = rec.calls[i];
    pthread_mutex_unlock(&rec.lock);
    return n;
}

static int calls_total(void)
{
    int n;

    pthread_mutex_lock(&rec.lock);
    n = rec.n;
    pthread_mutex_unlock(&rec.lock);
    return n;
}

/* A store and a pool of `gpus` fake GPUs whose hooks record. */
struct fixture {
    struct tmp_store t;
    struct gpu_pool *pool;
};

static int fixture_start(struct fixture *f, const char *gpus)
{
    struct gpu_pool_config cfg = {
        .worker = GB_FAKE_WORKER,
        .worker_owner = "test_gpu_pool",
        .host = "unit-host",
        .shutdown_grace_s = 5,
        .hooks = {.ctx = &rec,
                  .run_judge = hook_judge,
                  .run_stored = hook_stored,
                  .run_ended = hook_ended},
    };

    memset(f, 0, sizeof(*f));
    rec_reset();
    if (tmp_store_open(&f->t, "unit-pool") != 0)
        return -1;
    /* Read by the worker at its start; no pool runs now, so no thread
     * reads the environment while it changes. */
    setenv("GPUBENCH_FAKE_GPUS", gpus, 1);
    signal(SIGPIPE, SIG_IGN); /* as gpubenchd: a dead worker's pipe is an error return */
    unsetenv("GPUBENCH_FAKE_CONTROL");
    unsetenv("GPUBENCH_FAKE_DELAY_MS");
    cfg.store = f->t.s;
    f->pool = gpu_pool_start(&cfg);
    return f->pool ? 0 : -1;
}

static void fixture_stop(struct fixture *f)
{
    gpu_pool_stop(f->pool);
    f->pool = NULL;
    tmp_store_close(&f->t);
    rec_destroy();
}

/* A done run: run_judge (with the worker's results and the meta the pool
 * added the host to), then run_stored (stored, done, with run_judge's
 * judged), then run_ended; the store keeps run_judge's verdicts. */
static int check_done_run(struct fixture *f)
{
    struct call c[MAX_CALLS];
    char id[40];
    char *want_text = NULL;
    cJSON *run = NULL, *want = NULL;
    int n, same;

    ASSERT_EQ(gpu_pool_count(f->pool), 1);
    ASSERT_EQ(tmp_store_queue(f->t.s, "smem_stride", "{\"strides\":[1,2]}", 0, TEST_FAKE_UUID(0),
                              id),
              STORE_OK);
    gpu_pool_wake(f->pool, 0);
    ASSERT_EQ(wait_ended(id), 0);

    n = calls_for(id, c);
    ASSERT_EQ(n, 3);
    ASSERT_EQ(c[0].hook, HOOK_JUDGE);
    ASSERT_STR_EQ(c[0].host, "unit-host");
    ASSERT_EQ(c[0].rows, 2);
    ASSERT_EQ(c[1].hook, HOOK_STORED);
    ASSERT_EQ(c[1].stored, 1);
    ASSERT_STR_EQ(c[1].status, "done");
    ASSERT_STR_EQ(c[1].judged_id, id);
    ASSERT_EQ(c[2].hook, HOOK_ENDED);

    ASSERT_EQ(store_get_run(f->t.s, id, &run), STORE_OK);
    want_text = verdicts_for(id);
    want = cJSON_Parse(want_text);
    same = want && cJSON_Compare(cJSON_GetObjectItem(run, "verdicts"), want, 1);
    free(want_text);
    cJSON_Delete(want);
    if (!same || strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(run, "status")), "done") != 0) {
        char *got = cJSON_PrintUnformatted(run);
        fprintf(stderr, "the run as stored: %s\n", got ? got : "(null)");
        free(got);
    }
    ASSERT(same);
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(run, "status")), "done");
    ASSERT_EQ(cJSON_GetArraySize(
                  cJSON_GetObjectItem(cJSON_GetObjectItem(run, "results"), "rows")),
              2);
    cJSON_Delete(run);
    return 0;
}

/* A run the worker fails (test_fault: a CUDA-style error, then the worker
 * exits): never judged; run_stored says failed with no judged; then
 * run_ended.  The store has the worker's error and no verdicts. */
static int check_failed_run(struct fixture *f)
{
    struct call c[MAX_CALLS];
    char id[40];
    cJSON *run = NULL;
    const cJSON *error;
    int n;

    ASSERT_EQ(tmp_store_queue(f->t.s, "test_fault", "{}", 0, TEST_FAKE_UUID(0), id), STORE_OK);
    gpu_pool_wake(f->pool, 0);
    ASSERT_EQ(wait_ended(id), 0);

    n = calls_for(id, c);
    ASSERT_EQ(n, 2);
    ASSERT_EQ(c[0].hook, HOOK_STORED);
    ASSERT_EQ(c[0].stored, 1);
    ASSERT_STR_EQ(c[0].status, "failed");
    ASSERT_STR_EQ(c[0].judged_id, ""); /* judged NULL */
    ASSERT_EQ(c[1].hook, HOOK_ENDED);

    ASSERT_EQ(store_get_run(f->t.s, id, &run), STORE_OK);
    error = cJSON_GetObjectItem(run, "error");
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(run, "status")), "failed");
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(error, "code")), "cuda_error");
    ASSERT(cJSON_IsNull(cJSON_GetObjectItem(run, "verdicts")));
    cJSON_Delete(run);
    return 0;
}

/* Stop with nothing running, once the worker is up: prompt (the runner
 * sleeps on its condition variable and the stop wakes it), and no hook is
 * called for a run that never was. */
static int check_stop_idle(struct fixture *f)
{
    struct gpu_stat st;
    struct timespec t0, t1;
    int ready = 0;
    double s;

    for (int i = 0; i < WAIT_MS / 20 && !ready; i++) {
        struct timespec nap = {0, 20 * 1000000L};
        ready = gpu_pool_stats(f->pool, &st, 1) == 1 && strcmp(st.state, "ready") == 0;
        if (!ready)
            nanosleep(&nap, NULL);
    }
    ASSERT(ready);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    gpu_pool_stop(f->pool);
    f->pool = NULL;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    ASSERT(s < 5.0); /* the shutdown grace is 5 s: an idle pool needs none of it */
    ASSERT_EQ(calls_total(), 0);
    return 0;
}

/* No GPU at all (the worker lists none): the pool is empty, says why,
 * resolves no device, and stops. */
static int check_empty(struct fixture *f)
{
    struct gpu_ref refs[2];
    enum gpu_lookup why = GPU_MALFORMED;
    char err[512];

    ASSERT_EQ(gpu_pool_count(f->pool), 0);
    ASSERT(strstr(gpu_pool_reason(f->pool), "GPUBENCH_FAKE_GPUS=0") != NULL);
    ASSERT_EQ(gpu_pool_resolve(f->pool, NULL, refs, 2, &why, err, sizeof(err)), -1);
    ASSERT_EQ(why, GPU_NOT_FOUND);
    gpu_pool_wake(f->pool, 0); /* no such GPU: nothing to wake, no crash */
    return 0;
}

/* Runs check on a fresh fixture of `gpus` GPUs and stops it whatever the
 * check found (an ASSERT returns early). */
static int with_pool(const char *gpus, int (*check)(struct fixture *))
{
    struct fixture f;
    int rc = 1;

    if (fixture_start(&f, gpus) == 0)
        rc = check(&f);
    fixture_stop(&f);
    return rc;
}

static int test_done_run(void)
{
    return with_pool("1", check_done_run);
}

static int test_failed_run(void)
{
    return with_pool("1", check_failed_run);
}

static int test_stop_idle(void)
{
    return with_pool("1", check_stop_idle);
}

static int test_empty(void)
{
    return with_pool("0", check_empty);
}

TEST_MAIN({"done run: judge, stored, ended", test_done_run},
          {"failed run: stored failed, never judged", test_failed_run},
          {"stop with nothing running", test_stop_idle},
          {"no GPU: an empty pool", test_empty})
