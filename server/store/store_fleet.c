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

/* Prepares the INSERT of store_import_runs on q with one imported run
 * bound.  STORE_OK or STORE_ERROR. */
static int bind_import(struct store_query *q, const cJSON *run, const char *origin,
                       const char *params)
{
    const cJSON *device = cJSON_GetObjectItem(run, "device");
    const cJSON *index = cJSON_GetObjectItem(device, "index");
    const cJSON *error = cJSON_GetObjectItem(run, "error");
    const cJSON *timeout = cJSON_GetObjectItem(run, "timeout_s");
    const cJSON *method = cJSON_GetObjectItem(run, "method");
    const char *run_origin;

    if (store_query_prepare(q, "INSERT OR IGNORE INTO runs (id, benchmark, params, "
                               "label, batch_id, host, device_index, device_uuid, "
                               "device_name, status, timeout_s, created_at, "
                               "started_at, finished_at, error_code, error_message, "
                               "origin, final_seq, method) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                               "?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, " NEXT_SEQ
                               ", ?18)") != STORE_OK)
        return STORE_ERROR;
    /* The method it carries; one without (an older node's) gets the one its
     * gpubench version implies when its results are stored. */
    if (cJSON_IsNumber(method) && method->valuedouble >= 1)
        store_bind_int64(q, 18, (long long)method->valuedouble);
    store_bind_text(q, 1, cJSON_GetStringValue(cJSON_GetObjectItem(run, "id")));
    store_bind_text(q, 2, cJSON_GetStringValue(cJSON_GetObjectItem(run, "benchmark")));
    store_bind_text(q, 3, params);
    store_bind_text(q, 4, cJSON_GetStringValue(cJSON_GetObjectItem(run, "label")));
    store_bind_text(q, 5, cJSON_GetStringValue(cJSON_GetObjectItem(run, "batch")));
    store_bind_text(q, 6, cJSON_GetStringValue(cJSON_GetObjectItem(run, "host")));
    if (cJSON_IsNumber(index))
        store_bind_int64(q, 7, index->valueint);
    store_bind_text(q, 8, cJSON_GetStringValue(cJSON_GetObjectItem(device, "uuid")));
    store_bind_text(q, 9, cJSON_GetStringValue(cJSON_GetObjectItem(device, "name")));
    store_bind_text(q, 10, cJSON_GetStringValue(cJSON_GetObjectItem(run, "status")));
    store_bind_int64(q, 11, cJSON_IsNumber(timeout) ? timeout->valueint : 0);
    store_bind_text(q, 12, cJSON_GetStringValue(cJSON_GetObjectItem(run, "created_at")));
    store_bind_text(q, 13, cJSON_GetStringValue(cJSON_GetObjectItem(run, "started_at")));
    store_bind_text(q, 14, cJSON_GetStringValue(cJSON_GetObjectItem(run, "finished_at")));
    store_bind_text(q, 15, cJSON_GetStringValue(cJSON_GetObjectItem(error, "code")));
    store_bind_text(q, 16, cJSON_GetStringValue(cJSON_GetObjectItem(error, "message")));
    run_origin = cJSON_GetStringValue(cJSON_GetObjectItem(run, "origin"));
    store_bind_text(q, 17, run_origin ? run_origin : origin);
    return STORE_OK;
}

int store_import_runs(struct store *s, const cJSON *runs, const char *origin,
                      int *inserted, int *existing)
{
    struct store_query q;
    const cJSON *run;
    int rc = STORE_ERROR;

    *inserted = *existing = 0;
    store_query_begin(&q, &s->writer, "import runs");
    if (store_query_transaction(&q) != STORE_OK)
        goto done;
    cJSON_ArrayForEach(run, runs) {
        const cJSON *results = cJSON_GetObjectItem(run, "results");
        char *params = cJSON_PrintUnformatted(cJSON_GetObjectItem(run, "params"));
        int step, changes = 0;

        if (params == NULL)
            goto done;
        step = bind_import(&q, run, origin, params);
        if (step == STORE_OK)
            step = store_query_exec(&q, &changes);
        free(params);
        if (step != STORE_OK)
            goto done;
        if (changes == 0) {
            (*existing)++;
            continue;
        }
        (*inserted)++;
        if (cJSON_IsObject(results)) {
            char *r = cJSON_PrintUnformatted(results);
            char *m = cJSON_PrintUnformatted(cJSON_GetObjectItem(run, "meta"));
            const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(run, "id"));
            step = r ? store_put_results(&q, id, r, m) : STORE_ERROR;
            free(r);
            free(m);
            if (step != STORE_OK)
                goto done;
        }
    }
    rc = store_query_commit(&q);

done:
    return store_query_end(&q, rc);
}

/* The columns store_peer_load reads. */
enum {
    PEER_CURSOR,
    PEER_PULLED,
    PEER_SUCCESS_AT,
    PEER_ERROR,
    PEER_ERROR_AT,
    PEER_SKIPPED,
    PEER_SKIPPED_REASON,
};

int store_peer_load(struct store *s, const char *url, struct peer_row *row)
{
    struct store_query q;
    int rc = STORE_ERROR;

    memset(row, 0, sizeof(*row));
    store_query_begin(&q, &s->writer, "read a peer's pull state");
    if (store_query_run(&q, "INSERT OR IGNORE INTO peers (url) VALUES (?1)", NULL,
                        STORE_TEXT(url)) != STORE_OK ||
        store_query_prepare(&q, "SELECT cursor, runs_pulled, last_success_at, "
                                "last_error, last_error_at, skipped, skipped_reason "
                                "FROM peers WHERE url = ?1") != STORE_OK)
        goto done;
    store_bind_text(&q, 1, url);
    if (store_query_step(&q) != STORE_STEP_ROW)
        goto done;
    row->cursor = sqlite3_column_int64(q.st, PEER_CURSOR);
    row->runs_pulled = sqlite3_column_int64(q.st, PEER_PULLED);
    snprintf(row->last_success_at, sizeof(row->last_success_at), "%s",
             store_col_text(q.st, PEER_SUCCESS_AT) ? store_col_text(q.st, PEER_SUCCESS_AT) : "");
    snprintf(row->last_error, sizeof(row->last_error), "%s",
             store_col_text(q.st, PEER_ERROR) ? store_col_text(q.st, PEER_ERROR) : "");
    snprintf(row->last_error_at, sizeof(row->last_error_at), "%s",
             store_col_text(q.st, PEER_ERROR_AT) ? store_col_text(q.st, PEER_ERROR_AT) : "");
    row->skipped = sqlite3_column_int64(q.st, PEER_SKIPPED);
    snprintf(row->skipped_reason, sizeof(row->skipped_reason), "%s",
             store_col_text(q.st, PEER_SKIPPED_REASON) ? store_col_text(q.st, PEER_SKIPPED_REASON)
                                                       : "");
    rc = STORE_OK;

done:
    return store_query_end(&q, rc);
}

int store_peer_record(struct store *s, const char *url, long long cursor,
                      long long pulled, long long skipped, const char *skip_reason,
                      const char *error)
{
    struct store_query q;
    char now[32];
    int rc = STORE_ERROR;

    time_now_rfc3339(now, sizeof(now));
    store_query_begin(&q, &s->writer, "record a peer's pull");
    if (store_query_prepare(&q, error ? "UPDATE peers SET last_error = ?2, last_error_at = ?3 "
                                        "WHERE url = ?1"
                                      : "UPDATE peers SET cursor = ?4, "
                                        "runs_pulled = runs_pulled + ?5, "
                                        "skipped = skipped + ?6, "
                                        "skipped_reason = COALESCE(?7, skipped_reason), "
                                        "last_success_at = ?3 WHERE url = ?1") != STORE_OK)
        goto done;
    store_bind_text(&q, 1, url);
    if (error)
        store_bind_text(&q, 2, error);
    store_bind_text(&q, 3, now);
    if (!error) {
        store_bind_int64(&q, 4, cursor);
        store_bind_int64(&q, 5, pulled);
        store_bind_int64(&q, 6, skipped);
        store_bind_text(&q, 7, skip_reason);
    }
    rc = store_query_exec(&q, NULL);

done:
    return store_query_end(&q, rc);
}
