/*
 * store_row.c - a row of a run query (RUN_COLUMNS, store_internal.h) made
 * into a run as the API shows it, and the column helpers the other reads
 * share.  SQLite answers NULL for a column it could not read (no memory,
 * a damaged page it had to follow); that must never pass for a NULL that
 * was stored, so these helpers tell the two apart.
 *
 * Two kinds of damage, two answers: a row SQLite cannot read
 * fails the read (STORE_CORRUPT); a row it reads whose JSON text no longer
 * is JSON (a value cut short or overwritten inside a page SQLite still
 * accepts) is one damaged run, served as such: its damaged columns null,
 * "damaged": true and their names in "damaged_columns", so that a list,
 * an export or a peer's pull goes on past it.  Whether a text is JSON is
 * asked of SQLite (json_valid, a column of the same query), never inferred
 * from a failed parse, which is also what running out of memory gives.
 *
 * Runs are built with common/json_build.h: a failed addition fails the
 * whole run (NULL), never a run with a field missing.
 */
#include "store_internal.h"
#include "json_build.h"

#include <stdio.h>
#include <string.h>

const char *store_col_text(sqlite3_stmt *st, int col)
{
    return (const char *)sqlite3_column_text(st, col);
}

/* 1 when a column that holds a value could not be read: SQLite answers
 * NULL for it (out of memory, or a damaged page it had to follow), which
 * must not pass for a NULL that was stored. */
static int column_failed(sqlite3_stmt *st, int col, const char *text)
{
    return text == NULL && sqlite3_column_type(st, col) != SQLITE_NULL;
}

/* Column col as a NEW item: parsed, or raw (its text printed as it is);
 * null for SQL NULL.  NULL when it could not be read or parsed. */
static cJSON *column_item(sqlite3_stmt *st, int col, int raw)
{
    const char *text = store_col_text(st, col);

    if (text == NULL)
        return column_failed(st, col, text) ? NULL : cJSON_CreateNull();
    if (raw)
        return cJSON_CreateRaw(text);
    return cJSON_ParseWithLength(text, (size_t)sqlite3_column_bytes(st, col));
}

cJSON *store_json_column(sqlite3_stmt *st, int col)
{
    cJSON *v = column_item(st, col, 0);

    if (v == NULL && store_col_text(st, col) != NULL)
        store_note_damaged_value();
    return v;
}

cJSON *store_raw_column(sqlite3_stmt *st, int col)
{
    return column_item(st, col, 1);
}

void store_mark_damaged(struct json_build *b, cJSON *run, const char *column)
{
    cJSON *list = cJSON_GetObjectItem(run, "damaged_columns");

    if (list == NULL) {
        jb_bool(b, run, "damaged", 1);
        list = jb_array(b, run, "damaged_columns");
    }
    jb_push(b, list, cJSON_CreateString(column));
    store_note_damaged_run(cJSON_GetStringValue(cJSON_GetObjectItem(run, "id")), column);
}

int store_column_damaged(struct json_build *b, cJSON *run, sqlite3_stmt *st, int col, int ok_col,
                         const char *name)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL || sqlite3_column_int(st, ok_col) == 1)
        return 0;
    store_mark_damaged(b, run, name);
    return 1;
}

cJSON *store_column_item(struct json_build *b, sqlite3_stmt *st, int col, int raw)
{
    cJSON *v = column_item(st, col, raw);

    if (v == NULL)
        jb_fail(b);
    return v;
}

void store_add_json(struct json_build *b, cJSON *run, const char *name, sqlite3_stmt *st, int col,
                    int ok_col, int raw)
{
    if (store_column_damaged(b, run, st, col, ok_col, name))
        jb_null(b, run, name);
    else
        jb_item(b, run, name, store_column_item(b, st, col, raw));
}

/* Adds an integer column, or null for SQL NULL. */
static void add_int_or_null(struct json_build *b, cJSON *obj, const char *name, sqlite3_stmt *st,
                            int col)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        jb_null(b, obj, name);
    else
        jb_number(b, obj, name, (double)sqlite3_column_int64(st, col));
}

/* A run copied from a node whose database held it damaged
 * (migrations/0017_damaged_at_origin.sql) is served marked as that node
 * served it: "damaged": true and the node's column names, to which this
 * store's own damage is added.  Its damage is not this store's: its
 * health is not touched. */
static void add_damaged_at_origin(struct json_build *b, cJSON *run, sqlite3_stmt *st)
{
    const char *text = store_col_text(st, C_DAMAGED_AT_ORIGIN);
    cJSON *list;

    if (text == NULL)
        return;
    list = cJSON_Parse(text);
    if (!cJSON_IsArray(list)) {
        cJSON_Delete(list);
        store_mark_damaged(b, run, "damaged_at_origin");
        return;
    }
    jb_bool(b, run, "damaged", 1);
    jb_item(b, run, "damaged_columns", list);
}

cJSON *store_run_from_row(sqlite3_stmt *st)
{
    struct json_build b = {0};
    cJSON *run = jb_new_object(&b);
    cJSON *device, *p, *e;

    for (int col = 0; col < C_COUNT; col++)
        if (column_failed(st, col, store_col_text(st, col)))
            jb_fail(&b); /* the caller's store_fail says why */
    if (jb_failed(&b))
        goto done;
    jb_string(&b, run, "id", store_col_text(st, C_ID));
    jb_string(&b, run, "benchmark", store_col_text(st, C_BENCHMARK));
    add_damaged_at_origin(&b, run, st);
    /* Params are written by this store, as JSON: kept as text, they are
     * printed as they are, not parsed and printed again. */
    store_add_json(&b, run, "params", st, C_PARAMS, C_PARAMS_OK, 1);
    jb_string(&b, run, "label", store_col_text(st, C_LABEL));
    jb_string(&b, run, "batch", store_col_text(st, C_BATCH));
    jb_string(&b, run, "host", store_col_text(st, C_HOST));
    device = jb_object(&b, run, "device");
    add_int_or_null(&b, device, "index", st, C_DEV_INDEX);
    jb_string(&b, device, "uuid", store_col_text(st, C_DEV_UUID));
    jb_string(&b, device, "name", store_col_text(st, C_DEV_NAME));
    jb_string(&b, run, "status", store_col_text(st, C_STATUS));
    jb_number(&b, run, "timeout_s", sqlite3_column_int(st, C_TIMEOUT));
    jb_string(&b, run, "created_at", store_col_text(st, C_CREATED));
    jb_string(&b, run, "started_at", store_col_text(st, C_STARTED));
    jb_string(&b, run, "finished_at", store_col_text(st, C_FINISHED));
    if (sqlite3_column_type(st, C_PROG_TOTAL) != SQLITE_NULL) {
        p = jb_object(&b, run, "progress");
        jb_number(&b, p, "done", sqlite3_column_double(st, C_PROG_DONE));
        jb_number(&b, p, "total", sqlite3_column_double(st, C_PROG_TOTAL));
        jb_string(&b, p, "message", store_col_text(st, C_PROG_MESSAGE));
    } else {
        jb_null(&b, run, "progress");
    }
    if (store_col_text(st, C_ERR_CODE)) {
        e = jb_object(&b, run, "error");
        jb_string(&b, e, "code", store_col_text(st, C_ERR_CODE));
        jb_string(&b, e, "message", store_col_text(st, C_ERR_MSG));
    } else {
        jb_null(&b, run, "error");
    }
    jb_string(&b, run, "origin", store_col_text(st, C_ORIGIN));
    /* A confirming run names the run it repeats. */
    jb_string(&b, run, "confirms", store_col_text(st, C_CONFIRMS));
    /* The method version it was measured by (bench_spec.h); null where
     * it cannot be known (gpubench 0.1.0). */
    add_int_or_null(&b, run, "method", st, C_METHOD);
    add_int_or_null(&b, run, "seq", st, C_SEQ);
    /* The verdict (migrations/0004_validity.sql); a run not judged (not
     * finished, or stored before verdicts) is unknown, and so is one whose
     * verdict is damaged. */
    if (store_col_text(st, C_VALIDITY) &&
        !store_column_damaged(&b, run, st, C_VALIDITY, C_VALIDITY_OK, "validity"))
        jb_item(&b, run, "validity", store_column_item(&b, st, C_VALIDITY, 0));
    else
        jb_null(&b, jb_object(&b, run, "validity"), "valid");
    /* Its checks against its card model's floors (migrations/0012_checks.sql):
     * null where its benchmark has none or it is not done. */
    store_add_json(&b, run, "checks", st, C_CHECKS, C_CHECKS_OK, 0);

done:
    if (jb_failed(&b)) {
        cJSON_Delete(run);
        return NULL;
    }
    return run;
}
