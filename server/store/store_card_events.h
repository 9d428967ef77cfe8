/*
 * store_card_events.h - what the watch found on each card between runs
 * (migrations/0013_card_events.sql): its events, its last
 * reading, and its open critical events as faults of its state.  What an
 * event is comes from server/judge/card_events.h; server/runs/card_watch.c
 * decides what is stored when.  See store.h for the store itself.
 *
 * When a critical event stops being the card's fault (store_card_faults):
 *   - a lasting one (a pending or failed remap, pending retirements, an
 *     NVLink down, a narrow PCIe link) when a later reading no longer shows
 *     it (gone_at).  Not when its alert is acknowledged: the card is still
 *     as it was, and a person's "I know" does not make it healthy.
 *   - a one-off (a listed XID, an uncorrected ECC error), which no later
 *     reading can show gone, when it ran out: every benchmark of a list
 *     the caller gives (server/runs/cards.c chooses it) has a valid done
 *     run on the card finished after it, and the newest such run of each
 *     missed no floor.  For a card model with floors the list is the
 *     health suite's members with a floor of the card itself (common/
 *     expect.h, gb_expect_card_floored): the card was tried where its
 *     floors are and met them, as the canary's health suite does; a short
 *     run without floors (smem_stride) shows only that one kernel ran.
 *     For a model without floors it is every member of the health suite
 *     that runs on one card: with nothing to meet, the most a card can
 *     show is that all of it ran validly.  (p2p_bandwidth is in neither:
 *     it runs once a node, on its lowest GPU, and not on a node of one.)
 *     Its alert is cleared then, naming the run that completed the set
 *     (store_card_one_offs_clear).  It also ends when the alert of its
 *     subject was acknowledged after it (a person looked and judged it
 *     harmless).
 */
#ifndef GPUBENCH_STORE_STORE_CARD_EVENTS_H
#define GPUBENCH_STORE_STORE_CARD_EVENTS_H

#include <stdint.h>
#include <cjson/cJSON.h>

#include "store.h"

#define STORE_CARD_EVENTS_PAGE_MAX 500

/* One event to store (card_events.h's struct card_event, and where it
 * goes); the strings and detail are borrowed. */
struct card_event_row {
    const char *kind;
    const char *subject; /* card_event_subject */
    const char *message;
    int critical;
    int lasting; /* card_event_lasting */
    const cJSON *detail;
};

/* One reading of card uuid (on host, taken at at_ms) in one transaction:
 * kept as the card's last, its n events stored, and the lasting events
 * gone[0..n_gone) marked gone, their subjects' open card_event alerts
 * cleared ("a later reading no longer shows it").  ids (room for n, or
 * NULL) get the new events' ids. */
int store_card_reading(struct store *s, const char *uuid, const char *host, int64_t at_ms,
                       const cJSON *reading, const struct card_event_row *events, int n,
                       const long long *gone, int n_gone, long long *ids);

/* Card uuid's last stored reading (NEW into *reading), or STORE_NOT_FOUND. */
int store_card_last_reading(struct store *s, const char *uuid, cJSON **reading);

/* Card uuid's lasting events not yet gone: a NEW array of {"id", "kind",
 * "detail"}. */
int store_card_open_lasting(struct store *s, const char *uuid, cJSON **events);

/* A page of card uuid's events, newest first: at most limit, older than
 * event before (0: from the newest).  A NEW array of {"id", "at", "kind",
 * "subject", "critical", "message", "detail", "gone_at"}; *next is the id
 * to pass as before for the next page, 0 at the end.  STORE_NOT_FOUND
 * when the store knows nothing of the card (no reading, event or run). */
int store_card_events_list(struct store *s, const char *uuid, long long before, int limit,
                           cJSON **events, long long *next);

/* Every card's events counted by kind and critical (for /metrics): a NEW
 * array of {"host", "uuid", "kind", "critical", "count"}. */
int store_card_event_counts(struct store *s, cJSON **counts);

/* Whether card uuid has a critical event not yet gone (a state still
 * shown or any one-off): 1 or 0 into *any.  Only such a card can have a
 * fault of store_card_faults, whose closing runs take longer to name; most
 * cards of a hub's coverage have none (one index probe, card_events_open). */
int store_card_any_open_event(struct store *s, const char *uuid, int *any);

/* Card uuid's open critical events (see the top of this file) as faults
 * for server/judge/card_state.h, newest first: a NEW array of {"kind":
 * "card_event", "subject", "message", "at"}.  closing: the benchmarks whose runs end
 * a one-off, a JSON array text (an empty one ends none). */
int store_card_faults(struct store *s, const char *uuid, const char *closing, cJSON **faults);

/* Clears card uuid's open (confirmed or acknowledged) card_event alerts
 * whose one-off events all ran out by closing's runs (as store_card_faults
 * judges them), with run_id as the clearing run and reason as the alert's;
 * *cleared (may be NULL): how many.  Strings borrowed. */
int store_card_one_offs_clear(struct store *s, const char *uuid, const char *closing,
                              const char *run_id, const char *reason, int *cleared);

#endif
