/*
 * peers_faults.c - a peer's GET /card_faults, fetched after a good pull
 * once an interval, in the slot the pull freed and through the same
 * transfer set-up (peers_transfer.c).  Its body is kept whole (up to
 * PEER_FAULTS_CAP), read with card_faults_parse at its end, kept to the
 * cards the peer speaks for (the cards its runs came from, capped:
 * kept_rows) and stored in place of what the peer said before; a failure keeps the last answer, so
 * a card does not turn healthy here because its node could not say.
 * Runs on the puller thread; what GET /peers shows of it is written under
 * peers->lock (peers_internal.h).
 */
#include "peers_internal.h"
#include "card_faults.h"
#include "curl_tls.h"
#include "dynbuf.h"
#include "log.h"
#include "store_peer_faults.h"
#include "timeutil.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 when peer may speak for the card (uuid on host): its owner here
 * (store_card_owner_of: the origin whose run first brought it) is the
 * peer or an origin the peer may relay (README "A fleet"); that origin,
 * the card's, into owner (cap bytes).  A run sent later naming the card
 * is refused, so makes no peer its speaker.  0 when not (no owner, or this
 * node), -1 when its owner could not be read. */
static int card_owner(struct peers *all, const struct peer *peer, const char *uuid,
                      const char *host, char *owner, size_t cap)
{
    cJSON *first = NULL;
    const char *origin;
    int owned;

    if (store_card_owner_of(all->store, uuid, host, &first) != STORE_OK)
        return -1;
    origin = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(first, 0), "origin"));
    owned = origin != NULL && peer_relays(peer, origin);
    if (owned)
        snprintf(owner, cap, "%s", origin);
    cJSON_Delete(first);
    return owned;
}

/* Whether one more card of owner fits: at most PEER_FAULT_CARDS cards an
 * origin, counted in per_origin ({origin: n}).  1 counted, 0 over, -1
 * out of memory. */
static int owner_room(cJSON *per_origin, const char *owner)
{
    cJSON *n = cJSON_GetObjectItem(per_origin, owner);

    if (n == NULL)
        return cJSON_AddNumberToObject(per_origin, owner, 1) ? 1 : -1;
    if (n->valuedouble >= PEER_FAULT_CARDS)
        return 0;
    cJSON_SetNumberValue(n, n->valuedouble + 1);
    return 1;
}

/* The rows of a peer's answer (card_faults_parse's, a card's rows
 * together) it may give: those of cards it speaks for (card_owner), at
 * most CARD_FAULTS_PER_CARD a card, PEER_FAULT_CARDS cards an origin (a
 * hub relays many nodes' cards; one node's many cards must not push out
 * another's) and PEER_FAULT_ROWS in all, so that no peer can fault
 * another node's cards or fill this daemon's own answer (card_faults.h).
 * A NEW array, or NULL with err set. */
static cJSON *kept_rows(struct peers *all, struct peer *peer, const cJSON *rows, char *err,
                        size_t cap)
{
    cJSON *kept = cJSON_CreateArray(), *per_origin = cJSON_CreateObject();
    const cJSON *r;
    const char *uuid = NULL, *host = NULL, *first = NULL;
    char owner[PEER_URL_CAP];
    int owned = 0, in_card = 0, n_kept = 0, ignored = 0;

    if (kept == NULL || per_origin == NULL)
        goto oom;
    cJSON_ArrayForEach(r, rows) {
        const char *u = cJSON_GetStringValue(cJSON_GetObjectItem(r, "uuid"));
        const char *h = cJSON_GetStringValue(cJSON_GetObjectItem(r, "host"));

        if (uuid == NULL || strcmp(u, uuid) != 0 || strcmp(h, host) != 0) {
            uuid = u;
            host = h;
            in_card = 0;
            if ((owned = card_owner(all, peer, u, h, owner, sizeof(owner))) < 0) {
                snprintf(err, cap, "the cards' runs could not be read here");
                goto failed;
            }
            if (owned && (owned = owner_room(per_origin, owner)) < 0)
                goto oom;
        }
        if (!owned || in_card >= CARD_FAULTS_PER_CARD || n_kept >= PEER_FAULT_ROWS) {
            ignored++;
            first = first ? first : u;
            continue;
        }
        in_card++;
        n_kept++;
        if (!cJSON_AddItemToArray(kept, cJSON_Duplicate(r, 1)))
            goto oom;
    }
    if (ignored && ignored != peer->faults_ignored)
        log_warn("peer %s: GET /card_faults: %d fault(s) ignored (the first of card %s): a "
                 "peer speaks only for the cards its runs came from, at most %d faults a card, "
                 "%d cards an origin and %d faults in all",
                 peer->url, ignored, first, CARD_FAULTS_PER_CARD, PEER_FAULT_CARDS,
                 PEER_FAULT_ROWS);
    peer->faults_ignored = ignored;
    cJSON_Delete(per_origin);
    return kept;

oom:
    snprintf(err, cap, "out of memory");

failed:
    cJSON_Delete(per_origin);
    cJSON_Delete(kept);
    return NULL;
}

/* The end of peer's GET /card_faults: a good answer replaces what is
 * stored of the peer's cards; a 404 (a gpubench from before the route) is
 * logged once and changes nothing; any other failure is logged and the
 * last good answer kept, so that a card does not turn healthy here only
 * because its node could not say. */
void peers_faults_done(struct transfer *t, CURLcode rc)
{
    struct peer *peer = t->peer;
    cJSON *rows = NULL, *kept = NULL;
    long status = 0;
    char err[300] = "";

    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    if (status == 404) {
        if (!peer->faults_missing)
            log_info("peer %s: it has no GET /card_faults (a gpubench before it): the events "
                     "its watch finds are not seen here",
                     peer->url);
        pthread_mutex_lock(&t->all->lock);
        peer->faults_missing = 1;
        peer->faults_error[0] = '\0';
        pthread_mutex_unlock(&t->all->lock);
        return;
    }
    if (t->over_cap || rc == CURLE_FILESIZE_EXCEEDED)
        snprintf(err, sizeof(err), "the answer was over the %zu MiB cap",
                 (size_t)PEER_FAULTS_CAP / (1024 * 1024));
    else if (status != 200 && status != 0)
        snprintf(err, sizeof(err), "HTTP %ld", status);
    else if (rc != CURLE_OK && t->err[0]) /* cut as too slow (peers_transfer.c) */
        snprintf(err, sizeof(err), "%.290s", t->err);
    else if (rc != CURLE_OK)
        curl_failure_reason(rc, t->curl_err, err, sizeof(err));
    else if (card_faults_parse(t->line.data ? t->line.data : "", t->line.len, &rows, err,
                               sizeof(err)) == 0 &&
             (kept = kept_rows(t->all, peer, rows, err, sizeof(err))) != NULL &&
             store_peer_faults_replace(t->all->store, peer->url, kept) != STORE_OK)
        snprintf(err, sizeof(err), "the faults could not be stored here");
    if (err[0])
        log_warn("peer %s: GET /card_faults: %s; its cards' last known faults are kept",
                 peer->url, err);
    pthread_mutex_lock(&t->all->lock);
    peer->faults_missing = 0;
    snprintf(peer->faults_error, sizeof(peer->faults_error), "%s", err);
    if (!err[0])
        time_now_rfc3339(peer->faults_at, sizeof(peer->faults_at));
    pthread_mutex_unlock(&t->all->lock);
    cJSON_Delete(rows);
    cJSON_Delete(kept);
}

/* Starts peer's GET /card_faults, and makes the next one due an interval
 * from now.  One that cannot start is logged; the faults stored stay. */
void peers_faults_start(struct peers *all, struct peer *peer)
{
    char err[300];
    struct transfer *t = peers_get_whole(all, peer, "/card_faults", err, sizeof(err));

    peer->faults_due_ms = time_mono_ms() + (int64_t)all->interval_s * 1000;
    if (t) {
        t->faults = 1;
        return;
    }
    log_warn("peer %s: GET /card_faults could not start: %s; its cards' last known faults "
             "are kept",
             peer->url, err);
}
