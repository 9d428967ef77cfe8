/*
 * store_baselines.c - the runs a verdict selects (GET /compare's
 * card:, host:, label:, driver: selectors) and the pinned baselines
 * (migrations/0006_baselines.sql).  See store.h.
 */
#include "store_internal.h"
#include "dynbuf.h"
#include "log.h"
#include "timeutil.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* The text of store_select_runs with only the filters given (bit i: text
 * i of sel), made once per set and kept: a clause "?N IS NULL OR ..." in
 * one text for all would keep SQLite from any index but the newest-first
 * walk, which reads the whole table when few runs match (a card's runs of
 * one benchmark since a date).  With a card, the benchmark is left out of
 * the index choice (+r.benchmark) so that runs_by_device_uuid walks that
 * card's runs newest first: a card has far fewer runs than a benchmark. */
static const char *select_sql_for(unsigned bits)
{
    static const char *const clauses[7] = {
        " AND r.benchmark = ?1", " AND r.device_uuid = ?2", " AND r.host = ?3",
        " AND r.label = ?4", " AND r.driver_version = ?5", " AND r.created_at >= ?6",
        " AND r.created_at <= ?7"};
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char *texts[1 << 7];
    struct dynbuf b;

    pthread_mutex_lock(&lock);
    if (texts[bits] == NULL) {
        dynbuf_init(&b, 1024);
        dynbuf_printf(&b, "SELECT r.id FROM runs r WHERE r.status = 'done'");
        for (int i = 0; i < 7; i++)
            if (bits & (1u << i))
                dynbuf_printf(&b, "%s",
                              i == 0 && (bits & 2u) ? " AND +r.benchmark = ?1" : clauses[i]);
        dynbuf_printf(&b, " ORDER BY r.id DESC LIMIT ?8");
        texts[bits] = dynbuf_take(&b, NULL);
    }
    pthread_mutex_unlock(&lock);
    return texts[bits];
}

int store_select_runs(struct store *s, const struct run_select *sel, cJSON **ids)
{
    const char *texts[7] = {sel->benchmark, sel->card, sel->host, sel->label,
                            sel->driver, sel->since, sel->until};
    struct conn *c = store_reader(s);
    sqlite3_stmt *st = NULL;
    cJSON *list = cJSON_CreateArray();
    const char *sql;
    unsigned bits = 0;
    int rc = STORE_ERROR, step;

    *ids = NULL;
    for (int i = 0; i < 7; i++)
        if (texts[i] && texts[i][0])
            bits |= 1u << i;
    if ((sql = select_sql_for(bits)) == NULL) {
        cJSON_Delete(list);
        return STORE_ERROR;
    }
    pthread_mutex_lock(&c->lock);
    if (list == NULL || store_conn_prepare(c, sql, &st) != SQLITE_OK)
        goto done;
    for (int i = 0; i < 7; i++)
        if (bits & (1u << i))
            store_bind_text(st, i + 1, texts[i]);
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

int store_select_like(struct store *s, const char *run_id, const char *since,
                      const char *until, int limit, cJSON **ids)
{
    struct conn *c = store_reader(s);
    /* The run's key as stored when it finished (verdict_key), so that the
     * same expression picks the same runs as a card's history does. */
    static const char sql[] =
        "SELECT h.id FROM runs r JOIN runs h ON h.device_uuid = r.device_uuid "
        "AND h.host = r.host AND h.verdict_key = r.verdict_key AND h.status = 'done' "
        "WHERE r.id = ?1 AND r.verdict_key IS NOT NULL "
        "AND (?2 IS NULL OR h.created_at >= ?2) AND (?3 IS NULL OR h.created_at <= ?3) "
        "ORDER BY h.id DESC LIMIT ?4";
    static const char exists[] =
        "SELECT 1 FROM runs WHERE id = ?1 AND status = 'done' AND verdict_key IS NOT NULL";
    sqlite3_stmt *st = NULL;
    cJSON *list = cJSON_CreateArray();
    int rc = STORE_ERROR, step;

    *ids = NULL;
    pthread_mutex_lock(&c->lock);
    if (list == NULL || store_conn_prepare(c, sql, &st) != SQLITE_OK)
        goto done;
    store_bind_text(st, 1, run_id);
    store_bind_text(st, 2, since && since[0] ? since : NULL);
    store_bind_text(st, 3, until && until[0] ? until : NULL);
    sqlite3_bind_int(st, 4, limit);
    while ((step = sqlite3_step(st)) == SQLITE_ROW)
        cJSON_AddItemToArray(list, cJSON_CreateString(store_col_text(st, 0)));
    if (step != SQLITE_DONE)
        goto done;
    store_conn_release(c, st);
    st = NULL;
    if (cJSON_GetArraySize(list) == 0) { /* none in range, or no such run */
        if (store_conn_prepare(c, exists, &st) != SQLITE_OK)
            goto done;
        store_bind_text(st, 1, run_id);
        if ((step = sqlite3_step(st)) != SQLITE_ROW && step != SQLITE_DONE)
            goto done;
        if (step == SQLITE_DONE) {
            rc = STORE_NOT_FOUND;
            goto done;
        }
    }
    *ids = list;
    list = NULL;
    rc = STORE_OK;

done:
    if (rc == STORE_ERROR)
        rc = store_fail(c, "select the runs of a run's card and key");
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
