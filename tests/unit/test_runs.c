/*
 * test_runs.c - the runs layer (server/runs/runs.c) and the pool's hooks it
 * provides (run_end.c), without HTTP: a struct runs over a fresh store, a
 * GPU pool whose worker is the test double (tests/fake_worker.c, slowed to
 * a few hundred milliseconds a run so that a wait can begin before the run
 * ends), hooks from runs_pool_hooks, and waiters whose park and resume
 * callbacks record opaque tokens, as http/ would park and resume its
 * connections.
 *
 * What must hold: accepting stores the runs queued; a wait on a run that
 * has not ended parks its token, and the run's end (the pool's run_ended
 * hook) resumes that token and no other; a wait on an ended run parks
 * nothing; cancel answers by the run's state; a finished run's text is
 * kept in the cache and served from it, a queued one's is not; at
 * shutdown the waits on runs not running are resumed at once, new ones
 * refused, and those on running runs kept until their runs end or the
 * drain's deadline.
 */
#include "counted.h"
#include "alerts.h"
#include "gpu_pool.h"
#include "hash.h"
#include "run_cache.h"
#include "run_request.h"
#include "runs.h"
#include "store.h"
#include "store_queue.h"
#include "store_runs.h"
#include "test.h"
#include "test_store_tmp.h"
#include "timeutil.h"
#include "waiters.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#ifndef GB_FAKE_WORKER
#error "GB_FAKE_WORKER: the path of gpubench-fake-worker (tests/CMakeLists.txt)"
#endif

#define WAIT_MS 30000 /* a run takes under a second; slack for the sanitizers */
#define MAX_TOKENS 16
#define ABSENT_GPU 7 /* the pool runs GPU 0 only: a run queued here stays queued */

/* The tokens the waiters parked and resumed, in order. */
static struct tokens {
    pthread_mutex_t lock; /* guards what follows */
    pthread_cond_t cond;  /* signalled on every resume */
    void *parked[MAX_TOKENS];
    void *resumed[MAX_TOKENS];
    int n_parked, n_resumed;
} tok;

/* Three requests that wait; only their addresses matter. */
static char token_a, token_b, token_c;

static void park(void *token)
{
    pthread_mutex_lock(&tok.lock);
    if (tok.n_parked < MAX_TOKENS)
        tok.parked[tok.n_parked++] = token;
    pthread_mutex_unlock(&tok.lock);
}

static void resume(void *token)
{
    pthread_mutex_lock(&tok.lock);
    if (tok.n_resumed < MAX_TOKENS)
        tok.resumed[tok.n_resumed++] = token;
    pthread_cond_broadcast(&tok.cond);
    pthread_mutex_unlock(&tok.lock);
}

static int count_of(void *const *list, int n, const void *token)
{
    int k = 0;

    for (int i = 0; i < n; i++)
        k += list[i] == token;
    return k;
}

static int times_parked(const void *token)
{
    int k;

    pthread_mutex_lock(&tok.lock);
    k = count_of(tok.parked, tok.n_parked, token);
    pthread_mutex_unlock(&tok.lock);
    return k;
}

static int times_resumed(const void *token)
{
    int k;

    pthread_mutex_lock(&tok.lock);
    k = count_of(tok.resumed, tok.n_resumed, token);
    pthread_mutex_unlock(&tok.lock);
    return k;
}

/* Waits until token was resumed: 0, or -1 after WAIT_MS. */
static int wait_resumed(const void *token)
{
    struct timespec until = test_deadline(WAIT_MS);
    int rc = 0;

    pthread_mutex_lock(&tok.lock);
    while (count_of(tok.resumed, tok.n_resumed, token) == 0 && rc == 0)
        rc = pthread_cond_timedwait(&tok.cond, &tok.lock, &until);
    pthread_mutex_unlock(&tok.lock);
    return rc == 0 ? 0 : -1;
}

/* The layers as main.c builds them, in miniature. */
struct fixture {
    struct tmp_store t;
    struct runs runs;
    struct gpu_pool_config cfg;
};

static int fixture_start(struct fixture *f)
{
    memset(f, 0, sizeof(*f));
    memset(&tok, 0, sizeof(tok));
    pthread_mutex_init(&tok.lock, NULL);
    test_cond_init(&tok.cond);
    if (tmp_store_open(&f->t, "unit-runs") != 0)
        return -1;
    /* Read by the worker at its start; set before any thread starts. */
    setenv("GPUBENCH_FAKE_GPUS", "1", 1);
    setenv("GPUBENCH_FAKE_DELAY_MS", "300", 1); /* per row: a run takes 0.6 s */
    unsetenv("GPUBENCH_FAKE_CONTROL");
    signal(SIGPIPE, SIG_IGN); /* as gpubenchd: a dead worker's pipe is an error return */
    f->runs.store = f->t.s;
    f->runs.host = "unit-host";
    f->runs.max_queue = 100;
    f->runs.history_runs = 5;
    f->runs.cache = run_cache_new(1 << 20);
    f->runs.waiters = waiters_new(park, resume);
    f->runs.alerts = alerts_start(&(struct alerts_config){.store = f->t.s,
                                                          .confirm_runs = 2,
                                                          .max_queue = 100});
    if (f->runs.cache == NULL || f->runs.waiters == NULL || f->runs.alerts == NULL)
        return -1;
    f->cfg = (struct gpu_pool_config){.worker = GB_FAKE_WORKER,
                                      .worker_owner = "test_runs",
                                      .host = "unit-host",
                                      .shutdown_grace_s = 5,
                                      .store = f->t.s};
    if (runs_pool_hooks(&f->runs, &f->cfg.hooks) != 0)
        return -1;
    f->runs.gpus = gpu_pool_start(&f->cfg);
    return f->runs.gpus ? 0 : -1;
}

/* main.c's order: waits answered, runners stopped, then what they use. */
static void fixture_stop(struct fixture *f)
{
    if (f->runs.waiters)
        waiters_release_all(f->runs.waiters);
    gpu_pool_stop(f->runs.gpus);
    runs_pool_hooks_free(&f->runs);
    alerts_stop(f->runs.alerts);
    waiters_free(f->runs.waiters);
    tmp_store_close(&f->t);
    run_cache_free(f->runs.cache);
    pthread_cond_destroy(&tok.cond);
    pthread_mutex_destroy(&tok.lock);
}

/* Accepts one smem_stride run parsed from body; its id into id. */
static int accept_one(struct fixture *f, const char *body, char id[40], cJSON **accepted)
{
    struct run_request rr;
    struct gb_error gerr;
    struct run_set set;
    struct runs_error err;
    enum runs_rc rc;

    if (run_request_parse(body, strlen(body), 60, 1, &rr, &gerr) != 0) {
        fprintf(stderr, "run_request_parse: %s\n", gerr.message);
        run_request_free(&rr);
        return -1;
    }
    rc = runs_accept(&f->runs, &rr, &set, accepted, &err);
    run_request_free(&rr);
    if (rc != RUNS_OK || set.n != 1) {
        fprintf(stderr, "runs_accept: %d (%s), %d runs\n", (int)rc, err.message, set.n);
        return -1;
    }
    snprintf(id, 40, "%s", set.ids[0]);
    return 0;
}

static int is_status(const cJSON *run, const char *want)
{
    const char *status = cJSON_GetStringValue(cJSON_GetObjectItem(run, "status"));

    return status && strcmp(status, want) == 0;
}

static const char *status_of(struct fixture *f, const char *id, char status[16])
{
    return store_run_status(f->t.s, id, status) == STORE_OK ? status : "(unreadable)";
}

/* Accept, wait, end: a wait on the run parks token A; a second run
 * accepted behind it is stored queued and can be cancelled; a wait on a
 * run that never starts parks B; the first run's end resumes A alone,
 * once it is stored done with its verdicts; then a wait on it parks
 * nothing; the cancel of B's run resumes B. */
static int check_accept_wait(struct fixture *f)
{
    const char *body = "{\"benchmark\":\"smem_stride\",\"params\":{\"strides\":[1,2]}}";
    const char *absent = "{\"benchmark\":\"smem_stride\",\"device\":7}";
    char id[40], second[40], stuck[40], status[16];
    cJSON *accepted = NULL, *run = NULL;
    const cJSON *first;
    int ok;
    struct run_request rr;
    struct gb_error gerr;
    struct run_set set;
    struct runs_error err;
    int64_t deadline = time_mono_ms() + 10 * WAIT_MS; /* never reached in a test */

    /* The answer is read back right after the insert; the runner, woken
     * after it (or polling its queue, as it does every second), may have
     * taken the run by then (test_api.py allows both too). */
    ASSERT_EQ(accept_one(f, body, id, &accepted), 0);
    ASSERT_EQ(cJSON_GetArraySize(accepted), 1);
    first = cJSON_GetArrayItem(accepted, 0);
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(first, "id")), id);
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(first, "host")), "unit-host");
    ASSERT(is_status(first, "queued") || is_status(first, "running"));
    cJSON_Delete(accepted);

    /* Parked while it runs (the double takes 0.6 s), and resumed only
     * by its end. */
    ASSERT_EQ(runs_wait(&f->runs, id, &token_a, deadline), WAITERS_PARKED);
    ASSERT_EQ(times_parked(&token_a), 1);

    /* A second run, accepted while the first holds the GPU: queued, in
     * the answer and in the store; cancelled while it is. */
    ASSERT_EQ(accept_one(f, body, second, &accepted), 0);
    first = cJSON_GetArrayItem(accepted, 0);
    ok = is_status(first, "queued") &&
         cJSON_GetNumberValue(cJSON_GetObjectItem(first, "queue_position")) >= 1;
    cJSON_Delete(accepted);
    ASSERT(ok);
    ASSERT_STR_EQ(status_of(f, second, status), "queued");
    ASSERT_EQ(runs_cancel(&f->runs, second, status, &err), RUNS_OK);
    ASSERT_STR_EQ(status_of(f, second, status), "cancelled");

    ASSERT_EQ(tmp_store_queue(f->t.s, "smem_stride", "{}", ABSENT_GPU, TEST_FAKE_UUID(7), stuck),
              STORE_OK);
    ASSERT_EQ(runs_wait(&f->runs, stuck, &token_b, deadline), WAITERS_PARKED);
    ASSERT_EQ(times_resumed(&token_a), 0);

    ASSERT_EQ(wait_resumed(&token_a), 0);
    ASSERT_EQ(runs_finished(&f->runs, id), 1); /* its end was stored first */
    ASSERT_STR_EQ(status_of(f, id, status), "done");
    ASSERT_EQ(store_get_run(f->t.s, id, &run), STORE_OK);
    ASSERT(cJSON_IsObject(cJSON_GetObjectItem(run, "verdicts"))); /* run_judge ran */
    cJSON_Delete(run);
    ASSERT_EQ(times_resumed(&token_a), 1);
    ASSERT_EQ(times_resumed(&token_b), 0); /* another run's waiter */

    /* Ended: nothing to wait for. */
    ASSERT_EQ(runs_wait(&f->runs, id, &token_c, deadline), WAITERS_ENDED);
    ASSERT_EQ(times_parked(&token_c), 0);
    ASSERT_EQ(times_resumed(&token_c), 0);

    /* A queued run's cancel wakes its waiter. */
    ASSERT_EQ(runs_cancel(&f->runs, stuck, status, &err), RUNS_OK);
    ASSERT_EQ(times_resumed(&token_b), 1);
    ASSERT_STR_EQ(status_of(f, stuck, status), "cancelled");

    /* A device the pool does not have: refused, nothing stored. */
    ASSERT_EQ(run_request_parse(absent, strlen(absent), 60, 1, &rr, &gerr), 0);
    ASSERT_EQ(runs_accept(&f->runs, &rr, &set, NULL, &err), RUNS_NO_DEVICE);
    run_request_free(&rr);
    ASSERT_EQ(set.n, 0);
    ASSERT_STR_EQ(err.field, "device");
    return 0;
}

/* Cancel answers by state; a finished run's text is cached. */
static int check_cancel_and_text(struct fixture *f)
{
    const char *body = "{\"benchmark\":\"smem_stride\",\"params\":{\"strides\":[1,2]}}";
    char id[40], queued[40], status[16];
    const char *text = NULL, *again = NULL, *open_text = NULL;
    char *cached = NULL;
    void *hold = NULL, *again_hold = NULL, *open_hold = NULL;
    size_t len = 0, again_len = 0, cached_len = 0, open_len = 0;
    uint64_t tag = 0, again_tag = 0;
    struct runs_error err;
    int64_t deadline = time_mono_ms() + 10 * WAIT_MS; /* never reached in a test */
    int same;

    ASSERT_EQ(accept_one(f, body, id, NULL), 0);
    if (runs_wait(&f->runs, id, &token_a, deadline) == WAITERS_PARKED)
        ASSERT_EQ(wait_resumed(&token_a), 0);
    ASSERT_EQ(runs_finished(&f->runs, id), 1);

    memset(status, 0, sizeof(status));
    ASSERT_EQ(runs_cancel(&f->runs, id, status, &err), RUNS_NOT_QUEUED);
    ASSERT_STR_EQ(status, "done");
    ASSERT(strstr(err.message, "done") != NULL);
    ASSERT_EQ(runs_cancel(&f->runs, "01900000-0000-7000-8000-00000000dead", status, &err),
              RUNS_NOT_FOUND);
    ASSERT_STR_EQ(status_of(f, id, status), "done"); /* a refused cancel changes nothing */

    /* The first read puts the finished run's text in the cache (a copy
     * of its own, not held); the second is the cache's entry itself, held,
     * the same bytes. */
    ASSERT(run_cache_get(f->runs.cache, id, &cached_len, NULL) == NULL);
    ASSERT_EQ(runs_get_text(&f->runs, id, &text, &len, &tag, &hold, &err), RUNS_OK);
    ASSERT(hold == NULL);
    ASSERT(len > 2 && text[len - 1] == '\n' && strlen(text) == len);
    ASSERT(tag == hash_fnv1a64(text, len));
    ASSERT(strstr(text, "\"status\":\"done\"") != NULL);
    cached = run_cache_get(f->runs.cache, id, &cached_len, NULL);
    ASSERT_EQ(runs_get_text(&f->runs, id, &again, &again_len, &again_tag, &again_hold, &err),
              RUNS_OK);
    same = cached && cached_len == len && memcmp(cached, text, len) == 0 && again_len == len &&
           memcmp(again, text, len) == 0 && again_tag == tag && again_hold != NULL &&
           again != cached;
    free(cached);
    counted_release(again_hold);
    free((char *)text);
    ASSERT(same);

    /* A run that can still change is not kept. */
    ASSERT_EQ(tmp_store_queue(f->t.s, "smem_stride", "{}", ABSENT_GPU, TEST_FAKE_UUID(7), queued),
              STORE_OK);
    ASSERT_EQ(runs_get_text(&f->runs, queued, &open_text, &open_len, &tag, &open_hold, &err),
              RUNS_OK);
    same = strstr(open_text, "\"status\":\"queued\"") != NULL && open_hold == NULL;
    free((char *)open_text);
    ASSERT(same);
    ASSERT(run_cache_get(f->runs.cache, queued, &cached_len, NULL) == NULL);
    return 0;
}

/* Claims the next queued run of ABSENT_GPU, as a runner would (no runner
 * serves that GPU): it stays running until the test puts it back. */
static int claim_absent(struct fixture *f, const char *want)
{
    struct run_job job;
    int same;

    if (store_claim_next(f->t.s, ABSENT_GPU, &job) != STORE_OK)
        return -1;
    same = strcmp(job.id, want) == 0;
    store_job_clear(&job);
    return same ? 0 : -1;
}

/* Shutdown (runs_close_waits, waiters_drain): the wait on a queued run is
 * resumed at once and a new wait is refused; the waits on running runs
 * are kept, one until its run is put back and its waiters told (as the
 * pool does when the grace is over), the other until the drain's
 * deadline, which resumes it and counts it. */
static int check_close_waits(struct fixture *f)
{
    char queued[40], kept[40], stuck[40];
    int64_t deadline = time_mono_ms() + 10 * WAIT_MS; /* never reached in a test */
    const char *uuid = TEST_FAKE_UUID(7);

    ASSERT_EQ(tmp_store_queue(f->t.s, "smem_stride", "{}", ABSENT_GPU, uuid, kept), STORE_OK);
    ASSERT_EQ(claim_absent(f, kept), 0);
    ASSERT_EQ(tmp_store_queue(f->t.s, "smem_stride", "{}", ABSENT_GPU, uuid, stuck), STORE_OK);
    ASSERT_EQ(claim_absent(f, stuck), 0);
    ASSERT_EQ(tmp_store_queue(f->t.s, "smem_stride", "{}", ABSENT_GPU, uuid, queued), STORE_OK);
    ASSERT_EQ(runs_wait(&f->runs, queued, &token_a, deadline), WAITERS_PARKED);
    ASSERT_EQ(runs_wait(&f->runs, kept, &token_b, deadline), WAITERS_PARKED);
    ASSERT_EQ(runs_wait(&f->runs, stuck, &token_c, deadline), WAITERS_PARKED);

    runs_close_waits(&f->runs);
    ASSERT_EQ(times_resumed(&token_a), 1);
    ASSERT_EQ(times_resumed(&token_b) + times_resumed(&token_c), 0);
    ASSERT_EQ(runs_wait(&f->runs, queued, &token_a, deadline), WAITERS_CLOSING);
    ASSERT_EQ(times_parked(&token_a), 1); /* refused, not parked again */

    ASSERT_EQ(store_requeue_run(f->t.s, kept), STORE_OK);
    waiters_notify(f->runs.waiters, kept);
    ASSERT_EQ(times_resumed(&token_b), 1);
    ASSERT_EQ(times_resumed(&token_c), 0);
    ASSERT_EQ(waiters_drain(f->runs.waiters, time_mono_ms() + 200), 1);
    ASSERT_EQ(times_resumed(&token_c), 1);
    return 0;
}

/* Runs check on a fresh fixture and stops it whatever the check found. */
static int with_runs(int (*check)(struct fixture *))
{
    struct fixture f;
    int rc = 1;

    if (fixture_start(&f) == 0)
        rc = check(&f);
    fixture_stop(&f);
    return rc;
}

static int test_accept_wait(void)
{
    return with_runs(check_accept_wait);
}

static int test_cancel_and_text(void)
{
    return with_runs(check_cancel_and_text);
}

static int test_close_waits(void)
{
    return with_runs(check_close_waits);
}

TEST_MAIN({"accept, wait parks, the end resumes that token", test_accept_wait},
          {"cancel by state, finished runs cached", test_cancel_and_text},
          {"shutdown: queued waits answered, running ones kept, then drained",
           test_close_waits})
