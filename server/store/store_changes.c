/*
 * store_changes.c - see store_changes.h.  A run's series are stepped by
 * one upsert a row (store_put_changes, in the transaction that stores the
 * run): gb_change_step (judge/change_sql.h) computes the new state from
 * the stored one and the run's point, so the store only writes what the
 * judge decided, and nothing reads the card's history.  What a step found
 * (gb_change_found, read back after the upsert) becomes a changes row and its alert: a step
 * one alert of kind change (confirmed at once: it is significant already,
 * and repeated over the runs after it); a drift one alert of kind drift
 * while none of its card and key is open and unacknowledged.
 */
#include "store_changes.h"

#include "json_build.h"
#include "store_internal.h"
#include "timeutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FOUND 64 /* a run's rows that find something at once, kept */

/* The alert's reason for a change: words a person reads in GET /alerts. */
static void change_reason(char *buf, size_t cap, const char *kind, const cJSON *d,
                          const char *run_id)
{
    double shift = cJSON_GetNumberValue(cJSON_GetObjectItem(d, "shift"));
    double lo = cJSON_GetNumberValue(cJSON_GetObjectItem(d, "ci_low"));
    double hi = cJSON_GetNumberValue(cJSON_GetObjectItem(d, "ci_high"));

    if (strcmp(kind, "step") == 0)
        snprintf(buf, cap,
                 "a step of %+.2f%% (95%% interval %+.2f%% to %+.2f%%) from run %s on; "
                 "acknowledge it to make the new level this card's baseline",
                 100 * shift, 100 * lo, 100 * hi, run_id);
    else
        snprintf(buf, cap, "drifting %+.2f%% a month (95%% interval %+.2f%% to %+.2f%%)",
                 100 * cJSON_GetNumberValue(cJSON_GetObjectItem(d, "per_month")), 100 * lo,
                 100 * hi);
}

/* One found change (kind, its detail d) of run id's row row_key stored
 * with its alert; replayed (change_replay), without an alert and only
 * where the same change is not stored already.  STORE_OK or STORE_ERROR. */
static int put_found(struct store_query *q, const char *id, const char *row_key,
                     const char *kind, const cJSON *d, const char *now, int replayed)
{
    const char *at_run = cJSON_GetStringValue(cJSON_GetObjectItem(d, "run_id"));
    double shift = cJSON_GetNumberValue(
        cJSON_GetObjectItem(d, strcmp(kind, "step") == 0 ? "shift" : "per_month"));
    char *detail = cJSON_PrintUnformatted(d), reason[256];
    sqlite3_int64 change_id;
    int rc = STORE_ERROR, added = 0;

    if (detail == NULL)
        return STORE_ERROR;
    change_reason(reason, sizeof(reason), kind, d, at_run ? at_run : id);
    if (store_query_run(q,
                        "INSERT INTO changes (kind, host, device_uuid, device_name, benchmark, "
                        "verdict_key, row_key, run_id, found_run_id, at, found_at, detail) "
                        "SELECT ?2, host, device_uuid, device_name, benchmark, verdict_key, ?3, "
                        "coalesce(?4, id), id, "
                        "coalesce((SELECT created_at FROM runs WHERE id = ?4), created_at), ?5, ?6 "
                        "FROM runs r WHERE id = ?1 AND NOT (?7 AND EXISTS (SELECT 1 FROM changes c "
                        "WHERE c.device_uuid = r.device_uuid AND c.kind = ?2 AND c.host = r.host "
                        "AND c.verdict_key = r.verdict_key AND c.row_key = ?3 "
                        "AND c.run_id = coalesce(?4, r.id)))",
                        &added, STORE_TEXT(id), STORE_TEXT(kind), STORE_TEXT(row_key),
                        STORE_TEXT(at_run), STORE_TEXT(now), STORE_TEXT(detail),
                        STORE_INT(replayed)) != STORE_OK)
        goto done;
    if (replayed || added == 0) {
        rc = STORE_OK;
        goto done;
    }
    change_id = sqlite3_last_insert_rowid(q->c->db);
    /* clang-format off */
    if (store_query_prepare(q,
            "INSERT INTO alerts (kind, state, host, device_uuid, device_name, benchmark, "
            "verdict_key, row_key, verdict, shift, run_id, confirms_left, reason, detected_at, "
            "confirmed_at, change_id) "
            "SELECT CASE c.kind WHEN 'step' THEN 'change' ELSE 'drift' END, 'confirmed', c.host, "
            "c.device_uuid, c.device_name, c.benchmark, c.verdict_key, c.row_key, "
            "CASE WHEN ?2 > 0 THEN 'slower' ELSE 'faster' END, ?2, c.run_id, 0, ?3, ?4, ?4, c.id "
            "FROM changes c WHERE c.id = ?1 AND (c.kind = 'step' OR NOT EXISTS "
            "(SELECT 1 FROM alerts o WHERE o.state <> 'cleared' AND o.kind = 'drift' "
            "AND o.state <> 'acknowledged' AND o.host = c.host "
            "AND o.device_uuid = c.device_uuid AND o.verdict_key = c.verdict_key))") != STORE_OK)
        goto done;
    /* clang-format on */
    store_bind_int64(q, 1, change_id);
    store_bind_double(q, 2, shift);
    store_bind_text(q, 3, reason);
    store_bind_text(q, 4, now);
    rc = store_query_exec(q, NULL);

done:
    free(detail);
    return rc;
}

/* The characters of s, as SQL's length() counts them in UTF-8 text. */
static size_t utf8_chars(const char *s)
{
    size_t n = 0;

    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Prepares the step of run r's series of row_key (x its point) on q:
 * bound, from r itself where its row was written from r (store_series_key
 * says whether the series takes it), else read from its row.  1 prepared,
 * 0 not a run a series takes, STORE_ERROR. */
static int prepare_step(struct store_query *q, const struct run_record *r, int bound,
                        const char *row_key, double x)
{
    /* clang-format off */
    static const char step_sql[] =
        "INSERT INTO change_series (host, device_uuid, verdict_key, row_key, state) "
        "SELECT host, device_uuid, verdict_key, ?2, "
        "gb_change_step(NULL, julianday(created_at) - 2440587.5, ?3, id) FROM runs "
        "WHERE id = ?1 AND status = 'done' AND verdict_key IS NOT NULL AND valid IS NOT 0 "
        "AND device_uuid IS NOT NULL AND length(id) < 48 "
        "ON CONFLICT (host, device_uuid, verdict_key, row_key) DO UPDATE "
        "SET state = coalesce(gb_change_step(state, "
        "(SELECT julianday(created_at) - 2440587.5 FROM runs WHERE id = ?1), ?3, ?1), state)";
    /* The same step with the row's columns bound (?4 host, ?5 card, ?6
     * key, ?7 created_at): no look-up of the run, twice, by id. */
    static const char bound_sql[] =
        "INSERT INTO change_series (host, device_uuid, verdict_key, row_key, state) "
        "VALUES (?4, ?5, ?6, ?2, gb_change_step(NULL, julianday(?7) - 2440587.5, ?3, ?1)) "
        "ON CONFLICT (host, device_uuid, verdict_key, row_key) DO UPDATE "
        "SET state = coalesce(gb_change_step(state, julianday(?7) - 2440587.5, ?3, ?1), state)";
    /* clang-format on */
    const char *key = bound ? store_series_key(r) : NULL;

    if (bound && (key == NULL || r->id == NULL || utf8_chars(r->id) >= 48))
        return 0;
    if (store_query_prepare(q, bound ? bound_sql : step_sql) != STORE_OK)
        return STORE_ERROR;
    store_bind_text(q, 1, r->id);
    store_bind_text(q, 2, row_key);
    store_bind_double(q, 3, x);
    if (bound) {
        store_bind_text(q, 4, r->host);
        store_bind_text(q, 5, r->device_uuid);
        store_bind_text(q, 6, key);
        store_bind_text(q, 7, r->created_at);
    }
    return 1;
}

/* Prepares the read of what the step of run r's series of row_key just
 * written found: by the series' key where bound (prepare_step's), else
 * through the run's row.  STORE_OK or STORE_ERROR. */
static int prepare_found(struct store_query *q, const struct run_record *r, int bound,
                         const char *row_key)
{
    /* clang-format off */
    static const char found_sql[] =
        "SELECT gb_change_found(c.state) FROM runs r JOIN change_series c "
        "ON c.host = r.host AND c.device_uuid = r.device_uuid "
        "AND c.verdict_key = r.verdict_key AND c.row_key = ?2 WHERE r.id = ?1";
    static const char bound_sql[] =
        "SELECT gb_change_found(state) FROM change_series "
        "WHERE host = ?1 AND device_uuid = ?3 AND verdict_key = ?4 AND row_key = ?2";
    /* clang-format on */
    if (store_query_prepare(q, bound ? bound_sql : found_sql) != STORE_OK)
        return STORE_ERROR;
    store_bind_text(q, 1, bound ? r->host : r->id);
    store_bind_text(q, 2, row_key);
    if (bound) {
        store_bind_text(q, 3, r->device_uuid);
        store_bind_text(q, 4, store_series_key(r));
    }
    return STORE_OK;
}

/* store_put_changes, or a replayed run's (put_found's replayed).  bound:
 * as store_put_changes' row_judged. */
static int put_changes(struct store_query *q, const struct run_record *r, int replayed,
                       int bound)
{
    /* What the step just written found is read back only where the
     * upsert wrote a row (RETURNING would make SQLite keep the answer in
     * an ephemeral table a statement: a third of a step's cost,
     * bench/RESULTS.md). */
    const struct run_judged *j = &r->judged;
    char *found[MAX_FOUND];
    int nfound = 0, rc = STORE_ERROR;
    char now[32];

    if (j->n_points == 0)
        return STORE_OK;
    for (int i = 0; i < j->n_points; i++) {
        int step, wrote = 0,
                  prepared = prepare_step(q, r, bound, j->points[i].row_key, j->points[i].x);
        if (prepared == STORE_ERROR || (prepared && store_query_exec(q, &wrote) != STORE_OK))
            goto done;
        if (wrote == 0)
            continue; /* not a run a series takes (not done, not valid...) */
        if (prepare_found(q, r, bound, j->points[i].row_key) != STORE_OK)
            goto done;
        while ((step = store_query_step(q)) == STORE_STEP_ROW) {
            const char *f = store_col_text(q->st, 0);
            if (f == NULL || nfound == MAX_FOUND)
                continue;
            /* the row's key and what it found, as one text to split below */
            size_t len = strlen(j->points[i].row_key) + strlen(f) + 2;
            if ((found[nfound] = malloc(len)) == NULL)
                goto done;
            snprintf(found[nfound++], len, "%s\n%s", j->points[i].row_key, f);
        }
        if (step != STORE_STEP_DONE)
            goto done;
    }
    time_now_rfc3339(now, sizeof(now));
    for (int i = 0; i < nfound; i++) {
        char *nl = strchr(found[i], '\n');
        cJSON *f = nl ? cJSON_Parse(nl + 1) : NULL, *d;
        if (f == NULL)
            goto done;
        *nl = '\0';
        cJSON_ArrayForEach(d, f) {
            if (put_found(q, r->id, found[i], d->string, d, now, replayed) != STORE_OK) {
                cJSON_Delete(f);
                goto done;
            }
        }
        cJSON_Delete(f);
    }
    rc = STORE_OK;

done:
    while (nfound > 0)
        free(found[--nfound]);
    return rc;
}

int store_put_changes(struct store_query *q, const struct run_record *r, int row_judged)
{
    return put_changes(q, r, 0, row_judged);
}

/* A run to replay from a row of store_changes_replay_page's: NEW, or NULL. */
static cJSON *replay_from_row(sqlite3_stmt *st)
{
    static const char *const names[] = {"id", "benchmark", "device_uuid", "verdict_key"};
    struct json_build b = {0};
    cJSON *run = jb_new_object(&b);

    for (int i = 0; i < 4; i++)
        jb_string(&b, run, names[i], store_col_text(st, i));
    jb_number(&b, run, "valid", (double)sqlite3_column_int(st, 4));
    jb_item(&b, run, "results", store_json_column(st, 5));
    if (jb_failed(&b)) {
        cJSON_Delete(run);
        return NULL;
    }
    return run;
}

int store_changes_replay_page(struct store *s, int limit, cJSON **runs, long *left)
{
    /* clang-format off */
    static const char sql[] =
        "SELECT r.id, r.benchmark, r.device_uuid, r.verdict_key, coalesce(r.valid, -1), "
        "rr.results FROM runs r JOIN run_results rr ON rr.run_id = r.id "
        "WHERE r.id > (SELECT after_id FROM change_replay) "
        "AND r.status = 'done' AND r.verdict_key IS NOT NULL AND r.valid IS NOT 0 "
        "AND r.device_uuid IS NOT NULL ORDER BY r.id LIMIT ?1";
    static const char count_sql[] =
        "SELECT count(*) FROM runs WHERE id > (SELECT after_id FROM change_replay)";
    /* clang-format on */
    struct store_query q;
    int rc = STORE_ERROR;

    *runs = NULL;
    store_query_begin(&q, store_reader(s), "read the runs to replay into the change series");
    if (left) {
        if (store_query_prepare(&q, count_sql) != STORE_OK)
            goto done;
        int one = store_query_one(&q);
        if (one == STORE_ERROR)
            goto done;
        *left = one == STORE_OK ? (long)sqlite3_column_int64(q.st, 0) : 0;
    }
    if (store_query_prepare(&q, sql) != STORE_OK)
        goto done;
    store_bind_int64(&q, 1, limit);
    rc = store_query_rows(&q, replay_from_row, runs);

done:
    return store_query_end(&q, rc);
}

int store_changes_replay_put(struct store *s, const struct run_record *rs, int n,
                             const char *last_id)
{
    struct store_query q;
    int rc;

    store_query_begin(&q, &s->writer, "replay runs into the change series");
    rc = store_query_transaction(&q);
    for (int i = 0; rc == STORE_OK && i < n; i++)
        rc = put_changes(&q, &rs[i], 1, 0);
    if (rc == STORE_OK)
        rc = last_id ? store_query_run(&q, "UPDATE change_replay SET after_id = ?1", NULL,
                                       STORE_TEXT(last_id))
                     : store_query_run(&q, "DELETE FROM change_replay WHERE only = ?1", NULL,
                                       STORE_INT(1));
    if (rc == STORE_OK)
        rc = store_query_commit(&q);
    return store_query_end(&q, rc);
}

/* A change from a row of store_changes_list's columns: NEW, or NULL. */
static cJSON *change_from_row(sqlite3_stmt *st)
{
    struct json_build b = {0};
    cJSON *c = jb_new_object(&b), *card, *detail, *item;

    jb_number(&b, c, "id", (double)sqlite3_column_int64(st, 0));
    jb_string(&b, c, "kind", store_col_text(st, 1));
    card = jb_object(&b, c, "card");
    jb_string(&b, card, "host", store_col_text(st, 2));
    jb_string(&b, card, "device_uuid", store_col_text(st, 3));
    jb_string(&b, card, "device_name", store_col_text(st, 4));
    jb_string(&b, c, "benchmark", store_col_text(st, 5));
    jb_item(&b, c, "key", store_json_column(st, 6));
    jb_item(&b, c, "row", store_json_column(st, 7));
    jb_string(&b, c, "run_id", store_col_text(st, 8));
    jb_string(&b, c, "found_by", store_col_text(st, 9));
    jb_string(&b, c, "at", store_col_text(st, 10));
    jb_string(&b, c, "found_at", store_col_text(st, 11));
    detail = store_json_column(st, 12);
    if (detail == NULL)
        jb_fail(&b);
    cJSON_ArrayForEach(item, detail)
        if (strcmp(item->string, "run_id") != 0)
            jb_copy(&b, c, detail, item->string);
    cJSON_Delete(detail);
    if (jb_failed(&b)) {
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}

int store_changes_list(struct store *s, const struct change_select *sel, cJSON **out)
{
    /* clang-format off */
    static const char sql[] =
        "SELECT id, kind, host, device_uuid, device_name, benchmark, verdict_key, row_key, "
        "run_id, found_run_id, at, found_at, detail FROM changes "
        "WHERE (?1 IS NULL OR device_uuid = ?1) AND (?2 IS NULL OR host = ?2) "
        "AND (?3 IS NULL OR device_name = ?3) AND (?4 IS NULL OR at >= ?4) "
        "ORDER BY at DESC, id DESC LIMIT ?5";
    /* clang-format on */
    const char *binds[4] = {sel->uuid, sel->host, sel->model, sel->since};
    struct store_query q;
    int rc = STORE_ERROR;

    *out = NULL;
    store_query_begin(&q, store_reader(s), "read changes");
    if (store_query_prepare(&q, sql) != STORE_OK)
        goto done;
    for (int i = 0; i < 4; i++)
        store_bind_text(&q, i + 1, binds[i] && binds[i][0] ? binds[i] : NULL);
    store_bind_int64(&q, 5, sel->limit > 0 ? sel->limit : 100);
    rc = store_query_rows(&q, change_from_row, out);

done:
    return store_query_end(&q, rc);
}

int store_changes_counts(struct store *s, const char *since, cJSON **out)
{
    return store_read_objects(s, "count recent changes",
                              "SELECT host, device_uuid, kind, count(*) AS count FROM changes "
                              "WHERE at >= ?1 GROUP BY host, device_uuid, kind",
                              since, NULL, out);
}
