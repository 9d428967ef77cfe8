/*
 * store_results.c - a finished run's results written as its record was
 * judged (core/run_record.h): the results and meta texts, the columns that
 * reads use without parsing them (the summary, the digest, the driver and
 * CUDA versions, validity, checks, the comparability key), and the
 * per-card tables kept as runs finish (latest_by_card, fleet_latest) and
 * the change-point series (store_changes.c).
 * Nothing here judges or parses: the record says it all, and the writer's
 * lock is held only for the writes.
 */
#include "store_internal.h"
#include "store_touch.h"

#include <string.h>

/* Binds a flag that may be unknown (-1: NULL). */
static void bind_flag(struct store_query *q, int i, int v)
{
    if (v < 0)
        store_bind_null(q, i);
    else
        store_bind_int64(q, i, v);
}

void store_bind_judged(struct store_query *q, int first, const struct run_judged *j)
{
    store_bind_text(q, first, j->driver_version);
    store_bind_text(q, first + 1, j->cuda_version);
    store_bind_text(q, first + 2, j->build);
    store_bind_text(q, first + 3, j->validity);
    bind_flag(q, first + 4, j->valid < 0 ? -1 : j->valid != 0);
    store_bind_text(q, first + 5, j->checks);
    bind_flag(q, first + 6, j->checks_failed);
    store_bind_text(q, first + 7, j->verdict_key);
}

const char *store_series_key(const struct run_record *r)
{
    if (r->status == NULL || strcmp(r->status, "done") != 0 || r->judged.verdict_key == NULL ||
        r->judged.valid == 0 || r->device_uuid == NULL)
        return NULL;
    return r->judged.verdict_key;
}

/* The per-card tables of a run whose row was written from r in q's
 * transaction (row_judged): its columns are r's, bound rather than read
 * back from the row (bind_import, store_bind_judged write them so). */
static int put_card_tables_bound(struct store_query *q, const struct run_record *r)
{
    const char *key = store_series_key(r);

    if (store_query_run(q,
                        "INSERT INTO latest_by_card (benchmark, host, device_uuid, run_id) "
                        "VALUES (?2, ?3, coalesce(?4, ''), ?1) "
                        "ON CONFLICT (benchmark, host, device_uuid) DO UPDATE "
                        "SET run_id = excluded.run_id WHERE excluded.run_id > run_id",
                        NULL, STORE_TEXT(r->id), STORE_TEXT(r->benchmark), STORE_TEXT(r->host),
                        STORE_TEXT(r->device_uuid)) != STORE_OK)
        return STORE_ERROR;
    if (key == NULL)
        return STORE_OK;
    return store_query_run(q,
                           "INSERT INTO fleet_latest (verdict_key, benchmark, host, "
                           "device_uuid, run_id) VALUES (?2, ?3, ?4, ?5, ?1) "
                           "ON CONFLICT (verdict_key, host, device_uuid) DO UPDATE "
                           "SET run_id = excluded.run_id WHERE excluded.run_id > run_id",
                           NULL, STORE_TEXT(r->id), STORE_TEXT(key), STORE_TEXT(r->benchmark),
                           STORE_TEXT(r->host), STORE_TEXT(r->device_uuid));
}

/* The judged columns of a run whose row was written before it ended (one
 * measured here): r's row updated on q. */
static int update_judged(struct store_query *q, const struct run_record *r)
{
    const struct run_judged *j = &r->judged;

    if (store_query_prepare(q, "UPDATE runs SET driver_version = ?2, cuda_version = ?3, "
                               "build = ?4, validity = ?5, valid = ?6, checks = ?7, "
                               "checks_failed = ?8, "
                               "verdict_key = CASE WHEN status = 'done' THEN ?9 END, "
                               "method = coalesce(method, ?10) "
                               "WHERE id = ?1") != STORE_OK)
        return STORE_ERROR;
    store_bind_text(q, 1, r->id);
    store_bind_judged(q, 2, j);
    if (j->method > 0)
        store_bind_int64(q, 10, j->method);
    else
        store_bind_null(q, 10);
    return store_query_exec(q, NULL);
}

int store_put_results(struct store_query *q, const struct run_record *r, int row_judged)
{
    const struct run_judged *j = &r->judged;

    if (r->results_text == NULL || j->validity == NULL)
        return STORE_ERROR; /* a run is never stored unjudged */
    /* a row written from r: its host and card touched as it was written */
    if (!row_judged && store_touch_run(q, r->id) != STORE_OK)
        return STORE_ERROR;
    if (store_query_run(q,
                        "INSERT OR REPLACE INTO run_results (run_id, results, meta) "
                        "VALUES (?1, ?2, ?3)",
                        NULL, STORE_TEXT(r->id), STORE_TEXT(r->results_text),
                        STORE_TEXT(r->meta_text ? r->meta_text : "{}")) != STORE_OK ||
        store_query_run(q,
                        "INSERT OR REPLACE INTO run_digests (run_id, summary, rows) "
                        "VALUES (?1, ?2, ?3)",
                        NULL, STORE_TEXT(r->id), STORE_TEXT(j->summary),
                        STORE_TEXT(j->digest)) != STORE_OK)
        return STORE_ERROR;
    if (row_judged) {
        if (put_card_tables_bound(q, r) != STORE_OK)
            return STORE_ERROR;
        return store_put_changes(q, r, 1);
    }
    /* The newest result of each benchmark on each card, for /metrics. */
    if (store_query_run(q,
                        "INSERT INTO latest_by_card (benchmark, host, device_uuid, run_id) "
                        "SELECT benchmark, host, coalesce(device_uuid, ''), id "
                        "FROM runs WHERE id = ?1 "
                        "ON CONFLICT (benchmark, host, device_uuid) DO UPDATE "
                        "SET run_id = excluded.run_id WHERE excluded.run_id > run_id",
                        NULL, STORE_TEXT(r->id)) != STORE_OK)
        return STORE_ERROR;
    if (update_judged(q, r) != STORE_OK)
        return STORE_ERROR;
    /* The fleet's newest valid run of the key on its card
     * (migrations/0007_run_verdicts.sql). */
    if (store_query_run(q,
                        "INSERT INTO fleet_latest (verdict_key, benchmark, host, "
                        "device_uuid, run_id) "
                        "SELECT verdict_key, benchmark, host, device_uuid, id FROM runs "
                        "WHERE id = ?1 AND verdict_key IS NOT NULL AND valid IS NOT 0 "
                        "AND device_uuid IS NOT NULL "
                        "ON CONFLICT (verdict_key, host, device_uuid) DO UPDATE "
                        "SET run_id = excluded.run_id WHERE excluded.run_id > run_id",
                        NULL, STORE_TEXT(r->id)) != STORE_OK)
        return STORE_ERROR;
    /* Its change-point series, one step each (store_changes.c). */
    return store_put_changes(q, r, 0);
}
