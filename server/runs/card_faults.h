/*
 * card_faults.h - the open critical card events of every card this daemon
 * knows, as GET /card_faults answers them, and a peer's answer read back
 * (README "Watching cards").  A card event is seen only by the
 * watch of the node that holds the card; a hub fetches each peer's answer
 * after a pull (server/runs/peers.c) and stores it whole
 * (store_peer_faults.h), so that its cards' states (cards_faults) and so
 * /cards, /coverage, /metrics and `gpubench check` agree with the node's.
 *
 * An answer holds what the daemon's own watch found (source null, hops 0)
 * and what it learned from its own peers (source the peer's URL, hops the
 * number of daemons it came through), so a lab hub over rack hubs sees
 * the nodes' events too.  Daemons that pull each other would hand an
 * ended event back and forth for ever (each keeps it while the other
 * reports it); the hop count ends that: a fault more than
 * CARD_FAULTS_HOPS_MAX daemons away from its watch is not kept, so an
 * echo dies out within that many pulls, and tiers up to that deep work.
 */
#ifndef GPUBENCH_RUNS_CARD_FAULTS_H
#define GPUBENCH_RUNS_CARD_FAULTS_H

#include <stddef.h>
#include <cjson/cJSON.h>

struct store;

/* The most daemons a fault travels through from the watch that saw it. */
#define CARD_FAULTS_HOPS_MAX 4

/* The most faults an answer gives of one card, its newest (a card's state
 * names the newest; the rest only count in its "(and N more)"), so an XID
 * storm on one card does not make the answer large. */
#define CARD_FAULTS_PER_CARD 64

/* The most an answer takes (about), half a hub's cap on it (PEER_FAULTS_CAP,
 * peers.h), so that what a hub adds (source, hops) never takes it over:
 * when the cards' faults would take more, each card keeps only its
 * newest, as many as fit for all (card_faults.c). */
#define CARD_FAULTS_ANSWER_BYTES (4 * 1024 * 1024)

/* GET /card_faults: {"cards": [{"host", "uuid", "faults": [{"kind":
 * "card_event", "subject", "message", "at", "source", "hops"}]}]}, one
 * entry per card with at least one open critical event, by uuid; its own
 * watch's faults first, then those its peers report, each newest first.
 * A NEW object into *answer; a STORE_* code. */
int card_faults_report(struct store *s, cJSON **answer);

/* A peer's GET /card_faults answer (body, len bytes) read as the rows
 * store_peer_faults_replace takes: a NEW array into *rows of {"uuid",
 * "host", "subject", "message", "at", "hops"} (one more hop than the peer
 * said; those past CARD_FAULTS_HOPS_MAX left out).  0, or -1 with why the
 * answer is refused in err (cap bytes) and *rows NULL: one bad entry
 * refuses it all, as a peer's last good answer is better than half of a
 * bad one. */
int card_faults_parse(const char *body, size_t len, cJSON **rows, char *err, size_t cap);

#endif
