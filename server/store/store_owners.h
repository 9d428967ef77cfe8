/*
 * store_owners.h - who speaks for each card here (migrations/0021_card_owners.sql;
 * README "A fleet"): read for GET /cards/UUID and released by DELETE
 * /cards/UUID/owner (server/http/api_cards.c), the operator's hand-over of
 * a card that moved to another node.  The rule that sets an owner is
 * store_fleet.c's and store_queue.c's (store_owners.c, store_internal.h).
 * See store.h for the store itself.
 */
#ifndef GPUBENCH_STORE_STORE_OWNERS_H
#define GPUBENCH_STORE_STORE_OWNERS_H

#include <cjson/cJSON.h>

#include "store.h"

/* Card uuid's owner here: a NEW array of none (no run has claimed it) or
 * one {"origin": the URL, or null for this node, "host", "since"}. */
int store_card_owner(struct store *s, const char *uuid, cJSON **owner);

/* Forgets who speaks for card uuid, so that the next run naming it (from
 * any origin, or measured here) claims it: *was gets a NEW object of the
 * owner it had (as store_card_owner's).  STORE_OK, STORE_NOT_FOUND when it
 * had none, or the store's code. */
int store_card_release(struct store *s, const char *uuid, cJSON **was);

#endif
