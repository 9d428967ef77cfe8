/*
 * store_key.h - the SQL functions of the comparability key (store_key.c):
 * gb_verdict_key(benchmark, device_name, params, method, build) and
 * gb_method(benchmark, gpubench_version).
 */
#ifndef GPUBENCH_STORE_STORE_KEY_H
#define GPUBENCH_STORE_STORE_KEY_H

#include <sqlite3.h>

/* Registers both on db: 0, or -1 (sqlite3_errmsg(db) says why). */
int store_key_functions(sqlite3 *db);

#endif
