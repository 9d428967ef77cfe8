/*
 * card_watch.h - what the daemon does with each watch reading of a card
 * (README "Watching cards"): the gpu_pool's card_reading hook
 * lands here.  The reading is diffed against the card's previous one
 * (server/judge/card_events.c), kept in memory and seeded from the store
 * when the card is first read after a start, so that a restart does not
 * report a state found before it again.  The reading, its events and the
 * lasting events it shows gone are stored together
 * (store_card_events.h); each critical event opens a card_event alert,
 * confirmed at once (a fact, not a measurement: nothing to rerun), which
 * the webhook and GET /alerts show (alerts.h).
 *
 * Called from each GPU's runner thread: the previous readings are guarded
 * by one lock, held only to swap a card's reading, never across the
 * store.  One card is only ever read by its own runner, so two readings
 * of a card never race.
 */
#ifndef GPUBENCH_RUNS_CARD_WATCH_H
#define GPUBENCH_RUNS_CARD_WATCH_H

#include <cjson/cJSON.h>

struct alerts;
struct store;
struct card_watch;

/* What the watch works with; all of it outlives the watch. */
struct card_watch_config {
    struct store *store;
    struct alerts *alerts;
    const char *host;         /* this node's name */
    const int *critical_xids; /* --critical-xids */
    int n_critical_xids;
};

/* NULL when out of memory (logged).  cfg is copied. */
struct card_watch *card_watch_new(const struct card_watch_config *cfg);
void card_watch_free(struct card_watch *w);

/* One reading of GPU uuid (its name may be NULL), borrowed.  Failures are
 * logged: the watch goes on with the next reading. */
void card_watch_reading(struct card_watch *w, const char *uuid, const char *name,
                        const cJSON *reading);

/* A page of card uuid's events (store_card_events_list: newest first, at
 * most limit, older than event before, 0 from the newest; *next for the
 * next page, 0 at the end).  own is gpu_pool_describe's (may be NULL): an
 * own card the store knows nothing of yet has no events rather than being
 * unknown.  A NEW array into *events; STORE_NOT_FOUND for a card neither
 * own nor in the store. */
int card_watch_events(struct store *s, const cJSON *own, const char *uuid, long long before,
                      int limit, cJSON **events, long long *next);

#endif
