/*
 * store_baselines.c - the runs a verdict selects (GET /compare's
 * card:, host:, label:, driver: selectors) and the pinned baselines
 * (migrations/0006_baselines.sql).  See store_verdicts.h and
 * store_baselines.h.
 */
#include "json_build.h"
#include "store_internal.h"
#include "store_baselines.h"
#include "store_verdicts.h"
#include "dynbuf.h"
#include "timeutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The statements over the runs a selector picks, each made with only the
 * filters given (below): */
enum select_kind {
    SELECT_IDS,  /* store_select_runs: the ids, newest first, ?8 of them */
    SELECT_KEY,  /* the newest one's verdict key and benchmark (valid
                  * unless ?9) */
    SELECT_WALK, /* every one's fields as verdicts read them, newest
                  * first, and whether its verdict key is ?10 (read until
                  * a group is full) */
    SELECT_KINDS
};

/* The text of kind with only the filters given (bit i: text i of sel),
 * made once per kind and set and kept: a clause "?N IS NULL OR ..." in
 * one text for all would keep SQLite from any index but the newest-first
 * walk, which reads the whole table when few runs match (a card's runs of
 * one benchmark since a date).  With a card, the benchmark is left out of
 * the index choice (+r.benchmark) so that runs_by_device_uuid walks that
 * card's runs newest first: a card has far fewer runs than a benchmark.
 * With a card, host or label the status is left out of it too (+r.status):
 * else SQLite (3.40, no ANALYZE) walks runs_by_status, every done run
 * newest first, and reads a million runs to find a card's 200 (measured:
 * 160-230 ms at 100,000 runs, against about 1 ms through the card's). */
static const char *select_sql_for(enum select_kind kind, unsigned bits)
{
    static const char *const clauses[7] = {
        " AND r.benchmark = ?1", " AND r.device_uuid = ?2", " AND r.host = ?3",
        " AND r.label = ?4", " AND r.driver_version = ?5", " AND r.created_at >= ?6",
        " AND r.created_at <= ?7"};
    static const char *const heads[SELECT_KINDS] = {
        "SELECT r.id FROM runs r",
        "SELECT r.verdict_key, r.benchmark FROM runs r",
        "SELECT " VERDICT_RUN_FIELDS ", r.verdict_key IS ?10 FROM runs r"};
    static const char *const tails[SELECT_KINDS] = {
        " ORDER BY r.id DESC LIMIT ?8",
        " AND (?9 OR r.valid IS NOT 0) ORDER BY r.id DESC LIMIT 1",
        " ORDER BY r.id DESC"};
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char *texts[SELECT_KINDS][1 << 7];
    struct dynbuf b;

    pthread_mutex_lock(&lock);
    if (texts[kind][bits] == NULL) {
        dynbuf_init(&b, 1024);
        (void)!dynbuf_printf(&b, "%s WHERE %sr.status = 'done'", heads[kind],
                             (bits & (2u | 4u | 8u)) ? "+" : "");
        for (int i = 0; i < 7; i++)
            if (bits & (1u << i))
                (void)!dynbuf_printf(&b, "%s",
                                     i == 0 && (bits & 2u) ? " AND +r.benchmark = ?1" : clauses[i]);
        (void)!dynbuf_printf(&b, "%s", tails[kind]);
        /* a text cut short is no query: NULL, as when memory ran out */
        if (!dynbuf_failed(&b))
            texts[kind][bits] = dynbuf_take(&b, NULL);
        dynbuf_free(&b);
    }
    pthread_mutex_unlock(&lock);
    return texts[kind][bits];
}

/* Prepares kind for sel's filters on q with them bound; STORE_OK or
 * STORE_ERROR (also when there is no memory for its text). */
static int select_prepare(struct store_query *q, enum select_kind kind,
                          const struct run_select *sel)
{
    const char *texts[7] = {sel->benchmark, sel->card, sel->host, sel->label,
                            sel->driver, sel->since, sel->until};
    const char *sql;
    unsigned bits = 0;

    for (int i = 0; i < 7; i++)
        if (texts[i] && texts[i][0])
            bits |= 1u << i;
    if ((sql = select_sql_for(kind, bits)) == NULL || store_query_prepare(q, sql) != STORE_OK)
        return STORE_ERROR;
    for (int i = 0; i < 7; i++)
        if (bits & (1u << i))
            store_bind_text(q, i + 1, texts[i]);
    return STORE_OK;
}

/* The ids of q's rows (column 0) into list; STORE_OK or STORE_ERROR. */
static int ids_of_rows(struct store_query *q, cJSON *list)
{
    struct json_build jb = {0};
    int step = STORE_STEP_DONE;

    while (!jb_failed(&jb) && (step = store_query_step(q)) == STORE_STEP_ROW)
        jb_push(&jb, list, cJSON_CreateString(store_col_text(q->st, 0)));
    return !jb_failed(&jb) && step == STORE_STEP_DONE ? STORE_OK : STORE_ERROR;
}

int store_select_runs(struct store *s, const struct run_select *sel, cJSON **ids)
{
    struct store_query q;
    cJSON *list = cJSON_CreateArray();
    int rc = STORE_ERROR;

    *ids = NULL;
    store_query_begin(&q, store_reader(s), "select runs");
    if (list == NULL || select_prepare(&q, SELECT_IDS, sel) != STORE_OK)
        goto done;
    store_bind_int64(&q, 8, sel->limit);
    if (ids_of_rows(&q, list) != STORE_OK)
        goto done;
    *ids = list;
    list = NULL;
    rc = STORE_OK;

done:
    cJSON_Delete(list);
    return store_query_end(&q, rc);
}

int store_select_like(struct store *s, const char *run_id, const char *since,
                      const char *until, int limit, cJSON **ids)
{
    /* The run's key as stored when it finished (verdict_key), so that the
     * same expression picks the same runs as a card's history does.  The
     * unary + keeps host and status off the index choice: through
     * runs_by_device_uuid the walk is the card's runs (31 ms for 1,000 at
     * a million runs); through runs_by_host it was the host's (360 ms). */
    static const char sql[] =
        "SELECT h.id FROM runs r JOIN runs h ON h.device_uuid = r.device_uuid "
        "AND +h.host = r.host AND h.verdict_key = r.verdict_key AND +h.status = 'done' "
        "WHERE r.id = ?1 AND r.verdict_key IS NOT NULL "
        "AND (?2 IS NULL OR h.created_at >= ?2) AND (?3 IS NULL OR h.created_at <= ?3) "
        "ORDER BY h.id DESC LIMIT ?4";
    static const char exists[] =
        "SELECT 1 FROM runs WHERE id = ?1 AND status = 'done' AND verdict_key IS NOT NULL";
    struct store_query q;
    cJSON *list = cJSON_CreateArray();
    int rc = STORE_ERROR, step;

    *ids = NULL;
    store_query_begin(&q, store_reader(s), "select the runs of a run's card and key");
    if (list == NULL || store_query_prepare(&q, sql) != STORE_OK)
        goto done;
    store_bind_text(&q, 1, run_id);
    store_bind_text(&q, 2, since && since[0] ? since : NULL);
    store_bind_text(&q, 3, until && until[0] ? until : NULL);
    store_bind_int64(&q, 4, limit);
    if (ids_of_rows(&q, list) != STORE_OK)
        goto done;
    if (cJSON_GetArraySize(list) == 0) { /* none in range, or no such run */
        if (store_query_prepare(&q, exists) != STORE_OK)
            goto done;
        store_bind_text(&q, 1, run_id);
        if ((step = store_query_one(&q)) != STORE_OK) {
            rc = step;
            goto done;
        }
    }
    *ids = list;
    list = NULL;
    rc = STORE_OK;

done:
    cJSON_Delete(list);
    return store_query_end(&q, rc);
}

/* The verdict key and benchmark of the newest run sel picks (valid unless
 * any_validity), into NEW strings *key and *bench (both NULL: none).  On
 * q, whose statement it replaces.  STORE_OK or STORE_ERROR (q's end maps
 * it). */
static int newest_key(struct store_query *q, const struct run_select *sel, int any_validity,
                      char **key, char **bench)
{
    int rc = STORE_ERROR, step;

    *key = *bench = NULL;
    q->what = "find the key of a verdict's group";
    if (select_prepare(q, SELECT_KEY, sel) != STORE_OK)
        goto done;
    store_bind_int64(q, 9, any_validity != 0);
    step = store_query_step(q);
    if (step == STORE_STEP_ROW && store_col_text(q->st, 0) && store_col_text(q->st, 1)) {
        *key = strdup(store_col_text(q->st, 0));
        *bench = strdup(store_col_text(q->st, 1));
        if (*key && *bench)
            rc = STORE_OK;
    } else if (step == STORE_STEP_ROW || step == STORE_STEP_DONE) {
        rc = STORE_OK; /* none (or a done run without its key: none) */
    }

done:
    if (rc != STORE_OK) {
        free(*key);
        free(*bench);
        *key = *bench = NULL;
    }
    return rc;
}

/* The newest sel->limit runs of key that sel picks into list, and how many
 * of another key were made since the oldest of them into *other_key: one
 * walk over the runs sel picks, newest first (a card's through
 * runs_by_device_uuid), counting the others on the way and reading the
 * rows of those of the key only (a join would seek them for every run).
 * On q, whose statement it replaces.  STORE_OK or STORE_ERROR (q's end
 * maps it). */
static int runs_of_key(struct store_query *q, const struct run_select *sel, const char *key,
                       cJSON *list, int *other_key)
{
    int step = STORE_STEP_DONE, others_since = 0, n = 0;

    q->what = "read the runs of a verdict's group";
    if (select_prepare(q, SELECT_WALK, sel) != STORE_OK)
        return STORE_ERROR;
    store_bind_text(q, 10, key);
    while (n < sel->limit && (step = store_query_step(q)) == STORE_STEP_ROW) {
        cJSON *run;
        if (!sqlite3_column_int(q->st, VERDICT_RUN_NFIELDS)) {
            others_since++; /* counted once a run of the key is older */
            continue;
        }
        run = store_verdict_run_from_fields(q, q->st);
        if (run == NULL || !cJSON_AddItemToArray(list, run)) {
            cJSON_Delete(run);
            return STORE_ERROR;
        }
        *other_key += others_since;
        others_since = 0;
        n++;
    }
    return n < sel->limit && step != STORE_STEP_DONE ? STORE_ERROR : STORE_OK;
}

int store_select_verdict_runs(struct store *s, const struct run_select *sel,
                              int include_invalid, cJSON **runs, int *other_key)
{
    struct store_query q;
    struct run_select of_bench = *sel;
    cJSON *list = cJSON_CreateArray();
    char *key = NULL, *bench = NULL, *newest_bench = NULL;
    int rc = STORE_ERROR;

    *runs = NULL;
    *other_key = 0;
    if (list == NULL)
        return STORE_ERROR;
    store_query_begin(&q, store_reader(s), "read a verdict's group");
    /* Without a benchmark, the newest run's (valid or not, as verdicts.c
     * picks the benchmark); then the key among that benchmark's runs. */
    if (!sel->benchmark || !sel->benchmark[0]) {
        if ((rc = newest_key(&q, sel, 1, &key, &newest_bench)) != STORE_OK)
            goto done;
        of_bench.benchmark = newest_bench;
        free(key);
        key = NULL;
    }
    rc = of_bench.benchmark ? newest_key(&q, &of_bench, include_invalid, &key, &bench) : STORE_OK;
    /* no key: nothing matches, an empty group */
    if (rc == STORE_OK && key != NULL)
        rc = runs_of_key(&q, &of_bench, key, list, other_key);

done:
    rc = store_query_end(&q, rc);
    if (rc == STORE_OK) {
        *runs = list;
        list = NULL;
    }
    free(key);
    free(bench);
    free(newest_bench);
    cJSON_Delete(list);
    return rc;
}

int store_baseline_insert(struct store *s, const char *name, const char *spec_json,
                          const char *runs_json, char created_at[32])
{
    struct store_query q;
    int changes = 0, rc;

    time_now_rfc3339(created_at, 32);
    store_query_begin(&q, &s->writer, "store a baseline");
    rc = store_query_run(&q,
                         "INSERT INTO baselines (name, created_at, spec, runs) "
                         "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (name) DO NOTHING",
                         &changes, STORE_TEXT(name), STORE_TEXT(created_at),
                         STORE_TEXT(spec_json), STORE_TEXT(runs_json));
    if (rc == STORE_OK && changes == 0)
        rc = STORE_CONFLICT;
    return store_query_end(&q, rc);
}

/* A baseline from a row (name, created_at, spec, runs): NEW, or NULL. */
static cJSON *baseline_from_row(sqlite3_stmt *st)
{
    struct json_build jb = {0};
    cJSON *b = jb_new_object(&jb);

    jb_string(&jb, b, "name", store_col_text(st, 0));
    jb_string(&jb, b, "created_at", store_col_text(st, 1));
    jb_item(&jb, b, "spec", jb_failed(&jb) ? NULL : store_json_column(st, 2));
    jb_item(&jb, b, "runs", jb_failed(&jb) ? NULL : store_json_column(st, 3));
    if (jb_failed(&jb)) {
        cJSON_Delete(b);
        return NULL;
    }
    return b;
}

int store_baseline_get(struct store *s, const char *name, cJSON **out)
{
    static const char one[] = "SELECT name, created_at, spec, runs FROM baselines WHERE name = ?1";
    static const char all[] = "SELECT name, created_at, spec, runs FROM baselines ORDER BY name";
    struct store_query q;
    cJSON *list = name ? NULL : cJSON_CreateArray();
    int rc = STORE_ERROR, step;

    *out = NULL;
    store_query_begin(&q, store_reader(s), "read baselines");
    if ((name == NULL && list == NULL) || store_query_prepare(&q, name ? one : all) != STORE_OK)
        goto done;
    if (name)
        store_bind_text(&q, 1, name);
    while ((step = store_query_step(&q)) == STORE_STEP_ROW) {
        cJSON *b = baseline_from_row(q.st);

        if (b == NULL)
            goto done; /* not "not found": it could not be read */
        if (name) {
            *out = b;
            break;
        }
        if (!cJSON_AddItemToArray(list, b)) {
            cJSON_Delete(b);
            goto done;
        }
    }
    if (step != STORE_STEP_ROW && step != STORE_STEP_DONE)
        goto done;
    if (name == NULL) {
        *out = list;
        list = NULL;
    }
    rc = *out ? STORE_OK : STORE_NOT_FOUND;

done:
    cJSON_Delete(list);
    return store_query_end(&q, rc);
}

int store_baseline_delete(struct store *s, const char *name)
{
    struct store_query q;
    int changes = 0, rc;

    store_query_begin(&q, &s->writer, "delete a baseline");
    rc = store_query_run(&q, "DELETE FROM baselines WHERE name = ?1", &changes, STORE_TEXT(name));
    if (rc == STORE_OK && changes == 0)
        rc = STORE_NOT_FOUND;
    return store_query_end(&q, rc);
}
