/*
 * card_faults.c - see card_faults.h.  The answer is built from the store's
 * candidates (store_fault_cards) card by card with the rules a card's
 * state uses (cards_event_faults, cards_peer_faults), so a card is in
 * it exactly when those make it degraded for a card event.
 */
#include "card_faults.h"

#include "cards.h"
#include "log.h"
#include "run_request.h"
#include "store.h"
#include "store_peer_faults.h"

#include <stdio.h>
#include <string.h>

/* The longest text kept of a peer's fault, by field: a peer's answer is
 * stored, so what it sends is bounded. */
#define FAULT_UUID_MAX 128
#define FAULT_HOST_MAX 256
#define FAULT_SUBJECT_MAX 128
#define FAULT_MESSAGE_MAX 512
#define FAULT_AT_MAX 40

/* Moves faults into out while out has fewer than CARD_FAULTS_PER_CARD;
 * own ones (of this daemon's watch) get source null and hops 0, a peer's
 * have theirs.  0, or -1 out of memory. */
static int take_faults(cJSON *out, cJSON *faults, int own)
{
    while (cJSON_GetArraySize(faults) > 0 && cJSON_GetArraySize(out) < CARD_FAULTS_PER_CARD) {
        cJSON *f = cJSON_DetachItemFromArray(faults, 0);

        if (!cJSON_AddItemToArray(out, f)) {
            cJSON_Delete(f);
            return -1;
        }
        if (own && (!cJSON_AddNullToObject(f, "source") ||
                    !cJSON_AddNumberToObject(f, "hops", 0)))
            return -1;
    }
    return 0;
}

/* The entry of card c ({"uuid", "host"} of store_fault_cards) into
 * *entry: NEW, or NULL when it has no open fault. */
static int card_entry(struct store *s, const cJSON *c, cJSON **entry)
{
    const char *uuid = cJSON_GetStringValue(cJSON_GetObjectItem(c, "uuid"));
    const char *host = cJSON_GetStringValue(cJSON_GetObjectItem(c, "host"));
    cJSON *own = NULL, *peers = NULL, *faults;
    int rc;

    *entry = NULL;
    if ((rc = cards_event_faults(s, uuid, &own)) != STORE_OK ||
        (rc = cards_peer_faults(s, uuid, &peers)) != STORE_OK)
        goto done;
    if (cJSON_GetArraySize(own) + cJSON_GetArraySize(peers) == 0)
        goto done;
    rc = STORE_ERROR;
    if ((*entry = cJSON_CreateObject()) == NULL ||
        !cJSON_AddStringToObject(*entry, "host", host ? host : "") ||
        !cJSON_AddStringToObject(*entry, "uuid", uuid ? uuid : "") ||
        (faults = cJSON_AddArrayToObject(*entry, "faults")) == NULL ||
        take_faults(faults, own, 1) != 0 || take_faults(faults, peers, 0) != 0)
        goto done;
    rc = STORE_OK;

done:
    cJSON_Delete(own);
    cJSON_Delete(peers);
    if (rc != STORE_OK) {
        cJSON_Delete(*entry);
        *entry = NULL;
    }
    return rc;
}

/* About what fault f takes printed: its names and texts and their marks. */
static size_t fault_bytes(const cJSON *f)
{
    const cJSON *m;
    size_t n = 2;

    cJSON_ArrayForEach(m, f) {
        n += strlen(m->string) + 6;
        n += cJSON_IsString(m) ? strlen(m->valuestring) : 24;
    }
    return n;
}

/* The item at index i of array (NULL past its end), in one walk. */
static cJSON *nth_item(cJSON *array, int i)
{
    cJSON *item = array ? array->child : NULL;

    while (item && i-- > 0)
        item = item->next;
    return item;
}

/* Deletes from and every item after it out of array; how many. */
static int drop_from(cJSON *array, cJSON *from)
{
    int n = 0;

    while (from) {
        cJSON *next = from->next;
        cJSON_Delete(cJSON_DetachItemViaPointer(array, from));
        from = next;
        n++;
    }
    return n;
}

/* The answer made to fit CARD_FAULTS_ANSWER_BYTES, fairly: every card
 * keeps its newest faults, as many a card as fit for all (at least one),
 * so no card with many faults, nor a peer's many cards, push the others
 * out of what a hub pulling this daemon accepts; past even one each, the
 * last cards (by uuid) go, logged.  cards: the answer's list. */
static void fit_answer(cJSON *cards)
{
    size_t total, base = 2;
    int keep = CARD_FAULTS_PER_CARD, n = cJSON_GetArraySize(cards), dropped = 0;
    const cJSON *c, *f;

    for (;; keep--) {
        total = base;
        cJSON_ArrayForEach(c, cards) {
            int i = 0;

            total += fault_bytes(c) + 16; /* host, uuid and marks; faults below */
            cJSON_ArrayForEach(f, cJSON_GetObjectItem(c, "faults")) {
                if (i++ == keep)
                    break;
                total += fault_bytes(f) + 1;
            }
        }
        if (total <= CARD_FAULTS_ANSWER_BYTES || keep == 1)
            break;
    }
    /* Each list cut at keep, and the last cards dropped, by walking
     * forward once (counting or indexing from the end walks the list at
     * every step: quadratic). */
    cJSON_ArrayForEach(c, cards) {
        cJSON *faults = cJSON_GetObjectItem(c, "faults");

        drop_from(faults, nth_item(faults, keep));
    }
    if (total > CARD_FAULTS_ANSWER_BYTES && n > 1) {
        cJSON *cut = cards->child->next;
        size_t all = 0;

        cJSON_ArrayForEach(c, cards)
            all += fault_bytes(c) + 16;
        /* the answer with the first card only, then with each next that fits */
        total = total - all + fault_bytes(cards->child) + 16;
        for (; cut && total + fault_bytes(cut) + 16 <= CARD_FAULTS_ANSWER_BYTES; cut = cut->next)
            total += fault_bytes(cut) + 16;
        dropped = drop_from(cards, cut);
    }
    if (dropped || keep < CARD_FAULTS_PER_CARD)
        log_warn("GET /card_faults: %d fault(s) a card kept and %d card(s) left out, to stay "
                 "within %d MiB",
                 keep, dropped, CARD_FAULTS_ANSWER_BYTES / (1024 * 1024));
}

int card_faults_report(struct store *s, cJSON **answer)
{
    cJSON *candidates = NULL, *list, *entry;
    const cJSON *c;
    int rc;

    *answer = NULL;
    if ((rc = store_fault_cards(s, &candidates)) != STORE_OK)
        return rc;
    if ((*answer = cJSON_CreateObject()) == NULL ||
        (list = cJSON_AddArrayToObject(*answer, "cards")) == NULL)
        rc = STORE_ERROR;
    cJSON_ArrayForEach(c, candidates) {
        if (rc != STORE_OK)
            break;
        if ((rc = card_entry(s, c, &entry)) == STORE_OK && entry &&
            !cJSON_AddItemToArray(list, entry)) {
            cJSON_Delete(entry);
            rc = STORE_ERROR;
        }
    }
    cJSON_Delete(candidates);
    if (rc == STORE_OK)
        fit_answer(list);
    if (rc != STORE_OK) {
        cJSON_Delete(*answer);
        *answer = NULL;
    }
    return rc;
}

/* Field name of o as a string of at most max bytes, or NULL (err says
 * why, naming where). */
static const char *bounded(const cJSON *o, const char *name, size_t max, const char *where,
                           char *err, size_t cap)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(o, name));

    if (v == NULL || strlen(v) > max) {
        snprintf(err, cap, "%s: %s is not a string of at most %zu bytes", where, name, max);
        return NULL;
    }
    return v;
}

/* Fault f of card (uuid, host) as a row appended to rows, unless it is
 * past the hop limit.  0, or -1 with err set. */
static int take_row(cJSON *rows, const char *uuid, const char *host, const cJSON *f,
                    const char *where, char *err, size_t cap)
{
    const char *subject, *message, *at;
    const cJSON *hops = cJSON_GetObjectItem(f, "hops");
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(f, "kind"));
    cJSON *row;

    if (kind == NULL || strcmp(kind, "card_event") != 0) {
        snprintf(err, cap, "%s is not a fault of kind card_event", where);
        return -1;
    }
    if ((subject = bounded(f, "subject", FAULT_SUBJECT_MAX, where, err, cap)) == NULL ||
        (message = bounded(f, "message", FAULT_MESSAGE_MAX, where, err, cap)) == NULL ||
        (at = bounded(f, "at", FAULT_AT_MAX, where, err, cap)) == NULL)
        return -1;
    if (!cJSON_IsNumber(hops) || hops->valuedouble < 0 ||
        hops->valuedouble != (double)(int)hops->valuedouble) {
        snprintf(err, cap, "%s: hops is not a whole number of at least 0", where);
        return -1;
    }
    if (hops->valuedouble + 1 > CARD_FAULTS_HOPS_MAX)
        return 0;
    if ((row = cJSON_CreateObject()) == NULL || !cJSON_AddItemToArray(rows, row) ||
        !cJSON_AddStringToObject(row, "uuid", uuid) ||
        !cJSON_AddStringToObject(row, "host", host) ||
        !cJSON_AddStringToObject(row, "subject", subject) ||
        !cJSON_AddStringToObject(row, "message", message) ||
        !cJSON_AddStringToObject(row, "at", at) ||
        !cJSON_AddNumberToObject(row, "hops", hops->valuedouble + 1)) {
        snprintf(err, cap, "out of memory");
        return -1;
    }
    return 0;
}

int card_faults_parse(const char *body, size_t len, cJSON **rows, char *err, size_t cap)
{
    size_t at;
    int trailing, i = 0, rc = -1;
    cJSON *answer = json_parse_whole(body, len, &at, &trailing);
    const cJSON *cards = cJSON_GetObjectItem(answer, "cards"), *card;

    *rows = NULL;
    if (answer == NULL || !cJSON_IsArray(cards)) {
        snprintf(err, cap, "the answer is not one JSON object with a list of cards");
        goto done;
    }
    if ((*rows = cJSON_CreateArray()) == NULL) {
        snprintf(err, cap, "out of memory");
        goto done;
    }
    cJSON_ArrayForEach(card, cards) {
        const cJSON *faults = cJSON_GetObjectItem(card, "faults"), *f;
        const char *uuid, *host;
        char where[64];
        int j = 0;

        snprintf(where, sizeof(where), "cards[%d]", i++);
        if ((uuid = bounded(card, "uuid", FAULT_UUID_MAX, where, err, cap)) == NULL ||
            (host = bounded(card, "host", FAULT_HOST_MAX, where, err, cap)) == NULL)
            goto done;
        if (uuid[0] == '\0') {
            snprintf(err, cap, "%s: uuid is empty", where);
            goto done;
        }
        if (!cJSON_IsArray(faults)) {
            snprintf(err, cap, "%s: faults is not a list", where);
            goto done;
        }
        cJSON_ArrayForEach(f, faults) {
            char one[96];

            snprintf(one, sizeof(one), "%s.faults[%d]", where, j++);
            if (take_row(*rows, uuid, host, f, one, err, cap) != 0)
                goto done;
        }
    }
    rc = 0;

done:
    cJSON_Delete(answer);
    if (rc != 0) {
        cJSON_Delete(*rows);
        *rows = NULL;
    }
    return rc;
}
