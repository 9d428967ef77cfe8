/*
 * judge_sql.h - the judge's functions for SQL (judge_sql.c):
 * gb_verdict_key(benchmark, device_name, params, method, build),
 * gb_method(benchmark, gpubench_version) and gb_checks(benchmark, results,
 * meta), registered on every store connection through store_open's hook.
 */
#ifndef GPUBENCH_JUDGE_JUDGE_SQL_H
#define GPUBENCH_JUDGE_JUDGE_SQL_H

#include <sqlite3.h>

/* Registers the three on db: 0, or -1 (sqlite3_errmsg(db) says why).  Of
 * the type store_open takes (store.h: store_sql_functions). */
int judge_sql_functions(sqlite3 *db);

/* A run's comparability key (compare_verdict_key_text) from its stored
 * columns: params as JSON text (NULL: none), method 0 where unknown, build
 * its meta.build.git_commit (NULL: none).  A NEW string the caller frees;
 * NULL when benchmark is NULL, params do not parse or memory ran out. */
char *judge_verdict_key(const char *benchmark, const char *device_name, const char *params,
                        long long method, const char *build);

#endif
