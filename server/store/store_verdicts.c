/*
 * store_verdicts.c - what a run is judged against at its end, and the
 * fleet (migrations/0007_run_verdicts.sql): a card's recent valid runs of
 * one key, and each card's newest valid run of a key with its rows.
 *
 * Every read goes through an index: runs_by_card_key for a card's history,
 * fleet_latest (one row a card and key, kept by store_put_results) for the
 * fleet, so that neither grows with the number of runs stored.
 *
 * The runs a verdict compares sample by sample (a card's history here, the
 * groups of GET /compare in store_baselines.c) are read as verdicts.c reads
 * them (store_verdict_run_from_row): their results' rows and the few fields
 * of the key, never the meta (2 kB of JSON a run, read by nothing here).
 */
#include "json_build.h"
#include "store_internal.h"
#include "store_verdicts.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The results' rows from column col into *rows (NEW; NULL: the run has
 * no results).  0, or -1 when they could not be read. */
static int rows_from_column(sqlite3_stmt *st, int col, cJSON **rows)
{
    *rows = NULL;
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        return 0;
    return (*rows = store_json_column(st, col)) ? 0 : -1;
}

/* The run's fields from VERDICT_RUN_FIELDS; NEW. */
static cJSON *run_fields(sqlite3_stmt *st)
{
    static const char *const texts[] = {"id", "benchmark", NULL, NULL, "status", "created_at",
                                        "confirms"};
    struct json_build jb = {0};
    cJSON *run = jb_new_object(&jb), *validity;

    for (int i = 0; i < 7; i++)
        if (texts[i])
            jb_string(&jb, run, texts[i], store_col_text(st, i));
    jb_item(&jb, run, "params", jb_failed(&jb) ? NULL : store_raw_column(st, 2));
    jb_string(&jb, jb_object(&jb, run, "device"), "name", store_col_text(st, 3));
    /* valid: 1, 0 or NULL (not judged), as migrations/0004_validity.sql keeps it */
    validity = jb_object(&jb, run, "validity");
    if (sqlite3_column_type(st, 7) == SQLITE_NULL)
        jb_null(&jb, validity, "valid");
    else
        jb_bool(&jb, validity, "valid", sqlite3_column_int(st, 7) != 0);
    /* The key's method, and the build that stands for it where it is
     * unknown (compare_key_value). */
    if (sqlite3_column_type(st, 8) == SQLITE_NULL)
        jb_null(&jb, run, "method");
    else
        jb_number(&jb, run, "method", (double)sqlite3_column_int64(st, 8));
    jb_string(&jb, jb_object(&jb, jb_object(&jb, run, "meta"), "build"), "git_commit",
              store_col_text(st, 9));
    if (jb_failed(&jb)) {
        cJSON_Delete(run);
        return NULL;
    }
    return run;
}

/* The results' rows (column col) and summary (col + 1) as run's
 * "results" (null: no results); 0, or -1 when they could not be read. */
static int add_results(cJSON *run, sqlite3_stmt *st, int col)
{
    cJSON *results, *rows = NULL, *summary = NULL;

    if (rows_from_column(st, col, &rows) != 0)
        return -1;
    if (rows == NULL)
        return cJSON_AddNullToObject(run, "results") ? 0 : -1;
    results = cJSON_AddObjectToObject(run, "results");
    if (results == NULL || !cJSON_AddItemToObject(results, "rows", rows)) {
        cJSON_Delete(rows);
        return -1;
    }
    /* A run stored before its digest had one has none: its rows then
     * say their units themselves, or are taken per sample. */
    return rows_from_column(st, col + 1, &summary) == 0 &&
                   (summary == NULL || cJSON_AddItemToObject(results, "summary", summary))
               ? 0
               : -1;
}

cJSON *store_verdict_run_from_row(sqlite3_stmt *st)
{
    cJSON *run = run_fields(st);

    if (run == NULL || add_results(run, st, VERDICT_RUN_NFIELDS) != 0) {
        cJSON_Delete(run);
        return NULL;
    }
    return run;
}

cJSON *store_verdict_run_from_fields(struct store_query *q, sqlite3_stmt *row)
{
    static const char sql[] =
        "SELECT (SELECT json_extract(results, '$.rows') FROM run_results WHERE run_id = ?1), "
        "(SELECT summary FROM run_digests WHERE run_id = ?1)";
    struct store_query rows_q;
    cJSON *run = run_fields(row);
    int rc = STORE_ERROR;

    store_query_nest(&rows_q, q);
    if (run != NULL && store_query_prepare(&rows_q, sql) == STORE_OK) {
        store_bind_text(&rows_q, 1, store_col_text(row, 0));
        if (store_query_step(&rows_q) == STORE_STEP_ROW && add_results(run, rows_q.st, 0) == 0)
            rc = STORE_OK;
    }
    if (store_query_end(&rows_q, rc) != STORE_OK) {
        cJSON_Delete(run);
        return NULL;
    }
    return run;
}

int store_get_verdict_run(struct store *s, const char *id, cJSON **out)
{
    static const char sql[] = "SELECT " VERDICT_RUN_COLUMNS " FROM runs r WHERE r.id = ?1";
    struct store_query q;
    int rc = STORE_ERROR;

    *out = NULL;
    store_query_begin(&q, store_reader(s), "read a run to judge");
    if (store_query_prepare(&q, sql) != STORE_OK)
        goto done;
    store_bind_text(&q, 1, id);
    if ((rc = store_query_one(&q)) == STORE_OK &&
        (*out = store_verdict_run_from_row(q.st)) == NULL)
        rc = STORE_ERROR;

done:
    return store_query_end(&q, rc);
}

/* The rows of run r as the fleet reads them: the digest, or the whole. */
#define FLEET_ROWS                                                               \
    "coalesce(d.rows, (SELECT json_extract(results, '$.rows') FROM run_results " \
    "WHERE run_id = f.run_id))"

int store_history_runs(struct store *s, const char *id, int limit, cJSON **runs)
{
    struct store_query q;
    /* clang-format off */
    static const char sql[] =
        "SELECT " VERDICT_RUN_COLUMNS " FROM runs j JOIN runs r ON r.device_uuid = j.device_uuid "
        "AND r.host = j.host AND r.verdict_key = " STORE_VERDICT_KEY("j.") " "
        "AND r.valid IS NOT 0 "
        "WHERE j.id = ?1 AND r.id <> j.id "
        /* a confirming run is judged against the history before the run
         * it confirms: not against that run, nor its other confirmations */
        "AND r.id IS NOT j.confirms AND (j.confirms IS NULL OR r.confirms IS NOT j.confirms) "
        /* an acknowledged step of the card and key is its new baseline:
         * the history starts at its first run (migrations/0018) */
        "AND r.id >= coalesce((SELECT max(a.run_id) FROM alerts a WHERE a.kind = 'change' "
        "AND a.state = 'acknowledged' AND a.host = r.host AND a.device_uuid = r.device_uuid "
        "AND a.verdict_key = r.verdict_key), '') "
        "ORDER BY r.id DESC LIMIT ?2";
    /* clang-format on */
    int rc = STORE_ERROR;

    *runs = NULL;
    store_query_begin(&q, store_reader(s), "read a card's recent runs");
    if (store_query_prepare(&q, sql) == STORE_OK) {
        store_bind_text(&q, 1, id);
        store_bind_int64(&q, 2, limit);
        /* each with every sample, as a verdict reads it */
        rc = store_query_rows(&q, store_verdict_run_from_row, runs);
    }
    return store_query_end(&q, rc);
}

int store_fleet_peers(struct store *s, const char *id, cJSON **peers)
{
    struct store_query q;
    /* clang-format off */
    static const char sql[] =
        "SELECT f.host, f.device_uuid, f.run_id, " FLEET_ROWS " "
        "FROM runs r JOIN fleet_latest f ON f.verdict_key = " STORE_VERDICT_KEY("r.") " "
        "LEFT JOIN run_digests d ON d.run_id = f.run_id "
        "WHERE r.id = ?1 AND NOT (f.host = r.host AND f.device_uuid IS r.device_uuid)";
    /* clang-format on */
    cJSON *out = cJSON_CreateArray();
    int rc = STORE_ERROR, step;

    *peers = NULL;
    store_query_begin(&q, store_reader(s), "read the fleet of a run's card");
    if (out == NULL || store_query_prepare(&q, sql) != STORE_OK)
        goto done;
    store_bind_text(&q, 1, id);
    while ((step = store_query_step(&q)) == STORE_STEP_ROW) {
        sqlite3_stmt *st = q.st;
        struct json_build jb = {0};
        cJSON *p = jb_new_object(&jb);

        jb_push(&jb, out, p); /* out's now, or deleted */
        jb_string(&jb, p, "host", store_col_text(st, 0));
        jb_string(&jb, p, "device_uuid", store_col_text(st, 1));
        jb_string(&jb, p, "run_id", store_col_text(st, 2));
        jb_item(&jb, p, "rows", jb_failed(&jb) ? NULL : store_json_column(st, 3));
        if (jb_failed(&jb))
            goto done;
    }
    if (step != STORE_STEP_DONE)
        goto done;
    *peers = out;
    out = NULL;
    rc = STORE_OK;

done:
    cJSON_Delete(out);
    return store_query_end(&q, rc);
}

int store_fleet_cards(struct store *s, const char *benchmark, cJSON **cards)
{
    struct store_query q;
    /* Two texts, so that each has its plan: by benchmark through its
     * index, or every key (/metrics). */
    static const char by_bench[] =
        "SELECT f.verdict_key, f.benchmark, r.device_name, r.params, f.host, f.device_uuid, "
        "f.run_id, " FLEET_ROWS ", r.method, r.build, r.origin IS NULL, r.label "
        "FROM fleet_latest f "
        "JOIN runs r ON r.id = f.run_id "
        "LEFT JOIN run_digests d ON d.run_id = f.run_id WHERE f.benchmark = ?1 "
        "ORDER BY f.verdict_key, f.host, f.device_uuid";
    static const char every[] =
        "SELECT f.verdict_key, f.benchmark, r.device_name, r.params, f.host, f.device_uuid, "
        "f.run_id, " FLEET_ROWS ", r.method, r.build, r.origin IS NULL, r.label "
        "FROM fleet_latest f "
        "JOIN runs r ON r.id = f.run_id "
        "LEFT JOIN run_digests d ON d.run_id = f.run_id "
        "ORDER BY f.verdict_key, f.host, f.device_uuid";
    static const char *const names[] = {"group", "benchmark", "card_model", NULL, "host",
                                        "device_uuid", "run_id"};
    cJSON *out = cJSON_CreateArray();
    int rc = STORE_ERROR, step;

    *cards = NULL;
    store_query_begin(&q, store_reader(s), "read the fleet");
    if (out == NULL || store_query_prepare(&q, benchmark ? by_bench : every) != STORE_OK)
        goto done;
    if (benchmark)
        store_bind_text(&q, 1, benchmark);
    while ((step = store_query_step(&q)) == STORE_STEP_ROW) {
        sqlite3_stmt *st = q.st;
        struct json_build jb = {0};
        cJSON *card = jb_new_object(&jb);

        jb_push(&jb, out, card); /* out's now, or deleted */
        for (int i = 0; i < 7; i++)
            if (names[i])
                jb_string(&jb, card, names[i], store_col_text(st, i));
        jb_item(&jb, card, "params", jb_failed(&jb) ? NULL : store_json_column(st, 3));
        jb_item(&jb, card, "rows", jb_failed(&jb) ? NULL : store_json_column(st, 7));
        /* its method, and the build that stands for an unknown one */
        if (sqlite3_column_type(st, 8) == SQLITE_NULL)
            jb_null(&jb, card, "method");
        else
            jb_number(&jb, card, "method", (double)sqlite3_column_int64(st, 8));
        jb_string(&jb, card, "build", store_col_text(st, 9));
        /* measured here (no origin), or held from a peer or an import */
        jb_bool(&jb, card, "own", sqlite3_column_int(st, 10));
        jb_string(&jb, card, "label", store_col_text(st, 11));
        if (jb_failed(&jb))
            goto done;
    }
    if (step != STORE_STEP_DONE)
        goto done;
    *cards = out;
    out = NULL;
    rc = STORE_OK;

done:
    cJSON_Delete(out);
    return store_query_end(&q, rc);
}
