/*
 * store_json_damage.c - see store_json_damage.h.  json_columns is the one
 * list of the columns this store writes as JSON: a new one is a line
 * there.  Each column's check is one statement (a full scan of its table:
 * --check-db reads every page anyway); a column the file does not have
 * yet (an older schema version) is passed over.
 */
#include "store_json_damage.h"
#include "dynbuf.h"

#include <string.h>

/* Damaged values named one by one; more are counted. */
#define DAMAGE_SHOWN 1000

static const struct {
    const char *table;
    const char *run_id; /* the column naming the run */
    const char *column;
} json_columns[] = {
    {"runs", "id", "params"},
    {"runs", "id", "validity"},
    {"runs", "id", "checks"},
    {"run_results", "run_id", "results"},
    {"run_results", "run_id", "meta"},
    {"run_digests", "run_id", "summary"},
    {"run_digests", "run_id", "rows"},
    {"run_verdicts", "run_id", "verdicts"},
};

#define JSON_COLUMNS (sizeof(json_columns) / sizeof(json_columns[0]))

/* 1 when db's table has column, 0 when not (or no such table), -1 when it
 * could not be read. */
static int has_column(sqlite3 *db, const char *table, const char *column)
{
    sqlite3_stmt *st = NULL;
    int rc = -1;

    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2", -1,
                           &st, NULL) == SQLITE_OK &&
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC) == SQLITE_OK &&
        sqlite3_bind_text(st, 2, column, -1, SQLITE_STATIC) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        rc = sqlite3_column_int(st, 0) > 0;
    sqlite3_finalize(st);
    return rc;
}

/* The statement over column i of json_columns on db, into *st: its rows'
 * run ids (select) or the deletion of its rows (not select), where the
 * column holds a value that is not JSON.  *st NULL when db has no such
 * column.  0, or -1 when it could not be made. */
static int prepare_for(sqlite3 *db, size_t i, int select, sqlite3_stmt **st)
{
    struct dynbuf sql;
    int has = has_column(db, json_columns[i].table, json_columns[i].column), rc = -1;

    *st = NULL;
    if (has <= 0)
        return has;
    dynbuf_init(&sql, 1024);
    if (select)
        (void)!dynbuf_printf(&sql, "SELECT \"%s\"", json_columns[i].run_id);
    else
        (void)!dynbuf_printf(&sql, "DELETE");
    (void)!dynbuf_printf(&sql, " FROM \"%s\" WHERE \"%s\" IS NOT NULL AND NOT json_valid(\"%s\")",
                         json_columns[i].table, json_columns[i].column, json_columns[i].column);
    if (!dynbuf_failed(&sql) && sqlite3_prepare_v2(db, sql.data, -1, st, NULL) == SQLITE_OK)
        rc = 0;
    dynbuf_free(&sql);
    return rc;
}

long store_json_damage_list(sqlite3 *db, FILE *out)
{
    long found = 0;

    for (size_t i = 0; i < JSON_COLUMNS; i++) {
        sqlite3_stmt *st = NULL;
        int step = SQLITE_DONE;

        if (prepare_for(db, i, 1, &st) != 0)
            return -1;
        while (st && (step = sqlite3_step(st)) == SQLITE_ROW) {
            const char *id = (const char *)sqlite3_column_text(st, 0);

            if (found++ < DAMAGE_SHOWN)
                fprintf(out, "  run %s: its %s (%s.%s) no longer is JSON (damaged)\n",
                        id ? id : "(unreadable id)", json_columns[i].column,
                        json_columns[i].table, json_columns[i].column);
        }
        sqlite3_finalize(st);
        if (step != SQLITE_DONE)
            return -1;
    }
    if (found > DAMAGE_SHOWN)
        fprintf(out, "  ... and %ld more damaged values\n", found - DAMAGE_SHOWN);
    return found;
}

long store_json_damage_drop(sqlite3 *db, FILE *out)
{
    long dropped = 0;

    for (size_t i = 0; i < JSON_COLUMNS; i++) {
        sqlite3_stmt *st = NULL;
        int step, changes;

        if (prepare_for(db, i, 0, &st) != 0)
            return -1;
        if (st == NULL)
            continue;
        step = sqlite3_step(st);
        changes = sqlite3_changes(db);
        sqlite3_finalize(st);
        if (step != SQLITE_DONE)
            return -1;
        if (changes > 0)
            fprintf(out, "  %s: %d rows whose %s no longer is JSON were dropped\n",
                    json_columns[i].table, changes, json_columns[i].column);
        dropped += changes;
    }
    return dropped;
}
