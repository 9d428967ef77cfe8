/*
 * gpu_pool.c - see gpu_pool.h.
 *
 * The watch of an idle card is gpu_watch.c's; the structs both files read
 * are gpu_pool_internal.h's.
 *
 * Locking: each gpu's mutex guards its state fields and its condition
 * variable; the store has its own lock.  A runner never holds its gpu lock
 * while it talks to the worker or the store, so /devices answers at once.
 * The pool's stopping flag and deadline are C11 atomics, read by every
 * runner without a lock.
 */
#include "gpu_pool.h"
#include "gpu_pool_internal.h"
#include "gpu_hold.h"
#include "json_build.h"
#include "log.h"
#include "store.h"
#include "store_queue.h"
#include "timeutil.h"
#include "version.h"
#include "worker_msg.h"
#include "worker_proc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define READY_TIMEOUT_MS 120000
#define LIST_TIMEOUT_MS 60000
#define FATAL_EXIT_WAIT_MS 5000
#define PROGRESS_WRITE_MS 200
/* A runner whose previous run's end is not stored yet (the runs layer
 * keeps it: run_settle) looks again this often before it claims. */
#define PENDING_RETRY_MS 1000

static const char *const state_names[] = {"starting", "ready", "running",
                                          "restarting", "stopped"};

static void gpu_set_state(struct gpu *g, enum worker_state s, int pid,
                          const char *run_id)
{
    pthread_mutex_lock(&g->lock);
    g->state = s;
    g->pid = pid;
    snprintf(g->current_run, sizeof(g->current_run), "%s", run_id ? run_id : "");
    pthread_mutex_unlock(&g->lock);
}

static void gpu_note_failure(struct gpu *g, const char *what)
{
    pthread_mutex_lock(&g->lock);
    g->failures_in_row++;
    snprintf(g->last_error, sizeof(g->last_error), "%.250s", what);
    pthread_mutex_unlock(&g->lock);
}

/* Waits on the gpu's condition variable until woken or until_ms. */
static void gpu_sleep_until(struct gpu *g, int64_t until_ms)
{
    struct timespec ts;

    ts.tv_sec = (time_t)(until_ms / 1000);
    ts.tv_nsec = (long)(until_ms % 1000) * 1000000L;
    pthread_mutex_lock(&g->lock);
    while (!g->wake && !atomic_load(&g->pool->stopping) && time_mono_ms() < until_ms)
        pthread_cond_timedwait(&g->cond, &g->lock, &ts);
    g->wake = 0;
    pthread_mutex_unlock(&g->lock);
}

/* Starts a worker and waits for its ready line.  0 when it is ready. */
static int start_worker(struct gpu *g, struct worker_proc *w)
{
    char dev[16], err[256], how[96];
    const char *args[] = {"--serve", "--device", dev, NULL};
    char *line = NULL;
    cJSON *ready = NULL;
    int rc = -1;
    enum worker_read r;

    snprintf(dev, sizeof(dev), "%d", g->index);
    gpu_set_state(g, WS_STARTING, 0, NULL);
    if (worker_spawn(w, g->pool->cfg.worker, args, g->pool->cfg.worker_owner,
                     err, sizeof(err)) != 0) {
        gpu_note_failure(g, err);
        goto done;
    }
    gpu_set_state(g, WS_STARTING, w->pid, NULL);
    r = worker_read_line(w, time_mono_ms() + READY_TIMEOUT_MS, &line);
    if (r != WORKER_LINE) {
        worker_stop(w, 1000, how, sizeof(how));
        snprintf(err, sizeof(err), "the worker for GPU %d never said ready (%s)",
                 g->index, r == WORKER_TIMEOUT ? "timed out" : how);
        gpu_note_failure(g, err);
        goto done;
    }
    ready = cJSON_Parse(line);
    if (!cJSON_IsObject(ready) ||
        !cJSON_IsString(cJSON_GetObjectItem(ready, "event")) ||
        strcmp(cJSON_GetObjectItem(ready, "event")->valuestring, "ready") != 0) {
        const cJSON *msg = cJSON_GetObjectItem(ready, "message");
        snprintf(err, sizeof(err), "the worker for GPU %d did not start: %.180s",
                 g->index, cJSON_IsString(msg) ? msg->valuestring : line);
        worker_stop(w, 1000, how, sizeof(how));
        gpu_note_failure(g, err);
        goto done;
    }
    pthread_mutex_lock(&g->lock);
    if (cJSON_IsObject(cJSON_GetObjectItem(ready, "device"))) {
        cJSON_Delete(g->info);
        g->info = cJSON_DetachItemFromObject(ready, "device");
    }
    g->failures_in_row = 0;
    g->state = WS_READY;
    g->probe_unsupported = 0;
    pthread_mutex_unlock(&g->lock);
    g->next_watch_ms = 0;
    log_info("gpu %d: worker %d ready", g->index, (int)w->pid);
    rc = 0;

done:
    free(line);
    cJSON_Delete(ready);
    return rc;
}

/* The worker's meta (taken; NULL: none) with what the server knows
 * added: the host and the daemon's own version.  The same object, or NULL
 * when memory ran out (meta is then deleted). */
static cJSON *meta_with_host(struct gpu *g, cJSON *meta)
{
    struct json_build b = {0};
    cJSON *m = meta ? meta : jb_new_object(&b);
    cJSON *server;

    if (m == NULL)
        return NULL;
    cJSON_DeleteItemFromObjectCaseSensitive(m, "host");
    cJSON_DeleteItemFromObjectCaseSensitive(m, "server");
    jb_string(&b, m, "host", g->pool->cfg.host);
    server = jb_object(&b, m, "server");
    jb_string(&b, server, "gpubench_version", GPUBENCH_VERSION);
    jb_string(&b, server, "git_commit", GPUBENCH_GIT_COMMIT);
    if (jb_failed(&b)) {
        cJSON_Delete(m);
        return NULL;
    }
    return m;
}

/* Hands how a job ended to the runs layer (run_end hook), which judges
 * and stores it, or keeps it to store once the database takes writes
 * again (run_settle).  results and meta are taken (NULL: none). */
static void end_run(struct gpu *g, const char *id, const char *status, cJSON *results,
                    cJSON *meta, const char *code, const char *message)
{
    const struct gpu_pool_hooks *h = &g->pool->cfg.hooks;
    struct gpu_run_end end = {.id = id,
                              .status = status,
                              .results = results,
                              .meta = meta,
                              .code = code,
                              .message = message};

    if (h->run_end)
        h->run_end(h->ctx, g->index, &end);
    else {
        cJSON_Delete(results);
        cJSON_Delete(meta);
    }
}

/* 0 when no earlier run's end waits to be stored (the runner may claim
 * the next run), -1 when one does: no other run starts while one is shown
 * running that is not. */
static int settle(struct gpu *g, int stopping)
{
    const struct gpu_pool_hooks *h = &g->pool->cfg.hooks;

    return h->run_settle ? h->run_settle(h->ctx, g->index, stopping) : 0;
}

enum line_outcome {
    LINE_CONTINUE,
    LINE_FINISHED,
    LINE_FATAL,
};

/* Acts on one answer line for job.  Lines for another id, or not
 * protocol messages, are logged and skipped: only this run's own result
 * can end it. */
static enum line_outcome handle_line(struct gpu *g, const struct run_job *job,
                                     const char *line)
{
    struct store *store = g->pool->cfg.store;
    struct worker_msg m;
    enum line_outcome out = LINE_CONTINUE;
    cJSON *results, *meta;

    worker_msg_parse(line, strlen(line), job->id, &m);
    switch (m.event) {
    case WM_IGNORED:
        log_warn("gpu %d: ignoring %s: %.120s", g->index, m.why, line);
        break;
    case WM_PROGRESS:
        /* The worker may report every sample; the store is written at
         * most every PROGRESS_WRITE_MS (each write is a synced commit),
         * except the last sample and a message appearing or going (the
         * wait for a quiet card begins or ends: the run must not show a
         * wait while it measures).  Waiting lines (0 of 0) are throttled
         * like samples. */
        if ((m.total > 0 && m.done >= m.total) ||
            (m.message != NULL) != g->progress_message_shown ||
            time_mono_ms() - g->progress_written_ms >= PROGRESS_WRITE_MS) {
            /* Progress is only shown: a refused write (logged by the
             * store) is not retried, the next report replaces it. */
            if (store_set_progress(store, job->id, (long)m.done, (long)m.total, m.message) ==
                STORE_CONFLICT)
                log_warn("gpu %d: progress for run %s, which is not running",
                         g->index, job->id);
            g->progress_written_ms = time_mono_ms();
            g->progress_message_shown = m.message != NULL;
        }
        break;
    case WM_RESULT:
        /* The worker's line was parsed once (worker_msg_parse): its result
         * tree is handed on as it is, never printed and parsed again. */
        out = LINE_FINISHED;
        results = cJSON_DetachItemViaPointer(m.root, (cJSON *)m.result);
        meta = meta_with_host(g, m.meta ? cJSON_DetachItemViaPointer(m.root, (cJSON *)m.meta)
                                        : NULL);
        if (meta == NULL) {
            cJSON_Delete(results);
            end_run(g, job->id, "failed", NULL, NULL, "internal",
                    "the daemon ran out of memory storing the result");
        } else {
            end_run(g, job->id, "done", results, meta, NULL, NULL);
        }
        break;
    case WM_BAD_RESULT:
    case WM_ERROR:
        end_run(g, job->id, "failed", NULL, NULL, m.code, m.message);
        out = m.fatal ? LINE_FATAL : LINE_FINISHED;
        break;
    }
    worker_msg_free(&m);
    return out;
}

/* The job's line for the worker, or NULL with why (a sentence in why):
 * params that no longer parse fail the run, never a job sent without
 * them, so that the worker cannot measure something else than the run
 * says. */
static char *job_line(const struct run_job *job, char *why, size_t cap)
{
    struct json_build b = {0};
    cJSON *j = jb_new_object(&b), *params = cJSON_Parse(job->params_json);
    char *text = NULL;

    if (params == NULL) {
        snprintf(why, cap, "the run's stored params do not parse as JSON; it was not started");
        cJSON_Delete(j);
        return NULL;
    }
    jb_string(&b, j, "id", job->id);
    jb_string(&b, j, "benchmark", job->benchmark);
    jb_item(&b, j, "params", params);
    if (!jb_failed(&b))
        text = cJSON_PrintUnformatted(j);
    if (text == NULL)
        snprintf(why, cap, "the daemon ran out of memory sending the run to its worker");
    cJSON_Delete(j);
    return text;
}

/* Runs one job on a ready worker.  Returns 0 when the worker can take the
 * next run, -1 when it must be replaced. */
static int execute(struct gpu *g, struct worker_proc *w, const struct run_job *job)
{
    struct store *store = g->pool->cfg.store;
    int64_t deadline = time_mono_ms() + (int64_t)job->timeout_s * 1000;
    char how[96], msg[320];
    char *text = job_line(job, msg, sizeof(msg));
    int rc = -1;

    gpu_set_state(g, WS_RUNNING, w->pid, job->id);
    log_info("gpu %d: run %s (%s) started", g->index, job->id, job->benchmark);
    if (text == NULL) {
        /* The worker is fine: only this run cannot be sent. */
        log_error("gpu %d: run %s failed: %s", g->index, job->id, msg);
        end_run(g, job->id, "failed", NULL, NULL, "internal", msg);
        rc = 0;
        goto done;
    }
    if (worker_write_line(w, text) != 0) {
        worker_stop(w, 1000, how, sizeof(how));
        snprintf(msg, sizeof(msg), "the worker could not be sent the run (it %s)", how);
        end_run(g, job->id, "failed", NULL, NULL, "worker_died", msg);
        gpu_note_failure(g, msg);
        goto done;
    }
    for (;;) {
        char *line = NULL;
        int64_t now = time_mono_ms();
        /* Read in short slices so that a shutdown is noticed promptly. */
        int64_t until = now + 250 < deadline ? now + 250 : deadline;
        enum worker_read r;
        enum line_outcome o;

        r = worker_read_line(w, until, &line);
        if (r == WORKER_TIMEOUT && time_mono_ms() < deadline &&
            !(atomic_load(&g->pool->stopping) &&
              time_mono_ms() >= atomic_load(&g->pool->stop_deadline_ms)))
            continue;
        if (r == WORKER_LINE) {
            o = handle_line(g, job, line);
            free(line);
            if (o == LINE_CONTINUE)
                continue;
            if (o == LINE_FATAL) {
                worker_stop(w, FATAL_EXIT_WAIT_MS, how, sizeof(how));
                snprintf(msg, sizeof(msg), "run %s hit a CUDA error; the worker %s",
                         job->id, how);
                gpu_note_failure(g, msg);
                goto done;
            }
            pthread_mutex_lock(&g->lock);
            g->runs_done++;
            pthread_mutex_unlock(&g->lock);
            rc = 0;
            goto done;
        }
        if (r == WORKER_TIMEOUT && time_mono_ms() < deadline) {
            /* The daemon is stopping and the grace is over: the run goes
             * back into its queue, to run again after the restart. */
            worker_stop(w, 0, how, sizeof(how));
            if (store_requeue_run(store, job->id) == STORE_OK)
                log_warn("gpu %d: run %s put back in the queue at shutdown",
                         g->index, job->id);
            else
                log_error("gpu %d: run %s could not be put back in the queue; "
                          "the next start marks it failed (interrupted)",
                          g->index, job->id);
            goto done;
        }
        if (r == WORKER_TIMEOUT) {
            worker_stop(w, 0, how, sizeof(how));
            snprintf(msg, sizeof(msg),
                     "the run passed its deadline of %d s; its worker was killed",
                     job->timeout_s);
            end_run(g, job->id, "failed", NULL, NULL, "timeout", msg);
        } else {
            worker_stop(w, 1000, how, sizeof(how));
            snprintf(msg, sizeof(msg), "the worker %s while running this run%s",
                     how, r == WORKER_ERROR ? " (or sent a line over the cap)" : "");
            end_run(g, job->id, "failed", NULL, NULL, "worker_died", msg);
        }
        log_warn("gpu %d: run %s failed: %s", g->index, job->id, msg);
        gpu_note_failure(g, msg);
        goto done;
    }

done:
    free(text);
    if (rc == 0)
        log_info("gpu %d: run %s ended", g->index, job->id);
    gpu_set_state(g, rc == 0 ? WS_READY : WS_RESTARTING, w->pid, NULL);
    if (g->pool->cfg.hooks.run_ended)
        g->pool->cfg.hooks.run_ended(g->pool->cfg.hooks.ctx, job->id);
    return rc;
}

static int64_t backoff_ms(int failures)
{
    int64_t ms = 500;

    for (int i = 1; i < failures && ms < 60000; i++)
        ms *= 2;
    return ms < 60000 ? ms : 60000;
}

static void *runner_main(void *arg)
{
    struct gpu *g = arg;
    struct gpu_pool *p = g->pool;
    struct worker_proc w;
    char how[96];

    worker_init(&w);
    while (!atomic_load(&p->stopping)) {
        struct run_job job;
        int rc, waiting;

        if (w.pid > 0 && !worker_alive(&w)) {
            worker_stop(&w, 0, how, sizeof(how));
            log_warn("gpu %d: idle worker %s; starting another", g->index, how);
        }
        if (w.pid <= 0) {
            if (time_mono_ms() < g->next_start_ms) {
                gpu_sleep_until(g, g->next_start_ms);
                continue;
            }
            if (start_worker(g, &w) != 0) {
                pthread_mutex_lock(&g->lock);
                g->state = WS_RESTARTING;
                g->restarts++;
                g->next_start_ms = time_mono_ms() + backoff_ms(g->failures_in_row);
                log_error("gpu %d: %s; next try in %lld ms", g->index,
                          g->last_error, (long long)(g->next_start_ms - time_mono_ms()));
                pthread_mutex_unlock(&g->lock);
                continue;
            }
        }
        /* A run whose end the store refused is failed first: no other
         * run starts while one is shown running that is not. */
        if (settle(g, 0) != 0) {
            gpu_sleep_until(g, time_mono_ms() + PENDING_RETRY_MS);
            continue;
        }
        rc = gpu_hold_claim(p->hold, (int)(g - p->gpus), g->index, p->cfg.store, &job,
                            &waiting);
        if (rc == STORE_NOT_FOUND) {
            if (!waiting)
                gpu_watch_if_due(g, &w);
            gpu_sleep_until(g, time_mono_ms() + (waiting ? 250 : 1000));
            continue;
        }
        if (rc != STORE_OK) {
            gpu_sleep_until(g, time_mono_ms() + 1000);
            continue;
        }
        g->progress_message_shown = 0;
        if (execute(g, &w, &job) != 0 && !atomic_load(&p->stopping)) {
            pthread_mutex_lock(&g->lock);
            g->restarts++;
            g->next_start_ms = time_mono_ms() + backoff_ms(g->failures_in_row);
            pthread_mutex_unlock(&g->lock);
        }
        store_job_clear(&job);
        if (gpu_hold_release(p->hold, (int)(g - p->gpus)))
            for (int i = 0; i < p->count; i++)
                if (&p->gpus[i] != g)
                    gpu_pool_wake(p, p->gpus[i].index);
    }
    (void)settle(g, 1); /* at stop: a last try, which logs what is left */
    worker_stop(&w, 2000, how, sizeof(how));
    dynbuf_free(&w.in);
    gpu_set_state(g, WS_STOPPED, 0, NULL);
    return NULL;
}

/* Fills the pool's GPUs from the worker's --list answer. */
static int discover(struct gpu_pool *p)
{
    char err[512];
    cJSON *list = worker_list(p->cfg.worker, p->cfg.worker_owner, LIST_TIMEOUT_MS,
                              err, sizeof(err));
    const cJSON *devices, *dev;
    int n, i = 0;

    if (list == NULL) {
        snprintf(p->reason, sizeof(p->reason), "no GPU worker: %.480s", err);
        return 0;
    }
    devices = cJSON_GetObjectItem(list, "devices");
    n = cJSON_IsArray(devices) ? cJSON_GetArraySize(devices) : 0;
    if (n == 0) {
        const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(list, "reason"));
        snprintf(p->reason, sizeof(p->reason), "%s",
                 why ? why : "the worker found no GPU and gave no reason");
        cJSON_Delete(list);
        return 0;
    }
    p->gpus = calloc((size_t)n, sizeof(*p->gpus));
    if (p->gpus == NULL) {
        cJSON_Delete(list);
        return -1;
    }
    cJSON_ArrayForEach(dev, devices) {
        struct gpu *g = &p->gpus[i];
        const cJSON *index = cJSON_GetObjectItem(dev, "index");
        const char *uuid = cJSON_GetStringValue(cJSON_GetObjectItem(dev, "uuid"));
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(dev, "name"));

        g->pool = p;
        g->index = cJSON_IsNumber(index) ? index->valueint : i;
        snprintf(g->uuid, sizeof(g->uuid), "%s", uuid ? uuid : "");
        snprintf(g->name, sizeof(g->name), "%s", name ? name : "unknown GPU");
        g->info = cJSON_Duplicate(dev, 1);
        g->quiet = -1;
        snprintf(g->watch_why, sizeof(g->watch_why), "no watch reading yet");
        pthread_mutex_init(&g->lock, NULL);
        {
            pthread_condattr_t attr;
            pthread_condattr_init(&attr);
            pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
            pthread_cond_init(&g->cond, &attr);
            pthread_condattr_destroy(&attr);
        }
        i++;
    }
    p->count = n;
    cJSON_Delete(list);
    return 0;
}

struct gpu_pool *gpu_pool_start(const struct gpu_pool_config *cfg)
{
    struct gpu_pool *p = calloc(1, sizeof(*p));

    if (p == NULL)
        return NULL;
    p->cfg = *cfg;
    if (discover(p) != 0) {
        free(p);
        return NULL;
    }
    p->hold = gpu_hold_new(p->count);
    if (p->hold == NULL) {
        free(p->gpus);
        free(p);
        return NULL;
    }
    if (p->count == 0)
        log_warn("no GPU on this node: %s; runs will be refused", p->reason);
    for (int i = 0; i < p->count; i++) {
        struct gpu *g = &p->gpus[i];
        log_info("gpu %d: %s %s", g->index, g->name, g->uuid);
        if (pthread_create(&g->thread, NULL, runner_main, g) == 0)
            g->thread_started = 1;
        else
            log_error("gpu %d: cannot start its runner thread", g->index);
    }
    return p;
}

/* The hold is closed under its lock (gpu_hold.h): once this returns no
 * claim succeeds, however late a runner reads the stopping flag. */
void gpu_pool_stop_starting(struct gpu_pool *p)
{
    if (p == NULL || atomic_load(&p->stopping))
        return;
    atomic_store(&p->stop_deadline_ms,
                 time_mono_ms() + (int64_t)p->cfg.shutdown_grace_s * 1000);
    gpu_hold_close(p->hold);
    atomic_store(&p->stopping, 1);
    for (int i = 0; i < p->count; i++)
        gpu_pool_wake(p, p->gpus[i].index);
}

void gpu_pool_stop(struct gpu_pool *p)
{
    if (p == NULL)
        return;
    gpu_pool_stop_starting(p);
    for (int i = 0; i < p->count; i++) {
        struct gpu *g = &p->gpus[i];
        if (g->thread_started)
            pthread_join(g->thread, NULL);
        cJSON_Delete(g->info);
        cJSON_Delete(g->reading);
        pthread_cond_destroy(&g->cond);
        pthread_mutex_destroy(&g->lock);
    }
    gpu_hold_free(p->hold);
    free(p->gpus);
    free(p);
}

int gpu_pool_count(const struct gpu_pool *p)
{
    return p->count;
}

const char *gpu_pool_reason(const struct gpu_pool *p)
{
    return p->reason;
}

struct gpu *gpu_pool_find(struct gpu_pool *p, int index)
{
    for (int i = 0; i < p->count; i++)
        if (p->gpus[i].index == index)
            return &p->gpus[i];
    return NULL;
}

void gpu_pool_wake(struct gpu_pool *p, int index)
{
    struct gpu *g = gpu_pool_find(p, index);

    if (g == NULL)
        return;
    pthread_mutex_lock(&g->lock);
    g->wake = 1;
    pthread_cond_signal(&g->cond);
    pthread_mutex_unlock(&g->lock);
}

static void list_gpus(struct gpu_pool *p, char *buf, size_t cap)
{
    size_t used = 0;

    buf[0] = '\0';
    for (int i = 0; i < p->count && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%d (%s)",
                                 i ? ", " : "", p->gpus[i].index, p->gpus[i].name);
}

/* 0 when g can take runs, else -1 with 503 and the reason. */
static int check_healthy(struct gpu *g, enum gpu_lookup *why, char *err, size_t cap)
{
    int rc = 0;

    pthread_mutex_lock(&g->lock);
    if (g->failures_in_row >= GPU_UNHEALTHY_AFTER) {
        snprintf(err, cap, "GPU %d is unhealthy: %d worker failures in a row, "
                           "the last: %s",
                 g->index, g->failures_in_row, g->last_error);
        *why = GPU_UNHEALTHY;
        rc = -1;
    }
    pthread_mutex_unlock(&g->lock);
    return rc;
}

static int add_ref(struct gpu *g, struct gpu_ref *refs, int n, int cap)
{
    if (n >= cap)
        return n;
    refs[n].index = g->index;
    refs[n].uuid = g->uuid;
    refs[n].name = g->name;
    pthread_mutex_lock(&g->lock);
    refs[n].memory_bytes = 0;
    if (cJSON_IsNumber(cJSON_GetObjectItem(g->info, "memory_bytes")))
        refs[n].memory_bytes = cJSON_GetObjectItem(g->info, "memory_bytes")->valuedouble;
    pthread_mutex_unlock(&g->lock);
    return n + 1;
}

int gpu_pool_resolve(struct gpu_pool *p, const cJSON *device,
                     struct gpu_ref *refs, int cap, enum gpu_lookup *why,
                     char *err, size_t err_cap)
{
    char names[256];
    struct gpu *g = NULL;
    int n = 0;

    *why = GPU_NOT_FOUND;
    if (p->count == 0) {
        snprintf(err, err_cap, "this node has no GPU to run on: %.400s", p->reason);
        return -1;
    }
    list_gpus(p, names, sizeof(names));
    if (device == NULL || cJSON_IsNull(device)) {
        g = &p->gpus[0];
    } else if (cJSON_IsNumber(device)) {
        if (device->valuedouble != (double)device->valueint || device->valueint < 0) {
            *why = GPU_MALFORMED;
            snprintf(err, err_cap, "device must be a GPU index (0, 1, ...), a "
                                   "GPU UUID or \"all\"");
            return -1;
        }
        g = gpu_pool_find(p, device->valueint);
    } else if (cJSON_IsString(device) && strcmp(device->valuestring, "all") == 0) {
        for (int i = 0; i < p->count; i++) {
            if (check_healthy(&p->gpus[i], why, err, err_cap) != 0)
                return -1;
            n = add_ref(&p->gpus[i], refs, n, cap);
        }
        return n;
    } else if (cJSON_IsString(device)) {
        for (int i = 0; i < p->count && g == NULL; i++)
            if (strcmp(p->gpus[i].uuid, device->valuestring) == 0)
                g = &p->gpus[i];
    } else {
        *why = GPU_MALFORMED;
        snprintf(err, err_cap, "device must be a GPU index (0, 1, ...), a "
                               "GPU UUID or \"all\"");
        return -1;
    }
    if (g == NULL) {
        snprintf(err, err_cap, "no such GPU on this node; it has: %s", names);
        return -1;
    }
    if (check_healthy(g, why, err, err_cap) != 0)
        return -1;
    return add_ref(g, refs, 0, cap);
}

int gpu_pool_stats(struct gpu_pool *p, struct gpu_stat *stats, int cap)
{
    int n = 0;

    for (int i = 0; i < p->count && n < cap; i++, n++) {
        struct gpu *g = &p->gpus[i];
        pthread_mutex_lock(&g->lock);
        stats[n].index = g->index;
        stats[n].uuid = g->uuid;
        stats[n].name = g->name;
        stats[n].restarts = g->restarts;
        stats[n].runs_done = g->runs_done;
        stats[n].healthy = g->failures_in_row < GPU_UNHEALTHY_AFTER;
        stats[n].state = state_names[g->state];
        pthread_mutex_unlock(&g->lock);
    }
    return n;
}

cJSON *gpu_pool_describe(struct gpu_pool *p)
{
    struct json_build b = {0};
    cJSON *root = jb_new_object(&b);
    cJSON *list = jb_array(&b, root, "devices");

    for (int i = 0; i < p->count; i++) {
        struct gpu *g = &p->gpus[i];
        cJSON *d, *worker;
        long depth = 0;

        store_queue_depth(p->cfg.store, g->index, &depth);
        pthread_mutex_lock(&g->lock);
        d = g->info ? cJSON_Duplicate(g->info, 1) : cJSON_CreateObject();
        if (d)
            cJSON_DeleteItemFromObject(d, "index");
        jb_push(&b, list, d); /* owned by the list now, or deleted */
        jb_number(&b, d, "index", g->index);
        jb_number(&b, d, "queue_depth", (double)depth);
        worker = jb_object(&b, d, "worker");
        jb_string(&b, worker, "state", state_names[g->state]);
        jb_bool(&b, worker, "healthy", g->failures_in_row < GPU_UNHEALTHY_AFTER);
        if (g->pid > 0)
            jb_number(&b, worker, "pid", g->pid);
        else
            jb_null(&b, worker, "pid");
        jb_number(&b, worker, "restarts", (double)g->restarts);
        jb_number(&b, worker, "failures_in_row", g->failures_in_row);
        jb_number(&b, worker, "runs_done", (double)g->runs_done);
        jb_string(&b, worker, "last_error", g->last_error[0] ? g->last_error : NULL);
        jb_string(&b, d, "current_run", g->current_run[0] ? g->current_run : NULL);
        gpu_watch_describe(&b, d, g);
        pthread_mutex_unlock(&g->lock);
    }
    jb_string(&b, root, "reason", p->count == 0 ? p->reason : NULL);
    jb_string(&b, root, "host", p->cfg.host);
    if (jb_failed(&b)) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}
