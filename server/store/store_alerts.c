/*
 * store_alerts.c - the alerts table (migrations/0007_run_verdicts.sql):
 * each state change is one statement whose WHERE names the state it moves
 * from, so that two threads (a runner judging a run, a person acking) can
 * never move one alert twice.  What moves it when is alerts.c's.
 */
#include "json_build.h"
#include "store_internal.h"
#include "store_touch.h"
#include "store_alerts.h"
#include "timeutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALERT_COLUMNS                                                                     \
    "id, kind, state, host, device_uuid, device_name, benchmark, row_key, verdict, "      \
    "shift, z, run_id, confirm_run_id, clear_run_id, reason, detected_at, confirmed_at, " \
    "acknowledged_at, cleared_at"

/* The columns of ALERT_COLUMNS, in order. */
enum {
    A_ID,
    A_KIND,
    A_STATE,
    A_HOST,
    A_DEVICE_UUID,
    A_DEVICE_NAME,
    A_BENCHMARK,
    A_ROW_KEY,
    A_VERDICT,
    A_SHIFT,
    A_Z,
    A_RUN_ID,
    A_CONFIRM_RUN_ID,
    A_CLEAR_RUN_ID,
    A_REASON,
    A_DETECTED_AT,
    A_CONFIRMED_AT,
    A_ACKNOWLEDGED_AT,
    A_CLEARED_AT
};

static void add_real_or_null(struct json_build *jb, cJSON *obj, const char *name,
                             sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        jb_null(jb, obj, name);
    else
        jb_number_or_null(jb, obj, name, sqlite3_column_double(st, col));
}

/* An alert from a row selected with ALERT_COLUMNS: NEW, or NULL. */
static cJSON *alert_from_row(sqlite3_stmt *st)
{
    struct json_build jb = {0};
    cJSON *a = jb_new_object(&jb), *card, *runs;

    jb_number(&jb, a, "id", (double)sqlite3_column_int64(st, A_ID));
    jb_string(&jb, a, "kind", store_col_text(st, A_KIND));
    jb_string(&jb, a, "state", store_col_text(st, A_STATE));
    card = jb_object(&jb, a, "card");
    jb_string(&jb, card, "host", store_col_text(st, A_HOST));
    jb_string(&jb, card, "device_uuid", store_col_text(st, A_DEVICE_UUID));
    jb_string(&jb, card, "device_name", store_col_text(st, A_DEVICE_NAME));
    jb_string(&jb, a, "benchmark", store_col_text(st, A_BENCHMARK)); /* card_event: none */
    jb_item(&jb, a, "row", jb_failed(&jb) ? NULL : store_json_column(st, A_ROW_KEY));
    jb_string(&jb, a, "verdict", store_col_text(st, A_VERDICT));
    add_real_or_null(&jb, a, "shift", st, A_SHIFT);
    add_real_or_null(&jb, a, "z", st, A_Z);
    runs = jb_object(&jb, a, "runs");
    jb_string(&jb, runs, "detected", store_col_text(st, A_RUN_ID));
    jb_string(&jb, runs, "confirmed", store_col_text(st, A_CONFIRM_RUN_ID));
    jb_string(&jb, runs, "cleared", store_col_text(st, A_CLEAR_RUN_ID));
    jb_string(&jb, a, "reason", store_col_text(st, A_REASON));
    jb_string(&jb, a, "detected_at", store_col_text(st, A_DETECTED_AT));
    jb_string(&jb, a, "confirmed_at", store_col_text(st, A_CONFIRMED_AT));
    jb_string(&jb, a, "acknowledged_at", store_col_text(st, A_ACKNOWLEDGED_AT));
    jb_string(&jb, a, "cleared_at", store_col_text(st, A_CLEARED_AT));
    if (jb_failed(&jb)) {
        cJSON_Delete(a);
        return NULL;
    }
    return a;
}

/* The alerts of q's statement (prepared with ALERT_COLUMNS and bound): a
 * NEW array.  STORE_OK or STORE_ERROR (q's end maps it). */
static int alerts_of_rows(struct store_query *q, cJSON **out)
{
    return store_query_rows(q, alert_from_row, out);
}

/* Alert id on q (whose statement it replaces), as a NEW array of one (or
 * none); what names the read for q's end. */
static int alert_by_id(struct store_query *q, long long id, cJSON **out)
{
    *out = NULL;
    q->what = "read an alert";
    if (store_query_prepare(q, "SELECT " ALERT_COLUMNS " FROM alerts WHERE id = ?1") != STORE_OK)
        return STORE_ERROR;
    store_bind_int64(q, 1, id);
    return alerts_of_rows(q, out);
}

int store_alert_detect(struct store *s, const struct alert_new *a, long long *id)
{
    /* clang-format off */
    static const char sql[] =
        "INSERT INTO alerts (kind, state, host, device_uuid, device_name, benchmark, "
        "verdict_key, row_key, verdict, shift, z, run_id, confirm_run_id, confirms_left, "
        "detected_at, confirmed_at) "
        "SELECT ?1, ?2, host, device_uuid, device_name, benchmark, "
        STORE_VERDICT_KEY("") ", ?4, ?5, "
        "?6, ?7, id, NULL, ?8, "
        "?9, CASE ?2 WHEN 'confirmed' THEN ?9 END FROM runs WHERE id = ?3 "
        "AND NOT EXISTS (SELECT 1 FROM alerts o WHERE o.state <> 'cleared' "
        "AND o.host = runs.host AND o.device_uuid = runs.device_uuid "
        "AND o.verdict_key = " STORE_VERDICT_KEY("runs.") " AND o.kind = ?1 AND o.row_key = ?4)";
    /* clang-format on */
    struct store_query q;
    char now[32];
    int rc = STORE_ERROR, changes = 0;

    *id = 0;
    time_now_rfc3339(now, sizeof(now));
    store_query_begin(&q, &s->writer, "store an alert");
    if (store_query_prepare(&q, sql) != STORE_OK)
        goto done;
    store_bind_text(&q, 1, a->kind);
    store_bind_text(&q, 2, a->confirmed ? "confirmed" : "detected");
    store_bind_text(&q, 3, a->run_id);
    store_bind_text(&q, 4, a->row_key);
    store_bind_text(&q, 5, a->verdict);
    store_bind_double(&q, 6, a->shift); /* NaN: NULL */
    store_bind_double(&q, 7, a->z);
    store_bind_int64(&q, 8, a->confirms_left);
    store_bind_text(&q, 9, now);
    if (store_query_exec(&q, &changes) != STORE_OK)
        goto done;
    /* none inserted: an alert of that card, key, kind and row is open */
    rc = changes == 1 ? STORE_OK : STORE_CONFLICT;
    if (rc == STORE_OK)
        *id = sqlite3_last_insert_rowid(q.c->db);

done:
    return store_query_end(&q, rc);
}

int store_alert_card_event(struct store *s, const struct alert_card_event *e, long long *id)
{
    static const char sql[] =
        "INSERT INTO alerts (kind, state, host, device_uuid, device_name, row_key, verdict, "
        "confirms_left, reason, detected_at, confirmed_at) "
        "SELECT 'card_event', 'confirmed', ?1, ?2, ?3, json_quote(?4), 'critical', 0, ?5, ?6, ?6 "
        "WHERE NOT EXISTS (SELECT 1 FROM alerts o WHERE o.state <> 'cleared' "
        "AND o.kind = 'card_event' AND o.device_uuid = ?2 AND o.row_key = json_quote(?4))";
    struct store_query q;
    char now[32];
    int rc, changes = 0;

    *id = 0;
    time_now_rfc3339(now, sizeof(now));
    store_query_begin(&q, &s->writer, "store a card event's alert");
    store_query_touch(&q, STORE_TOUCH_CARD, e->uuid);
    rc = store_query_run(&q, sql, &changes, STORE_TEXT(e->host), STORE_TEXT(e->uuid),
                         STORE_TEXT(e->name), STORE_TEXT(e->subject), STORE_TEXT(e->message),
                         STORE_TEXT(now));
    if (rc == STORE_OK && changes == 1)
        *id = sqlite3_last_insert_rowid(q.c->db);
    else if (rc == STORE_OK)
        rc = STORE_CONFLICT; /* one of its card and subject is open */
    return store_query_end(&q, rc);
}

int store_alerts_clear(struct store *s, const char *run_id, const char *kind,
                       const char *row_key, int *cleared)
{
    struct store_query q;
    char now[32];
    int rc;

    time_now_rfc3339(now, sizeof(now));
    store_query_begin(&q, &s->writer, "clear an alert");
    /* clang-format off */
    /* A wrong result (an exact check's) is cleared by a passing run of
     * the same benchmark, whatever its params, once a person has
     * acknowledged it; an acknowledgement after the passing run clears it
     * then (store_alert_ack). */
    rc = store_query_run(&q,
        "UPDATE alerts SET state = 'cleared', cleared_at = ?4, clear_run_id = ?1 "
        "WHERE state IN ('confirmed', 'acknowledged') AND kind = ?2 AND row_key = ?3 "
        "AND CASE WHEN verdict = '" ALERT_WRONG_RESULT "' THEN state = 'acknowledged' "
        "AND (host, device_uuid, benchmark) = "
        "(SELECT host, device_uuid, benchmark FROM runs WHERE id = ?1) "
        "ELSE (host, device_uuid, verdict_key) = (SELECT host, device_uuid, "
        STORE_VERDICT_KEY("") " FROM runs WHERE id = ?1) END",
                         cleared, STORE_TEXT(run_id), STORE_TEXT(kind), STORE_TEXT(row_key),
                         STORE_TEXT(now));
    /* clang-format on */
    return store_query_end(&q, rc);
}

int store_alerts_pending(struct store *s, const char *run_id, cJSON **alerts)
{
    struct store_query q;
    int rc = STORE_ERROR;

    *alerts = NULL;
    store_query_begin(&q, store_reader(s), "read the alerts a run found");
    if (store_query_prepare(&q, "SELECT " ALERT_COLUMNS " FROM alerts "
                                "WHERE run_id = ?1 AND state = 'detected' ORDER BY id") !=
        STORE_OK)
        goto done;
    store_bind_text(&q, 1, run_id);
    rc = alerts_of_rows(&q, alerts);

done:
    return store_query_end(&q, rc);
}

int store_alert_settle(struct store *s, long long id, int repeated, const char *run_id,
                       cJSON **confirmed)
{
    struct store_query q;
    char now[32];
    int rc, changes = 0;

    *confirmed = NULL;
    time_now_rfc3339(now, sizeof(now));
    store_query_begin(&q, &s->writer, "settle an alert");
    if (repeated)
        rc = store_query_run(&q,
                             "UPDATE alerts SET state = 'confirmed', confirm_run_id = ?2, "
                             "confirmed_at = ?3 WHERE id = ?1 AND state = 'detected'",
                             &changes, STORE_INT(id), STORE_TEXT(run_id), STORE_TEXT(now));
    else
        rc = store_query_run(&q,
                             "UPDATE alerts SET confirms_left = confirms_left - 1, "
                             "state = CASE WHEN confirms_left <= 1 THEN 'cleared' ELSE state END, "
                             "clear_run_id = CASE WHEN confirms_left <= 1 THEN ?2 END, "
                             "cleared_at = CASE WHEN confirms_left <= 1 THEN ?3 END, "
                             "reason = CASE WHEN confirms_left <= 1 THEN "
                             "'not repeated by its confirming run' END "
                             "WHERE id = ?1 AND state = 'detected'",
                             NULL, STORE_INT(id), STORE_TEXT(run_id), STORE_TEXT(now));
    if (rc == STORE_OK && repeated && changes == 1)
        rc = alert_by_id(&q, id, confirmed);
    return store_query_end(&q, rc);
}

int store_alerts_unconfirmed(struct store *s, const char *run_id, int found_by,
                             const char *reason, int *changed)
{
    /* clang-format off */
#define UNCONFIRMED_SET                                                         \
    "UPDATE alerts SET confirms_left = confirms_left - 1, "                     \
    "state = CASE WHEN confirms_left <= 1 THEN 'cleared' ELSE state END, "      \
    "clear_run_id = CASE WHEN confirms_left <= 1 THEN ?1 END, "                 \
    "cleared_at = CASE WHEN confirms_left <= 1 THEN ?3 END, "                   \
    "reason = CASE WHEN confirms_left <= 1 THEN ?2 END WHERE state = 'detected' "
    static const char by_confirmation[] =
        UNCONFIRMED_SET "AND run_id = (SELECT confirms FROM runs WHERE id = ?1)";
    static const char by_finder[] =
        "UPDATE alerts SET confirms_left = 0, state = 'cleared', clear_run_id = ?1, "
        "cleared_at = ?3, reason = ?2 WHERE state = 'detected' AND run_id = ?1";
#undef UNCONFIRMED_SET
    /* clang-format on */
    struct store_query q;
    char now[32];
    int rc;

    *changed = 0;
    time_now_rfc3339(now, sizeof(now));
    store_query_begin(&q, &s->writer, "settle alerts that no confirming run will");
    rc = store_query_run(&q, found_by ? by_finder : by_confirmation, changed, STORE_TEXT(run_id),
                         STORE_TEXT(reason), STORE_TEXT(now));
    return store_query_end(&q, rc);
}

/* The rows of sql (no values to bind) as a NEW array of objects, column i
 * named names[i] (NULL-terminated), taken as its SQLite type holds it, but
 * column json_col (or none, -1) parsed as JSON.  Takes c's lock. */
static int select_objects(struct conn *c, const char *sql, const char *const names[],
                          int json_col, cJSON **out, const char *what)
{
    struct store_query q;
    cJSON *list = cJSON_CreateArray();
    int rc = STORE_ERROR, step;

    *out = NULL;
    store_query_begin(&q, c, what);
    if (list == NULL || store_query_prepare(&q, sql) != STORE_OK)
        goto done;
    while ((step = store_query_step(&q)) == STORE_STEP_ROW) {
        struct json_build jb = {0};
        cJSON *one = jb_new_object(&jb);

        jb_push(&jb, list, one); /* list's now, or deleted */
        for (int i = 0; names[i] && !jb_failed(&jb); i++) {
            if (i == json_col)
                jb_item(&jb, one, names[i], store_json_column(q.st, i));
            else if (sqlite3_column_type(q.st, i) == SQLITE_INTEGER ||
                     sqlite3_column_type(q.st, i) == SQLITE_FLOAT)
                jb_number_or_null(&jb, one, names[i], sqlite3_column_double(q.st, i));
            else
                jb_string(&jb, one, names[i], store_col_text(q.st, i));
        }
        if (jb_failed(&jb))
            goto done;
    }
    if (step != STORE_STEP_DONE)
        goto done;
    *out = list;
    list = NULL;
    rc = STORE_OK;

done:
    cJSON_Delete(list);
    return store_query_end(&q, rc);
}

int store_alerts_waiting(struct store *s, cJSON **waiting)
{
    /* Driven by the detected alerts (few), so that a store without any
     * reads no runs; runs.confirms has no index, the join scans once. */
    /* clang-format off */
    static const char sql[] =
        "WITH w AS (SELECT run_id, max(confirms_left) AS awaited FROM alerts "
        "WHERE state = 'detected' GROUP BY run_id) "
        "SELECT w.run_id, w.awaited, "
        "count(r.id) FILTER (WHERE r.status IN ('queued', 'running')), "
        "count(r.id) FILTER (WHERE r.error_code = 'interrupted'), "
        "max(CASE WHEN r.error_code = 'interrupted' THEN r.id END) "
        "FROM w LEFT JOIN runs r ON r.confirms = w.run_id "
        "GROUP BY w.run_id ORDER BY w.run_id";
    /* clang-format on */
    static const char *const names[] = {"run_id", "awaited", "pending", "interrupted",
                                        "last_interrupted", NULL};

    return select_objects(store_reader(s), sql, names, -1, waiting,
                          "read the alerts that wait for a confirming run");
}

int store_alerts_open_counts(struct store *s, cJSON **counts)
{
    static const char sql[] =
        "SELECT kind, state, benchmark, row_key, host, device_uuid, count(*) FROM alerts "
        "WHERE state IN ('confirmed', 'acknowledged') "
        "GROUP BY kind, state, benchmark, row_key, host, device_uuid";
    static const char *const names[] = {"kind", "state", "benchmark", "row",
                                        "host", "device_uuid", "count", NULL};

    return select_objects(store_reader(s), sql, names, 3, counts, "count the open alerts");
}

int store_alerts_list(struct store *s, int open_only, int limit, cJSON **alerts)
{
    struct store_query q;
    int rc = STORE_ERROR;

    *alerts = NULL;
    store_query_begin(&q, store_reader(s), open_only ? "read the open alerts" : "read the alerts");
    if (store_query_prepare(&q, open_only
                                    ? "SELECT " ALERT_COLUMNS " FROM alerts "
                                      "WHERE state <> 'cleared' ORDER BY id DESC LIMIT ?1"
                                    /* open ones first, then the most recent of the rest */
                                    : "SELECT " ALERT_COLUMNS " FROM alerts "
                                      "ORDER BY state = 'cleared', id DESC LIMIT ?1") != STORE_OK)
        goto done;
    store_bind_int64(&q, 1, limit);
    rc = alerts_of_rows(&q, alerts);

done:
    return store_query_end(&q, rc);
}

int store_alert_webhook_done(struct store *s, long long id, const char *outcome)
{
    struct store_query q;
    int rc;

    store_query_begin(&q, &s->writer, "record an alert's webhook post");
    store_query_touch(&q, STORE_TOUCH_NONE, NULL); /* its post's outcome alone */
    store_query_no_run_rows(&q);
    rc = store_query_run(&q, "UPDATE alerts SET webhook = ?2 WHERE id = ?1", NULL, STORE_INT(id),
                         STORE_TEXT(outcome));
    return store_query_end(&q, rc);
}

int store_alerts_unposted(struct store *s, int limit, cJSON **alerts)
{
    struct store_query q;
    int rc = STORE_ERROR;

    *alerts = NULL;
    store_query_begin(&q, store_reader(s), "read the alerts not yet posted");
    if (store_query_prepare(&q, "SELECT " ALERT_COLUMNS " FROM alerts WHERE confirmed_at IS "
                                "NOT NULL AND webhook IS NULL ORDER BY id LIMIT ?1") != STORE_OK)
        goto done;
    store_bind_int64(&q, 1, limit);
    rc = alerts_of_rows(&q, alerts);

done:
    return store_query_end(&q, rc);
}

/* The newest valid done run of an alert's card and benchmark after the
 * run that found it with a check of the alert's row: its COLUMN (r.id, or
 * the check's pass), or NULL (SQL, correlated to alerts).  A wrong result
 * is cleared by an acknowledgement only where that newest check passed: a
 * pass followed by another failure is no pass. */
#define NEWEST_CHECK(column)                                                  \
    "SELECT " column " FROM runs r, json_each(r.checks) c "                   \
    "WHERE r.host = alerts.host AND r.device_uuid = alerts.device_uuid "      \
    "AND r.benchmark = alerts.benchmark AND r.id > alerts.run_id "            \
    "AND r.status = 'done' AND r.valid IS NOT 0 AND r.checks IS NOT NULL "    \
    "AND json_extract(c.value, '$.row') = json_extract(alerts.row_key, '$') " \
    "ORDER BY r.id DESC LIMIT 1"

int store_alerts_found_changes(struct store *s, const char *run_ids, cJSON **alerts)
{
    struct store_query q;
    int rc = STORE_ERROR;

    *alerts = NULL;
    store_query_begin(&q, store_reader(s), "read the change alerts runs found");
    if (store_query_prepare(&q, "SELECT " ALERT_COLUMNS " FROM alerts WHERE change_id IN "
                                "(SELECT c.id FROM json_each(?1) j JOIN changes c "
                                "ON c.found_run_id = j.value) "
                                "AND webhook IS NULL ORDER BY id") != STORE_OK)
        goto done;
    store_bind_text(&q, 1, run_ids);
    rc = alerts_of_rows(&q, alerts);

done:
    return store_query_end(&q, rc);
}

int store_alert_ack(struct store *s, long long id, const char *reason, cJSON **alert)
{
    struct store_query q;
    char now[32];
    int rc, changes = 0;
    cJSON *list = NULL;

    *alert = NULL;
    time_now_rfc3339(now, sizeof(now));
    store_query_begin(&q, &s->writer, "acknowledge an alert");
    rc = store_query_run(&q,
                         "UPDATE alerts SET state = 'acknowledged', reason = ?2, "
                         "acknowledged_at = ?3 "
                         "WHERE id = ?1 AND state IN ('detected', 'confirmed')",
                         &changes, STORE_INT(id), STORE_TEXT(reason), STORE_TEXT(now));
    /* A wrong result that a later run of its benchmark passed already is
     * cleared by this acknowledgement (store_alerts_clear waits for it). */
    /* clang-format off */
    if (rc == STORE_OK && changes == 1)
        rc = store_query_run(&q,
            "UPDATE alerts SET state = 'cleared', cleared_at = ?2, "
            "clear_run_id = (" NEWEST_CHECK("r.id") ") "
            "WHERE id = ?1 AND verdict = '" ALERT_WRONG_RESULT "' AND state = 'acknowledged' "
            "AND (" NEWEST_CHECK("json_extract(c.value, '$.pass')") ") = 1",
                             NULL, STORE_INT(id), STORE_TEXT(now));
    /* clang-format on */
    if (rc != STORE_OK || (rc = alert_by_id(&q, id, &list)) != STORE_OK)
        goto done;
    if (cJSON_GetArraySize(list) == 0) {
        rc = STORE_NOT_FOUND;
        goto done;
    }
    *alert = cJSON_DetachItemFromArray(list, 0);
    rc = changes == 1 ? STORE_OK : STORE_CONFLICT; /* acknowledged or cleared already */

done:
    cJSON_Delete(list);
    return store_query_end(&q, rc);
}

int store_alert_get(struct store *s, long long id, cJSON **alert)
{
    struct store_query q;
    cJSON *list = NULL;
    int rc;

    *alert = NULL;
    store_query_begin(&q, store_reader(s), "read an alert");
    rc = alert_by_id(&q, id, &list);
    if (rc == STORE_OK && cJSON_GetArraySize(list) == 0)
        rc = STORE_NOT_FOUND;
    if (rc == STORE_OK)
        *alert = cJSON_DetachItemFromArray(list, 0);
    cJSON_Delete(list);
    return store_query_end(&q, rc);
}
