/*
 * judge_sql.c - the comparability key and a run's method in SQL, from the
 * same C that /compare, the verdicts and a run's end use (judge_verdict_key,
 * gb_method_of_version), so that the key is defined once; and a run's
 * checks against its card model's floors (gb_checks_judge), with which
 * migrations/0012_checks.sql judges the runs stored before them.
 *
 * The store sits below the judge and knows none of this: main() hands
 * judge_sql_functions to store_open, which registers them on every
 * connection it opens and before migrations (migrations/0009_method.sql
 * recomputes every stored key with them).  Only
 * statements call them: no index, view, trigger or generated column may,
 * because the plain sqlite3 shell, a backup and a recovery must be able to
 * read and rebuild the file without this code.
 */
#include "judge_sql.h"

#include "bench_spec.h"
#include "change_sql.h"
#include "compare.h"
#include "expect.h"
#include "json_build.h"

#include <stdlib.h>

static const char *arg_text(sqlite3_value *v)
{
    return sqlite3_value_type(v) == SQLITE_NULL ? NULL : (const char *)sqlite3_value_text(v);
}

char *judge_verdict_key(const char *benchmark, const char *device_name, const char *params,
                        long long method, const char *build)
{
    struct json_build b = {0};
    cJSON *run = jb_new_object(&b), *device, *meta;
    char *key = NULL;

    if (benchmark == NULL)
        goto done;
    jb_string(&b, run, "benchmark", benchmark);
    jb_item(&b, run, "params", cJSON_Parse(params ? params : "{}"));
    device = jb_object(&b, run, "device");
    if (device_name)
        jb_string(&b, device, "name", device_name);
    if (method > 0)
        jb_number(&b, run, "method", (double)method);
    meta = jb_object(&b, run, "meta");
    if (build)
        jb_string(&b, jb_object(&b, meta, "build"), "git_commit", build);
    if (!jb_failed(&b))
        key = compare_verdict_key_text(run);

done:
    cJSON_Delete(run);
    return key;
}

/* gb_verdict_key(benchmark, device_name, params, method, build): a runs
 * row's key, judge_verdict_key's; NULL when an argument is not readable. */
static void verdict_key_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    char *key;

    (void)argc;
    key = judge_verdict_key(arg_text(argv[0]), arg_text(argv[1]), arg_text(argv[2]),
                            sqlite3_value_type(argv[3]) == SQLITE_INTEGER
                                ? (long long)sqlite3_value_int64(argv[3])
                                : 0,
                            arg_text(argv[4]));
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

int judge_sql_functions(sqlite3 *db)
{
    const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC;

    if (sqlite3_create_function(db, "gb_verdict_key", 5, flags, NULL, verdict_key_fn, NULL,
                                NULL) != SQLITE_OK ||
        sqlite3_create_function(db, "gb_method", 2, flags, NULL, method_fn, NULL, NULL) !=
            SQLITE_OK ||
        sqlite3_create_function(db, "gb_checks", 3, flags, NULL, checks_fn, NULL, NULL) !=
            SQLITE_OK ||
        change_sql_functions(db) != 0)
        return -1;
    return 0;
}
