/*
 * store_fleet.c - runs made elsewhere (an import, a peer), stored whole in
 * one transaction and never twice, and each peer's pull state.  See
 * store_runs.h and store_peers.h.
 */
#include "store_internal.h"
#include "store_peers.h"
#include "store_runs.h"
#include "compare.h"
#include "dynbuf.h"
#include "log.h"
#include "migrate.h"
#include "run_cache.h"
#include "timeutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Binds one imported run to the INSERT of store_import_runs. */
static void bind_import(sqlite3_stmt *st, const cJSON *run, const char *origin,
                        const char *params)
{
    const cJSON *device = cJSON_GetObjectItem(run, "device");
    const cJSON *index = cJSON_GetObjectItem(device, "index");
    const cJSON *error = cJSON_GetObjectItem(run, "error");
    const cJSON *timeout = cJSON_GetObjectItem(run, "timeout_s");
    const char *run_origin;

    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    store_bind_text(st, 1, cJSON_GetStringValue(cJSON_GetObjectItem(run, "id")));
    store_bind_text(st, 2, cJSON_GetStringValue(cJSON_GetObjectItem(run, "benchmark")));
    store_bind_text(st, 3, params);
    store_bind_text(st, 4, cJSON_GetStringValue(cJSON_GetObjectItem(run, "label")));
    store_bind_text(st, 5, cJSON_GetStringValue(cJSON_GetObjectItem(run, "batch")));
    store_bind_text(st, 6, cJSON_GetStringValue(cJSON_GetObjectItem(run, "host")));
    if (cJSON_IsNumber(index))
        sqlite3_bind_int(st, 7, index->valueint);
    store_bind_text(st, 8, cJSON_GetStringValue(cJSON_GetObjectItem(device, "uuid")));
    store_bind_text(st, 9, cJSON_GetStringValue(cJSON_GetObjectItem(device, "name")));
    store_bind_text(st, 10, cJSON_GetStringValue(cJSON_GetObjectItem(run, "status")));
    sqlite3_bind_int(st, 11, cJSON_IsNumber(timeout) ? timeout->valueint : 0);
    store_bind_text(st, 12, cJSON_GetStringValue(cJSON_GetObjectItem(run, "created_at")));
    store_bind_text(st, 13, cJSON_GetStringValue(cJSON_GetObjectItem(run, "started_at")));
    store_bind_text(st, 14, cJSON_GetStringValue(cJSON_GetObjectItem(run, "finished_at")));
    store_bind_text(st, 15, cJSON_GetStringValue(cJSON_GetObjectItem(error, "code")));
    store_bind_text(st, 16, cJSON_GetStringValue(cJSON_GetObjectItem(error, "message")));
    run_origin = cJSON_GetStringValue(cJSON_GetObjectItem(run, "origin"));
    store_bind_text(st, 17, run_origin ? run_origin : origin);
}

int store_import_runs(struct store *s, const cJSON *runs, const char *origin,
                      int *inserted, int *existing)
{
    struct conn *c = &s->writer;
    sqlite3_stmt *ins = NULL;
    const cJSON *run;
    int rc = STORE_ERROR, in_tx = 0;

    *inserted = *existing = 0;
    pthread_mutex_lock(&c->lock);
    if (sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        goto done;
    in_tx = 1;
    if (store_conn_prepare(c, "INSERT OR IGNORE INTO runs (id, benchmark, params, "
                           "label, batch_id, host, device_index, device_uuid, "
                           "device_name, status, timeout_s, created_at, "
                           "started_at, finished_at, error_code, error_message, "
                           "origin, final_seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                           "?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
                           NEXT_SEQ ")", &ins) != SQLITE_OK)
        goto done;
    cJSON_ArrayForEach(run, runs) {
        const cJSON *results = cJSON_GetObjectItem(run, "results");
        char *params = cJSON_PrintUnformatted(cJSON_GetObjectItem(run, "params"));
        int step;

        if (params == NULL)
            goto done;
        bind_import(ins, run, origin, params);
        step = sqlite3_step(ins);
        free(params);
        if (step != SQLITE_DONE)
            goto done;
        if (sqlite3_changes(c->db) == 0) {
            (*existing)++;
            continue;
        }
        (*inserted)++;
        if (cJSON_IsObject(results)) {
            char *r = cJSON_PrintUnformatted(results);
            char *m = cJSON_PrintUnformatted(cJSON_GetObjectItem(run, "meta"));
            const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(run, "id"));
            step = r ? store_put_results(c, id, r, m) : STORE_ERROR;
            free(r);
            free(m);
            if (step != STORE_OK)
                goto done;
        }
    }
    if (sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        goto done;
    in_tx = 0;
    rc = STORE_OK;
    store_wrote(c);

done:
    if (rc != STORE_OK)
        rc = store_fail(c, "import runs");
    store_conn_release(c, ins);
    if (in_tx)
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_peer_load(struct store *s, const char *url, struct peer_row *row)
{
    struct conn *c = &s->writer;
    sqlite3_stmt *st = NULL;
    int rc = STORE_ERROR;

    memset(row, 0, sizeof(*row));
    pthread_mutex_lock(&c->lock);
    if (store_exec(c, "INSERT OR IGNORE INTO peers (url) VALUES (?1)", url,
                   NULL, NULL, NULL, NULL) != STORE_OK ||
        store_conn_prepare(c, "SELECT cursor, runs_pulled, last_success_at, "
                           "last_error, last_error_at FROM peers WHERE url = ?1", &st) != SQLITE_OK)
        goto done;
    store_bind_text(st, 1, url);
    if (sqlite3_step(st) != SQLITE_ROW)
        goto done;
    row->cursor = sqlite3_column_int64(st, 0);
    row->runs_pulled = sqlite3_column_int64(st, 1);
    snprintf(row->last_success_at, sizeof(row->last_success_at), "%s",
             store_col_text(st, 2) ? store_col_text(st, 2) : "");
    snprintf(row->last_error, sizeof(row->last_error), "%s",
             store_col_text(st, 3) ? store_col_text(st, 3) : "");
    snprintf(row->last_error_at, sizeof(row->last_error_at), "%s",
             store_col_text(st, 4) ? store_col_text(st, 4) : "");
    rc = STORE_OK;
    store_wrote(c);

done:
    if (rc != STORE_OK)
        rc = store_fail(c, "read a peer's pull state");
    store_conn_release(c, st);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_peer_record(struct store *s, const char *url, long long cursor,
                      long long pulled, const char *error)
{
    struct conn *c = &s->writer;
    sqlite3_stmt *st = NULL;
    char now[32];
    int rc = STORE_ERROR;

    time_now_rfc3339(now, sizeof(now));
    pthread_mutex_lock(&c->lock);
    if (store_conn_prepare(c, error
                           ? "UPDATE peers SET last_error = ?2, last_error_at = ?3 WHERE url = ?1"
                           : "UPDATE peers SET cursor = ?4, runs_pulled = runs_pulled + ?5, "
                             "last_success_at = ?3 WHERE url = ?1", &st) != SQLITE_OK)
        goto done;
    store_bind_text(st, 1, url);
    if (error)
        store_bind_text(st, 2, error);
    store_bind_text(st, 3, now);
    if (!error) {
        sqlite3_bind_int64(st, 4, cursor);
        sqlite3_bind_int64(st, 5, pulled);
    }
    if (sqlite3_step(st) == SQLITE_DONE) {
        rc = STORE_OK;
        store_wrote(c);
    }

done:
    if (rc != STORE_OK)
        rc = store_fail(c, "record a peer's pull");
    store_conn_release(c, st);
    pthread_mutex_unlock(&c->lock);
    return rc;
}
