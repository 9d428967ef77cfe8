/*
 * store_json_damage.h - the JSON values a gpubench database holds that no
 * longer are JSON: damage SQLite's integrity check cannot see (a value cut
 * short or overwritten inside a page whose b-tree is whole), found with
 * SQLite's json_valid over every column this store writes as JSON (one
 * table, store_json_damage.c).  --check-db lists them, --recover drops
 * them; a running daemon serves such a run marked damaged (store_row.c).
 * On a connection of the caller's (a file opened for the check or the
 * recovery), never the store's own.
 */
#ifndef GPUBENCH_STORE_STORE_JSON_DAMAGE_H
#define GPUBENCH_STORE_STORE_JSON_DAMAGE_H

#include <sqlite3.h>
#include <stdio.h>

/* Prints to out one line for each damaged value of db ("  run ID: its
 * results are not JSON"), at most a thousand, then how many more.  Columns
 * the file's schema version does not have are passed over.  The number of
 * damaged values (0: none), or -1 when the check could not run (SQLite's
 * error left on db). */
long store_json_damage_list(sqlite3 *db, FILE *out);

/* Deletes every row of db holding a damaged value (its run's row, or the
 * results, digest or verdicts row: a done run left without results is
 * dropped by the caller as lost), saying on out how many of each table.
 * The rows deleted, or -1 (SQLite's error left on db). */
long store_json_damage_drop(sqlite3 *db, FILE *out);

#endif
