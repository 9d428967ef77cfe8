/*
 * store_owners.c - who speaks for a card (migrations/0021_card_owners.sql;
 * README "A fleet", who is believed about what).  A card (its uuid) has
 * one owner at a time: this node once a run of it is measured here, else
 * the origin whose run first named it here.  A run from a peer (its origin
 * as peers_batch.c decided it) may name a card that has no owner, which it
 * then claims, or one its own origin owns; an imported run (origin
 * "import", here or relayed) never claims a card and may name one with no
 * owner, one of this node's (an operator restoring the node's own export)
 * or, relayed, one owned by the peer it came through.  Every other run is
 * refused by store_fleet.c.  The rule's steps run on the writer, inside
 * the caller's transaction; an operator's release (store_owners.h) in one
 * of its own.
 */
#include "store_internal.h"
#include "store_owners.h"

#include "log.h"
#include "timeutil.h"

#include <stdio.h>
#include <string.h>

/* The origin imported runs are stored with (runs/run_finish.h's
 * RUN_ORIGIN_IMPORT: the store is below that layer). */
#define ORIGIN_IMPORT "import"

int store_card_speaks(struct store_query *q, const struct run_record *r, const char *via,
                      struct card_owner *owner)
{
    const char *origin;
    int imported;

    memset(owner, 0, sizeof(*owner));
    if (r->device_uuid == NULL || r->device_uuid[0] == '\0')
        return 1; /* no card named: nobody's to speak for */
    if (store_query_prepare(q, "SELECT origin, host FROM card_owners "
                               "WHERE device_uuid = ?1") != STORE_OK)
        return -1;
    store_bind_text(q, 1, r->device_uuid);
    switch (store_query_step(q)) {
    case STORE_STEP_DONE:
        owner->claim = r->origin == NULL || strcmp(r->origin, ORIGIN_IMPORT) != 0;
        return 1;
    case STORE_STEP_ROW:
        break;
    default:
        return -1;
    }
    origin = store_col_text(q->st, 0);
    snprintf(owner->origin, sizeof(owner->origin), "%s", origin ? origin : "");
    snprintf(owner->host, sizeof(owner->host), "%s",
             store_col_text(q->st, 1) ? store_col_text(q->st, 1) : "");
    imported = r->origin != NULL && strcmp(r->origin, ORIGIN_IMPORT) == 0;
    if (origin == NULL) /* this node's own card */
        return imported && via == NULL;
    if (r->origin != NULL && strcmp(r->origin, origin) == 0)
        return 1;
    return imported && via != NULL && strcmp(via, origin) == 0;
}

int store_card_claim(struct store_query *q, const struct run_record *r)
{
    char now[32];

    time_now_rfc3339(now, sizeof(now));
    return store_query_run(q,
                           "INSERT OR IGNORE INTO card_owners (device_uuid, origin, host, since) "
                           "VALUES (?1, ?2, ?3, ?4)",
                           NULL, STORE_TEXT(r->device_uuid), STORE_TEXT(r->origin),
                           STORE_TEXT(r->host ? r->host : ""), STORE_TEXT(now));
}

int store_card_claim_here(struct store_query *q, const char *run_id)
{
    char uuid[136] = "", was[160] = "", now[32];
    int step;

    if (store_query_prepare(q, "SELECT r.device_uuid, o.origin FROM runs r "
                               "JOIN card_owners o ON o.device_uuid = r.device_uuid "
                               "WHERE r.id = ?1 AND o.origin IS NOT NULL") != STORE_OK)
        return STORE_ERROR;
    store_bind_text(q, 1, run_id);
    if ((step = store_query_step(q)) == STORE_STEP_ROW) {
        snprintf(uuid, sizeof(uuid), "%s", store_col_text(q->st, 0));
        snprintf(was, sizeof(was), "%s", store_col_text(q->st, 1));
    } else if (step != STORE_STEP_DONE) {
        return STORE_ERROR;
    }
    if (uuid[0])
        log_warn("card %s: measured on this node, so this node speaks for it from now on; "
                 "runs naming it from %s are refused",
                 uuid, was);
    time_now_rfc3339(now, sizeof(now));
    return store_query_run(q,
                           "INSERT INTO card_owners (device_uuid, origin, host, since) "
                           "SELECT device_uuid, NULL, host, ?2 FROM runs WHERE id = ?1 "
                           "AND device_uuid IS NOT NULL AND device_uuid <> '' "
                           "ON CONFLICT (device_uuid) DO UPDATE SET origin = NULL, "
                           "host = excluded.host, since = excluded.since "
                           "WHERE origin IS NOT NULL",
                           NULL, STORE_TEXT(run_id), STORE_TEXT(now));
}

int store_card_owner(struct store *s, const char *uuid, cJSON **owner)
{
    static const char sql[] = "SELECT origin, host, since FROM card_owners "
                              "WHERE device_uuid = ?1";

    return store_read_objects(s, "read who speaks for a card", sql, uuid, NULL, owner);
}

int store_card_release(struct store *s, const char *uuid, cJSON **was)
{
    struct store_query q;
    cJSON *rows = NULL;
    int rc = STORE_ERROR, changes = 0;

    *was = NULL;
    store_query_begin(&q, &s->writer, "release a card's owner");
    if (store_query_transaction(&q) != STORE_OK ||
        store_query_prepare(&q, "SELECT origin, host, since FROM card_owners "
                                "WHERE device_uuid = ?1") != STORE_OK)
        goto done;
    store_bind_text(&q, 1, uuid);
    if (store_rows_as_objects(&q, &rows) != STORE_OK ||
        store_query_run(&q, "DELETE FROM card_owners WHERE device_uuid = ?1", &changes,
                        STORE_TEXT(uuid)) != STORE_OK)
        goto done;
    if (changes == 0) {
        rc = STORE_NOT_FOUND;
        goto done;
    }
    if ((*was = cJSON_DetachItemFromArray(rows, 0)) == NULL)
        goto done;
    rc = store_query_commit(&q);
    if (rc == STORE_OK)
        log_warn("card %s: released by the operator; the next run naming it claims it", uuid);

done:
    cJSON_Delete(rows);
    if (rc != STORE_OK) {
        cJSON_Delete(*was);
        *was = NULL;
    }
    return store_query_end(&q, rc);
}
