/*
 * store_results.c - a finished run's results written with the columns that
 * reads use without parsing them (the summary, the digest, the driver and
 * CUDA versions, validity, checks, the comparability key) and the per-card
 * tables kept as runs finish (latest_by_card, fleet_latest).
 */
#include "store_internal.h"
#include "compare.h"
#include "expect.h"
#include "validity.h"

#include <stdlib.h>
#include <string.h>

/* Removes every "samples" array under item: the lists of samples stay in
 * the rows and the results; a summary for listing does without them. */
static void drop_samples(cJSON *item)
{
    cJSON *child;

    cJSON_DeleteItemFromObjectCaseSensitive(item, "samples");
    cJSON_ArrayForEach(child, item)
        if (cJSON_IsObject(child) || cJSON_IsArray(child))
            drop_samples(child);
}

/* Writes a finished run's results and meta, with the columns that reads
 * use without parsing them: the summary, the driver and CUDA versions.
 * Inside the caller's transaction. */
int store_put_results(struct store_query *q, const char *id, const char *results,
                      const char *meta)
{
    cJSON *parsed = cJSON_Parse(results);
    cJSON *parsed_meta = meta ? cJSON_Parse(meta) : NULL;
    cJSON *summary = cJSON_GetObjectItem(parsed, "summary");
    cJSON *rows = cJSON_GetObjectItem(parsed, "rows");
    char *slim = NULL, *digest = NULL, *verdict = NULL, *benchmark = NULL, *checked = NULL;
    int rc = STORE_ERROR, flag, failed = -1;
    cJSON *validity, *checks = NULL;

    /* The verdict on the run, whoever made it (here, an import, a peer):
     * judged from what it carries, never taken on trust. */
    validity = gb_validity_judge(parsed, parsed_meta);
    flag = gb_validity_flag(validity);
    verdict = validity ? cJSON_PrintUnformatted(validity) : NULL;
    cJSON_Delete(validity);

    if (summary) {
        drop_samples(summary);
        slim = cJSON_PrintUnformatted(summary);
    }
    /* The digest names the units of work a sample held, which depend on
     * the run's benchmark (common/work_units.c). */
    if (store_query_prepare(q, "SELECT benchmark FROM runs WHERE id = ?1") != STORE_OK)
        goto done;
    store_bind_text(q, 1, id);
    if (store_query_one(q) != STORE_OK || store_col_text(q->st, 0) == NULL ||
        (benchmark = strdup(store_col_text(q->st, 0))) == NULL)
        goto done;
    /* Its checks against its card model's floors, judged as validity is. */
    if (gb_expect_benchmark_checked(benchmark)) {
        if ((checks = gb_checks_judge(benchmark, parsed, parsed_meta)) == NULL ||
            (checked = cJSON_PrintUnformatted(checks)) == NULL)
            goto done; /* out of memory: a run is not stored unjudged */
        failed = gb_checks_failed(checks);
    }
    if (rows) {
        cJSON *d = compare_row_digest(benchmark, rows, summary);
        digest = d ? cJSON_PrintUnformatted(d) : NULL;
        cJSON_Delete(d);
    }
    if (store_query_run(q,
                        "INSERT OR REPLACE INTO run_results (run_id, results, meta) "
                        "VALUES (?1, ?2, ?3)",
                        NULL, STORE_TEXT(id), STORE_TEXT(results),
                        STORE_TEXT(meta ? meta : "{}")) != STORE_OK ||
        store_query_run(q,
                        "INSERT OR REPLACE INTO run_digests (run_id, summary, rows) "
                        "VALUES (?1, ?2, ?3)",
                        NULL, STORE_TEXT(id), STORE_TEXT(slim), STORE_TEXT(digest)) != STORE_OK)
        goto done;
    /* The newest result of each benchmark on each card, for /metrics. */
    if (store_query_run(q,
                        "INSERT INTO latest_by_card (benchmark, host, device_uuid, run_id) "
                        "SELECT benchmark, host, coalesce(device_uuid, ''), id "
                        "FROM runs WHERE id = ?1 "
                        "ON CONFLICT (benchmark, host, device_uuid) DO UPDATE "
                        "SET run_id = excluded.run_id WHERE excluded.run_id > run_id",
                        NULL, STORE_TEXT(id)) != STORE_OK)
        goto done;
    if (verdict == NULL)
        goto done; /* out of memory: a run is not stored unjudged */
    if (store_query_prepare(q, "UPDATE runs SET "
                               "driver_version = json_extract(?2, '$.driver.nvidia_version'), "
                               "cuda_version = json_extract(?2, '$.cuda.runtime_version'), "
                               /* the build, part of the key where the
                                * method is unknown; a run stored without
                                * its method gets the one its gpubench
                                * version implies (bench_spec.h) */
                               "build = json_extract(?2, '$.build.git_commit'), "
                               "method = coalesce(method, gb_method(benchmark, "
                               "json_extract(?2, '$.build.gpubench_version'))), "
                               "validity = ?3, valid = ?4, checks = ?5, checks_failed = ?6 "
                               "WHERE id = ?1") != STORE_OK)
        goto done;
    store_bind_text(q, 1, id);
    store_bind_text(q, 2, meta ? meta : "{}");
    store_bind_text(q, 3, verdict);
    if (flag < 0)
        store_bind_null(q, 4);
    else
        store_bind_int64(q, 4, flag != 0);
    store_bind_text(q, 5, checked);
    if (failed < 0)
        store_bind_null(q, 6);
    else
        store_bind_int64(q, 6, failed);
    if (store_query_exec(q, NULL) != STORE_OK)
        goto done;
    /* Its key, and the fleet's newest valid run of the key on its card
     * (migrations/0007_run_verdicts.sql). */
    /* clang-format off */
    if (store_query_run(q,
                        "UPDATE runs SET verdict_key = " STORE_VERDICT_KEY("") " "
                        "WHERE id = ?1 AND status = 'done'",
                        NULL, STORE_TEXT(id)) != STORE_OK ||
        store_query_run(q,
                        "INSERT INTO fleet_latest (verdict_key, benchmark, host, "
                        "device_uuid, run_id) "
                        "SELECT verdict_key, benchmark, host, device_uuid, id FROM runs "
                        "WHERE id = ?1 AND verdict_key IS NOT NULL AND valid IS NOT 0 "
                        "AND device_uuid IS NOT NULL "
                        "ON CONFLICT (verdict_key, host, device_uuid) DO UPDATE "
                        "SET run_id = excluded.run_id WHERE excluded.run_id > run_id",
                        NULL, STORE_TEXT(id)) != STORE_OK)
        goto done;
    /* clang-format on */
    rc = STORE_OK;

done:
    cJSON_Delete(parsed);
    cJSON_Delete(parsed_meta);
    cJSON_Delete(checks);
    free(checked);
    free(benchmark);
    free(slim);
    free(digest);
    free(verdict);
    return rc;
}
