/*
 * gpu_watch.c - the watch of an idle card (gpu_pool.h, "The watch"): the
 * probe a runner writes to its worker when it has nothing to run, what a
 * reading says (quiet, busy, unknown, and since when), and how it is
 * shown in GET /devices.  Called on the GPU's runner thread; what it keeps
 * is in struct gpu, under the gpu's lock but for next_watch_ms.
 */
#include "gpu_pool.h"
#include "gpu_hold.h"
#include "gpu_pool_internal.h"
#include "json_build.h"
#include "log.h"
#include "timeutil.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const quiet_names[] = {"unknown", "busy", "quiet"};

/* Takes a watch reading (owned; kept): whether the card is quiet, as
 * worker/quiet.h rules (what NVML could not read does not count against
 * it), and since when. */
static void note_reading(struct gpu *g, cJSON *reading)
{
    const cJSON *util = cJSON_GetObjectItem(reading, "utilization_percent");
    const cJSON *procs = cJSON_GetObjectItem(reading, "processes");
    const cJSON *first = cJSON_GetArrayItem(procs, 0);
    const char *reason = cJSON_GetStringValue(cJSON_GetObjectItem(reading, "reason"));
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(first, "name"));
    int was;

    pthread_mutex_lock(&g->lock);
    was = g->quiet;
    if (!cJSON_IsTrue(cJSON_GetObjectItem(reading, "available"))) {
        g->quiet = -1;
        snprintf(g->watch_why, sizeof(g->watch_why), "NVML cannot read the card: %.160s",
                 reason ? reason : "no reason given");
    } else if (first != NULL) {
        g->quiet = 0;
        snprintf(g->watch_why, sizeof(g->watch_why), "pid %.0f %.64s on the card%s",
                 cJSON_GetNumberValue(cJSON_GetObjectItem(first, "pid")),
                 name ? name : "(name unknown)",
                 cJSON_GetArraySize(procs) > 1 ? " (and others)" : "");
    } else if (cJSON_IsNumber(util) && util->valuedouble >= GPU_QUIET_UTIL_PERCENT) {
        g->quiet = 0;
        snprintf(g->watch_why, sizeof(g->watch_why), "utilisation %.0f%% with no process listed",
                 util->valuedouble);
    } else {
        g->quiet = 1;
        g->watch_why[0] = '\0';
        if (was != 1)
            g->quiet_since_ms = time_now_unix_ms();
    }
    cJSON_Delete(g->reading);
    g->reading = reading;
    pthread_mutex_unlock(&g->lock);
}

/* The worker does not answer the probe (unsupported: it answered with an
 * error, as a worker from before the probe does). */
static void note_unanswered(struct gpu *g, int unsupported)
{
    pthread_mutex_lock(&g->lock);
    g->quiet = -1;
    if (unsupported) {
        g->probe_unsupported = 1;
        snprintf(g->watch_why, sizeof(g->watch_why),
                 "the worker does not answer the watch probe (older than the daemon)");
    } else {
        g->watch_missed++;
        snprintf(g->watch_why, sizeof(g->watch_why),
                 "the worker did not answer the watch probe within %d s",
                 GPU_WATCH_ANSWER_MS / 1000);
    }
    pthread_mutex_unlock(&g->lock);
    log_warn("gpu %d: %s", g->index, g->watch_why);
}

/* One probe of an idle worker (gpu_pool.h).  Reads in short slices so
 * that a daemon stopping does not wait out a mute worker.  A worker gone
 * is left to the runner's loop, which starts another. */
static void watch_probe(struct gpu *g, struct worker_proc *w)
{
    const struct gpu_pool_hooks *h = &g->pool->cfg.hooks;
    int64_t deadline = time_mono_ms() + GPU_WATCH_ANSWER_MS;
    enum worker_read r = WORKER_TIMEOUT;
    char *line = NULL;
    cJSON *msg = NULL;

    if (worker_write_line(w, "{\"watch\":true}") != 0)
        return;
    while (!atomic_load(&g->pool->stopping) && time_mono_ms() < deadline) {
        const char *event;
        int64_t slice = time_mono_ms() + 250;

        r = worker_read_line(w, slice < deadline ? slice : deadline, &line);
        if (r == WORKER_TIMEOUT)
            continue;
        if (r != WORKER_LINE)
            break;
        msg = cJSON_Parse(line);
        event = cJSON_GetStringValue(cJSON_GetObjectItem(msg, "event"));
        if (event && strcmp(event, "watch") == 0 &&
            cJSON_IsObject(cJSON_GetObjectItem(msg, "reading"))) {
            cJSON *reading = cJSON_DetachItemFromObject(msg, "reading");
            if (h->card_reading)
                h->card_reading(h->ctx, g->index, g->uuid, g->name, reading);
            note_reading(g, reading);
            goto done;
        }
        if (event && strcmp(event, "error") == 0) {
            note_unanswered(g, 1);
            goto done;
        }
        log_warn("gpu %d: ignoring a line while waiting for a watch reading: %.120s", g->index,
                 line);
        free(line);
        line = NULL;
        cJSON_Delete(msg);
        msg = NULL;
    }
    if (r == WORKER_TIMEOUT && !atomic_load(&g->pool->stopping))
        note_unanswered(g, 0);

done:
    free(line);
    cJSON_Delete(msg);
}

/* Probes when the interval has passed, unless the probe is off, the
 * worker predates it or another runner holds every GPU (its run may be
 * using this card: never watch during a run). */
void gpu_watch_if_due(struct gpu *g, struct worker_proc *w)
{
    struct gpu_pool *p = g->pool;
    int unsupported;

    if (p->cfg.watch_interval_s <= 0 || time_mono_ms() < g->next_watch_ms ||
        gpu_hold_holder(p->hold) >= 0)
        return;
    pthread_mutex_lock(&g->lock);
    unsupported = g->probe_unsupported;
    pthread_mutex_unlock(&g->lock);
    if (unsupported)
        return;
    g->next_watch_ms = time_mono_ms() + (int64_t)p->cfg.watch_interval_s * 1000;
    watch_probe(g, w);
}

int gpu_pool_quiet_since(struct gpu_pool *p, int index, int64_t *since_unix_ms, char *why,
                         size_t cap)
{
    struct gpu *g = gpu_pool_find(p, index);
    int rc;

    if (g == NULL) {
        snprintf(why, cap, "no GPU %d on this node", index);
        return -1;
    }
    pthread_mutex_lock(&g->lock);
    rc = g->quiet;
    *since_unix_ms = rc == 1 ? g->quiet_since_ms : 0;
    snprintf(why, cap, "%s", g->watch_why);
    pthread_mutex_unlock(&g->lock);
    return rc;
}

void gpu_watch_describe(struct json_build *b, cJSON *d, const struct gpu *g)
{
    cJSON *watch = jb_object(b, d, "watch");
    char when[32] = "";

    if (g->quiet == 1)
        time_format_rfc3339(g->quiet_since_ms, when, sizeof(when));
    jb_string(b, watch, "state", quiet_names[g->quiet + 1]);
    jb_string(b, watch, "quiet_since", g->quiet == 1 ? when : NULL);
    jb_string(b, watch, "reason", g->quiet == 1 ? NULL : g->watch_why);
    jb_number(b, watch, "missed_probes", (double)g->watch_missed);
}
