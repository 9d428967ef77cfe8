/*
 * store_cards.h - what a card's state is judged from (GET /cards, issue 24;
 * server/judge/card_state.h judges it, server/runs/cards.c puts it
 * together): the cards the store knows, a card's newest valid health runs
 * with their checks, its confirmed floor alerts, and the checks of every
 * card of a model (the learned fleet value).  See store.h for the store.
 */
#ifndef GPUBENCH_STORE_STORE_CARDS_H
#define GPUBENCH_STORE_STORE_CARDS_H

#include <cjson/cJSON.h>

#include "store.h"

/* Every card with a run in the store (own and peers'): a NEW array of
 * {"host", "uuid", "index", "name"} as its newest run names it. */
int store_cards_known(struct store *s, cJSON **cards);

/* The device name of card uuid's newest run that has one: NEW into *name
 * (the caller frees it), or STORE_NOT_FOUND. */
int store_card_name(struct store *s, const char *uuid, char **name);

/* Card uuid's newest valid (or unjudged) done run of each benchmark named
 * in members (a JSON array of names, as text): a NEW array of {"id",
 * "benchmark", "host", "index", "name", "finished_at", "finished_ms" (unix
 * ms), "checks" (array or null)}, newest first. */
int store_card_health(struct store *s, const char *uuid, const char *members, cJSON **runs);

/* Card uuid's benchmarks whose newest valid run and the valid run of the
 * same request before it (same host and verdict key) both missed a floor:
 * a NEW array of {"benchmark", "run_id", "at" (its finished_at), "checks",
 * "previous_run_id", "previous_checks"}, newest first; and those whose
 * newest valid run failed an exact check (a wrong result: "exact": true),
 * with or without a run before it (previous_* null then).  Which rows
 * count is card_repeat_faults' to say. */
int store_card_repeat_misses(struct store *s, const char *uuid, cJSON **pairs);

/* Card uuid's open floor alerts that were confirmed (alerts.h), whether
 * acknowledged since or not: acknowledging says a person has seen it, and
 * only a run that meets the floor again clears it.  A NEW array of {"id",
 * "benchmark", "row", "at" (confirmed_at), "check" (the check of that row
 * in the run that confirmed it, or found it where none had to; null when
 * gone)}. */
int store_card_floor_alerts(struct store *s, const char *uuid, cJSON **alerts);

/* The checks of the newest valid done run of each benchmark on each card
 * named device_name: a NEW array of {"host", "uuid", "benchmark",
 * "checks"}. */
int store_model_checks(struct store *s, const char *device_name, cJSON **runs);

#endif
