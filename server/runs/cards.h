/*
 * cards.h - the cards this daemon knows and the state of each
 * (GET /cards, GET /cards/UUID; /coverage and `gpubench check` ask the same
 * functions).  The state itself is judged by server/judge/card_state.c from
 * what is read here: the card's newest valid health runs (the members of
 * the health suite, common/bench_suite.h) and its faults (cards_faults).
 */
#ifndef GPUBENCH_RUNS_CARDS_H
#define GPUBENCH_RUNS_CARDS_H

#include <stdint.h>
#include <cjson/cJSON.h>

struct store;

/* The faults that make card uuid degraded, each {"kind", "message", "at"}:
 * its open critical card events (cards_event_faults), those its node
 * reports through the peers (kind "card_event", store_peer_faults_of,
 * each with its "source"), its confirmed floor alerts, and the floors its
 * runs missed twice in a row (card_repeat_faults: a hub's or imported
 * runs).  A NEW array into *faults; a STORE_* code. */
int cards_faults(struct store *s, const char *uuid, cJSON **faults);

/* Card uuid's open critical events of this daemon's own watch
 * (store_card_faults with the card's cards_one_off_closing): a NEW array
 * of {"kind": "card_event", "subject", "message", "at"} into *faults,
 * newest first; a STORE_* code. */
int cards_event_faults(struct store *s, const char *uuid, cJSON **faults);

/* The faults card uuid's node reported through the peers
 * (store_peer_faults_of), or none when this daemon's own watch reads the
 * card (a watch reading is stored here): then its own events are the
 * truth, and a peer's report of them an echo of this daemon's (two
 * daemons that pull each other).  A NEW array into *faults; a STORE_*
 * code. */
int cards_peer_faults(struct store *s, const char *uuid, cJSON **faults);

/* The benchmarks whose runs end a one-off critical event (an XID, an
 * uncorrected ECC error) of a card named device_name (NULL: unknown), as
 * store_card_faults takes them: the health suite's members with a floor of
 * the card's own model (gb_expect_card_floored), *floored 1; for a model
 * without floors, every member that runs on one card, *floored 0
 * (store_card_events.h says why).  A NEW JSON array text the caller frees,
 * or NULL out of memory. */
char *cards_one_off_closing(const char *device_name, int *floored);

/* Card uuid's state as card_state_judge gives it ({"state", "reason",
 * "last_checked_at"}) with a max_age_ms window ending now; *health (when
 * not NULL) gets the health runs it was judged from (NEW).  A NEW object
 * into *state; a STORE_* code. */
int cards_state(struct store *s, const char *uuid, int64_t max_age_ms, cJSON **state,
                cJSON **health);

/* Every card: own (gpu_pool_describe's {"devices", "host"}, may be NULL)
 * and each in the store, own and peers'; each {"uuid", "host", "index",
 * "name", "model", "state", "reason", "last_checked_at"}.  A NEW array. */
int cards_list(struct store *s, const cJSON *own, int64_t max_age_ms, cJSON **cards);

/* One card as GET /cards/UUID shows it: the fields of cards_list, then
 * "max_age_s", "checks" (its newest valid health runs' checks, each with
 * "benchmark", "run_id" and "learned": {"value", "n_cards"} where
 * FLEET_MIN_CARDS cards of its model have the row, else null), "runs"
 * (those runs: id, benchmark, finished_at), "alerts" (its open ones) and
 * "peer_faults" (store_peer_faults_of: what its node reports, from where).
 * STORE_NOT_FOUND when neither own nor in the store. */
int cards_get(struct store *s, const cJSON *own, const char *uuid, int64_t max_age_ms,
              cJSON **card);

#endif
