/*
 * store_coverage.c - see store_coverage.h.  The card list comes from
 * latest_by_card (any done run with results), so a card whose every run
 * was invalid is still listed, its cells without a run; the newest valid
 * run of a benchmark is the newest over fleet_latest's keys of the card
 * (one row per params and model), which is what "the last valid run" is
 * whatever params it ran with.
 */
#include "store_coverage.h"
#include "json_build.h"
#include "store_internal.h"

/* The columns of the query, in order. */
enum {
    COV_HOST,
    COV_UUID,
    COV_INDEX,
    COV_NAME,
    COV_BENCHMARK,
    COV_RUN,
    COV_AT,
    COV_CHECKS,
    COV_FAILED,
    COV_INVALID,
};

/* The cells' query, with a host's filter or none.  A card's newest valid
 * run of a benchmark is looked up for that card (fleet_latest_by_card),
 * and a host's cards through latest_by_card_by_host
 * (migrations/0014_coverage_by_card.sql): grouping all of fleet_latest and
 * filtering by "?1 IS NULL OR host = ?1" read the whole fleet for one
 * node's check on a hub.  A run's checks are read only where one failed
 * (or the count is not known): the card's state reads them only for a
 * failed one's line (card_state_judge), and a hub's whole coverage parsed
 * every passing run's checks for nothing (bench/RESULTS.md).  Where a
 * benchmark has no valid run and its newest run was invalid, that run's
 * reason codes ("throttled"), so that the card says why rather than
 * "never checked". */
/* clang-format off */
#define COVERAGE_SQL(WHERE_HOST)                                                              \
    "SELECT l.host, l.device_uuid, c.device_index, c.device_name, l.benchmark, v.id, "        \
    STORE_UNIX_MS("v.finished_at")                                                            \
    ", CASE WHEN coalesce(v.checks_failed, 1) > 0 THEN v.checks END, v.checks_failed, "       \
    "CASE WHEN v.id IS NULL AND c.valid = 0 THEN (SELECT group_concat("                      \
    "json_extract(e.value, '$.code'), ', ') FROM json_each(c.validity, '$.reasons') e) END "  \
    "FROM latest_by_card l JOIN runs c ON c.id = l.run_id "                                   \
    "LEFT JOIN runs v ON v.id = (SELECT max(f.run_id) FROM fleet_latest f "                   \
    "WHERE f.host = l.host AND f.device_uuid = l.device_uuid AND f.benchmark = l.benchmark) " \
    "WHERE l.device_uuid <> '' " WHERE_HOST                                                   \
    "ORDER BY l.host, c.device_index, l.device_uuid, l.benchmark"
/* clang-format on */

int store_coverage_cells(struct store *s, const char *host, cJSON **out)
{
    static const char every_host[] = COVERAGE_SQL("");
    static const char one_host[] = COVERAGE_SQL("AND l.host = ?1 ");
    struct store_query q;
    cJSON *cells = cJSON_CreateArray();
    int rc = STORE_ERROR, step;

    *out = NULL;
    store_query_begin(&q, store_reader(s), "read the coverage");
    if (cells == NULL || store_query_prepare(&q, host ? one_host : every_host) != STORE_OK)
        goto done;
    if (host)
        store_bind_text(&q, 1, host);
    while ((step = store_query_step(&q)) == STORE_STEP_ROW) {
        sqlite3_stmt *st = q.st;
        struct json_build jb = {0};
        cJSON *cell = jb_new_object(&jb);

        jb_push(&jb, cells, cell); /* cells' now, or deleted */
        jb_string(&jb, cell, "host", store_col_text(st, COV_HOST));
        jb_string(&jb, cell, "uuid", store_col_text(st, COV_UUID));
        if (sqlite3_column_type(st, COV_INDEX) == SQLITE_NULL)
            jb_null(&jb, cell, "index");
        else
            jb_number(&jb, cell, "index", (double)sqlite3_column_int64(st, COV_INDEX));
        jb_string(&jb, cell, "name", store_col_text(st, COV_NAME));
        jb_string(&jb, cell, "benchmark", store_col_text(st, COV_BENCHMARK));
        jb_string(&jb, cell, "run_id", store_col_text(st, COV_RUN));
        if (sqlite3_column_type(st, COV_AT) == SQLITE_NULL)
            jb_null(&jb, cell, "at_ms");
        else
            jb_number(&jb, cell, "at_ms", (double)sqlite3_column_int64(st, COV_AT));
        if (sqlite3_column_type(st, COV_FAILED) == SQLITE_NULL)
            jb_null(&jb, cell, "checks_failed");
        else
            jb_number(&jb, cell, "checks_failed", (double)sqlite3_column_int64(st, COV_FAILED));
        jb_string(&jb, cell, "invalid", store_col_text(st, COV_INVALID));
        jb_item(&jb, cell, "checks", jb_failed(&jb) ? NULL : store_json_column(st, COV_CHECKS));
        if (jb_failed(&jb))
            goto done; /* out of memory: a cell without its time reads as never */
    }
    if (step != STORE_STEP_DONE)
        goto done;
    *out = cells;
    cells = NULL;
    rc = STORE_OK;

done:
    cJSON_Delete(cells);
    return store_query_end(&q, rc);
}
