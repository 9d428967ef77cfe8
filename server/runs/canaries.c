/*
 * canaries.c - see canaries.h.  The thread's look, card by card: read the
 * card's queue and each canary's last run from the store and the card's
 * quietness from the pool, apply canary_decide, queue at most one canary,
 * then note the decisions under the lock.  A canary is queued as a person
 * would post it (run_request_parse, runs_accept: the same checks, the
 * suite expanded into one batch), with the label canary, so that the
 * store's queue takes it after every other run of the card.
 */
#include "canaries.h"
#include "duration.h"
#include "gpu_pool.h"
#include "log.h"
#include "runs.h"
#include "store.h"
#include "store_canary.h"
#include "store_queue.h"
#include "timeutil.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CANARY_TICK_MS 1000
#define MEMBERS_JSON_CAP 1024 /* a suite's names as a JSON array */

/* One card of the node, as the pool named it at start (its strings
 * point into the pool). */
struct canary_card {
    int index;
    const char *uuid;
    const char *name;
};

struct canaries {
    struct canaries_config cfg;
    struct canary_spec specs[CANARY_MAX];
    char members_json[CANARY_MAX][MEMBERS_JSON_CAP];
    int n_cards;
    struct canary_card *cards;
    pthread_t thread;
    int started;
    pthread_mutex_t lock;          /* guards records and stop */
    pthread_cond_t wake;           /* signalled to stop */
    struct canary_record *records; /* n_cards * n_specs, card-major; under lock */
    int stop;                      /* under lock */
};

static struct canary_record *record(struct canaries *c, int card, int spec)
{
    return &c->records[card * c->cfg.n_specs + spec];
}

/* Queues spec on card as a person's POST /runs would: 0, or -1 with why. */
static int post_canary(struct canaries *c, const struct canary_card *card,
                       const struct canary_spec *spec, char *why, size_t cap)
{
    struct run_request rr;
    struct run_set set;
    struct runs_error err;
    struct gb_error perr;
    char body[256];
    int rc = -1;

    snprintf(body, sizeof(body), "{\"benchmark\":\"%s\",\"device\":%d,\"label\":\"%s\"}",
             spec->name, card->index, STORE_CANARY_LABEL);
    if (run_request_parse(body, strlen(body), c->cfg.run_timeout_s, 0, &rr, &perr) != 0) {
        snprintf(why, cap, "refused: %.140s", perr.message);
        goto done;
    }
    if (runs_accept(c->cfg.runs, &rr, &set, NULL, &err) != RUNS_OK) {
        snprintf(why, cap, "refused: %.140s", err.message);
        goto done;
    }
    log_info("canary %s queued on GPU %d (%s): %d run(s)%s%s", spec->name, card->index,
             card->uuid, set.n, set.batch[0] ? ", batch " : "", set.batch);
    rc = 0;

done:
    run_request_free(&rr);
    return rc;
}

/* One look at one card: decides each canary, queues at most one. */
static void look_at_card(struct canaries *c, int ci)
{
    const struct canary_card *card = &c->cards[ci];
    struct store_card_queue queue;
    struct canary_facts f = {0};
    char why[CANARY_REASON_MAX], probe[CANARY_REASON_MAX];
    int queued_one = 0;

    if (store_canary_card(c->cfg.runs->store, card->index, &queue) != STORE_OK)
        return; /* the store logged it; the next look tries again */
    probe[0] = '\0';
    f.now_ms = time_now_unix_ms();
    f.active = queue.canary;
    f.queued = queue.queued;
    f.running = queue.running > 0;
    f.quiet = gpu_pool_quiet_since(c->cfg.runs->gpus, card->index, &f.quiet_since_ms, probe,
                                   sizeof(probe));
    f.why = probe;
    for (int k = 0; k < c->cfg.n_specs; k++) {
        const struct canary_spec *spec = &c->specs[k];
        struct store_canary_run last;
        enum canary_defer defer;
        enum canary_step step;
        int rc, began;

        rc = store_canary_last(c->cfg.runs->store, card->uuid, c->members_json[k], &last);
        if (rc != STORE_OK && rc != STORE_NOT_FOUND)
            return;
        f.last_ms = rc == STORE_OK ? last.created_ms : -1;
        f.active = queue.canary || queued_one;
        step = canary_decide(&f, spec->period_s, c->cfg.idle_s, &defer, why, sizeof(why));
        if (step == CANARY_QUEUE) {
            if (post_canary(c, card, spec, why, sizeof(why)) == 0) {
                queued_one = 1;
            } else {
                step = CANARY_DEFERRED;
                defer = CANARY_DEFER_REFUSED;
            }
        }
        pthread_mutex_lock(&c->lock);
        began = canary_note(record(c, ci, k), step, defer, why, f.now_ms);
        pthread_mutex_unlock(&c->lock);
        if (began)
            log_info("canary %s on GPU %d deferred: %s", spec->name, card->index, why);
    }
}

static void *canaries_main(void *arg)
{
    struct canaries *c = arg;

    pthread_mutex_lock(&c->lock);
    while (!c->stop) {
        struct timespec until;

        pthread_mutex_unlock(&c->lock);
        for (int i = 0; i < c->n_cards; i++)
            look_at_card(c, i);
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += CANARY_TICK_MS / 1000;
        pthread_mutex_lock(&c->lock);
        while (!c->stop && pthread_cond_timedwait(&c->wake, &c->lock, &until) != ETIMEDOUT)
            ;
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

/* The canary's benchmarks as a JSON array, for store_canary_last. */
static int members_json(const struct canary_spec *spec, char *buf, size_t cap)
{
    size_t used = (size_t)snprintf(buf, cap, "[");

    for (int m = 0; m < spec->n_members && used < cap; m++)
        used += (size_t)snprintf(buf + used, cap - used, "%s\"%s\"", m ? "," : "",
                                 spec->members[m]->name);
    if (used < cap)
        used += (size_t)snprintf(buf + used, cap - used, "]");
    return used < cap ? 0 : -1;
}

struct canaries *canaries_start(const struct canaries_config *cfg)
{
    struct canaries *c = calloc(1, sizeof(*c));
    struct gpu_stat *stats = NULL;
    int n;

    if (c == NULL || cfg->n_specs > CANARY_MAX)
        goto fail;
    c->cfg = *cfg;
    memcpy(c->specs, cfg->specs, sizeof(c->specs[0]) * (size_t)cfg->n_specs);
    c->cfg.specs = c->specs;
    for (int k = 0; k < cfg->n_specs; k++)
        if (members_json(&c->specs[k], c->members_json[k], MEMBERS_JSON_CAP) != 0)
            goto fail;
    n = gpu_pool_count(cfg->runs->gpus);
    stats = calloc((size_t)n + 1, sizeof(*stats));
    c->cards = calloc((size_t)n + 1, sizeof(*c->cards));
    c->records = calloc((size_t)(n * cfg->n_specs) + 1, sizeof(*c->records));
    if (stats == NULL || c->cards == NULL || c->records == NULL)
        goto fail;
    c->n_cards = gpu_pool_stats(cfg->runs->gpus, stats, n);
    for (int i = 0; i < c->n_cards; i++)
        c->cards[i] = (struct canary_card){stats[i].index, stats[i].uuid, stats[i].name};
    free(stats);
    stats = NULL;
    if (pthread_mutex_init(&c->lock, NULL) != 0)
        goto fail;
    if (pthread_cond_init(&c->wake, NULL) != 0) {
        pthread_mutex_destroy(&c->lock);
        goto fail;
    }
    if (c->n_cards > 0 && cfg->n_specs > 0) {
        if (pthread_create(&c->thread, NULL, canaries_main, c) != 0) {
            log_error("cannot start the canaries' thread");
            pthread_cond_destroy(&c->wake);
            pthread_mutex_destroy(&c->lock);
            goto fail;
        }
        c->started = 1;
    }
    return c;

fail:
    free(stats);
    if (c) {
        free(c->cards);
        free(c->records);
    }
    free(c);
    return NULL;
}

void canaries_stop(struct canaries *c)
{
    if (c == NULL)
        return;
    if (c->started) {
        pthread_mutex_lock(&c->lock);
        c->stop = 1;
        pthread_cond_signal(&c->wake);
        pthread_mutex_unlock(&c->lock);
        pthread_join(c->thread, NULL);
    }
    pthread_cond_destroy(&c->wake);
    pthread_mutex_destroy(&c->lock);
    free(c->cards);
    free(c->records);
    free(c);
}

/* A time as the API shows it, or null when ms < 0. */
static cJSON *time_or_null(int64_t ms)
{
    char at[32];

    if (ms < 0)
        return cJSON_CreateNull();
    time_format_rfc3339(ms, at, sizeof(at));
    return cJSON_CreateString(at);
}

static cJSON *text_or_null(const char *s)
{
    return s && s[0] ? cJSON_CreateString(s) : cJSON_CreateNull();
}

/* {"id", "batch", "created_at", "finished_at", "outcome", "runs", "failed", "invalid"}. */
static cJSON *describe_last(const struct store_canary_run *last)
{
    cJSON *o = cJSON_CreateObject();

    if (o == NULL || !cJSON_AddStringToObject(o, "id", last->id) ||
        !cJSON_AddItemToObject(o, "batch", text_or_null(last->batch)) ||
        !cJSON_AddStringToObject(o, "created_at", last->created_at) ||
        !cJSON_AddItemToObject(o, "finished_at", text_or_null(last->finished_at)) ||
        !cJSON_AddStringToObject(o, "outcome", last->outcome) ||
        !cJSON_AddNumberToObject(o, "runs", last->runs) ||
        !cJSON_AddNumberToObject(o, "failed", last->failed) ||
        !cJSON_AddNumberToObject(o, "invalid", last->invalid)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* One canary on one card; rec is a copy taken under the lock. */
static cJSON *describe_one(struct canaries *c, int ci, int k, const struct canary_record *rec,
                           int64_t now_ms, int *store_rc)
{
    const struct canary_spec *spec = &c->specs[k];
    struct store_canary_run last;
    cJSON *o = cJSON_CreateObject(), *d;
    int64_t due;
    int rc;

    rc = store_canary_last(c->cfg.runs->store, c->cards[ci].uuid, c->members_json[k], &last);
    if (rc != STORE_OK && rc != STORE_NOT_FOUND) {
        *store_rc = rc;
        goto fail;
    }
    due = canary_due_ms(rc == STORE_OK ? last.created_ms : -1, spec->period_s);
    if (o == NULL || !cJSON_AddStringToObject(o, "benchmark", spec->name) ||
        !cJSON_AddNumberToObject(o, "period_s", (double)spec->period_s) ||
        !cJSON_AddItemToObject(o, "last_run",
                               rc == STORE_OK ? describe_last(&last) : cJSON_CreateNull()) ||
        !cJSON_AddItemToObject(o, "next_due_at", time_or_null(due)) ||
        !cJSON_AddBoolToObject(o, "due", now_ms >= due) ||
        (d = cJSON_AddObjectToObject(o, "deferred")) == NULL ||
        !cJSON_AddNumberToObject(d, "count", (double)rec->deferred) ||
        !cJSON_AddBoolToObject(d, "now", rec->kind != CANARY_DEFER_NONE) ||
        !cJSON_AddItemToObject(d, "reason", text_or_null(rec->reason)) ||
        !cJSON_AddItemToObject(d, "at", time_or_null(rec->reason[0] ? rec->reason_ms : -1)))
        goto fail;
    return o;

fail:
    cJSON_Delete(o);
    return NULL;
}

cJSON *canaries_describe(struct canaries *c, int *store_rc)
{
    cJSON *root = cJSON_CreateObject(), *list;
    struct canary_record *copy = NULL;
    const char *reason = NULL;
    size_t n_records = (size_t)(c->n_cards * c->cfg.n_specs);
    int64_t now_ms = time_now_unix_ms();

    *store_rc = 0;
    if (root == NULL || !cJSON_AddNumberToObject(root, "idle_s", (double)c->cfg.idle_s) ||
        (list = cJSON_AddArrayToObject(root, "cards")) == NULL)
        goto fail;
    if (c->n_cards == 0)
        reason = gpu_pool_reason(c->cfg.runs->gpus);
    else if (c->cfg.n_specs == 0)
        reason = "no --canary given";
    if (!cJSON_AddItemToObject(root, "reason", text_or_null(reason)))
        goto fail;
    if (reason != NULL)
        return root;
    copy = malloc(n_records * sizeof(*copy));
    if (copy == NULL)
        goto fail;
    /* A copy, so that no store read happens under the lock. */
    pthread_mutex_lock(&c->lock);
    memcpy(copy, c->records, n_records * sizeof(*copy));
    pthread_mutex_unlock(&c->lock);
    for (int i = 0; i < c->n_cards; i++) {
        cJSON *card = cJSON_CreateObject(), *canaries;

        if (card == NULL || !cJSON_AddItemToArray(list, card) ||
            !cJSON_AddNumberToObject(card, "index", c->cards[i].index) ||
            !cJSON_AddStringToObject(card, "uuid", c->cards[i].uuid) ||
            !cJSON_AddStringToObject(card, "name", c->cards[i].name) ||
            (canaries = cJSON_AddArrayToObject(card, "canaries")) == NULL)
            goto fail;
        for (int k = 0; k < c->cfg.n_specs; k++) {
            cJSON *one = describe_one(c, i, k, &copy[i * c->cfg.n_specs + k], now_ms, store_rc);
            if (one == NULL || !cJSON_AddItemToArray(canaries, one)) {
                cJSON_Delete(one);
                goto fail;
            }
        }
    }
    free(copy);
    return root;

fail:
    free(copy);
    cJSON_Delete(root);
    return NULL;
}
