/*
 * card_watch.c - see card_watch.h.  The previous reading of each card is
 * kept in a small table (a node has a handful of GPUs; a card past
 * CARD_WATCH_CARDS is diffed against the store's copy each time, slower
 * but still right).
 */
#include "card_watch.h"

#include "alerts.h"
#include "card_events.h"
#include "log.h"
#include "store.h"
#include "store_alerts.h"
#include "store_card_events.h"
#include "timeutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CARD_WATCH_CARDS 64
#define CARD_WATCH_SUBJECT 64

struct card_watch {
    struct card_watch_config cfg;
    int critical_xids[CARD_CRITICAL_XIDS_MAX];
    pthread_mutex_t lock; /* guards cards */
    struct {
        char uuid[96];
        cJSON *last; /* NULL: not read since the start (seeded from the store) */
    } cards[CARD_WATCH_CARDS];
    int n_cards;
};

struct card_watch *card_watch_new(const struct card_watch_config *cfg)
{
    struct card_watch *w = calloc(1, sizeof(*w));

    if (w == NULL || pthread_mutex_init(&w->lock, NULL) != 0) {
        log_error("out of memory starting the card watch: card events are not kept");
        free(w);
        return NULL;
    }
    w->cfg = *cfg;
    w->cfg.n_critical_xids = cfg->n_critical_xids < CARD_CRITICAL_XIDS_MAX
                                 ? cfg->n_critical_xids
                                 : CARD_CRITICAL_XIDS_MAX;
    memcpy(w->critical_xids, cfg->critical_xids, sizeof(int) * (size_t)w->cfg.n_critical_xids);
    w->cfg.critical_xids = w->critical_xids;
    return w;
}

void card_watch_free(struct card_watch *w)
{
    if (w == NULL)
        return;
    for (int i = 0; i < w->n_cards; i++)
        cJSON_Delete(w->cards[i].last);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

/* Swaps card uuid's kept reading for cur (a NEW copy is kept): the one
 * before it into *prev (NEW, or NULL when none was kept since the start). */
static void swap_last(struct card_watch *w, const char *uuid, const cJSON *cur, cJSON **prev)
{
    cJSON *copy = cJSON_Duplicate(cur, 1);
    int i;

    *prev = NULL;
    pthread_mutex_lock(&w->lock);
    for (i = 0; i < w->n_cards && strcmp(w->cards[i].uuid, uuid) != 0; i++)
        ;
    if (i == w->n_cards && i < CARD_WATCH_CARDS) {
        snprintf(w->cards[i].uuid, sizeof(w->cards[i].uuid), "%s", uuid);
        w->cards[i].last = NULL;
        w->n_cards++;
    }
    if (i < w->n_cards) {
        *prev = w->cards[i].last;
        w->cards[i].last = copy;
        copy = NULL;
    }
    pthread_mutex_unlock(&w->lock);
    cJSON_Delete(copy);
}

/* The lasting events of card uuid that reading shows gone, into gone
 * (room for cap): their number. */
static int gone_events(struct card_watch *w, const char *uuid, const cJSON *reading,
                       long long *gone, int cap)
{
    cJSON *open = NULL;
    const cJSON *e;
    int n = 0;

    if (store_card_open_lasting(w->cfg.store, uuid, &open) != STORE_OK) {
        log_warn("card %s: its open card events could not be read: none ends now", uuid);
        return 0;
    }
    cJSON_ArrayForEach(e, open) {
        const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(e, "kind"));
        if (n < cap && kind &&
            !card_event_holds(kind, cJSON_GetObjectItem(e, "detail"), reading))
            gone[n++] = (long long)cJSON_GetNumberValue(cJSON_GetObjectItem(e, "id"));
    }
    cJSON_Delete(open);
    return n;
}

int card_watch_events(struct store *s, const cJSON *own, const char *uuid, long long before,
                      int limit, cJSON **events, long long *next)
{
    int rc = store_card_events_list(s, uuid, before, limit, events, next);
    const cJSON *d;

    if (rc != STORE_NOT_FOUND)
        return rc;
    cJSON_ArrayForEach(d, cJSON_GetObjectItem(own, "devices")) {
        const char *u = cJSON_GetStringValue(cJSON_GetObjectItem(d, "uuid"));
        if (u && strcmp(u, uuid) == 0)
            return (*events = cJSON_CreateArray()) ? STORE_OK : STORE_ERROR;
    }
    return rc;
}

void card_watch_reading(struct card_watch *w, const char *uuid, const char *name,
                        const cJSON *reading)
{
    struct card_event ev[CARD_EVENTS_MAX];
    struct card_event_row rows[CARD_EVENTS_MAX];
    char subjects[CARD_EVENTS_MAX][CARD_WATCH_SUBJECT];
    long long gone[CARD_EVENTS_MAX];
    const cJSON *t = cJSON_GetObjectItem(reading, "t");
    int64_t at = cJSON_IsNumber(t) ? (int64_t)t->valuedouble : time_now_unix_ms();
    cJSON *prev = NULL;
    int n, n_gone;

    if (w == NULL || uuid == NULL || uuid[0] == '\0' ||
        !cJSON_IsTrue(cJSON_GetObjectItem(reading, "available")))
        return; /* nothing to compare: the next available reading is */
    swap_last(w, uuid, reading, &prev);
    if (prev == NULL && store_card_last_reading(w->cfg.store, uuid, &prev) == STORE_ERROR)
        log_warn("card %s: its last stored reading could not be read: compared as a first "
                 "reading",
                 uuid);
    n = card_events_diff(prev, reading, w->cfg.critical_xids, w->cfg.n_critical_xids, ev,
                         CARD_EVENTS_MAX);
    if (n < 0) {
        cJSON *mine = NULL;

        /* the last reading stays the one before, so that the next one
         * finds these events again */
        log_warn("card %s: out of memory comparing its reading: not stored", uuid);
        swap_last(w, uuid, prev, &mine);
        cJSON_Delete(mine);
        n = 0;
        goto done;
    }
    n_gone = gone_events(w, uuid, reading, gone, CARD_EVENTS_MAX);
    for (int i = 0; i < n; i++) {
        card_event_subject(&ev[i], subjects[i], sizeof(subjects[i]));
        rows[i] = (struct card_event_row){ev[i].kind, subjects[i], ev[i].message,
                                          ev[i].critical, card_event_lasting(ev[i].kind),
                                          ev[i].detail};
    }
    if (store_card_reading(w->cfg.store, uuid, w->cfg.host, at, reading, rows, n, gone, n_gone,
                           NULL) != STORE_OK) {
        log_warn("card %s: its watch reading and %d event(s) could not be stored", uuid, n);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        struct alert_card_event a = {w->cfg.host, uuid, name, subjects[i], ev[i].message};
        log_info("card %s: %s%s", uuid, ev[i].message, ev[i].critical ? " (critical)" : "");
        if (ev[i].critical)
            alerts_on_card_event(w->cfg.alerts, &a);
    }

done:
    card_events_free(ev, n);
    cJSON_Delete(prev);
}
