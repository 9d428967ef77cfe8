/*
 * change_sql.h - the change-point series in SQL: the functions
 * the store's statements call to step a card x key x row series with a
 * run (change_series.h) and to read what the step found.  Registered with
 * the rest of the judge's SQL functions (judge_sql.h), so only statements
 * call them, never an index, a view or a trigger.
 *
 *   gb_change_step(state BLOB or NULL, t_days REAL, x REAL, run_id TEXT)
 *       -> the new state BLOB
 *   gb_change_found(state BLOB) -> TEXT {"step": {...}, "drift": {...}}
 *       (what that state's last step found; NULL: nothing)
 */
#ifndef GPUBENCH_JUDGE_CHANGE_SQL_H
#define GPUBENCH_JUDGE_CHANGE_SQL_H

#include <cjson/cJSON.h>
#include <sqlite3.h>

struct cs_found;

/* Registers both on db: 0, or -1 (sqlite3_errmsg(db) says why). */
int change_sql_functions(sqlite3 *db);

/* What a step found as the store keeps it: a NEW object {"step":
 * {"run_id", "level_before", "level_after" (ms per unit of work), "shift",
 * "ci_low", "ci_high", "p_value" (null: |t| < 4.4), "n_before",
 * "n_after"}, "drift": {"per_month", "ci_low", "ci_high", "p_value", "n",
 * "span_days", "window_days"}}, either absent; NULL out of memory. */
cJSON *change_found_json(const struct cs_found *f);

#endif
