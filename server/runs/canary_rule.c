/*
 * canary_rule.c - see canary_rule.h.  The sentences here are what GET
 * /canaries shows as a deferral's reason, so they name the fact a person
 * can check (the process on the card, how long it has been quiet).
 */
#include "canary_rule.h"
#include "duration.h"

#include <stdio.h>
#include <string.h>

static int runs_member(const struct canary_spec *spec, const struct gb_benchmark *b)
{
    for (int i = 0; i < spec->n_members; i++)
        if (spec->members[i] == b)
            return 1;
    return 0;
}

int canary_spec_parse(const char *text, struct canary_spec *spec, char *err, size_t cap)
{
    const char *at = strrchr(text, '@');
    const struct gb_suite *suite;
    const struct gb_benchmark *b;
    size_t len = at ? (size_t)(at - text) : 0;

    memset(spec, 0, sizeof(*spec));
    if (at == NULL || len == 0) {
        snprintf(err, cap, "expected BENCHMARK@PERIOD (e.g. health@24h)");
        return -1;
    }
    if (len >= sizeof(spec->name)) {
        snprintf(err, cap, "unknown benchmark '%.*s'", (int)len, text);
        return -1;
    }
    memcpy(spec->name, text, len);
    spec->name[len] = '\0';
    suite = gb_suite_find(spec->name);
    b = gb_benchmark_find(spec->name);
    if (suite != NULL) {
        spec->n_members = gb_suite_members(suite, spec->members, GB_SUITE_MAX_MEMBERS);
    } else if (b != NULL && !b->test_only) {
        spec->members[0] = b;
        spec->n_members = 1;
    }
    if (spec->n_members == 0) {
        snprintf(err, cap, "unknown benchmark '%s' (a benchmark or a suite: GET /benchmarks)",
                 spec->name);
        return -1;
    }
    if (gb_duration_s(at + 1, &spec->period_s) != 0) {
        snprintf(err, cap,
                 "period '%s': expected a whole number then s, m, h or d (e.g. 24h), "
                 "from 1s to 366d",
                 at + 1);
        return -1;
    }
    return 0;
}

int canary_spec_contains(const struct canary_spec *outer, const struct canary_spec *inner)
{
    if (outer->n_members <= inner->n_members || !gb_suite_find(outer->name) ||
        !gb_suite_find(inner->name))
        return 0;
    for (int m = 0; m < inner->n_members; m++)
        if (!runs_member(outer, inner->members[m]))
            return 0;
    return 1;
}

int canary_spec_fits(const struct canary_spec *specs, int n, const struct canary_spec *spec,
                     char *err, size_t cap)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(specs[i].name, spec->name) == 0) {
            snprintf(err, cap, "a canary of %s is given twice", spec->name);
            return -1;
        }
        /* a suite that holds another whole (health_deep and health) */
        if (canary_spec_contains(&specs[i], spec) || canary_spec_contains(spec, &specs[i]))
            continue;
        for (int m = 0; m < spec->n_members; m++) {
            if (runs_member(&specs[i], spec->members[m])) {
                snprintf(err, cap, "the canary %s runs %s already", specs[i].name,
                         spec->members[m]->name);
                return -1;
            }
        }
    }
    return 0;
}

int64_t canary_due_ms(int64_t last_ms, int64_t period_s)
{
    return last_ms < 0 ? -1 : last_ms + period_s * 1000;
}

/* Fills the deferral's kind and sentence; returns CANARY_DEFERRED. */
static enum canary_step deferred(enum canary_defer kind, enum canary_defer *defer,
                                 char *why, size_t cap, const char *fmt, const char *a,
                                 const char *b)
{
    *defer = kind;
    snprintf(why, cap, fmt, a, b);
    return CANARY_DEFERRED;
}

enum canary_step canary_decide(const struct canary_facts *f, int64_t period_s, int64_t idle_s,
                               enum canary_defer *defer, char *why, size_t cap)
{
    int64_t due = canary_due_ms(f->last_ms, period_s);
    char quiet[24], idle[24], runs[24];

    *defer = CANARY_DEFER_NONE;
    why[0] = '\0';
    if (due >= 0 && f->now_ms < due)
        return CANARY_NOT_DUE;
    if (f->active)
        return CANARY_ACTIVE;
    if (f->queued > 0) {
        snprintf(runs, sizeof(runs), "%ld", f->queued);
        return deferred(CANARY_DEFER_USER_RUNS, defer, why, cap, "user runs queued (%s)%s",
                        runs, "");
    }
    if (f->running)
        return deferred(CANARY_DEFER_USER_RUNS, defer, why, cap, "a run is running%s%s", "",
                        "");
    if (f->quiet < 0)
        return deferred(CANARY_DEFER_NO_READING, defer, why, cap, "no reading yet%s%s",
                        f->why && f->why[0] ? ": " : "", f->why ? f->why : "");
    if (f->quiet == 0)
        return deferred(CANARY_DEFER_BUSY, defer, why, cap, "card busy: %s%s",
                        f->why && f->why[0] ? f->why : "another process uses it", "");
    if (f->now_ms - f->quiet_since_ms < idle_s * 1000) {
        int64_t for_s = (f->now_ms - f->quiet_since_ms) / 1000;
        gb_duration_format(for_s > 0 ? for_s : 0, quiet, sizeof(quiet));
        gb_duration_format(idle_s, idle, sizeof(idle));
        return deferred(CANARY_DEFER_SETTLING, defer, why, cap, "card quiet for %s of %s",
                        quiet, idle);
    }
    return CANARY_QUEUE;
}

enum canary_step canary_decide_node(const struct canary_node_facts *f, int64_t period_s,
                                    int64_t idle_s, enum canary_defer *defer, char *why,
                                    size_t cap)
{
    int64_t due = canary_due_ms(f->last_ms, period_s);
    char card_why[CANARY_REASON_MAX];

    *defer = CANARY_DEFER_NONE;
    why[0] = '\0';
    if (due >= 0 && f->now_ms < due)
        return CANARY_NOT_DUE;
    for (int i = 0; i < f->n_cards; i++) {
        struct canary_facts card = f->cards[i];
        enum canary_step step;

        card.now_ms = f->now_ms;
        card.last_ms = -1;
        step = canary_decide(&card, period_s, idle_s, defer, card_why, sizeof(card_why));
        if (step == CANARY_DEFERRED)
            snprintf(why, cap, "GPU %d: %s", f->index[i], card_why);
        if (step != CANARY_QUEUE)
            return step;
    }
    return CANARY_QUEUE;
}

int canary_note(struct canary_record *r, enum canary_step step, enum canary_defer defer,
                const char *why, int64_t now_ms)
{
    int began;

    if (step != CANARY_DEFERRED) {
        r->kind = CANARY_DEFER_NONE;
        return 0;
    }
    began = defer != r->kind;
    if (began)
        r->deferred++;
    r->kind = defer;
    snprintf(r->reason, sizeof(r->reason), "%s", why);
    r->reason_ms = now_ms;
    return began;
}
