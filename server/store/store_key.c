/*
 * store_key.c - the comparability key and a run's method in SQL, from the
 * same C that /compare and the verdicts use (compare_verdict_key_text,
 * gb_method_of_version), so that the key is defined once; and a run's
 * checks against its card model's floors (gb_checks_judge), with which
 * migrations/0012_checks.sql judges the runs stored before them.
 *
 * Registered on every connection the store opens and before migrations
 * (migrations/0009_method.sql recomputes every stored key with them).  Only
 * statements call them: no index, view, trigger or generated column may,
 * because the plain sqlite3 shell, a backup and a recovery must be able to
 * read and rebuild the file without this code.
 */
#include "store_key.h"

#include "bench_spec.h"
#include "compare.h"
#include "expect.h"

#include <stdlib.h>

static const char *arg_text(sqlite3_value *v)
{
    return sqlite3_value_type(v) == SQLITE_NULL ? NULL : (const char *)sqlite3_value_text(v);
}

/* gb_verdict_key(benchmark, device_name, params, method, build): a runs
 * row as the run object compare_verdict_key_text reads (its build only
 * where its method is unknown); NULL when an argument is not readable. */
static void verdict_key_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const char *bench = arg_text(argv[0]), *name = arg_text(argv[1]);
    const char *params = arg_text(argv[2]), *build = arg_text(argv[4]);
    cJSON *run = cJSON_CreateObject(), *device, *meta, *parsed;
    char *key = NULL;

    (void)argc;
    if (run == NULL || bench == NULL)
        goto done;
    parsed = cJSON_Parse(params ? params : "{}");
    device = cJSON_AddObjectToObject(run, "device");
    meta = cJSON_AddObjectToObject(run, "meta");
    if (parsed == NULL || !cJSON_AddItemToObject(run, "params", parsed)) {
        cJSON_Delete(parsed);
        goto done;
    }
    if (device == NULL || meta == NULL || cJSON_AddStringToObject(run, "benchmark", bench) == NULL)
        goto done;
    if (name && cJSON_AddStringToObject(device, "name", name) == NULL)
        goto done;
    if (sqlite3_value_type(argv[3]) == SQLITE_INTEGER &&
        cJSON_AddNumberToObject(run, "method", (double)sqlite3_value_int64(argv[3])) == NULL)
        goto done;
    if (build && cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "build"), "git_commit",
                                         build) == NULL)
        goto done;
    key = compare_verdict_key_text(run);

done:
    cJSON_Delete(run);
    if (key)
        sqlite3_result_text(ctx, key, -1, free);
    else
        sqlite3_result_null(ctx);
}

/* gb_method(benchmark, gpubench_version): the method that version
 * implies, or NULL where it cannot be known (bench_spec.h). */
static void method_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    int m = gb_method_of_version(gb_benchmark_find(arg_text(argv[0])), arg_text(argv[1]));

    (void)argc;
    if (m > 0)
        sqlite3_result_int(ctx, m);
    else
        sqlite3_result_null(ctx);
}

/* gb_checks(benchmark, results, meta): gb_checks_judge's array as JSON
 * text, or NULL where the benchmark has no floors (its results are then
 * not parsed) or an argument does not parse. */
static void checks_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const char *bench = arg_text(argv[0]), *results = arg_text(argv[1]);
    const char *meta = arg_text(argv[2]);
    cJSON *r = NULL, *m = NULL, *checks = NULL;
    char *text = NULL;

    (void)argc;
    if (!gb_expect_benchmark_checked(bench) || results == NULL)
        goto done;
    r = cJSON_Parse(results);
    m = cJSON_Parse(meta ? meta : "{}");
    if (r == NULL || m == NULL)
        goto done;
    checks = gb_checks_judge(bench, r, m);
    text = checks ? cJSON_PrintUnformatted(checks) : NULL;

done:
    cJSON_Delete(checks);
    cJSON_Delete(m);
    cJSON_Delete(r);
    if (text)
        sqlite3_result_text(ctx, text, -1, free);
    else
        sqlite3_result_null(ctx);
}

int store_key_functions(sqlite3 *db)
{
    const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC;

    if (sqlite3_create_function(db, "gb_verdict_key", 5, flags, NULL, verdict_key_fn, NULL,
                                NULL) != SQLITE_OK ||
        sqlite3_create_function(db, "gb_method", 2, flags, NULL, method_fn, NULL, NULL) !=
            SQLITE_OK ||
        sqlite3_create_function(db, "gb_checks", 3, flags, NULL, checks_fn, NULL, NULL) !=
            SQLITE_OK)
        return -1;
    return 0;
}
