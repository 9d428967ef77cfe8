/*
 * run_verdicts.c - see run_verdicts.h.  The history is judged by
 * verdicts_history (GET /compare's pooled rules, the card's recent runs
 * the baseline and this run the candidate, then its run-to-run spread:
 * common/shift.h's gb_history_verdict), the fleet by fleet_judge_run.
 */
#include "run_verdicts.h"

#include "compare.h"
#include "expect.h"
#include "fleet.h"
#include "log.h"
#include "shift.h"
#include "store_runs.h"
#include "store_verdicts.h"
#include "validity.h"
#include "verdicts.h"

#include <stdlib.h>

/* The part of verdicts_compare's answer a run keeps. */
static cJSON *history_part(const cJSON *cmp)
{
    static const char *const kept[] = {"verdict", "verdict_rows", "rows",
                                       "too_few_runs", "runs_needed", NULL};
    const cJSON *base = cJSON_GetObjectItem(cmp, "baseline");
    cJSON *h = cJSON_CreateObject();

    if (h == NULL)
        return NULL;
    cJSON_AddItemToObject(h, "runs", cJSON_Duplicate(cJSON_GetObjectItem(base, "runs"), 1));
    for (int i = 0; kept[i]; i++)
        cJSON_AddItemToObject(h, kept[i], cJSON_Duplicate(cJSON_GetObjectItem(cmp, kept[i]), 1));
    return h;
}

cJSON *run_verdicts_judge(struct store *store, int history_runs, const char *id,
                          const char *results_json, const char *meta_json, cJSON **run_out)
{
    double margin = GB_SHIFT_MARGIN_DEFAULT;
    cJSON *run = NULL, *results = cJSON_Parse(results_json), *meta = cJSON_Parse(meta_json);
    cJSON *validity = NULL, *history = NULL, *peers = NULL, *one = NULL, *cmp = NULL;
    cJSON *out = NULL, *part, *digest = NULL;
    const cJSON *run_results;
    char *text;
    const char *benchmark;
    int rc;

    *run_out = NULL;
    if (results == NULL || meta == NULL || (validity = gb_validity_judge(results, meta)) == NULL)
        goto fail;
    if ((rc = store_get_run(store, id, &run)) != STORE_OK)
        goto fail;
    /* the run as it will be stored: done, with its results */
    cJSON_ReplaceItemInObject(run, "results", results);
    cJSON_ReplaceItemInObject(run, "meta", meta);
    cJSON_ReplaceItemInObject(run, "status", cJSON_CreateString("done"));
    cJSON_ReplaceItemInObject(run, "validity", validity);
    results = meta = validity = NULL;
    /* its checks against the floors, as the store will keep them: a missed
     * floor opens an alert as a slower row does (alerts.c) */
    cJSON_ReplaceItemInObject(
        run, "checks",
        gb_checks_judge(cJSON_GetStringValue(cJSON_GetObjectItem(run, "benchmark")),
                        cJSON_GetObjectItem(run, "results"), cJSON_GetObjectItem(run, "meta")));
    if ((out = cJSON_CreateObject()) == NULL)
        goto fail;
    if (gb_validity_flag(cJSON_GetObjectItem(run, "validity")) == 0) {
        cJSON_AddBoolToObject(out, "judged", 0);
        cJSON_AddStringToObject(out, "reason",
                                "the run is not valid (see its validity): it is judged by "
                                "nothing and judges nothing");
        goto done;
    }
    cJSON_AddBoolToObject(out, "judged", 1);
    cJSON_AddNumberToObject(out, "margin", margin);
    cJSON_AddItemToObject(out, "confirms",
                          cJSON_Duplicate(cJSON_GetObjectItem(run, "confirms"), 0));
    benchmark = cJSON_GetStringValue(cJSON_GetObjectItem(run, "benchmark"));
    run_results = cJSON_GetObjectItem(run, "results");

    if (store_history_runs(store, id, history_runs, &history) != STORE_OK)
        goto fail;
    if (cJSON_GetArraySize(history) == 0) {
        cJSON_AddNullToObject(out, "history");
    } else {
        struct verdict_group base = {.selector = "history", .runs = history};
        struct verdict_group cand = {.selector = "run"};
        if ((one = cJSON_CreateArray()) == NULL)
            goto fail;
        cJSON_AddItemReferenceToArray(one, run);
        cand.runs = one;
        if ((cmp = verdicts_history(benchmark, &base, &cand, margin)) == NULL ||
            (part = history_part(cmp)) == NULL)
            goto fail;
        cJSON_AddItemToObject(out, "history", part);
    }

    if (store_fleet_peers(store, id, &peers) != STORE_OK)
        goto fail;
    /* Its rows as the peers' are stored and read back: a digest, saying
     * the units of work of a sample its times are divided by (the digest
     * holds its numbers as printed text until it is parsed). */
    if ((part = compare_row_digest(benchmark, cJSON_GetObjectItem(run_results, "rows"),
                                   cJSON_GetObjectItem(run_results, "summary"))) == NULL)
        goto fail;
    text = cJSON_PrintUnformatted(part);
    cJSON_Delete(part);
    digest = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (digest == NULL)
        goto fail;
    part = fleet_judge_run(benchmark, digest, peers, margin);
    if (part == NULL)
        goto fail;
    cJSON_AddItemToObject(out, "fleet", part);
    goto done;

fail:
    log_warn("run %s: its verdicts could not be made; it is stored without them", id);
    cJSON_Delete(out);
    cJSON_Delete(run);
    out = run = NULL;

done:
    cJSON_Delete(results);
    cJSON_Delete(meta);
    cJSON_Delete(validity);
    cJSON_Delete(history);
    cJSON_Delete(peers);
    cJSON_Delete(one);
    cJSON_Delete(cmp);
    cJSON_Delete(digest);
    *run_out = run;
    return out;
}
