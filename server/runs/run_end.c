/*
 * run_end.c - what the runs layer does when a GPU runner ends a run: the
 * hooks the pool calls (gpu_pool.h), so that the pool keeps only its loop.
 * A done run is judged before its end is stored (its verdicts are written
 * with it); once stored, its verdicts open, confirm or clear alerts, and a
 * run without verdicts settles the alerts it was to confirm; then whoever
 * waits for it is woken.  All of it runs on the GPU's runner thread.
 */
#include "runs.h"

#include "alerts.h"
#include "card_watch.h"
#include "gpu_pool.h"
#include "run_verdicts.h"
#include "waiters.h"

#include <stdlib.h>
#include <string.h>

/* What run_judge hands run_stored: the run as judged and its verdicts. */
struct judged {
    cJSON *run;
    cJSON *verdicts;
};

static char *run_judge(void *ctx, const char *id, const char *results, const char *meta,
                       void **out)
{
    struct runs *runs = ctx;
    struct judged *j = calloc(1, sizeof(*j));
    char *text = NULL;

    *out = NULL;
    if (j == NULL)
        return NULL;
    j->verdicts = run_verdicts_judge(runs->store, runs->history_runs, id, results, meta, &j->run);
    if (j->verdicts)
        text = cJSON_PrintUnformatted(j->verdicts);
    if (text == NULL) { /* not judged: stored without verdicts */
        cJSON_Delete(j->verdicts);
        cJSON_Delete(j->run);
        free(j);
        return NULL;
    }
    *out = j;
    return text;
}

static void run_stored(void *ctx, const char *id, const char *status, int stored, void *arg)
{
    struct runs *runs = ctx;
    struct judged *j = arg;

    if (stored && j)
        alerts_on_run(runs->alerts, j->run, j->verdicts);
    else if (stored) /* failed, or its verdicts could not be made */
        alerts_on_unjudged(runs->alerts, id,
                           strcmp(status, "done") == 0 ? "was not judged" : status);
    if (j) {
        cJSON_Delete(j->run);
        cJSON_Delete(j->verdicts);
        free(j);
    }
}

static void run_ended(void *ctx, const char *id)
{
    struct runs *runs = ctx;

    waiters_notify(runs->waiters, id);
}

static void card_reading(void *ctx, int index, const char *uuid, const char *name,
                         const cJSON *reading)
{
    struct runs *runs = ctx;

    (void)index;
    card_watch_reading(runs->watch, uuid, name, reading);
}

void runs_pool_hooks(struct runs *runs, struct gpu_pool_hooks *hooks)
{
    hooks->ctx = runs;
    hooks->run_judge = run_judge;
    hooks->run_stored = run_stored;
    hooks->run_ended = run_ended;
    hooks->card_reading = card_reading;
}
