/*
 * test_gpu_pool.c - the GPU pool (server/exec/gpu_pool.c) through its hooks,
 * with the worker's test double (tests/fake_worker.c) as its worker and a
 * fresh store.  The pool keeps only its loop and hands how a job ended to
 * the layer above through struct gpu_pool_hooks; these tests are that
 * layer: hooks that record every call (from the runner thread, so under a
 * mutex, with a condition variable to wait on), so that they fail if the
 * pool skipped a hook, called them out of order, stored or judged a run
 * itself, sent a run whose params do not parse, claimed a run while an
 * earlier end was still to be stored, or hung at stop.
 *
 * Linked with gb_exec alone: nothing of runs/ takes part.
 */
#include "gpu_pool.h"
#include "store.h"
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

enum hook {
    HOOK_END,
    HOOK_ENDED,
};

/* One hook call as the pool made it. */
struct call {
    enum hook hook;
    char id[40];
    char status[16]; /* run_end */
    char code[32];   /* run_end: a failure's code */
    char message[200];
    char host[64]; /* run_end: meta.host as the pool gave it */
    int rows;      /* run_end: how many result rows */
};

static struct recorder {
    pthread_mutex_t lock; /* guards what follows */
    pthread_cond_t cond;  /* signalled on every call */
    struct call calls[MAX_CALLS];
    int n;
    int hold_claims; /* run_settle answers -1 (an end still to store) */
    int settles;     /* run_settle calls while holding */
} rec;

static void rec_reset(void)
{
    pthread_mutex_init(&rec.lock, NULL);
    test_cond_init(&rec.cond);
    rec.n = 0;
    rec.hold_claims = 0;
    rec.settles = 0;
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

static void hook_end(void *ctx, int index, struct gpu_run_end *end)
{
    struct call c = {.hook = HOOK_END};
    const char *host = cJSON_GetStringValue(cJSON_GetObjectItem(end->meta, "host"));

    (void)ctx;
    (void)index;
    snprintf(c.id, sizeof(c.id), "%s", end->id);
    snprintf(c.status, sizeof(c.status), "%s", end->status);
    snprintf(c.code, sizeof(c.code), "%s", end->code ? end->code : "");
    snprintf(c.message, sizeof(c.message), "%s", end->message ? end->message : "");
    snprintf(c.host, sizeof(c.host), "%s", host ? host : "");
    c.rows = cJSON_GetArraySize(cJSON_GetObjectItem(end->results, "rows"));
    cJSON_Delete(end->results); /* the hook's now */
    cJSON_Delete(end->meta);
    rec_add(&c);
}

static int hook_settle(void *ctx, int index, int stopping)
{
    int held;

    (void)ctx;
    (void)index;
    (void)stopping;
    pthread_mutex_lock(&rec.lock);
    held = rec.hold_claims;
    if (held)
        rec.settles++;
    pthread_cond_broadcast(&rec.cond);
    pthread_mutex_unlock(&rec.lock);
    return held ? -1 : 0;
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
                  .run_end = hook_end,
                  .run_settle = hook_settle,
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

/* Queues benchmark with params on GPU 0, wakes its runner and waits for
 * the run to end: the hook calls for it into c, how many returned (-1 if
 * it could not be queued or never ended). */
static int run_one(struct fixture *f, const char *benchmark, const char *params,
                   struct call *c)
{
    char id[40];

    if (tmp_store_queue(f->t.s, benchmark, params, 0, TEST_FAKE_UUID(0), id) != STORE_OK)
        return -1;
    gpu_pool_wake(f->pool, 0);
    if (wait_ended(id) != 0)
        return -1;
    return calls_for(id, c);
}

/* A done run: run_end with the worker's results and the meta the pool
 * added the host to, then run_ended.  The pool itself neither judges nor
 * stores: the run is still running in the store, for the hook to end. */
static int check_done_run(struct fixture *f)
{
    struct call c[MAX_CALLS];
    cJSON *run = NULL;

    ASSERT_EQ(gpu_pool_count(f->pool), 1);
    ASSERT_EQ(run_one(f, "smem_stride", "{\"strides\":[1,2]}", c), 2);
    ASSERT_EQ(c[0].hook, HOOK_END);
    ASSERT_STR_EQ(c[0].status, "done");
    ASSERT_STR_EQ(c[0].host, "unit-host");
    ASSERT_EQ(c[0].rows, 2);
    ASSERT_EQ(c[1].hook, HOOK_ENDED);

    ASSERT_EQ(store_get_run(f->t.s, c[0].id, &run), STORE_OK);
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(run, "status")), "running");
    ASSERT(cJSON_IsNull(cJSON_GetObjectItem(run, "results")));
    cJSON_Delete(run);
    return 0;
}

/* 0 when c, a run's hook calls, is run_end failing it with code and no
 * results, then run_ended. */
static int ended_failed(const struct call *c, const char *code)
{
    ASSERT_EQ(c[0].hook, HOOK_END);
    ASSERT_STR_EQ(c[0].status, "failed");
    ASSERT_STR_EQ(c[0].code, code);
    ASSERT_EQ(c[0].rows, 0);
    ASSERT_EQ(c[1].hook, HOOK_ENDED);
    return 0;
}

/* A run the worker fails (test_fault: a CUDA-style error, then the worker
 * exits): run_end says failed with the worker's error and no results; then
 * run_ended. */
static int check_failed_run(struct fixture *f)
{
    struct call c[MAX_CALLS];

    ASSERT_EQ(run_one(f, "test_fault", "{}", c), 2);
    return ended_failed(c, "cuda_error");
}

/* A run whose stored params do not parse is failed with why, never sent
 * to the worker without them (it would measure its defaults instead). */
static int check_bad_params(struct fixture *f)
{
    struct call c[MAX_CALLS];

    ASSERT_EQ(run_one(f, "smem_stride", "{\"strides\":[1,", c), 2);
    ASSERT(strstr(c[0].message, "params") != NULL);
    return ended_failed(c, "internal");
}

/* While run_settle says an earlier end still waits to be stored, the
 * runner claims nothing: the queued run stays queued; once settled, it
 * runs. */
static int check_settle_holds_claims(struct fixture *f)
{
    struct timespec until = test_deadline(WAIT_MS);
    char id[40];
    cJSON *run = NULL;
    int asked = 0;

    pthread_mutex_lock(&rec.lock);
    rec.hold_claims = 1;
    pthread_mutex_unlock(&rec.lock);
    ASSERT_EQ(tmp_store_queue(f->t.s, "smem_stride", "{\"strides\":[1]}", 0, TEST_FAKE_UUID(0),
                              id),
              STORE_OK);
    gpu_pool_wake(f->pool, 0);
    /* asked twice while holding: the runner looked, and looked again */
    pthread_mutex_lock(&rec.lock);
    while (rec.settles < 2 &&
           pthread_cond_timedwait(&rec.cond, &rec.lock, &until) == 0)
        ;
    asked = rec.settles;
    pthread_mutex_unlock(&rec.lock);
    ASSERT(asked >= 2);
    ASSERT_EQ(store_get_run(f->t.s, id, &run), STORE_OK);
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(run, "status")), "queued");
    cJSON_Delete(run);
    ASSERT_EQ(calls_total(), 0);

    pthread_mutex_lock(&rec.lock);
    rec.hold_claims = 0;
    pthread_mutex_unlock(&rec.lock);
    gpu_pool_wake(f->pool, 0);
    ASSERT_EQ(wait_ended(id), 0);
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

static int test_bad_params(void)
{
    return with_pool("1", check_bad_params);
}

static int test_settle_holds_claims(void)
{
    return with_pool("1", check_settle_holds_claims);
}

static int test_stop_idle(void)
{
    return with_pool("1", check_stop_idle);
}

static int test_empty(void)
{
    return with_pool("0", check_empty);
}

TEST_MAIN({"done run: run_end with its trees, then ended; nothing stored", test_done_run},
          {"failed run: run_end with the worker's error", test_failed_run},
          {"params that do not parse: failed, never sent", test_bad_params},
          {"an end still to store holds the next claim", test_settle_holds_claims},
          {"stop with nothing running", test_stop_idle},
          {"no GPU: an empty pool", test_empty})
