/*
 * store_cards.c - see store_cards.h.  Each read is one statement whose
 * columns become the fields of one object a row (rows_as_objects): the
 * column's name is the field's, a column named *_json is parsed.
 */
#include "store_cards.h"

#include "store_internal.h"

#include <string.h>

/* The rows of q's prepared, bound statement as a NEW array *out. */
static int rows_as_objects(struct store_query *q, cJSON **out)
{
    int step;

    if ((*out = cJSON_CreateArray()) == NULL)
        return STORE_ERROR;
    while ((step = store_query_step(q)) == STORE_STEP_ROW) {
        cJSON *o = cJSON_CreateObject(), *v;
        if (o == NULL || !cJSON_AddItemToArray(*out, o)) {
            cJSON_Delete(o);
            return STORE_ERROR;
        }
        for (int c = 0; c < sqlite3_column_count(q->st); c++) {
            const char *name = sqlite3_column_name(q->st, c);
            size_t len = strlen(name);
            char field[64];
            int json = len > 5 && strcmp(name + len - 5, "_json") == 0;
            snprintf(field, sizeof(field), "%.*s", (int)(json ? len - 5 : len), name);
            switch (sqlite3_column_type(q->st, c)) {
            case SQLITE_NULL:
                v = cJSON_CreateNull();
                break;
            case SQLITE_INTEGER:
            case SQLITE_FLOAT:
                v = cJSON_CreateNumber(sqlite3_column_double(q->st, c));
                break;
            default:
                v = json ? store_json_column(q->st, c)
                         : cJSON_CreateString(store_col_text(q->st, c));
            }
            if (v == NULL || !cJSON_AddItemToObject(o, field, v)) {
                cJSON_Delete(v);
                return STORE_ERROR;
            }
        }
    }
    return step == STORE_STEP_DONE ? STORE_OK : STORE_ERROR;
}

/* Runs sql (static) with text binds a and b (NULL: none) on a reader. */
static int read_objects(struct store *s, const char *what, const char *sql, const char *a,
                        const char *b, cJSON **out)
{
    struct store_query q;
    int rc = STORE_ERROR;

    *out = NULL;
    store_query_begin(&q, store_reader(s), what);
    if (store_query_prepare(&q, sql) != STORE_OK)
        goto done;
    if (a)
        store_bind_text(&q, 1, a);
    if (b)
        store_bind_text(&q, 2, b);
    rc = rows_as_objects(&q, out);

done:
    if (rc != STORE_OK) {
        cJSON_Delete(*out);
        *out = NULL;
    }
    return store_query_end(&q, rc);
}

/* A card's newest run is the newer of its newest finished one (over
 * latest_by_card's benchmarks) and its newest other one (queued, running,
 * failed, cancelled: few, through runs_by_status); grouping every run by
 * card read all of them (a million in bench/check: 3.5 s for GET /cards).
 * A run without a card's UUID is not a card's. */
int store_cards_known(struct store *s, cJSON **cards)
{
    return read_objects(s, "read the cards",
                        "SELECT r.host AS host, r.device_uuid AS uuid, r.device_index AS "
                        "\"index\", r.device_name AS name FROM runs r "
                        "JOIN (SELECT max(id) AS id FROM ("
                        "SELECT host, device_uuid, run_id AS id FROM latest_by_card "
                        "WHERE device_uuid <> '' UNION ALL "
                        "SELECT host, device_uuid, id FROM runs WHERE status IN "
                        "('queued', 'running', 'failed', 'cancelled') AND device_uuid <> '') "
                        "GROUP BY host, device_uuid) m ON r.id = m.id "
                        "ORDER BY r.host, r.device_index",
                        NULL, NULL, cards);
}

int store_card_name(struct store *s, const char *uuid, char **name)
{
    cJSON *rows = NULL;
    const char *found;
    int rc = read_objects(s, "read a card's name",
                          "SELECT device_name AS name FROM runs WHERE device_uuid = ?1 "
                          "AND device_name IS NOT NULL ORDER BY id DESC LIMIT 1",
                          uuid, NULL, &rows);

    *name = NULL;
    found = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 0), "name"));
    if (rc == STORE_OK && found == NULL)
        rc = STORE_NOT_FOUND;
    if (rc == STORE_OK && (*name = strdup(found)) == NULL)
        rc = STORE_ERROR;
    cJSON_Delete(rows);
    return rc;
}

/* The newest valid run of each benchmark is fleet_latest's newest over
 * the card's keys (the done, valid runs, one row a key: store.c keeps it),
 * as GET /coverage reads it; the card's runs themselves (125,000 a card
 * in bench/check) are not walked. */
int store_card_health(struct store *s, const char *uuid, const char *members, cJSON **runs)
{
    /* clang-format off */
    return read_objects(s, "read a card's health runs",
                        "SELECT id, benchmark, host, device_index AS \"index\", "
                        "device_name AS name, "
                        "finished_at, " STORE_UNIX_MS("finished_at") " AS finished_ms, "
                        "checks AS checks_json FROM runs WHERE id IN "
                        "(SELECT max(run_id) FROM fleet_latest WHERE device_uuid = ?1 "
                        "AND benchmark IN (SELECT value FROM json_each(?2)) "
                        "GROUP BY benchmark) ORDER BY id DESC",
                        uuid, members, runs);
    /* clang-format on */
}

int store_card_floor_alerts(struct store *s, const char *uuid, cJSON **alerts)
{
    return read_objects(s, "read a card's floor alerts",
                        "SELECT a.id AS id, a.benchmark AS benchmark, "
                        "json_extract(a.row_key, '$') AS row, a.confirmed_at AS at, "
                        "(SELECT c.value FROM runs r, json_each(r.checks) c "
                        "WHERE r.id = coalesce(a.confirm_run_id, a.run_id) "
                        "AND json_extract(c.value, '$.row') = json_extract(a.row_key, '$')) "
                        "AS check_json FROM alerts a WHERE a.device_uuid = ?1 "
                        "AND a.kind = 'floor' AND a.state IN ('confirmed', 'acknowledged') "
                        "AND a.confirmed_at IS NOT NULL ORDER BY a.id DESC",
                        uuid, NULL, alerts);
}

/* A wrong result (an exact check's, common/expect_deep.h) needs no run
 * before it: the newest run alone is read, previous_checks null.
 * Only the card's runs that missed a floor are read
 * (runs_failed_checks_by_card, migrations/0016: few, most cards none),
 * kept where one is its newest valid run of a benchmark (asked per
 * failing run: the list of a card's newest runs, grouped, cost 30 us a
 * card even for none), and then the
 * previous run of the same request through runs_by_card_key (one index
 * probe); a hub's coverage of every card reads nothing more for the cards
 * that pass. */
int store_card_repeat_misses(struct store *s, const char *uuid, cJSON **pairs)
{
    /* clang-format off */
    return read_objects(s, "read a card's repeated floor misses",
                        "SELECT n.benchmark AS benchmark, n.id AS run_id, "
                        "n.finished_at AS at, n.checks AS checks_json, "
                        "p.id AS previous_run_id, p.checks AS previous_checks_json "
                        "FROM runs n LEFT JOIN runs p ON p.id = ("
                        "SELECT max(q.id) FROM runs q WHERE q.device_uuid = n.device_uuid "
                        "AND q.host = n.host AND q.verdict_key = n.verdict_key "
                        "AND q.valid IS NOT 0 AND q.id < n.id AND q.status = 'done') "
                        "WHERE n.device_uuid = ?1 AND n.checks_failed > 0 "
                        "AND n.id = (SELECT max(f.run_id) FROM fleet_latest f "
                        "WHERE f.device_uuid = ?1 AND f.benchmark = n.benchmark) "
                        "AND (p.checks_failed > 0 OR EXISTS (SELECT 1 FROM json_each(n.checks) c "
                        "WHERE json_extract(c.value, '$.exact') = 1 "
                        "AND json_extract(c.value, '$.pass') = 0)) ORDER BY n.id DESC",
                        uuid, NULL, pairs);
    /* clang-format on */
}

int store_model_checks(struct store *s, const char *device_name, cJSON **runs)
{
    return read_objects(s, "read the checks of a card model",
                        "SELECT host, device_uuid AS uuid, benchmark, checks AS checks_json "
                        "FROM runs WHERE id IN (SELECT max(id) FROM runs WHERE device_name = ?1 "
                        "AND status = 'done' AND valid IS NOT 0 AND checks IS NOT NULL "
                        "GROUP BY host, device_uuid, benchmark)",
                        device_name, NULL, runs);
}

/* The row reader, exported for the store's other files (store_internal.h:
 * store_card_events.c); this file keeps its short static names. */
int store_rows_as_objects(struct store_query *q, cJSON **out)
{
    return rows_as_objects(q, out);
}

int store_read_objects(struct store *s, const char *what, const char *sql, const char *a,
                       const char *b, cJSON **out)
{
    return read_objects(s, what, sql, a, b, out);
}
