/*
 * canaries.c - see canaries.h.  The thread's look, card by card: read the
 * card's queue and each canary's last run from the store and the card's
 * quietness from the pool, apply canary_decide, queue at most one canary,
 * then note the decisions under the lock.  A canary is queued as a person
 * would post it (run_request_parse, runs_accept: the same checks, the
 * suite expanded into one batch), with the label canary, so that the
 * store's queue takes it after every other run of the card.
 *
 * A card's canary leaves out the benchmarks that hold every GPU
 * (run_request.one_card); on a node of enough GPUs each of those is a node
 * canary, looked at after the cards with the facts the cards' look
 * gathered, queued for "all" (one run, on the lowest GPU) only when every
 * card would take a canary now.  Its last run is the newest on any card,
 * so it runs once a period for the node, not once per card.
 */
#include "canaries.h"
#include "duration.h"
#include "dynbuf.h"
#include "gpu_pool.h"
#include "log.h"
#include "prom_text.h"
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
/* One /metrics family's series: 64 GPUs x 16 canaries of 200 bytes fit. */
#define CANARY_METRICS_CAP (1024 * 1024)

/* One card of the node, as the pool named it at start (its strings
 * point into the pool), and what the thread's latest look read of it. */
struct canary_card {
    int index;
    const char *uuid;
    const char *name;
    struct canary_facts facts;     /* the thread's only */
    char probe[CANARY_REASON_MAX]; /* facts.why */
    int read;                      /* facts were read this look */
};

/* A benchmark of a --canary that holds every GPU, run once for the node. */
struct node_canary {
    int spec;                            /* its --canary, in specs */
    const struct gb_benchmark *bench;    /* static */
    char members_json[MEMBERS_JSON_CAP]; /* [bench's name], for store_canary_last */
    struct canary_record record;         /* under lock */
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
    int n_node;
    struct node_canary *node;       /* n_node */
    int *indexes;                   /* each card's GPU index, for canary_decide_node */
    struct canary_facts *all_facts; /* each card's facts, for canary_decide_node */
    int stop;                       /* under lock */
};

static struct canary_record *record(struct canaries *c, int card, int spec)
{
    return &c->records[card * c->cfg.n_specs + spec];
}

/* Queues benchmark on device (JSON: a card's index, or "all" for a node
 * canary) as a person's POST /runs would, a card's without the benchmarks
 * that hold every GPU: 0, or -1 with why. */
static int post_canary(struct canaries *c, const char *benchmark, const char *device,
                       int one_card, char *why, size_t cap)
{
    struct run_request rr;
    struct run_set set;
    struct runs_error err;
    struct gb_error perr;
    char body[256];
    int rc = -1;

    snprintf(body, sizeof(body), "{\"benchmark\":\"%s\",\"device\":%s,\"label\":\"%s\"}",
             benchmark, device, STORE_CANARY_LABEL);
    if (run_request_parse(body, strlen(body), c->cfg.run_timeout_s, 0, &rr, &perr) != 0) {
        snprintf(why, cap, "refused: %.140s", perr.message);
        goto done;
    }
    rr.one_card = one_card;
    if (runs_accept(c->cfg.runs, &rr, &set, NULL, &err) != RUNS_OK) {
        snprintf(why, cap, "refused: %.140s", err.message);
        goto done;
    }
    log_info("canary %s queued on GPU %s: %d run(s)%s%s", benchmark, device, set.n,
             set.batch[0] ? ", batch " : "", set.batch);
    rc = 0;

done:
    run_request_free(&rr);
    return rc;
}

/* Reads card's facts for this look: 0, or -1 when the store failed (it
 * logged it; the next look tries again). */
static int read_card(struct canaries *c, struct canary_card *card, int64_t now_ms)
{
    struct store_card_queue queue;
    struct canary_facts *f = &card->facts;

    card->read = 0;
    if (store_canary_card(c->cfg.runs->store, card->index, &queue) != STORE_OK)
        return -1;
    memset(f, 0, sizeof(*f));
    card->probe[0] = '\0';
    f->now_ms = now_ms;
    f->active = queue.canary;
    f->queued = queue.queued;
    f->running = queue.running > 0;
    f->quiet = gpu_pool_quiet_since(c->cfg.runs->gpus, card->index, &f->quiet_since_ms,
                                    card->probe, sizeof(card->probe));
    f->why = card->probe;
    card->read = 1;
    return 0;
}

/* Whether spec runs a benchmark on one card (p2p_bandwidth@24h alone is
 * only a node canary). */
static int has_card_members(const struct canary_spec *spec)
{
    for (int m = 0; m < spec->n_members; m++)
        if (!spec->members[m]->all_devices)
            return 1;
    return 0;
}

/* One look at one card: decides each canary, queues at most one, and
 * leaves in the card's facts that one is active, for the node's look. */
static void look_at_card(struct canaries *c, int ci)
{
    struct canary_card *card = &c->cards[ci];
    struct canary_facts f = card->facts;
    char why[CANARY_REASON_MAX], device[16];

    snprintf(device, sizeof(device), "%d", card->index);
    for (int k = 0; k < c->cfg.n_specs; k++) {
        const struct canary_spec *spec = &c->specs[k];
        struct store_canary_run last;
        enum canary_defer defer;
        enum canary_step step;
        int rc, began;

        if (!has_card_members(spec))
            continue;
        rc = store_canary_last(c->cfg.runs->store, card->uuid, c->members_json[k], &last);
        if (rc != STORE_OK && rc != STORE_NOT_FOUND) {
            card->read = 0; /* the node's look waits for a whole one */
            return;
        }
        f.last_ms = rc == STORE_OK ? last.created_ms : -1;
        f.active = card->facts.active;
        step = canary_decide(&f, spec->period_s, c->cfg.idle_s, &defer, why, sizeof(why));
        if (step == CANARY_QUEUE) {
            if (post_canary(c, spec->name, device, 1, why, sizeof(why)) == 0) {
                card->facts.active = 1;
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

/* A node canary's last run: the newest of its runs on any card of the
 * node.  STORE_OK with last filled, STORE_NOT_FOUND, or a failure. */
static int node_last(struct canaries *c, const struct node_canary *nc,
                     struct store_canary_run *last)
{
    int found = STORE_NOT_FOUND;

    for (int i = 0; i < c->n_cards; i++) {
        struct store_canary_run one;
        int rc = store_canary_last(c->cfg.runs->store, c->cards[i].uuid, nc->members_json, &one);

        if (rc == STORE_NOT_FOUND)
            continue;
        if (rc != STORE_OK)
            return rc;
        if (found == STORE_NOT_FOUND || one.created_ms > last->created_ms)
            *last = one;
        found = STORE_OK;
    }
    return found;
}

/* One look at the node, after the cards': each node canary by the rule for
 * every card at once; queues at most one, and none when a card could not
 * be read. */
static void look_at_node(struct canaries *c, int64_t now_ms)
{
    struct canary_node_facts f = {now_ms, -1, c->n_cards, c->all_facts, c->indexes};
    char why[CANARY_REASON_MAX];

    for (int i = 0; i < c->n_cards; i++) {
        if (!c->cards[i].read)
            return;
        c->all_facts[i] = c->cards[i].facts;
    }
    for (int n = 0; n < c->n_node; n++) {
        struct node_canary *nc = &c->node[n];
        const struct canary_spec *spec = &c->specs[nc->spec];
        struct store_canary_run last;
        enum canary_defer defer;
        enum canary_step step;
        int rc, began;

        rc = node_last(c, nc, &last);
        if (rc != STORE_OK && rc != STORE_NOT_FOUND)
            return;
        f.last_ms = rc == STORE_OK ? last.created_ms : -1;
        step = canary_decide_node(&f, spec->period_s, c->cfg.idle_s, &defer, why, sizeof(why));
        if (step == CANARY_QUEUE) {
            if (post_canary(c, nc->bench->name, "\"all\"", 0, why, sizeof(why)) == 0) {
                c->all_facts[0].active = 1; /* one canary at a time on the node */
            } else {
                step = CANARY_DEFERRED;
                defer = CANARY_DEFER_REFUSED;
            }
        }
        pthread_mutex_lock(&c->lock);
        began = canary_note(&nc->record, step, defer, why, now_ms);
        pthread_mutex_unlock(&c->lock);
        if (began)
            log_info("canary %s on the node deferred: %s", nc->bench->name, why);
    }
}

/* One look: every card's facts, their canaries, then the node's. */
static void look(struct canaries *c)
{
    int64_t now_ms = time_now_unix_ms();

    for (int i = 0; i < c->n_cards; i++)
        if (read_card(c, &c->cards[i], now_ms) == 0)
            look_at_card(c, i);
    if (c->n_node > 0)
        look_at_node(c, now_ms);
}

static void *canaries_main(void *arg)
{
    struct canaries *c = arg;

    pthread_mutex_lock(&c->lock);
    while (!c->stop) {
        struct timespec until;

        pthread_mutex_unlock(&c->lock);
        look(c);
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += CANARY_TICK_MS / 1000;
        pthread_mutex_lock(&c->lock);
        while (!c->stop && pthread_cond_timedwait(&c->wake, &c->lock, &until) != ETIMEDOUT)
            ;
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

/* Whether a suite canary that spec k holds whole (canary_spec_contains)
 * runs b too. */
static int held_member(const struct canaries *c, int k, const struct gb_benchmark *b)
{
    for (int i = 0; i < c->cfg.n_specs; i++)
        if (i != k && canary_spec_contains(&c->specs[k], &c->specs[i]))
            for (int m = 0; m < c->specs[i].n_members; m++)
                if (c->specs[i].members[m] == b)
                    return 1;
    return 0;
}

/* The benchmarks canary k runs on a card (not those that hold every GPU,
 * nor those of a suite canary it holds whole: its last run is its own) as
 * a JSON array, for store_canary_last. */
static int members_json(const struct canaries *c, int k, char *buf, size_t cap)
{
    const struct canary_spec *spec = &c->specs[k];
    size_t used = (size_t)snprintf(buf, cap, "[");
    int listed = 0;

    for (int m = 0; m < spec->n_members && used < cap; m++)
        if (!spec->members[m]->all_devices && !held_member(c, k, spec->members[m]))
            used += (size_t)snprintf(buf + used, cap - used, "%s\"%s\"", listed++ ? "," : "",
                                     spec->members[m]->name);
    if (used < cap)
        used += (size_t)snprintf(buf + used, cap - used, "]");
    return used < cap ? 0 : -1;
}

/* The GPUs benchmark b needs to run as a node canary: every GPU, and at
 * least two (a peer benchmark) or its own minimum. */
static int node_gpus_needed(const struct gb_benchmark *b)
{
    return b->min_devices > 2 ? b->min_devices : 2;
}

/* Whether a --canary's member b is left out on this node: it holds every
 * GPU and the node has too few for it. */
static int left_out_here(const struct canaries *c, const struct gb_benchmark *b)
{
    return b->all_devices && c->n_cards < node_gpus_needed(b);
}

/* The node canaries: each benchmark of a --canary that holds every GPU,
 * on a node that has the GPUs it needs (none on a node of one).  0, or -1
 * out of memory. */
static int add_node_canaries(struct canaries *c)
{
    c->node = calloc((size_t)(c->cfg.n_specs * GB_SUITE_MAX_MEMBERS) + 1, sizeof(*c->node));
    c->indexes = calloc((size_t)c->n_cards + 1, sizeof(*c->indexes));
    c->all_facts = calloc((size_t)c->n_cards + 1, sizeof(*c->all_facts));
    if (c->node == NULL || c->indexes == NULL || c->all_facts == NULL)
        return -1;
    for (int i = 0; i < c->n_cards; i++)
        c->indexes[i] = c->cards[i].index;
    for (int k = 0; k < c->cfg.n_specs; k++) {
        for (int m = 0; m < c->specs[k].n_members; m++) {
            const struct gb_benchmark *b = c->specs[k].members[m];
            struct node_canary *nc = &c->node[c->n_node];

            if (!b->all_devices || left_out_here(c, b) || held_member(c, k, b))
                continue; /* a suite held whole runs it at its own period */
            nc->spec = k;
            nc->bench = b;
            snprintf(nc->members_json, sizeof(nc->members_json), "[\"%s\"]", b->name);
            c->n_node++;
        }
    }
    return 0;
}

/* Says at start which members of the --canary list never run here, so a
 * node of one GPU that shares its options with the rest of a fleet is not
 * silently unchecked (GET /canaries' left_out says it again). */
static void log_left_out(const struct canaries *c)
{
    for (int k = 0; k < c->cfg.n_specs; k++)
        for (int m = 0; m < c->specs[k].n_members; m++) {
            const struct gb_benchmark *b = c->specs[k].members[m];
            if (c->n_cards > 0 && left_out_here(c, b))
                log_warn("canary %s: %s is left out: it needs %d GPUs; this node has %d",
                         c->specs[k].name, b->name, node_gpus_needed(b), c->n_cards);
        }
}

static void free_node_canaries(struct canaries *c)
{
    free(c->node);
    free(c->indexes);
    free(c->all_facts);
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
        if (members_json(c, k, c->members_json[k], MEMBERS_JSON_CAP) != 0)
            goto fail;
    n = gpu_pool_count(cfg->runs->gpus);
    stats = calloc((size_t)n + 1, sizeof(*stats));
    c->cards = calloc((size_t)n + 1, sizeof(*c->cards));
    c->records = calloc((size_t)(n * cfg->n_specs) + 1, sizeof(*c->records));
    if (stats == NULL || c->cards == NULL || c->records == NULL)
        goto fail;
    c->n_cards = gpu_pool_stats(cfg->runs->gpus, stats, n);
    for (int i = 0; i < c->n_cards; i++) {
        c->cards[i].index = stats[i].index;
        c->cards[i].uuid = stats[i].uuid;
        c->cards[i].name = stats[i].name;
    }
    free(stats);
    stats = NULL;
    if (add_node_canaries(c) != 0)
        goto fail;
    log_left_out(c);
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
        free_node_canaries(c);
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
    free_node_canaries(c);
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

/* One canary: benchmark of period_s, its last run as rc (STORE_OK or
 * STORE_NOT_FOUND, else *store_rc is set and it fails) said, rec a copy
 * taken under the lock.  A NEW object, or NULL. */
static cJSON *describe_canary(const char *benchmark, int64_t period_s, int rc,
                              const struct store_canary_run *last,
                              const struct canary_record *rec, int64_t now_ms, int *store_rc)
{
    cJSON *o = cJSON_CreateObject(), *d;
    int64_t due;

    if (rc != STORE_OK && rc != STORE_NOT_FOUND) {
        *store_rc = rc;
        goto fail;
    }
    due = canary_due_ms(rc == STORE_OK ? last->created_ms : -1, period_s);
    if (o == NULL || !cJSON_AddStringToObject(o, "benchmark", benchmark) ||
        !cJSON_AddNumberToObject(o, "period_s", (double)period_s) ||
        !cJSON_AddItemToObject(o, "last_run",
                               rc == STORE_OK ? describe_last(last) : cJSON_CreateNull()) ||
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

/* One canary on one card; rec is a copy taken under the lock. */
static cJSON *describe_one(struct canaries *c, int ci, int k, const struct canary_record *rec,
                           int64_t now_ms, int *store_rc)
{
    struct store_canary_run last;
    int rc = store_canary_last(c->cfg.runs->store, c->cards[ci].uuid, c->members_json[k], &last);

    return describe_canary(c->specs[k].name, c->specs[k].period_s, rc, &last, rec, now_ms,
                           store_rc);
}

/* The node canaries into list; recs are copies taken under the lock. */
static int describe_node(struct canaries *c, cJSON *list, const struct canary_record *recs,
                         int64_t now_ms, int *store_rc)
{
    for (int n = 0; n < c->n_node; n++) {
        struct store_canary_run last;
        int rc = node_last(c, &c->node[n], &last);
        cJSON *one = describe_canary(c->node[n].bench->name, c->specs[c->node[n].spec].period_s,
                                     rc, &last, &recs[n], now_ms, store_rc);

        if (one == NULL || !cJSON_AddItemToArray(list, one)) {
            cJSON_Delete(one);
            return -1;
        }
    }
    return 0;
}

/* The cards' records (card-major) then the node canaries', copied under
 * the lock so that no store read happens under it.  NEW, or NULL. */
static struct canary_record *copy_records(struct canaries *c)
{
    size_t n_records = (size_t)(c->n_cards * c->cfg.n_specs);
    struct canary_record *copy = malloc((n_records + (size_t)c->n_node + 1) * sizeof(*copy));

    if (copy == NULL)
        return NULL;
    pthread_mutex_lock(&c->lock);
    memcpy(copy, c->records, n_records * sizeof(*copy));
    for (int n = 0; n < c->n_node; n++)
        copy[n_records + (size_t)n] = c->node[n].record;
    pthread_mutex_unlock(&c->lock);
    return copy;
}

/* The members of the --canary list that never run on this node, into
 * list: [{"canary", "benchmark", "reason"}].  0, or -1 out of memory. */
static int describe_left_out(const struct canaries *c, cJSON *list)
{
    for (int k = 0; k < c->cfg.n_specs; k++)
        for (int m = 0; m < c->specs[k].n_members; m++) {
            const struct gb_benchmark *b = c->specs[k].members[m];
            char why[96];
            cJSON *o;

            if (!left_out_here(c, b))
                continue;
            snprintf(why, sizeof(why), "needs %d GPUs; this node has %d", node_gpus_needed(b),
                     c->n_cards);
            if ((o = cJSON_CreateObject()) == NULL)
                return -1;
            if (!cJSON_AddItemToArray(list, o)) {
                cJSON_Delete(o);
                return -1;
            }
            /* o is list's now */
            if (!cJSON_AddStringToObject(o, "canary", c->specs[k].name) ||
                !cJSON_AddStringToObject(o, "benchmark", b->name) ||
                !cJSON_AddStringToObject(o, "reason", why))
                return -1;
        }
    return 0;
}

cJSON *canaries_describe(struct canaries *c, int *store_rc)
{
    cJSON *root = cJSON_CreateObject(), *list, *node, *left;
    struct canary_record *copy = NULL;
    const char *reason = NULL;
    size_t n_records = (size_t)(c->n_cards * c->cfg.n_specs);
    int64_t now_ms = time_now_unix_ms();

    *store_rc = 0;
    if (root == NULL || !cJSON_AddNumberToObject(root, "idle_s", (double)c->cfg.idle_s) ||
        (list = cJSON_AddArrayToObject(root, "cards")) == NULL ||
        (node = cJSON_AddArrayToObject(root, "node")) == NULL ||
        (left = cJSON_AddArrayToObject(root, "left_out")) == NULL)
        goto fail;
    if (c->n_cards > 0 && describe_left_out(c, left) != 0)
        goto fail;
    if (c->n_cards == 0)
        reason = gpu_pool_reason(c->cfg.runs->gpus);
    else if (c->cfg.n_specs == 0)
        reason = "no --canary given";
    if (!cJSON_AddItemToObject(root, "reason", text_or_null(reason)))
        goto fail;
    if (reason != NULL)
        return root;
    if ((copy = copy_records(c)) == NULL)
        goto fail;
    for (int i = 0; i < c->n_cards; i++) {
        cJSON *card = cJSON_CreateObject(), *canaries;

        if (card == NULL || !cJSON_AddItemToArray(list, card) ||
            !cJSON_AddNumberToObject(card, "index", c->cards[i].index) ||
            !cJSON_AddStringToObject(card, "uuid", c->cards[i].uuid) ||
            !cJSON_AddStringToObject(card, "name", c->cards[i].name) ||
            (canaries = cJSON_AddArrayToObject(card, "canaries")) == NULL)
            goto fail;
        for (int k = 0; k < c->cfg.n_specs; k++) {
            cJSON *one;

            if (!has_card_members(&c->specs[k]))
                continue;
            one = describe_one(c, i, k, &copy[i * c->cfg.n_specs + k], now_ms, store_rc);
            if (one == NULL || !cJSON_AddItemToArray(canaries, one)) {
                cJSON_Delete(one);
                goto fail;
            }
        }
    }
    if (describe_node(c, node, copy + n_records, now_ms, store_rc) != 0)
        goto fail;
    free(copy);
    return root;

fail:
    free(copy);
    cJSON_Delete(root);
    return NULL;
}

/* ---- /metrics ---- */

/* The metric families, in the order printed: each family's series are
 * gathered in its own buffer, since a family is one block in Prometheus'
 * text format. */
enum canary_family {
    FAMILY_LAST_RUN,
    FAMILY_DUE,
    FAMILY_DEFERRED,
    FAMILY_DEFERRALS,
    FAMILIES,
};

static const struct {
    const char *name, *type, *help;
} families[FAMILIES] = {
    [FAMILY_LAST_RUN] = {"gpubench_canary_last_run_timestamp_seconds", "gauge",
                         "When each canary's last run was queued (Unix time); none before the "
                         "first."},
    [FAMILY_DUE] = {"gpubench_canary_due", "gauge",
                    "1 when the canary is due (its period has passed since its last run)."},
    [FAMILY_DEFERRED] = {"gpubench_canary_deferred", "gauge",
                         "1 while a due canary is held back (GET /canaries says why)."},
    [FAMILY_DEFERRALS] = {"gpubench_canary_deferrals_total", "counter",
                          "Times the canary was held back while due since the daemon started."},
};

/* One canary's series into each family's buffer: gpu is its card's index
 * ("all" for a node canary, uuid ""), last as rc read it. */
static void canary_series(struct dynbuf *fam, const char *host, const char *gpu,
                          const char *uuid, const char *canary, int64_t period_s, int rc,
                          const struct store_canary_run *last, const struct canary_record *rec,
                          int64_t now_ms)
{
    struct dynbuf lb;
    const char *labels;
    int64_t due = canary_due_ms(rc == STORE_OK ? last->created_ms : -1, period_s);

    /* the labels once, written by the one escaper of /metrics
     * (prom_text.h); a refused append fails the families' buffers */
    dynbuf_init(&lb, 4096);
    (void)!dynbuf_add(&lb, "{", 1);
    prom_label(&lb, "host", host);
    prom_label(&lb, "uuid", uuid);
    prom_label(&lb, "gpu", gpu);
    prom_label(&lb, "canary", canary);
    prom_close(&lb);
    labels = dynbuf_failed(&lb) || lb.data == NULL ? NULL : lb.data;
    if (labels == NULL) {
        for (int f = 0; f < FAMILIES; f++)
            fam[f].failed = 1;
        dynbuf_free(&lb);
        return;
    }
    if (rc == STORE_OK)
        (void)!dynbuf_printf(&fam[FAMILY_LAST_RUN], "%s%s %.3f\n", families[FAMILY_LAST_RUN].name,
                             labels, (double)last->created_ms / 1000.0);
    (void)!dynbuf_printf(&fam[FAMILY_DUE], "%s%s %d\n", families[FAMILY_DUE].name, labels,
                         now_ms >= due);
    (void)!dynbuf_printf(&fam[FAMILY_DEFERRED], "%s%s %d\n", families[FAMILY_DEFERRED].name, labels,
                         rec->kind != CANARY_DEFER_NONE);
    (void)!dynbuf_printf(&fam[FAMILY_DEFERRALS], "%s%s %ld\n", families[FAMILY_DEFERRALS].name,
                         labels, rec->deferred);
    dynbuf_free(&lb);
}

int canaries_metrics(struct canaries *c, struct dynbuf *b)
{
    struct dynbuf fam[FAMILIES];
    struct canary_record *copy = NULL;
    size_t n_records;
    int64_t now_ms = time_now_unix_ms();
    const char *host;
    int rc = STORE_OK;

    if (c == NULL || c->n_cards == 0 || c->cfg.n_specs == 0)
        return STORE_OK; /* no series: GET /canaries says why */
    n_records = (size_t)(c->n_cards * c->cfg.n_specs);
    host = c->cfg.runs->host ? c->cfg.runs->host : "";
    for (int f = 0; f < FAMILIES; f++)
        dynbuf_init(&fam[f], CANARY_METRICS_CAP);
    if ((copy = copy_records(c)) == NULL) {
        rc = STORE_ERROR;
        goto done;
    }
    for (int i = 0; i < c->n_cards && rc == STORE_OK; i++) {
        char gpu[16];

        snprintf(gpu, sizeof(gpu), "%d", c->cards[i].index);
        for (int k = 0; k < c->cfg.n_specs && rc == STORE_OK; k++) {
            struct store_canary_run last;
            int got;

            if (!has_card_members(&c->specs[k]))
                continue;
            got = store_canary_last(c->cfg.runs->store, c->cards[i].uuid, c->members_json[k],
                                    &last);
            if (got != STORE_OK && got != STORE_NOT_FOUND)
                rc = got;
            else
                canary_series(fam, host, gpu, c->cards[i].uuid, c->specs[k].name,
                              c->specs[k].period_s, got, &last,
                              &copy[(size_t)i * (size_t)c->cfg.n_specs + (size_t)k], now_ms);
        }
    }
    for (int n = 0; n < c->n_node && rc == STORE_OK; n++) {
        struct store_canary_run last;
        int got = node_last(c, &c->node[n], &last);

        if (got != STORE_OK && got != STORE_NOT_FOUND)
            rc = got;
        else
            canary_series(fam, host, "all", "", c->node[n].bench->name,
                          c->specs[c->node[n].spec].period_s, got, &last,
                          &copy[n_records + (size_t)n], now_ms);
    }
    for (int f = 0; f < FAMILIES && rc == STORE_OK; f++) {
        if (dynbuf_failed(&fam[f])) {
            rc = STORE_ERROR;
            break;
        }
        prom_help(b, families[f].name, families[f].type, families[f].help);
        (void)!dynbuf_add(b, fam[f].data ? fam[f].data : "", fam[f].len);
    }

done:
    for (int f = 0; f < FAMILIES; f++)
        dynbuf_free(&fam[f]);
    free(copy);
    return rc;
}
