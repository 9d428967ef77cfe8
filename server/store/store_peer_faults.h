/*
 * store_peer_faults.h - the open critical card events each peer reported
 * (migrations/0015_peer_card_faults.sql): what a hub knows of its peers'
 * cards between their runs.  server/runs/peers_faults.c fetches and
 * replaces them, server/runs/peers_apply.c drops those of peers no longer
 * pulled; server/runs/cards.c adds them to a card's faults.  See store.h for the store itself.
 */
#ifndef GPUBENCH_STORE_STORE_PEER_FAULTS_H
#define GPUBENCH_STORE_STORE_PEER_FAULTS_H

#include <cjson/cJSON.h>

#include "store.h"

/* Makes faults the whole of what peer (its URL) reports, in one
 * transaction: its earlier rows are deleted and each of faults, {"uuid",
 * "host", "subject", "message", "at", "hops"} (strings and a whole number
 * of at least 1, as card_faults_parse makes them), stored.  Borrowed. */
int store_peer_faults_replace(struct store *s, const char *peer, const cJSON *faults);

/* Deletes the rows of every peer not in peers, a JSON array text of URLs
 * ("[]": all of them); *dropped (may be NULL) gets how many rows went. */
int store_peer_faults_keep(struct store *s, const char *peers, int *dropped);

/* What the peers report of card uuid, newest first: a NEW array of
 * {"kind": "card_event", "subject", "message", "at", "source" (the peer's
 * URL), "hops"}, one event once however many peers report it (as the
 * nearest of them, the fewest hops away, reports it). */
int store_peer_faults_of(struct store *s, const char *uuid, cJSON **faults);

/* The cards with a fault a peer reports or an open critical event of
 * this daemon's own watch (a candidate: store_card_faults decides whether
 * a one-off is still open): a NEW array of {"uuid", "host"}, by uuid. */
int store_fault_cards(struct store *s, cJSON **cards);

/* Who speaks for card uuid on host here (migrations/0021_card_owners.sql:
 * the origin that first brought it, or this node once it measured it): a
 * NEW array of none (no owner, or one naming another host), or one
 * {"origin": text, or null for this node}.  What runs/peers_faults.c asks
 * before it believes a peer about the card. */
int store_card_owner_of(struct store *s, const char *uuid, const char *host, cJSON **owner);

#endif
