/*
 * gpu_pool.h - this node's GPUs, each with its queue runner and worker.
 *
 * At start the pool asks `WORKER --list` which GPUs there are (the server
 * never initialises CUDA itself).  Each GPU then gets one runner thread,
 * after Redis's bio.c: a mutex, a condition variable and a loop that takes
 * the oldest queued run of its GPU from the store, hands it to its worker
 * process, follows the worker's progress and stores the result.  So runs
 * on one GPU never overlap, and GPUs work in parallel.
 *
 * A worker that dies, answers garbage or passes the run's deadline fails
 * that run with the reason and is replaced by a fresh one, after a back-off
 * that grows with failures in a row; past GPU_UNHEALTHY_AFTER such failures
 * the GPU is unhealthy and new runs for it are refused until a worker comes
 * up ready again.
 *
 * The watch: while a runner has nothing to run it writes the
 * probe {"watch":true} to its worker every watch_interval_s and reads one
 * {"event":"watch","reading":{...}} within GPU_WATCH_ANSWER_MS.  The pool
 * keeps each GPU's latest reading and since when the card has been quiet;
 * the card_reading hook hands every reading up.  A worker that does not
 * answer is noted, never killed for it (it still runs jobs); one from
 * before the probe (an error line answers it) is not probed again.
 */
#ifndef GPUBENCH_EXEC_GPU_POOL_H
#define GPUBENCH_EXEC_GPU_POOL_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

struct store;

#define GPU_UNHEALTHY_AFTER 5
#define GPU_WATCH_ANSWER_MS 10000
/* Quiet: no process on the card and utilisation under this (the rule of
 * worker/quiet.h, GB_QUIET_UTIL_PERCENT). */
#define GPU_QUIET_UTIL_PERCENT 5

struct gpu_pool;

/* A GPU chosen for a run.  Strings point into the pool; valid while it
 * lives. */
struct gpu_ref {
    int index;
    const char *uuid;
    const char *name;
    double memory_bytes; /* 0 when the worker did not say */
};

/* How a job ended, as the runner saw it: a worker's result (status
 * "done", results and meta its trees, meta with the host added) or a
 * failure (status "failed", code and message).  The pool neither judges
 * nor stores it: the run_end hook does. */
struct gpu_run_end {
    const char *id;
    const char *status;
    cJSON *results; /* owned by the hook once called; NULL for a failure */
    cJSON *meta;
    const char *code;
    const char *message;
};

/* What the pool asks of the layer above it (runs/), so that the pool
 * keeps only its loop: it neither judges runs, stores their ends nor
 * knows who waits for them.  Each is called on the GPU's runner thread;
 * ctx is the hooks' own.
 *   run_end     a run on GPU index ended: the hook judges and stores it
 *               (retrying a refused write for a while), or keeps its end
 *               to store later; it takes end->results and end->meta
 *   run_settle  before the runner of GPU index claims another run: 0 when
 *               no end of an earlier run still waits to be stored (it may
 *               claim), -1 when one does (it waits and asks again);
 *               stopping 1 at the pool's stop, a last try that says what
 *               is left
 *   run_ended   the runner is done with the run (its end stored or kept):
 *               wake whoever waits for it
 *   card_reading  a watch reading (see the top of this file)
 * A NULL hook is skipped. */
struct gpu_pool_hooks {
    void *ctx;
    void (*run_end)(void *ctx, int index, struct gpu_run_end *end);
    int (*run_settle)(void *ctx, int index, int stopping);
    void (*run_ended)(void *ctx, const char *id);
    /* A watch reading of GPU index (uuid, name) taken while it was idle:
     * the worker's reading object, borrowed for the call. */
    void (*card_reading)(void *ctx, int index, const char *uuid, const char *name,
                         const cJSON *reading);
};

/* What the pool is started with; strings and the store must outlive it. */
struct gpu_pool_config {
    const char *worker;       /* the worker binary */
    const char *worker_owner; /* the tag its processes carry (worker_proc.h) */
    const char *host;         /* this node's name, added to each run's meta */
    int shutdown_grace_s;     /* how long a running run may finish at stop */
    int watch_interval_s;     /* between watch probes of an idle GPU; 0: none */
    struct store *store;
    struct gpu_pool_hooks hooks;
};

/* Discovers the GPUs and starts a runner for each (cfg is copied).  Never
 * fails for want of GPUs (the pool is then empty and says why); NULL only
 * when out of memory. */
struct gpu_pool *gpu_pool_start(const struct gpu_pool_config *cfg);

/* Shutdown, first step, at the signal: from its return on no run starts
 * on any GPU (one queued since, a confirming run included, waits for the
 * next start), and a running run has shutdown_grace_s from now to end,
 * else it is put back in the queue.  Returns at once.  Called from one
 * thread (main's); a second call does nothing; NULL p: nothing. */
void gpu_pool_stop_starting(struct gpu_pool *p);

/* Stops taking runs (gpu_pool_stop_starting, unless done), lets a running
 * one finish within the shutdown grace (else puts it back in the queue),
 * stops the workers, frees all.  NULL p: nothing. */
void gpu_pool_stop(struct gpu_pool *p);

int gpu_pool_count(const struct gpu_pool *p);

/* Why the pool is empty ("" when it is not). */
const char *gpu_pool_reason(const struct gpu_pool *p);

/* Why a device could not be resolved. */
enum gpu_lookup {
    GPU_MALFORMED, /* not an index, a UUID or "all" */
    GPU_NOT_FOUND, /* no such GPU here (or none at all) */
    GPU_UNHEALTHY, /* its worker failed too often in a row */
};

/* Resolves a request's "device" (an index, a UUID, or "all"; NULL means
 * 0) into refs (room for cap).  Returns how many, or -1 with *why and a
 * sentence in err. */
int gpu_pool_resolve(struct gpu_pool *p, const cJSON *device,
                     struct gpu_ref *refs, int cap, enum gpu_lookup *why,
                     char *err, size_t err_cap);

/* Tells the runner of GPU index that its queue has work. */
void gpu_pool_wake(struct gpu_pool *p, int index);

/* Per GPU, for /metrics: index, uuid, name, restarts, healthy, state
 * name.  Fills at most cap entries; returns how many.  Strings point into
 * the pool. */
struct gpu_stat {
    int index;
    const char *uuid;
    const char *name;
    long restarts;
    long runs_done;
    int healthy;
    const char *state;
};
int gpu_pool_stats(struct gpu_pool *p, struct gpu_stat *stats, int cap);

/* Whether GPU index has been quiet (no process, utilisation under
 * GPU_QUIET_UTIL_PERCENT) by its latest watch reading: 1 quiet since
 * *since_unix_ms (the first quiet reading in a row); 0 busy, with why
 * ("pid 4242 python3 on the card"); -1 nothing known (no reading yet, no
 * such GPU, a card NVML cannot read, a worker without the probe), with
 * why. */
int gpu_pool_quiet_since(struct gpu_pool *p, int index, int64_t *since_unix_ms, char *why,
                         size_t cap);

/* {"devices": [...], "reason": ...} for GET /devices: NEW, the caller's;
 * NULL when memory ran out (never a list with fields missing). */
cJSON *gpu_pool_describe(struct gpu_pool *p);

#endif
