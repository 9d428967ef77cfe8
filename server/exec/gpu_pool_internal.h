/*
 * gpu_pool_internal.h - the pool's structs, shared by gpu_pool.c (the
 * runners) and gpu_watch.c (the watch of an idle card).  Locking is
 * gpu_pool.c's (see its top).
 */
#ifndef GPUBENCH_EXEC_GPU_POOL_INTERNAL_H
#define GPUBENCH_EXEC_GPU_POOL_INTERNAL_H

#include "gpu_pool.h"
#include "worker_proc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <cjson/cJSON.h>

struct json_build;

enum worker_state {
    WS_STARTING,
    WS_READY,
    WS_RUNNING,
    WS_RESTARTING,
    WS_STOPPED,
};

struct gpu {
    struct gpu_pool *pool;
    int index;
    char uuid[96];
    char name[128];
    cJSON *info; /* the --list entry, then the ready line's */
    pthread_t thread;
    int thread_started;

    pthread_mutex_t lock; /* guards what follows */
    pthread_cond_t cond;
    int wake;
    enum worker_state state;
    int pid;
    char current_run[40];
    int failures_in_row;
    long restarts;
    long runs_done;
    char last_error[256];
    int64_t next_start_ms;       /* back-off: no start before this */
    int64_t progress_written_ms; /* runner thread only */
    int progress_message_shown;  /* runner thread only: the stored progress
                                    of the current run holds a message */
    /* The watch (gpu_pool.h); guarded by lock but for next_watch_ms. */
    cJSON *reading;         /* the latest, or NULL */
    int quiet;              /* 1 quiet, 0 busy, -1 unknown */
    int64_t quiet_since_ms; /* unix ms of the first quiet reading in a row */
    char watch_why[200];    /* busy or unknown: why */
    long watch_missed;      /* probes the worker did not answer in time */
    int probe_unsupported;  /* this worker predates the probe */
    int64_t next_watch_ms;  /* runner thread only */
};

struct gpu_pool {
    struct gpu_pool_config cfg; /* set at start, then only read */
    struct gpu *gpus;
    int count;
    char reason[512];
    struct gpu_hold *hold;            /* runs that need every GPU (gpu_hold.h) */
    atomic_int stopping;              /* set once, by gpu_pool_stop */
    _Atomic int64_t stop_deadline_ms; /* stored before stopping is set */
};

/* The GPU with index, or NULL. */
struct gpu *gpu_pool_find(struct gpu_pool *p, int index);

/* Probes g's idle worker w when the interval has passed (gpu_watch.c). */
void gpu_watch_if_due(struct gpu *g, struct worker_proc *w);

/* Adds g's "watch" to its GET /devices entry d through b (g's lock
 * held); a failure sticks in b. */
void gpu_watch_describe(struct json_build *b, cJSON *d, const struct gpu *g);

#endif
