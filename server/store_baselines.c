/*
 * store_baselines.c - the runs a verdict selects (GET /compare's
 * card:, host:, label:, driver: selectors) and the pinned baselines
 * (migrations/0006_baselines.sql).  See store.h.
 */
#include "store_internal.h"
#include "log.h"
#include "timeutil.h"

#include <stdio.h>
#include <string.h>

int store_select_runs(struct store *s, const struct run_select *sel, cJSON **ids)
{
    static const char sql[] =
        "SELECT r.id FROM runs r WHERE r.status = 'done' "
        "AND (?1 IS NULL OR r.benchmark = ?1) "
        "AND (?2 IS NULL OR r.device_uuid = ?2) "
        "AND (?3 IS NULL OR r.host = ?3) "
        "AND (?4 IS NULL OR r.label = ?4) "
        "AND (?5 IS NULL OR r.driver_version = ?5) "
        "AND (?6 IS NULL OR r.created_at >= ?6) "
        "AND (?7 IS NULL OR r.created_at <= ?7) "
        "ORDER BY r.id DESC LIMIT ?8";
    const char *texts[7] = {sel->benchmark, sel->card, sel->host, sel->label,
                            sel->driver, sel->since, sel->until};
    struct conn *c = store_reader(s);
    sqlite3_stmt *st = NULL;
    cJSON *list = cJSON_CreateArray();
    int rc = STORE_ERROR, step;

    *ids = NULL;
    pthread_mutex_lock(&c->lock);
    if (list == NULL || store_conn_prepare(c, sql, &st) != SQLITE_OK)
        goto done;
    for (int i = 0; i < 7; i++)
        store_bind_text(st, i + 1, texts[i] && texts[i][0] ? texts[i] : NULL);
    sqlite3_bind_int(st, 8, sel->limit);
    while ((step = sqlite3_step(st)) == SQLITE_ROW)
        cJSON_AddItemToArray(list, cJSON_CreateString(store_col_text(st, 0)));
    if (step != SQLITE_DONE)
        goto done;
    *ids = list;
    list = NULL;
    rc = STORE_OK;

done:
    if (rc != STORE_OK)
        log_error("store: select runs: %s", sqlite3_errmsg(c->db));
    cJSON_Delete(list);
    store_conn_release(c, st);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_baseline_insert(struct store *s, const char *name, const char *spec_json,
                          const char *runs_json, char created_at[32])
{
    struct conn *c = &s->writer;
    int changes = 0, rc;

    time_now_rfc3339(created_at, 32);
    pthread_mutex_lock(&c->lock);
    rc = store_exec(c, "INSERT INTO baselines (name, created_at, spec, runs) "
                       "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (name) DO NOTHING",
                    name, created_at, spec_json, runs_json, &changes);
    pthread_mutex_unlock(&c->lock);
    if (rc == STORE_OK && changes == 0)
        rc = STORE_CONFLICT;
    return rc;
}

/* A baseline from a row (name, created_at, spec, runs): NEW. */
static cJSON *baseline_from_row(sqlite3_stmt *st)
{
    cJSON *b = cJSON_CreateObject();

    cJSON_AddStringToObject(b, "name", store_col_text(st, 0));
    cJSON_AddStringToObject(b, "created_at", store_col_text(st, 1));
    cJSON_AddItemToObject(b, "spec", store_json_column(st, 2));
    cJSON_AddItemToObject(b, "runs", store_json_column(st, 3));
    return b;
}

int store_baseline_get(struct store *s, const char *name, cJSON **out)
{
    static const char one[] = "SELECT name, created_at, spec, runs FROM baselines WHERE name = ?1";
    static const char all[] = "SELECT name, created_at, spec, runs FROM baselines ORDER BY name";
    struct conn *c = store_reader(s);
    sqlite3_stmt *st = NULL;
    cJSON *list = name ? NULL : cJSON_CreateArray();
    int rc = STORE_ERROR, step;

    *out = NULL;
    pthread_mutex_lock(&c->lock);
    if ((name == NULL && list == NULL) || store_conn_prepare(c, name ? one : all, &st) != SQLITE_OK)
        goto done;
    if (name)
        store_bind_text(st, 1, name);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (name) {
            *out = baseline_from_row(st);
            break;
        }
        cJSON_AddItemToArray(list, baseline_from_row(st));
    }
    if (step != SQLITE_ROW && step != SQLITE_DONE)
        goto done;
    if (name == NULL) {
        *out = list;
        list = NULL;
    }
    rc = *out ? STORE_OK : STORE_NOT_FOUND;

done:
    if (rc == STORE_ERROR)
        log_error("store: baselines: %s", sqlite3_errmsg(c->db));
    cJSON_Delete(list);
    store_conn_release(c, st);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_baseline_delete(struct store *s, const char *name)
{
    struct conn *c = &s->writer;
    int changes = 0, rc;

    pthread_mutex_lock(&c->lock);
    rc = store_exec(c, "DELETE FROM baselines WHERE name = ?1", name, NULL, NULL, NULL, &changes);
    pthread_mutex_unlock(&c->lock);
    if (rc == STORE_OK && changes == 0)
        rc = STORE_NOT_FOUND;
    return rc;
}
