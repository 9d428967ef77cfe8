/*
 * store_functions.h - the SQL functions the store's statements and
 * migrations call but does not define: the comparability key, a run's
 * method and its checks are the judge's (judge/judge_sql.c), and the judge
 * sits above the store.  The composition (main(), a test, a bench) hands
 * them down once, before the first store_open, as a hook; the store then
 * registers them on every connection it opens and before it migrates.
 */
#ifndef GPUBENCH_STORE_STORE_FUNCTIONS_H
#define GPUBENCH_STORE_STORE_FUNCTIONS_H

#include <sqlite3.h>

/* Registers the functions on db: 0, or -1 (sqlite3_errmsg(db) says why). */
typedef int (*store_functions_fn)(sqlite3 *db);

/* Sets the hook for every store opened from now on (a process has one
 * judge).  NULL: none, and a statement that calls one fails with SQLite's
 * "no such function". */
void store_functions_set(store_functions_fn fn);

/* Registers the hook's functions on db (nothing without a hook): 0, or -1
 * (sqlite3_errmsg(db) says why). */
int store_functions_register(sqlite3 *db);

#endif
