/*
 * store_alerts.c - the alerts table (migrations/0007_run_verdicts.sql):
 * each state change is one statement whose WHERE names the state it moves
 * from, so that two threads (a runner judging a run, a person acking) can
 * never move one alert twice.  What moves it when is alerts.c's.
 */
#include "store_internal.h"
#include "store_alerts.h"
#include "timeutil.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALERT_COLUMNS                                                                     \
    "id, kind, state, host, device_uuid, device_name, benchmark, row_key, verdict, "      \
    "shift, z, run_id, confirm_run_id, clear_run_id, reason, detected_at, confirmed_at, " \
    "acknowledged_at, cleared_at"

/* A number as text for a bound value; NULL for NaN. */
static const char *num_text(double v, char buf[40])
{
    if (!isfinite(v))
        return NULL;
    snprintf(buf, 40, "%.17g", v);
    return buf;
}

static void add_real_or_null(cJSON *obj, const char *name, sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        cJSON_AddNullToObject(obj, name);
    else
        cJSON_AddNumberToObject(obj, name, sqlite3_column_double(st, col));
}

/* An alert from a row selected with ALERT_COLUMNS: NEW, or NULL. */
static cJSON *alert_from_row(sqlite3_stmt *st)
{
    cJSON *a = cJSON_CreateObject(), *card, *runs, *row;

    if (a == NULL || (row = store_json_column(st, 7)) == NULL) {
        cJSON_Delete(a);
        return NULL;
    }
    cJSON_AddNumberToObject(a, "id", (double)sqlite3_column_int64(st, 0));
    cJSON_AddStringToObject(a, "kind", store_col_text(st, 1));
    cJSON_AddStringToObject(a, "state", store_col_text(st, 2));
    card = cJSON_AddObjectToObject(a, "card");
    cJSON_AddStringToObject(card, "host", store_col_text(st, 3));
    cJSON_AddStringToObject(card, "device_uuid", store_col_text(st, 4));
    store_add_text_or_null(card, "device_name", store_col_text(st, 5));
    cJSON_AddStringToObject(a, "benchmark", store_col_text(st, 6));
    cJSON_AddItemToObject(a, "row", row);
    cJSON_AddStringToObject(a, "verdict", store_col_text(st, 8));
    add_real_or_null(a, "shift", st, 9);
    add_real_or_null(a, "z", st, 10);
    runs = cJSON_AddObjectToObject(a, "runs");
    store_add_text_or_null(runs, "detected", store_col_text(st, 11));
    store_add_text_or_null(runs, "confirmed", store_col_text(st, 12));
    store_add_text_or_null(runs, "cleared", store_col_text(st, 13));
    store_add_text_or_null(a, "reason", store_col_text(st, 14));
    store_add_text_or_null(a, "detected_at", store_col_text(st, 15));
    store_add_text_or_null(a, "confirmed_at", store_col_text(st, 16));
    store_add_text_or_null(a, "acknowledged_at", store_col_text(st, 17));
    store_add_text_or_null(a, "cleared_at", store_col_text(st, 18));
    return a;
}

/* Alerts of a query with up to two text values: a NEW array. */
static int select_alerts(struct conn *c, const char *sql, const char *v1, const char *v2,
                         cJSON **out, const char *what)
{
    sqlite3_stmt *st = NULL;
    cJSON *list = cJSON_CreateArray();
    int rc = STORE_ERROR, step;

    *out = NULL;
    if (list == NULL || store_conn_prepare(c, sql, &st) != SQLITE_OK)
        goto done;
    if (sqlite3_bind_parameter_count(st) >= 1)
        store_bind_text(st, 1, v1);
    if (sqlite3_bind_parameter_count(st) >= 2)
        store_bind_text(st, 2, v2);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        cJSON *a = alert_from_row(st);
        if (a == NULL)
            goto done;
        cJSON_AddItemToArray(list, a);
    }
    if (step != SQLITE_DONE)
        goto done;
    *out = list;
    list = NULL;
    rc = STORE_OK;

done:
    if (rc != STORE_OK)
        rc = store_fail(c, what);
    cJSON_Delete(list);
    store_conn_release(c, st);
    return rc;
}

int store_alert_detect(struct store *s, const struct alert_new *a, long long *id)
{
    struct conn *c = &s->writer;
    /* clang-format off */
    static const char sql[] =
        "INSERT INTO alerts (kind, state, host, device_uuid, device_name, benchmark, "
        "verdict_key, row_key, verdict, shift, z, run_id, confirm_run_id, confirms_left, "
        "detected_at, confirmed_at) "
        "SELECT ?1, ?2, host, device_uuid, device_name, benchmark, "
        STORE_VERDICT_KEY("") ", ?4, ?5, "
        "CAST(?6 AS REAL), CAST(?7 AS REAL), id, NULL, ?8, "
        "?9, CASE ?2 WHEN 'confirmed' THEN ?9 END FROM runs WHERE id = ?3 "
        "AND NOT EXISTS (SELECT 1 FROM alerts o WHERE o.state <> 'cleared' "
        "AND o.host = runs.host AND o.device_uuid = runs.device_uuid "
        "AND o.verdict_key = " STORE_VERDICT_KEY("runs.") " AND o.kind = ?1 AND o.row_key = ?4)";
    /* clang-format on */
    sqlite3_stmt *st = NULL;
    char now[32], b1[40], b2[40];
    int rc = STORE_ERROR;

    *id = 0;
    time_now_rfc3339(now, sizeof(now));
    pthread_mutex_lock(&c->lock);
    if (store_conn_prepare(c, sql, &st) != SQLITE_OK)
        goto done;
    store_bind_text(st, 1, a->kind);
    store_bind_text(st, 2, a->confirmed ? "confirmed" : "detected");
    store_bind_text(st, 3, a->run_id);
    store_bind_text(st, 4, a->row_key);
    store_bind_text(st, 5, a->verdict);
    store_bind_text(st, 6, num_text(a->shift, b1));
    store_bind_text(st, 7, num_text(a->z, b2));
    sqlite3_bind_int(st, 8, a->confirms_left);
    store_bind_text(st, 9, now);
    if (sqlite3_step(st) != SQLITE_DONE)
        goto done;
    /* none inserted: an alert of that card, key, kind and row is open */
    rc = sqlite3_changes(c->db) == 1 ? STORE_OK : STORE_CONFLICT;
    if (rc == STORE_OK) {
        *id = sqlite3_last_insert_rowid(c->db);
        store_wrote(c);
    }

done:
    if (rc == STORE_ERROR)
        rc = store_fail(c, "store an alert");
    store_conn_release(c, st);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_alerts_clear(struct store *s, const char *run_id, const char *kind,
                       const char *row_key, int *cleared)
{
    struct conn *c = &s->writer;
    char now[32];
    int rc;

    time_now_rfc3339(now, sizeof(now));
    pthread_mutex_lock(&c->lock);
    /* clang-format off */
    rc = store_exec(c,
        "UPDATE alerts SET state = 'cleared', cleared_at = ?4, clear_run_id = ?1 "
        "WHERE state IN ('confirmed', 'acknowledged') AND kind = ?2 AND row_key = ?3 "
        "AND (host, device_uuid, verdict_key) = (SELECT host, device_uuid, "
        STORE_VERDICT_KEY("") " FROM runs WHERE id = ?1)",
                    run_id, kind, row_key, now, cleared);
    /* clang-format on */
    if (rc != STORE_OK)
        rc = store_fail(c, "clear an alert");
    else
        store_wrote(c);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_alerts_pending(struct store *s, const char *run_id, cJSON **alerts)
{
    struct conn *c = store_reader(s);
    int rc;

    pthread_mutex_lock(&c->lock);
    rc = select_alerts(c, "SELECT " ALERT_COLUMNS " FROM alerts "
                          "WHERE run_id = ?1 AND state = 'detected' ORDER BY id",
                       run_id, NULL, alerts, "read the alerts a run found");
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_alert_settle(struct store *s, long long id, int repeated, const char *run_id,
                       cJSON **confirmed)
{
    struct conn *c = &s->writer;
    char now[32], idtext[24];
    int rc, changes = 0;

    *confirmed = NULL;
    time_now_rfc3339(now, sizeof(now));
    snprintf(idtext, sizeof(idtext), "%lld", id);
    pthread_mutex_lock(&c->lock);
    if (repeated)
        rc = store_exec(c,
                        "UPDATE alerts SET state = 'confirmed', confirm_run_id = ?2, "
                        "confirmed_at = ?3 WHERE id = CAST(?1 AS INTEGER) AND state = 'detected'",
                        idtext, run_id, now, NULL, &changes);
    else
        rc = store_exec(c,
                        "UPDATE alerts SET confirms_left = confirms_left - 1, "
                        "state = CASE WHEN confirms_left <= 1 THEN 'cleared' ELSE state END, "
                        "clear_run_id = CASE WHEN confirms_left <= 1 THEN ?2 END, "
                        "cleared_at = CASE WHEN confirms_left <= 1 THEN ?3 END, "
                        "reason = CASE WHEN confirms_left <= 1 THEN "
                        "'not repeated by its confirming run' END "
                        "WHERE id = CAST(?1 AS INTEGER) AND state = 'detected'",
                        idtext, run_id, now, NULL, NULL);
    if (rc == STORE_OK && repeated && changes == 1)
        rc = select_alerts(c, "SELECT " ALERT_COLUMNS " FROM alerts WHERE id = CAST(?1 AS INTEGER)",
                           idtext, NULL, confirmed, "read an alert");
    else if (rc != STORE_OK)
        rc = store_fail(c, "settle an alert");
    if (rc == STORE_OK)
        store_wrote(c);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_alerts_unconfirmed(struct store *s, const char *run_id, int found_by,
                             const char *reason, int *changed)
{
    struct conn *c = &s->writer;
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
    char now[32];
    int rc;

    *changed = 0;
    time_now_rfc3339(now, sizeof(now));
    pthread_mutex_lock(&c->lock);
    rc = store_exec(c, found_by ? by_finder : by_confirmation, run_id, reason, now, NULL,
                    changed);
    if (rc != STORE_OK)
        rc = store_fail(c, "settle alerts that no confirming run will");
    else if (*changed > 0)
        store_wrote(c);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

/* The rows of sql (no values to bind) as a NEW array of objects, column i
 * named names[i] (NULL-terminated), taken as its SQLite type holds it, but
 * column json_col (or none, -1) parsed as JSON.  Takes c's lock. */
static int select_objects(struct conn *c, const char *sql, const char *const names[],
                          int json_col, cJSON **out, const char *what)
{
    sqlite3_stmt *st = NULL;
    cJSON *list = cJSON_CreateArray();
    int rc = STORE_ERROR, step;

    *out = NULL;
    pthread_mutex_lock(&c->lock);
    if (list == NULL || store_conn_prepare(c, sql, &st) != SQLITE_OK)
        goto done;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        cJSON *one = cJSON_CreateObject();
        if (one == NULL || !cJSON_AddItemToArray(list, one)) {
            cJSON_Delete(one);
            goto done;
        }
        for (int i = 0; names[i]; i++) {
            cJSON *v = i == json_col ? store_json_column(st, i) : NULL;
            if (i == json_col && v == NULL)
                goto done;
            if (v)
                cJSON_AddItemToObject(one, names[i], v);
            else if (sqlite3_column_type(st, i) == SQLITE_INTEGER ||
                     sqlite3_column_type(st, i) == SQLITE_FLOAT)
                cJSON_AddNumberToObject(one, names[i], sqlite3_column_double(st, i));
            else
                store_add_text_or_null(one, names[i], store_col_text(st, i));
        }
    }
    if (step != SQLITE_DONE)
        goto done;
    *out = list;
    list = NULL;
    rc = STORE_OK;

done:
    if (rc != STORE_OK)
        rc = store_fail(c, what);
    cJSON_Delete(list);
    store_conn_release(c, st);
    pthread_mutex_unlock(&c->lock);
    return rc;
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
    struct conn *c = store_reader(s);
    char lim[16];
    int rc;

    snprintf(lim, sizeof(lim), "%d", limit);
    pthread_mutex_lock(&c->lock);
    if (open_only)
        rc = select_alerts(c, "SELECT " ALERT_COLUMNS " FROM alerts WHERE state <> 'cleared' "
                              "ORDER BY id DESC LIMIT CAST(?1 AS INTEGER)",
                           lim, NULL, alerts, "read the open alerts");
    else /* open ones first, then the most recent of the rest */
        rc = select_alerts(c, "SELECT " ALERT_COLUMNS " FROM alerts "
                              "ORDER BY state = 'cleared', id DESC LIMIT CAST(?1 AS INTEGER)",
                           lim, NULL, alerts, "read the alerts");
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_alert_webhook_done(struct store *s, long long id, const char *outcome)
{
    struct conn *c = &s->writer;
    char idtext[24];
    int rc, changes = 0;

    snprintf(idtext, sizeof(idtext), "%lld", id);
    pthread_mutex_lock(&c->lock);
    rc = store_exec(c, "UPDATE alerts SET webhook = ?2 WHERE id = CAST(?1 AS INTEGER)", idtext,
                    outcome, NULL, NULL, &changes);
    if (rc != STORE_OK)
        rc = store_fail(c, "record an alert's webhook post");
    else if (changes == 1)
        store_wrote(c);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_alerts_unposted(struct store *s, int limit, cJSON **alerts)
{
    struct conn *c = store_reader(s);
    char lim[16];
    int rc;

    snprintf(lim, sizeof(lim), "%d", limit);
    pthread_mutex_lock(&c->lock);
    rc = select_alerts(c, "SELECT " ALERT_COLUMNS " FROM alerts WHERE confirmed_at IS NOT NULL "
                          "AND webhook IS NULL ORDER BY id LIMIT CAST(?1 AS INTEGER)",
                       lim, NULL, alerts, "read the alerts not yet posted");
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_alert_ack(struct store *s, long long id, const char *reason, cJSON **alert)
{
    struct conn *c = &s->writer;
    char now[32], idtext[24];
    int rc, changes = 0;
    cJSON *list = NULL;

    *alert = NULL;
    time_now_rfc3339(now, sizeof(now));
    snprintf(idtext, sizeof(idtext), "%lld", id);
    pthread_mutex_lock(&c->lock);
    rc = store_exec(c,
                    "UPDATE alerts SET state = 'acknowledged', reason = ?2, acknowledged_at = ?3 "
                    "WHERE id = CAST(?1 AS INTEGER) AND state IN ('detected', 'confirmed')",
                    idtext, reason, now, NULL, &changes);
    if (rc != STORE_OK) {
        rc = store_fail(c, "acknowledge an alert");
        goto done;
    }
    if (changes == 1)
        store_wrote(c);
    rc = select_alerts(c, "SELECT " ALERT_COLUMNS " FROM alerts WHERE id = CAST(?1 AS INTEGER)",
                       idtext, NULL, &list, "read an alert");
    if (rc != STORE_OK)
        goto done;
    if (cJSON_GetArraySize(list) == 0) {
        rc = STORE_NOT_FOUND;
        goto done;
    }
    *alert = cJSON_DetachItemFromArray(list, 0);
    rc = changes == 1 ? STORE_OK : STORE_CONFLICT; /* acknowledged or cleared already */

done:
    cJSON_Delete(list);
    pthread_mutex_unlock(&c->lock);
    return rc;
}
