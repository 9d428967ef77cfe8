/*
 * cards.c - see cards.h.  A card is named by its UUID; its host, index and
 * name are those of its newest run, or of this daemon's own GPU when it
 * has none yet (an own card with no run is unknown, not missing).
 */
#include "cards.h"

#include "bench_suite.h"
#include "card_state.h"
#include "expect.h"
#include "fleet.h"
#include "json_build.h"
#include "json_items.h"
#include "store.h"
#include "store_alerts.h"
#include "store_card_events.h"
#include "store_cards.h"
#include "store_peer_faults.h"
#include "timeutil.h"

#include <stdlib.h>
#include <string.h>

#define CARD_ALERTS_READ 500 /* open alerts read to find one card's */

/* Which members of the health suite a list keeps. */
enum members_kept {
    MEMBERS_ALL,          /* every one: the card's health runs */
    MEMBERS_ONE_CARD,     /* those that run on one card (not all_devices) */
    MEMBERS_CARD_FLOORED, /* those with a floor of the card's own model */
};

/* The health suite's members that kept keeps (for model) as a JSON array
 * text (NEW), or NULL out of memory. */
static char *health_members_kept(enum members_kept kept, const struct gb_card_model *model)
{
    const struct gb_benchmark *m[GB_SUITE_MAX_MEMBERS];
    int n = gb_suite_members(gb_suite_find("health"), m, GB_SUITE_MAX_MEMBERS);
    cJSON *list = cJSON_CreateArray();
    char *text = NULL;

    for (int i = 0; list && i < n; i++) {
        if ((kept != MEMBERS_ALL && m[i]->all_devices) ||
            (kept == MEMBERS_CARD_FLOORED && !gb_expect_card_floored(model, m[i]->name)))
            continue;
        if (!cJSON_AddItemToArray(list, cJSON_CreateString(m[i]->name)))
            goto done;
    }
    text = list ? cJSON_PrintUnformatted(list) : NULL;

done:
    cJSON_Delete(list);
    return text;
}

static char *health_members(void)
{
    return health_members_kept(MEMBERS_ALL, NULL);
}

char *cards_one_off_closing(const char *device_name, int *floored)
{
    const struct gb_card_model *model = gb_expect_model(device_name);
    char *text = health_members_kept(MEMBERS_CARD_FLOORED, model);

    *floored = 1;
    if (text && strcmp(text, "[]") == 0) { /* an unknown model: no floors to meet */
        free(text);
        *floored = 0;
        text = health_members_kept(MEMBERS_ONE_CARD, NULL);
    }
    return text;
}

int cards_event_faults(struct store *s, const char *uuid, cJSON **faults)
{
    char *name = NULL, *closing = NULL;
    int rc, floored, any;

    *faults = NULL;
    /* most cards have no event open: their name and closing runs are not
     * read (a hub's coverage asks this of every card) */
    if ((rc = store_card_any_open_event(s, uuid, &any)) != STORE_OK)
        return rc;
    if (!any)
        return (*faults = cJSON_CreateArray()) ? STORE_OK : STORE_ERROR;
    rc = store_card_name(s, uuid, &name);
    if (rc != STORE_OK && rc != STORE_NOT_FOUND) /* none: a card without runs */
        goto done;
    rc = STORE_ERROR;
    /* store_card_events.h says when one closes: its floored health runs
     * passing or an acknowledgement after a one-off, a reading without it
     * for a state */
    if ((closing = cards_one_off_closing(name, &floored)) != NULL)
        rc = store_card_faults(s, uuid, closing, faults);

done:
    free(closing);
    free(name);
    return rc;
}

/* Moves every item of from to the end of to (from is left empty).  0, or
 * -1 out of memory. */
static int append_all(cJSON *to, cJSON *from)
{
    while (from != NULL && from->child != NULL) { /* not GetArraySize: it walks the list */
        cJSON *f = cJSON_DetachItemViaPointer(from, from->child);

        if (!cJSON_AddItemToArray(to, f)) {
            cJSON_Delete(f);
            return -1;
        }
    }
    return 0;
}

int cards_peer_faults(struct store *s, const char *uuid, cJSON **faults)
{
    cJSON *reading = NULL;
    int rc = store_peer_faults_of(s, uuid, faults);

    if (rc != STORE_OK || cJSON_GetArraySize(*faults) == 0)
        return rc;
    /* a card this daemon's own watch reads: its events here are the truth,
     * and a peer's report of it only an echo of what this daemon said */
    rc = store_card_last_reading(s, uuid, &reading);
    cJSON_Delete(reading);
    if (rc == STORE_NOT_FOUND)
        return STORE_OK;
    cJSON_Delete(*faults);
    *faults = NULL;
    if (rc != STORE_OK)
        return rc;
    return (*faults = cJSON_CreateArray()) ? STORE_OK : STORE_ERROR;
}

int cards_faults(struct store *s, const char *uuid, cJSON **faults)
{
    cJSON *alerts = NULL, *pairs = NULL, *peers = NULL, *f;
    const cJSON *a;
    int rc;

    /* its open critical card events, those its node reports through the
     * peers (a hub's view of a peer's card), then its floor alerts */
    if ((rc = cards_event_faults(s, uuid, faults)) != STORE_OK ||
        (rc = cards_peer_faults(s, uuid, &peers)) != STORE_OK ||
        (rc = store_card_floor_alerts(s, uuid, &alerts)) != STORE_OK)
        goto done;
    if (append_all(*faults, peers) != 0)
        rc = STORE_ERROR;
    cJSON_ArrayForEach(a, alerts) {
        if (rc != STORE_OK)
            break;
        if ((f = card_floor_fault(a)) == NULL || !cJSON_AddItemToArray(*faults, f)) {
            cJSON_Delete(f);
            rc = STORE_ERROR;
        }
    }
    /* and the floors its runs missed twice in a row, which raise no alert
     * where the runs were not measured here */
    if (rc == STORE_OK && (rc = store_card_repeat_misses(s, uuid, &pairs)) == STORE_OK &&
        card_repeat_faults(pairs, alerts, *faults) != 0)
        rc = STORE_ERROR;

done:
    cJSON_Delete(pairs);
    cJSON_Delete(alerts);
    cJSON_Delete(peers);
    if (rc != STORE_OK) {
        cJSON_Delete(*faults);
        *faults = NULL;
    }
    return rc;
}

int cards_state(struct store *s, const char *uuid, int64_t max_age_ms, cJSON **state,
                cJSON **health)
{
    char *members = health_members();
    cJSON *runs = NULL, *faults = NULL;
    int rc = STORE_ERROR;

    *state = NULL;
    if (health)
        *health = NULL;
    if (members == NULL)
        goto done;
    if ((rc = store_card_health(s, uuid, members, &runs)) != STORE_OK ||
        (rc = cards_faults(s, uuid, &faults)) != STORE_OK)
        goto done;
    *state = card_state_judge(runs, faults, time_now_unix_ms(), max_age_ms);
    rc = *state ? STORE_OK : STORE_ERROR;
    if (rc == STORE_OK && health) {
        *health = runs;
        runs = NULL;
    }

done:
    cJSON_Delete(faults);
    cJSON_Delete(runs);
    free(members);
    return rc;
}

/* {"uuid", "host", "index", "name", "model"} then the state's fields. */
static cJSON *card_entry(const char *uuid, const char *host, const cJSON *index, const char *name,
                         const cJSON *state)
{
    const struct gb_card_model *m = gb_expect_model(name);
    cJSON *c = cJSON_CreateObject(), *field;

    if (c == NULL || !cJSON_AddStringToObject(c, "uuid", uuid) ||
        !(host ? cJSON_AddStringToObject(c, "host", host) : cJSON_AddNullToObject(c, "host")) ||
        !cJSON_AddItemToObject(c, "index",
                               cJSON_IsNumber(index) ? cJSON_CreateNumber(index->valuedouble)
                                                     : cJSON_CreateNull()) ||
        !(name ? cJSON_AddStringToObject(c, "name", name) : cJSON_AddNullToObject(c, "name")) ||
        !(m ? cJSON_AddStringToObject(c, "model", m->model) : cJSON_AddNullToObject(c, "model")))
        goto fail;
    cJSON_ArrayForEach(field, state)
        if (!cJSON_AddItemToObject(c, field->string, cJSON_Duplicate(field, 1)))
            goto fail;
    return c;

fail:
    cJSON_Delete(c);
    return NULL;
}

/* The card uuid is in list (cards_list's entries or store_cards_known's). */
static const cJSON *find_card(const cJSON *list, const char *uuid)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, list) {
        const char *u = cJSON_GetStringValue(cJSON_GetObjectItem(c, "uuid"));
        if (u && strcmp(u, uuid) == 0)
            return c;
    }
    return NULL;
}

/* The cards to show: own first ({"uuid", "host", "index", "name"}), then
 * the store's not among them.  NEW into *all. */
static int known_cards(struct store *s, const cJSON *own, cJSON **all)
{
    const char *host = cJSON_GetStringValue(cJSON_GetObjectItem(own, "host"));
    struct json_build jb = {0};
    cJSON *stored = NULL, *c;
    const cJSON *d;
    int rc;

    *all = NULL;
    if ((rc = store_cards_known(s, &stored)) != STORE_OK)
        return rc;
    if ((*all = cJSON_CreateArray()) == NULL) {
        cJSON_Delete(stored);
        return STORE_ERROR;
    }
    cJSON_ArrayForEach(d, cJSON_GetObjectItem(own, "devices")) {
        const char *uuid = cJSON_GetStringValue(cJSON_GetObjectItem(d, "uuid"));
        if (uuid == NULL || find_card(*all, uuid) || jb_failed(&jb))
            continue;
        c = jb_new_object(&jb);
        jb_push(&jb, *all, c); /* *all's now, or deleted */
        jb_string(&jb, c, "uuid", uuid);
        jb_string(&jb, c, "host", host ? host : "");
        jb_copy(&jb, c, d, "index");
        jb_copy(&jb, c, d, "name");
    }
    /* from the head, each detached in turn (no count of what is left:
     * cJSON_GetArraySize walks the list) */
    while (stored != NULL && stored->child != NULL) {
        c = cJSON_DetachItemViaPointer(stored, stored->child);
        if (find_card(*all, cJSON_GetStringValue(cJSON_GetObjectItem(c, "uuid"))))
            cJSON_Delete(c);
        else
            jb_push(&jb, *all, c);
    }
    cJSON_Delete(stored);
    if (jb_failed(&jb)) {
        cJSON_Delete(*all);
        *all = NULL;
        return STORE_ERROR;
    }
    return STORE_OK;
}

/* Card c of known_cards with its state: a NEW entry into *entry. */
static int judged_entry(struct store *s, const cJSON *c, int64_t max_age_ms, cJSON **entry,
                        cJSON **health)
{
    const char *uuid = cJSON_GetStringValue(cJSON_GetObjectItem(c, "uuid"));
    cJSON *state = NULL;
    int rc = cards_state(s, uuid, max_age_ms, &state, health);

    *entry = NULL;
    if (rc == STORE_OK) {
        *entry = card_entry(uuid, cJSON_GetStringValue(cJSON_GetObjectItem(c, "host")),
                            cJSON_GetObjectItem(c, "index"),
                            cJSON_GetStringValue(cJSON_GetObjectItem(c, "name")), state);
        rc = *entry ? STORE_OK : STORE_ERROR;
    }
    cJSON_Delete(state);
    return rc;
}

int cards_list(struct store *s, const cJSON *own, int64_t max_age_ms, cJSON **cards)
{
    cJSON *all = NULL, *entry;
    const cJSON *c;
    int rc;

    *cards = NULL;
    if ((rc = known_cards(s, own, &all)) != STORE_OK)
        return rc;
    if ((*cards = cJSON_CreateArray()) == NULL)
        rc = STORE_ERROR;
    cJSON_ArrayForEach(c, all) {
        if (rc != STORE_OK)
            break;
        if ((rc = judged_entry(s, c, max_age_ms, &entry, NULL)) == STORE_OK &&
            !cJSON_AddItemToArray(*cards, entry)) {
            cJSON_Delete(entry);
            rc = STORE_ERROR;
        }
    }
    cJSON_Delete(all);
    if (rc != STORE_OK) {
        cJSON_Delete(*cards);
        *cards = NULL;
    }
    return rc;
}

/* Its health runs' checks, each with benchmark, run_id and the learned
 * value of its model's fleet; and the runs themselves. */
static int add_checks(struct store *s, cJSON *card, const cJSON *health)
{
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(card, "name"));
    struct json_build jb = {0};
    cJSON *model = NULL, *checks = jb_array(&jb, card, "checks");
    cJSON *runs = jb_array(&jb, card, "runs");
    const cJSON *run, *c;
    int rc = STORE_OK;

    if (jb_failed(&jb))
        return STORE_ERROR;
    if (name && (rc = store_model_checks(s, name, &model)) != STORE_OK)
        return rc;
    cJSON_ArrayForEach(run, health) {
        const char *bench = cJSON_GetStringValue(cJSON_GetObjectItem(run, "benchmark"));
        const cJSON *id = cJSON_GetObjectItem(run, "id");
        cJSON *r = jb_new_object(&jb);

        jb_push(&jb, runs, r); /* runs' now, or deleted */
        jb_copy(&jb, r, run, "id");
        jb_copy(&jb, r, run, "benchmark");
        jb_copy(&jb, r, run, "finished_at");
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(run, "checks")) {
            cJSON *one, *learned;
            double median;
            int n;

            if (jb_failed(&jb))
                break;
            one = cJSON_Duplicate(c, 1);
            jb_push(&jb, checks, one); /* checks' now, or deleted */
            jb_string(&jb, one, "benchmark", bench ? bench : "");
            if (id != NULL)
                jb_item(&jb, one, "run_id", cJSON_Duplicate(id, 0));
            if (card_learned(model, bench, cJSON_GetStringValue(cJSON_GetObjectItem(c, "row")),
                             FLEET_MIN_CARDS, &median, &n)) {
                learned = jb_object(&jb, one, "learned");
                jb_number_or_null(&jb, learned, "value", median);
                jb_number(&jb, learned, "n_cards", n);
            } else {
                jb_null(&jb, one, "learned");
            }
        }
    }
    cJSON_Delete(model);
    return jb_failed(&jb) ? STORE_ERROR : rc;
}

/* Its open alerts, of every kind. */
static int add_alerts(struct store *s, cJSON *card, const char *uuid)
{
    struct json_build jb = {0};
    cJSON *open = NULL, *mine = jb_array(&jb, card, "alerts");
    const cJSON **items;
    int rc, n;

    if (jb_failed(&jb))
        return STORE_ERROR;
    if ((rc = store_alerts_list(s, 1, CARD_ALERTS_READ, &open)) != STORE_OK)
        return rc;
    /* newest first, as they were: from the last back, through an array
     * of pointers built once (indexing the list would be quadratic) */
    if ((items = json_items(open, &n)) == NULL && n < 0) {
        cJSON_Delete(open);
        return STORE_ERROR;
    }
    for (int i = n - 1; i >= 0; i--) {
        const char *u = cJSON_GetStringValue(
            cJSON_GetObjectItem(cJSON_GetObjectItem(items[i], "card"), "device_uuid"));
        if (u && strcmp(u, uuid) == 0)
            jb_push(&jb, mine, cJSON_DetachItemViaPointer(open, (cJSON *)items[i]));
    }
    free(items);
    cJSON_Delete(open);
    return jb_failed(&jb) ? STORE_ERROR : STORE_OK;
}

/* What its node reports through the peers, each with the peer it came
 * from: the faults of a hub's card that no run of its store shows. */
static int add_peer_faults(struct store *s, cJSON *card, const char *uuid)
{
    cJSON *peers = NULL;
    int rc = cards_peer_faults(s, uuid, &peers);

    if (rc == STORE_OK && !cJSON_AddItemToObject(card, "peer_faults", peers)) {
        cJSON_Delete(peers);
        rc = STORE_ERROR;
    }
    return rc;
}

int cards_get(struct store *s, const cJSON *own, const char *uuid, int64_t max_age_ms,
              cJSON **card)
{
    cJSON *all = NULL, *health = NULL;
    const cJSON *c;
    int rc;

    *card = NULL;
    if ((rc = known_cards(s, own, &all)) != STORE_OK)
        return rc;
    if ((c = find_card(all, uuid)) == NULL) {
        rc = STORE_NOT_FOUND;
        goto done;
    }
    if ((rc = judged_entry(s, c, max_age_ms, card, &health)) != STORE_OK)
        goto done;
    if (!cJSON_AddNumberToObject(*card, "max_age_s", (double)max_age_ms / 1000.0) ||
        (rc = add_checks(s, *card, health)) != STORE_OK ||
        (rc = add_alerts(s, *card, uuid)) != STORE_OK ||
        (rc = add_peer_faults(s, *card, uuid)) != STORE_OK)
        rc = rc == STORE_OK ? STORE_ERROR : rc;

done:
    if (rc != STORE_OK) {
        cJSON_Delete(*card);
        *card = NULL;
    }
    cJSON_Delete(health);
    cJSON_Delete(all);
    return rc;
}
