/*
 * store_card_events.c - see store_card_events.h.  A reading and what it
 * found are written in one transaction, so that a restart never finds the
 * events without the reading they were diffed to (which would report them
 * again) or the reading without its events (which would lose them).  The
 * reads go through store_read_objects (store_internal.h).
 */
#include "store_card_events.h"

#include "store_internal.h"
#include "store_touch.h"
#include "timeutil.h"

#include <stdlib.h>

/* Stores events[i] of card uuid on q (in its transaction); its id into
 * *id.  STORE_OK or STORE_ERROR. */
static int put_event(struct store_query *q, const char *uuid, const char *host, const char *at,
                     const struct card_event_row *e, long long *id)
{
    char *detail = cJSON_PrintUnformatted(e->detail);
    int rc = STORE_ERROR;

    if (detail == NULL)
        goto done;
    rc = store_query_run(q,
                         "INSERT INTO card_events (device_uuid, host, at, kind, subject, critical, "
                         "lasting, detail, message) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                         NULL, STORE_TEXT(uuid), STORE_TEXT(host), STORE_TEXT(at),
                         STORE_TEXT(e->kind), STORE_TEXT(e->subject), STORE_INT(e->critical != 0),
                         STORE_INT(e->lasting != 0), STORE_TEXT(detail), STORE_TEXT(e->message));
    if (rc == STORE_OK)
        *id = sqlite3_last_insert_rowid(q->c->db);

done:
    free(detail);
    return rc;
}

/* Lasting event id of uuid is gone as of at, and the open alert of its
 * subject is cleared; on q, in its transaction. */
static int put_gone(struct store_query *q, const char *uuid, long long id, const char *at)
{
    int rc = store_query_run(q,
                             "UPDATE card_events SET gone_at = ?3 WHERE id = ?2 "
                             "AND device_uuid = ?1 AND lasting = 1 AND gone_at IS NULL",
                             NULL, STORE_TEXT(uuid), STORE_INT(id), STORE_TEXT(at));

    if (rc != STORE_OK)
        return rc;
    return store_query_run(q,
                           "UPDATE alerts SET state = 'cleared', cleared_at = ?3, "
                           "reason = 'a later reading of the card no longer shows it' "
                           "WHERE kind = 'card_event' AND device_uuid = ?1 "
                           "AND state IN ('confirmed', 'acknowledged') AND row_key = "
                           "(SELECT json_quote(subject) FROM card_events WHERE id = ?2)",
                           NULL, STORE_TEXT(uuid), STORE_INT(id), STORE_TEXT(at));
}

int store_card_reading(struct store *s, const char *uuid, const char *host, int64_t at_ms,
                       const cJSON *reading, const struct card_event_row *events, int n,
                       const long long *gone, int n_gone, long long *ids)
{
    struct store_query q;
    char at[32], *text = cJSON_PrintUnformatted(reading);
    int rc = STORE_ERROR;

    time_format_rfc3339(at_ms, at, sizeof(at));
    store_query_begin(&q, &s->writer, "store a card's watch reading");
    store_query_touch(&q, STORE_TOUCH_CARD, uuid); /* its reading, events and alerts */
    store_query_no_run_rows(&q);
    if (text == NULL || store_query_transaction(&q) != STORE_OK)
        goto done;
    if (store_query_run(&q,
                        "INSERT INTO card_readings (device_uuid, host, at, reading) "
                        "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (device_uuid) DO UPDATE SET "
                        "host = excluded.host, at = excluded.at, reading = excluded.reading",
                        NULL, STORE_TEXT(uuid), STORE_TEXT(host), STORE_TEXT(at),
                        STORE_TEXT(text)) != STORE_OK)
        goto done;
    for (int i = 0; i < n; i++) {
        long long id = 0;
        if (put_event(&q, uuid, host, at, &events[i], &id) != STORE_OK)
            goto done;
        if (ids)
            ids[i] = id;
    }
    for (int i = 0; i < n_gone; i++)
        if (put_gone(&q, uuid, gone[i], at) != STORE_OK)
            goto done;
    rc = store_query_commit(&q);

done:
    free(text);
    return store_query_end(&q, rc);
}

int store_card_last_reading(struct store *s, const char *uuid, cJSON **reading)
{
    cJSON *rows = NULL;
    int rc;

    *reading = NULL;
    rc = store_read_objects(s, "read a card's last watch reading",
                            "SELECT reading AS reading_json FROM card_readings "
                            "WHERE device_uuid = ?1",
                            uuid, NULL, &rows);
    if (rc == STORE_OK && cJSON_GetArraySize(rows) == 0)
        rc = STORE_NOT_FOUND;
    if (rc == STORE_OK)
        *reading = cJSON_DetachItemFromObject(cJSON_GetArrayItem(rows, 0), "reading");
    cJSON_Delete(rows);
    return rc;
}

int store_card_open_lasting(struct store *s, const char *uuid, cJSON **events)
{
    return store_read_objects(s, "read a card's open lasting events",
                              "SELECT id, kind, detail AS detail_json FROM card_events "
                              "WHERE device_uuid = ?1 AND critical = 1 AND gone_at IS NULL "
                              "AND lasting = 1 ORDER BY id",
                              uuid, NULL, events);
}

int store_card_events_list(struct store *s, const char *uuid, long long before, int limit,
                           cJSON **events, long long *next)
{
    /* limit + 1 rows: the one past the page says there is a next */
    static const char sql[] =
        "SELECT id, at, kind, subject, json(CASE critical WHEN 1 THEN 'true' ELSE 'false' END) "
        "AS critical_json, message, detail AS detail_json, gone_at FROM card_events "
        "WHERE device_uuid = ?1 AND (?2 = 0 OR id < ?2) ORDER BY id DESC LIMIT ?3";
    static const char known[] =
        "SELECT EXISTS (SELECT 1 FROM card_readings WHERE device_uuid = ?1) "
        "OR EXISTS (SELECT 1 FROM card_events WHERE device_uuid = ?1) "
        "OR EXISTS (SELECT 1 FROM runs WHERE device_uuid = ?1)";
    struct store_query q;
    cJSON *last;
    int rc = STORE_ERROR;

    *events = NULL;
    *next = 0;
    store_query_begin(&q, store_reader(s), "read a card's events");
    if (store_query_prepare(&q, known) != STORE_OK)
        goto done;
    store_bind_text(&q, 1, uuid);
    if (store_query_one(&q) != STORE_OK)
        goto done;
    if (sqlite3_column_int(q.st, 0) == 0) {
        rc = STORE_NOT_FOUND;
        goto done;
    }
    if (store_query_prepare(&q, sql) != STORE_OK)
        goto done;
    store_bind_text(&q, 1, uuid);
    store_bind_int64(&q, 2, before);
    store_bind_int64(&q, 3, (sqlite3_int64)limit + 1);
    if ((rc = store_rows_as_objects(&q, events)) != STORE_OK)
        goto done;
    /* one walk to the page's last event; a row past it says there is more */
    last = (*events)->child;
    for (int i = 1; last && i < limit; i++)
        last = last->next;
    if (last && last->next) {
        cJSON_Delete(cJSON_DetachItemViaPointer(*events, last->next));
        *next = (long long)cJSON_GetNumberValue(cJSON_GetObjectItem(last, "id"));
    }

done:
    if (rc != STORE_OK) {
        cJSON_Delete(*events);
        *events = NULL;
    }
    return store_query_end(&q, rc);
}

int store_card_event_counts(struct store *s, cJSON **counts)
{
    return store_read_objects(s, "count the card events",
                              "SELECT host, device_uuid AS uuid, kind, critical, count(*) AS count "
                              "FROM card_events GROUP BY host, device_uuid, kind, critical "
                              "ORDER BY host, device_uuid, kind, critical",
                              NULL, NULL, counts);
}

/* Whether one-off event e (an alias of card_events) ran out: ?2, a JSON
 * array of benchmarks, is not empty and each has a valid done run on e's
 * card finished after it, the newest of which missed no floor.  Only runs
 * measured here count (origin NULL): the event is this node's own watch's,
 * and a run imported or pulled, whoever says it ran on this card, never
 * ends it. */
#define ONE_OFF_RAN_OUT(e)                                                                   \
    "(json_array_length(?2) > 0 AND NOT EXISTS (SELECT 1 FROM json_each(?2) b WHERE NOT "    \
    "coalesce((SELECT coalesce(r.checks_failed, 0) = 0 FROM runs r WHERE r.device_uuid = " e \
    ".device_uuid AND r.benchmark = b.value AND r.status = 'done' AND r.valid IS NOT 0 "     \
    "AND r.origin IS NULL "                                                                  \
    "AND r.finished_at > " e ".at ORDER BY r.finished_at DESC, r.id DESC LIMIT 1), 0)))"

int store_card_any_open_event(struct store *s, const char *uuid, int *any)
{
    cJSON *rows = NULL;
    int rc = store_read_objects(s, "look for a card's open critical events",
                                "SELECT 1 AS one FROM card_events WHERE device_uuid = ?1 "
                                "AND critical = 1 AND gone_at IS NULL LIMIT 1",
                                uuid, NULL, &rows);

    *any = rc == STORE_OK && cJSON_GetArraySize(rows) > 0;
    cJSON_Delete(rows);
    return rc;
}

int store_card_faults(struct store *s, const char *uuid, const char *closing, cJSON **faults)
{
    /* the rules are at the top of store_card_events.h */
    static const char sql[] =
        "SELECT 'card_event' AS kind, e.subject AS subject, e.message AS message, e.at AS at "
        "FROM card_events e "
        "WHERE e.device_uuid = ?1 AND e.critical = 1 AND e.gone_at IS NULL AND (e.lasting = 1 "
        "OR (NOT EXISTS (SELECT 1 FROM alerts a WHERE a.kind = 'card_event' "
        "AND a.device_uuid = e.device_uuid AND a.row_key = json_quote(e.subject) "
        "AND a.acknowledged_at >= e.at) "
        "AND NOT " ONE_OFF_RAN_OUT("e") ")) ORDER BY e.id DESC";

    return store_read_objects(s, "read a card's open critical events", sql, uuid, closing,
                              faults);
}

int store_card_one_offs_clear(struct store *s, const char *uuid, const char *closing,
                              const char *run_id, const char *reason, int *cleared)
{
    /* An alert of a one-off's subject whose every event of that subject
     * ran out; a subject names its kind (card_event_subject), so its
     * events are all one-offs or all lasting, and a lasting one's alert is
     * left to the reading that shows it gone. */
    static const char sql[] =
        "UPDATE alerts SET state = 'cleared', cleared_at = ?4, clear_run_id = ?3, reason = ?5 "
        "WHERE kind = 'card_event' AND device_uuid = ?1 "
        "AND state IN ('confirmed', 'acknowledged') "
        "AND EXISTS (SELECT 1 FROM card_events e WHERE e.device_uuid = ?1 AND e.critical = 1 "
        "AND e.lasting = 0 AND json_quote(e.subject) = alerts.row_key) "
        "AND NOT EXISTS (SELECT 1 FROM card_events e WHERE e.device_uuid = ?1 "
        "AND e.critical = 1 AND e.gone_at IS NULL AND json_quote(e.subject) = alerts.row_key "
        "AND (e.lasting = 1 OR NOT " ONE_OFF_RAN_OUT("e") "))";
    struct store_query q;
    char now[32];
    int rc;

    time_now_rfc3339(now, sizeof(now));
    store_query_begin(&q, &s->writer, "clear the alerts of a card's one-off events");
    store_query_touch(&q, STORE_TOUCH_CARD, uuid);
    rc = store_query_run(&q, sql, cleared, STORE_TEXT(uuid), STORE_TEXT(closing),
                         STORE_TEXT(run_id), STORE_TEXT(now), STORE_TEXT(reason));
    return store_query_end(&q, rc);
}
