/*
 * store_peer_faults.c - see store_peer_faults.h.  A peer's answer replaces
 * its rows in one transaction, so a reader sees the last answer or the one
 * before, never half of one.  The reads go through store_read_objects
 * (store_internal.h).
 */
#include "store_peer_faults.h"

#include "store_internal.h"
#include "store_touch.h"

/* Field name of fault f as text (NULL when it is not one). */
static const char *text_of(const cJSON *f, const char *name)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(f, name));
}

/* Says which cards a replacement of peer's rows by faults touches: those
 * of its rows now and those of faults (store_touch.h). */
static int touch_cards(struct store_query *q, const char *peer, const cJSON *faults)
{
    const cJSON *f;
    int step;

    if (store_query_prepare(q, "SELECT DISTINCT device_uuid FROM peer_card_faults "
                               "WHERE peer = ?1") != STORE_OK)
        return STORE_ERROR;
    store_bind_text(q, 1, peer);
    while ((step = store_query_step(q)) == STORE_STEP_ROW)
        store_query_touch(q, STORE_TOUCH_CARD, store_col_text(q->st, 0));
    if (step != STORE_STEP_DONE)
        return STORE_ERROR;
    cJSON_ArrayForEach(f, faults)
        store_query_touch(q, STORE_TOUCH_CARD, text_of(f, "uuid"));
    return STORE_OK;
}

int store_peer_faults_replace(struct store *s, const char *peer, const cJSON *faults)
{
    struct store_query q;
    const cJSON *f;
    int rc = STORE_ERROR;

    store_query_begin(&q, &s->writer, "store a peer's card faults");
    if (store_query_transaction(&q) != STORE_OK ||
        touch_cards(&q, peer, faults) != STORE_OK ||
        store_query_run(&q, "DELETE FROM peer_card_faults WHERE peer = ?1", NULL,
                        STORE_TEXT(peer)) != STORE_OK)
        goto done;
    cJSON_ArrayForEach(f, faults) {
        if (store_query_run(&q,
                            "INSERT INTO peer_card_faults (peer, device_uuid, host, subject, "
                            "message, at, hops) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                            NULL, STORE_TEXT(peer), STORE_TEXT(text_of(f, "uuid")),
                            STORE_TEXT(text_of(f, "host")), STORE_TEXT(text_of(f, "subject")),
                            STORE_TEXT(text_of(f, "message")), STORE_TEXT(text_of(f, "at")),
                            STORE_INT((sqlite3_int64)cJSON_GetNumberValue(
                                cJSON_GetObjectItem(f, "hops")))) != STORE_OK)
            goto done;
    }
    rc = store_query_commit(&q);

done:
    return store_query_end(&q, rc);
}

int store_peer_faults_keep(struct store *s, const char *peers, int *dropped)
{
    struct store_query q;
    int rc;

    store_query_begin(&q, &s->writer, "drop the card faults of peers no longer pulled");
    rc = store_query_run(&q,
                         "DELETE FROM peer_card_faults WHERE peer NOT IN "
                         "(SELECT value FROM json_each(?1))",
                         dropped, STORE_TEXT(peers));
    return store_query_end(&q, rc);
}

int store_peer_faults_of(struct store *s, const char *uuid, cJSON **faults)
{
    /* SQLite takes the bare columns of a min() group from the row that
     * has the minimum: the report of the nearest peer. */
    static const char sql[] =
        "SELECT 'card_event' AS kind, subject, message, at, source, hops FROM "
        "(SELECT subject, message, at, peer AS source, min(hops) AS hops FROM "
        "peer_card_faults WHERE device_uuid = ?1 GROUP BY subject, at) "
        "ORDER BY at DESC, subject";

    return store_read_objects(s, "read the card faults peers report", sql, uuid, NULL, faults);
}

int store_fault_cards(struct store *s, cJSON **cards)
{
    /* card_events_open is the index of the first part */
    static const char sql[] =
        "SELECT device_uuid AS uuid, max(host) AS host FROM "
        "(SELECT device_uuid, host FROM card_events WHERE critical = 1 AND gone_at IS NULL "
        "UNION ALL SELECT device_uuid, host FROM peer_card_faults) "
        "GROUP BY device_uuid ORDER BY device_uuid";

    return store_read_objects(s, "read the cards with card faults", sql, NULL, NULL, cards);
}

int store_card_owner_of(struct store *s, const char *uuid, const char *host, cJSON **owner)
{
    static const char sql[] = "SELECT origin FROM card_owners WHERE device_uuid = ?1 "
                              "AND host = ?2";

    return store_read_objects(s, "read who speaks for a card", sql, uuid, host, owner);
}
