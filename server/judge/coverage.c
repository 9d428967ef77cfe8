/*
 * coverage.c - see coverage.h.  The cards are gathered into one array
 * (the store's, which arrive grouped by card, and the daemon's own GPUs,
 * which may have no run yet), sorted, and printed with one cell per
 * member of the health suite; the suite's member list is read here, from
 * the benchmark table, so a benchmark added to the suite is covered
 * without a change here.
 */
#include "coverage.h"
#include "bench_suite.h"
#include "card_state.h"
#include "dynbuf.h"
#include "timeutil.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const state_names[] = {
    [COVERAGE_FRESH] = "fresh",
    [COVERAGE_STALE] = "stale",
    [COVERAGE_NEVER] = "never",
    [COVERAGE_FAILING] = "failing",
};

const char *coverage_state_name(enum coverage_state s)
{
    return s >= 0 && s < COVERAGE_STATES ? state_names[s] : "?";
}

/* One card being gathered; strings borrowed from the cells or q. */
struct card {
    const char *host;
    const char *uuid;
    const char *name;
    int index; /* -1: not known */
    int own;
    int host_cards; /* the cards known on its host */
    const cJSON *cell[GB_SUITE_MAX_MEMBERS];
};

static int card_order(const void *a, const void *b)
{
    const struct card *x = a, *y = b;
    int c = strcmp(x->host, y->host);

    if (c == 0)
        c = (x->index > y->index) - (x->index < y->index);
    return c ? c : strcmp(x->uuid, y->uuid);
}

static int member_of(const struct gb_benchmark **members, int n, const char *name)
{
    for (int i = 0; i < n && name; i++)
        if (strcmp(members[i]->name, name) == 0)
            return i;
    return -1;
}

/* Which cells of a card a list holds: the health suite's, judged against
 * max_age_s (and deciding the card's state), or the deep checks',
 * against deep_max_age_s (the weekly canary's window). */
struct cell_list {
    const char *cells, *left_out; /* the card's fields */
    int from, to;                 /* members[from..to) */
    long long max_age_s;
    long *totals;
};

/* The first time (Unix ms) at which a card's answer changes with time
 * alone, other than its ages (coverage_card.valid_until_ms). */
static void until(int64_t *valid_until, int64_t at_ms)
{
    if (at_ms < *valid_until)
        *valid_until = at_ms;
}

/* Adds one card's cells of list to out and counts their states into its
 * totals; 0, or -1 out of memory. */
static int add_cells(cJSON *out, const struct card *k, const struct gb_benchmark **members,
                     const struct cell_list *list, int64_t now_ms, int64_t *valid_until)
{
    cJSON *cells = cJSON_AddArrayToObject(out, list->cells);
    cJSON *left = cJSON_AddArrayToObject(out, list->left_out);

    if (cells == NULL || left == NULL)
        return -1;
    for (int m = list->from; m < list->to; m++) {
        const cJSON *src = k->cell[m];
        const char *run = cJSON_GetStringValue(cJSON_GetObjectItem(src, "run_id"));
        const cJSON *at = cJSON_GetObjectItem(src, "at_ms");
        enum coverage_state state = COVERAGE_NEVER;
        cJSON *cell;

        if (run == NULL && members[m]->min_devices > k->host_cards) {
            char why[96];
            snprintf(why, sizeof(why), "needs %d GPUs; %d known on its host",
                     members[m]->min_devices, k->host_cards);
            if ((cell = cJSON_CreateObject()) == NULL || !cJSON_AddItemToArray(left, cell) ||
                !cJSON_AddStringToObject(cell, "benchmark", members[m]->name) ||
                !cJSON_AddStringToObject(cell, "reason", why))
                return -1;
            continue;
        }
        if ((cell = cJSON_CreateObject()) == NULL || !cJSON_AddItemToArray(cells, cell) ||
            !cJSON_AddStringToObject(cell, "benchmark", members[m]->name))
            return -1;
        if (run && cJSON_IsNumber(at)) {
            int64_t age_ms = now_ms - (int64_t)at->valuedouble;
            char when[32];
            time_format_rfc3339((int64_t)at->valuedouble, when, sizeof(when));
            const cJSON *failed = cJSON_GetObjectItem(src, "checks_failed");
            state = cJSON_IsNumber(failed) && failed->valuedouble > 0 ? COVERAGE_FAILING
                    : age_ms > list->max_age_s * 1000                 ? COVERAGE_STALE
                                                                      : COVERAGE_FRESH;
            if (state == COVERAGE_FRESH) /* stale from the next ms past its window */
                until(valid_until, (int64_t)at->valuedouble + list->max_age_s * 1000 + 1);
            if (!cJSON_AddStringToObject(cell, "run_id", run) ||
                !cJSON_AddStringToObject(cell, "at", when) ||
                /* a run finished "in the future" (a peer's clock ahead) is 0 s old */
                !cJSON_AddNumberToObject(cell, "age_s", age_ms > 0 ? age_ms / 1000 : 0))
                return -1;
        } else if (!cJSON_AddNullToObject(cell, "run_id") ||
                   !cJSON_AddNullToObject(cell, "at") || !cJSON_AddNullToObject(cell, "age_s")) {
            return -1;
        }
        /* never a valid run, but an invalid one: its reasons, said */
        if (run == NULL && cJSON_GetStringValue(cJSON_GetObjectItem(src, "invalid")) &&
            !cJSON_AddStringToObject(cell, "invalid",
                                     cJSON_GetStringValue(cJSON_GetObjectItem(src, "invalid"))))
            return -1;
        if (!cJSON_AddStringToObject(cell, "state", state_names[state]))
            return -1;
        list->totals[state]++;
    }
    return 0;
}

/* "30h", "90m", "2d": a span in its largest whole unit, for reasons. */
static void span_text(long long s, char *buf, size_t cap)
{
    if (s >= 2 * 86400)
        snprintf(buf, cap, "%lldd", s / 86400);
    else if (s >= 2 * 3600)
        snprintf(buf, cap, "%lldh", s / 3600);
    else if (s >= 2 * 60)
        snprintf(buf, cap, "%lldm", s / 60);
    else
        snprintf(buf, cap, "%llds", s);
}

/* When span_text of an age of s seconds, reached at at_ms + 1000 s, says
 * something else: at the next whole unit of the one it is said in. */
static int64_t span_changes_at(int64_t at_ms, long long s)
{
    long long unit = s >= 2 * 86400 ? 86400 : s >= 2 * 3600 ? 3600
                                          : s >= 2 * 60     ? 60
                                                            : 1;

    return at_ms + (s / unit + 1) * unit * 1000;
}

/* The card's state (card_state_judge, from the runs of its cells and its
 * faults) and its coverage_reason: the first cell that is not fresh.  0,
 * or -1 out of memory or when the faults could not be read. */
static int add_state(cJSON *card, const struct card *k, const struct gb_benchmark **members,
                     int from, int n, const struct coverage_query *q, int64_t *valid_until)
{
    const cJSON *cell;
    int64_t newest_ms = INT64_MIN;
    char why[160] = "", age[24], window[24];
    cJSON *runs = cJSON_CreateArray(), *faults = NULL, *judged = NULL;
    int rc = -1;

    cJSON_ArrayForEach(cell, cJSON_GetObjectItem(card, "cells")) {
        const char *state = cJSON_GetStringValue(cJSON_GetObjectItem(cell, "state"));
        const char *bench = cJSON_GetStringValue(cJSON_GetObjectItem(cell, "benchmark"));
        const cJSON *age_s = cJSON_GetObjectItem(cell, "age_s");

        if (why[0] || strcmp(state, state_names[COVERAGE_FRESH]) == 0)
            continue;
        if (strcmp(state, state_names[COVERAGE_NEVER]) == 0) {
            const char *invalid = cJSON_GetStringValue(cJSON_GetObjectItem(cell, "invalid"));
            if (invalid)
                snprintf(why, sizeof(why), "no valid run: %s %s", bench, invalid);
            else
                snprintf(why, sizeof(why), "%s never checked", bench);
        } else if (strcmp(state, state_names[COVERAGE_STALE]) == 0) {
            int m = member_of(members, n, bench);
            span_text((long long)age_s->valuedouble, age, sizeof(age));
            span_text(q->max_age_s, window, sizeof(window));
            /* the reason says the age in its largest unit: it changes with it */
            if (m >= 0)
                until(valid_until,
                      span_changes_at((int64_t)cJSON_GetNumberValue(
                                          cJSON_GetObjectItem(k->cell[m], "at_ms")),
                                      (long long)age_s->valuedouble));
            snprintf(why, sizeof(why), "%s last checked %s ago (max %s)", bench, age, window);
        }
    }
    /* what card_state_judge reads: the newest valid run of each benchmark */
    for (int m = from; runs && m < n; m++) {
        const cJSON *src = k->cell[m], *at = cJSON_GetObjectItem(src, "at_ms");
        const char *bench = cJSON_GetStringValue(cJSON_GetObjectItem(src, "benchmark"));
        cJSON *run, *checks;
        char when[32];

        if (!cJSON_GetStringValue(cJSON_GetObjectItem(src, "run_id")) || !cJSON_IsNumber(at))
            continue;
        time_format_rfc3339((int64_t)at->valuedouble, when, sizeof(when));
        if ((int64_t)at->valuedouble > newest_ms)
            newest_ms = (int64_t)at->valuedouble;
        checks = cJSON_Duplicate(cJSON_GetObjectItem(src, "checks"), 1);
        if (checks == NULL)
            checks = cJSON_CreateNull();
        if ((run = cJSON_CreateObject()) == NULL || !cJSON_AddItemToArray(runs, run) ||
            !cJSON_AddItemToObject(run, "checks", checks) ||
            !cJSON_AddStringToObject(run, "benchmark", bench ? bench : "?") ||
            !cJSON_AddStringToObject(run, "finished_at", when) ||
            !cJSON_AddNumberToObject(run, "finished_ms", at->valuedouble))
            goto done;
    }
    if (runs == NULL || (q->read_faults && q->read_faults(q->ctx, k->uuid, &faults) != 0) ||
        (judged = card_state_judge(runs, faults, q->now_ms, q->max_age_s * 1000)) == NULL)
        goto done;
    /* unknown once its newest run is past the window (card_state_judge) */
    if (newest_ms != INT64_MIN && q->now_ms - newest_ms <= q->max_age_s * 1000)
        until(valid_until, newest_ms + q->max_age_s * 1000 + 1);
    if (!cJSON_AddItemToObject(card, "state",
                               cJSON_Duplicate(cJSON_GetObjectItem(judged, "state"), 1)) ||
        !cJSON_AddItemToObject(card, "reason",
                               cJSON_Duplicate(cJSON_GetObjectItem(judged, "reason"), 1)) ||
        !(why[0] ? cJSON_AddStringToObject(card, "coverage_reason", why)
                 : cJSON_AddNullToObject(card, "coverage_reason")))
        goto done;
    rc = 0;
done:
    cJSON_Delete(judged);
    cJSON_Delete(faults);
    cJSON_Delete(runs);
    return rc;
}

/* The newer of two cells by their run's time (a cell without a valid run
 * is the older). */
static const cJSON *newer(const cJSON *a, const cJSON *b)
{
    const cJSON *ta = cJSON_GetObjectItem(a, "at_ms"), *tb = cJSON_GetObjectItem(b, "at_ms");

    if (!cJSON_IsNumber(tb) || !cJSON_GetStringValue(cJSON_GetObjectItem(b, "run_id")))
        return a;
    if (!cJSON_IsNumber(ta) || !cJSON_GetStringValue(cJSON_GetObjectItem(a, "run_id")))
        return b;
    return tb->valuedouble > ta->valuedouble ? b : a;
}

/* A benchmark that runs on every GPU of the node at once (all_devices:
 * p2p_bandwidth) is stored under the one GPU it was queued on, but checks
 * them all: each of the host's n cards gets the host's newest run of it. */
static void share_node_runs(struct card *cards, int n, const struct gb_benchmark **members,
                            int n_members)
{
    for (int m = 0; m < n_members; m++) {
        const cJSON *best = NULL;
        if (!members[m]->all_devices)
            continue;
        for (int k = 0; k < n; k++)
            best = best ? newer(best, cards[k].cell[m]) : cards[k].cell[m];
        for (int k = 0; k < n; k++)
            cards[k].cell[m] = best;
    }
}

/* Gathers the cards of cells and q->own into cards (room for cap);
 * returns how many. */
static int gather(const cJSON *cells, const struct coverage_query *q,
                  const struct gb_benchmark **members, int n, struct card *cards, int cap)
{
    const cJSON *cell;
    int count = 0, own_shown = q->host == NULL || strcmp(q->host, q->own_host) == 0;

    cJSON_ArrayForEach(cell, cells) {
        const char *host = cJSON_GetStringValue(cJSON_GetObjectItem(cell, "host"));
        const char *uuid = cJSON_GetStringValue(cJSON_GetObjectItem(cell, "uuid"));
        const cJSON *index = cJSON_GetObjectItem(cell, "index");
        struct card *k = count ? &cards[count - 1] : NULL;
        int m;

        if (host == NULL || uuid == NULL || (q->host && strcmp(host, q->host) != 0))
            continue;
        if (k == NULL || strcmp(k->host, host) != 0 || strcmp(k->uuid, uuid) != 0) {
            if (count == cap)
                break;
            k = &cards[count++];
            memset(k, 0, sizeof(*k));
            k->host = host;
            k->uuid = uuid;
            k->index = cJSON_IsNumber(index) ? index->valueint : -1;
        }
        if (k->name == NULL)
            k->name = cJSON_GetStringValue(cJSON_GetObjectItem(cell, "name"));
        m = member_of(members, n, cJSON_GetStringValue(cJSON_GetObjectItem(cell, "benchmark")));
        if (m >= 0)
            k->cell[m] = cell;
    }
    for (int i = 0; own_shown && i < q->n_own; i++) {
        const struct coverage_gpu *g = &q->own[i];
        struct card *k = NULL;

        for (int j = 0; j < count && k == NULL; j++)
            if (strcmp(cards[j].host, q->own_host) == 0 && strcmp(cards[j].uuid, g->uuid) == 0)
                k = &cards[j];
        if (k == NULL) {
            if (count == cap)
                break;
            k = &cards[count++];
            memset(k, 0, sizeof(*k));
            k->host = q->own_host;
            k->uuid = g->uuid;
        }
        /* the pool's words for its own card over an older run's */
        k->own = 1;
        k->index = g->index;
        k->name = g->name;
    }
    qsort(cards, (size_t)count, sizeof(*cards), card_order);
    for (int i = 0; i < count;) {
        int j = i;
        while (j < count && strcmp(cards[j].host, cards[i].host) == 0)
            j++;
        for (int k = i; k < j; k++)
            cards[k].host_cards = j - i;
        share_node_runs(cards + i, j - i, members, n);
        i = j;
    }
    return count;
}

/* Adds the names of members[from..to) as the array name of out; 0 or -1. */
static int add_names(cJSON *out, const char *name, const struct gb_benchmark **members, int from,
                     int to)
{
    cJSON *names = cJSON_AddArrayToObject(out, name);

    for (int m = from; names && m < to; m++)
        if (!cJSON_AddItemToArray(names, cJSON_CreateString(members[m]->name)))
            return -1;
    return names ? 0 : -1;
}

/* Adds totals as the object name of out; 0 or -1. */
static int add_totals(cJSON *out, const char *name, const long totals[COVERAGE_STATES])
{
    cJSON *sums = cJSON_AddObjectToObject(out, name);

    for (int s = 0; sums && s < COVERAGE_STATES; s++)
        if (!cJSON_AddNumberToObject(sums, state_names[s], (double)totals[s]))
            return -1;
    return sums ? 0 : -1;
}

/* The health_deep members (the health suite's first, then its deep
 * checks: bench_suite.h, so one gathering serves both lists) into
 * members; *n of them, the first *health the health suite's (counted by
 * that suite itself, so a deep check left out of this build cannot shift
 * the line between the two lists). */
static void suite_members(const struct gb_benchmark **members, int *n, int *health)
{
    const struct gb_benchmark *only[GB_SUITE_MAX_MEMBERS];

    *n = gb_suite_members(gb_suite_find("health_deep"), members, GB_SUITE_MAX_MEMBERS);
    *health = gb_suite_members(gb_suite_find("health"), only, GB_SUITE_MAX_MEMBERS);
    if (*health > *n)
        *health = *n;
}

static long long deep_window(const struct coverage_query *q)
{
    return q->deep_max_age_s > 0 ? q->deep_max_age_s : COVERAGE_DEEP_MAX_AGE_S;
}

/* Each age_s of the cells of list name of card, a number, written as a
 * hole instead (coverage.h, age_holes): the time of its run from the
 * card's source cell of that benchmark.  0, or -1 out of memory. */
static int make_holes(cJSON *card, const char *name, const struct card *k,
                      const struct gb_benchmark **members, int n)
{
    cJSON *cell;

    cJSON_ArrayForEach(cell, cJSON_GetObjectItem(card, name)) {
        int m = member_of(members, n,
                          cJSON_GetStringValue(cJSON_GetObjectItem(cell, "benchmark")));
        const cJSON *at = m >= 0 ? cJSON_GetObjectItem(k->cell[m], "at_ms") : NULL;
        char hole[40];
        cJSON *raw;

        if (!cJSON_IsNumber(cJSON_GetObjectItem(cell, "age_s")) || !cJSON_IsNumber(at))
            continue;
        snprintf(hole, sizeof(hole), "%c%lld%c", COVERAGE_HOLE_OPEN, (long long)at->valuedouble,
                 COVERAGE_HOLE_CLOSE);
        if ((raw = cJSON_CreateRaw(hole)) == NULL ||
            !cJSON_ReplaceItemInObjectCaseSensitive(cell, "age_s", raw)) {
            cJSON_Delete(raw);
            return -1;
        }
    }
    return 0;
}

int coverage_cards(const cJSON *cells, const struct coverage_query *q, coverage_card_fn fn,
                   void *ctx)
{
    const struct gb_benchmark *members[GB_SUITE_MAX_MEMBERS];
    int n, health, cap = cJSON_GetArraySize(cells) + q->n_own, count, rc = -1;
    struct card *cards = calloc((size_t)(cap ? cap : 1), sizeof(*cards));
    struct coverage_card out;
    cJSON *card = NULL;

    suite_members(members, &n, &health);
    const struct cell_list health_cells = {"cells", "left_out", 0, health, q->max_age_s,
                                           out.totals};
    const struct cell_list deep_cells = {"deep_cells", "deep_left_out", health, n,
                                         deep_window(q), out.deep_totals};
    if (cards == NULL)
        goto done;
    count = gather(cells, q, members, n, cards, cap);
    for (int i = 0; i < count; i++) {
        const struct card *k = &cards[i];

        memset(&out, 0, sizeof(out));
        out.host = k->host;
        out.uuid = k->uuid;
        out.valid_until_ms = INT64_MAX;
        if ((card = cJSON_CreateObject()) == NULL ||
            !cJSON_AddStringToObject(card, "host", k->host) ||
            !cJSON_AddStringToObject(card, "uuid", k->uuid) ||
            !(k->index >= 0 ? cJSON_AddNumberToObject(card, "index", k->index)
                            : cJSON_AddNullToObject(card, "index")) ||
            !(k->name ? cJSON_AddStringToObject(card, "name", k->name)
                      : cJSON_AddNullToObject(card, "name")) ||
            !cJSON_AddBoolToObject(card, "own", k->own) ||
            add_cells(card, k, members, &health_cells, q->now_ms, &out.valid_until_ms) != 0 ||
            add_state(card, k, members, 0, health, q, &out.valid_until_ms) != 0 ||
            add_cells(card, k, members, &deep_cells, q->now_ms, &out.valid_until_ms) != 0 ||
            (q->age_holes && (make_holes(card, "cells", k, members, n) != 0 ||
                              make_holes(card, "deep_cells", k, members, n) != 0)))
            goto done;
        out.card = card;
        card = NULL;
        if (fn(ctx, &out) != 0)
            goto done;
    }
    rc = 0;

done:
    cJSON_Delete(card);
    free(cards);
    return rc;
}

cJSON *coverage_head(const struct coverage_query *q)
{
    const struct gb_benchmark *members[GB_SUITE_MAX_MEMBERS];
    int n, health;
    cJSON *out = cJSON_CreateObject();

    suite_members(members, &n, &health);
    if (out == NULL || !cJSON_AddStringToObject(out, "host", q->own_host) ||
        !cJSON_AddNumberToObject(out, "max_age_s", (double)q->max_age_s) ||
        !cJSON_AddNumberToObject(out, "deep_max_age_s", (double)deep_window(q)) ||
        add_names(out, "benchmarks", members, 0, health) != 0 ||
        add_names(out, "deep_benchmarks", members, health, n) != 0 ||
        cJSON_AddArrayToObject(out, "cards") == NULL) {
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}

int coverage_add_totals(cJSON *out, const long totals[COVERAGE_STATES],
                        const long deep_totals[COVERAGE_STATES])
{
    if (add_totals(out, "totals", totals) != 0 || add_totals(out, "deep_totals", deep_totals) != 0)
        return -1;
    return 0;
}

/* coverage_build's coverage_card_fn: the card into the answer's list. */
struct build_ctx {
    cJSON *list;
    long totals[COVERAGE_STATES], deep_totals[COVERAGE_STATES];
};

static int add_card(void *ctx, const struct coverage_card *c)
{
    struct build_ctx *b = ctx;

    for (int s = 0; s < COVERAGE_STATES; s++) {
        b->totals[s] += c->totals[s];
        b->deep_totals[s] += c->deep_totals[s];
    }
    if (!cJSON_AddItemToArray(b->list, c->card)) {
        cJSON_Delete(c->card);
        return -1;
    }
    return 0;
}

cJSON *coverage_build(const cJSON *cells, const struct coverage_query *q)
{
    struct build_ctx b = {0};
    cJSON *out = coverage_head(q), *result = NULL;

    if (out == NULL || (b.list = cJSON_GetObjectItem(out, "cards")) == NULL ||
        coverage_cards(cells, q, add_card, &b) != 0 ||
        coverage_add_totals(out, b.totals, b.deep_totals) != 0)
        goto done;
    result = out;
    out = NULL;

done:
    cJSON_Delete(out);
    return result;
}

int coverage_fill_ages(struct dynbuf *b, const char *text, size_t len, int64_t now_ms)
{
    const char *p = text, *end = text + len;

    while (p < end) {
        const char *open = memchr(p, COVERAGE_HOLE_OPEN, (size_t)(end - p)), *close;
        char *stop;
        long long at, age_s;

        if (open == NULL) {
            (void)!dynbuf_add(b, p, (size_t)(end - p));
            break;
        }
        (void)!dynbuf_add(b, p, (size_t)(open - p));
        if ((close = memchr(open, COVERAGE_HOLE_CLOSE, (size_t)(end - open))) == NULL)
            return -1;
        at = strtoll(open + 1, &stop, 10);
        if (stop != close)
            return -1;
        /* as add_cells prints it: a run "in the future" is 0 s old; a
         * number cJSON prints as an int where it is one */
        age_s = now_ms - at > 0 ? (now_ms - at) / 1000 : 0;
        if (age_s <= INT_MAX)
            (void)!dynbuf_printf(b, "%lld", age_s);
        else
            (void)!dynbuf_printf(b, "%1.15g", (double)age_s);
        p = close + 1;
    }
    return dynbuf_failed(b) ? -1 : 0;
}
