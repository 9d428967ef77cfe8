/*
 * run_verdicts.c - see run_verdicts.h.  The history is judged by
 * verdicts_history (GET /compare's pooled rules, the card's recent runs
 * the baseline and this run the candidate, then its run-to-run spread:
 * common/shift.h's gb_history_verdict), the fleet by fleet_judge_run.
 */
#include "run_verdicts.h"

#include "fleet.h"
#include "json_build.h"
#include "log.h"
#include "shift.h"
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
    struct json_build b = {0};
    cJSON *h = jb_new_object(&b);

    jb_item(&b, h, "runs", cJSON_Duplicate(cJSON_GetObjectItem(base, "runs"), 1));
    for (int i = 0; kept[i]; i++) {
        const cJSON *v = cJSON_GetObjectItem(cmp, kept[i]);
        if (v)
            jb_item(&b, h, kept[i], cJSON_Duplicate(v, 1));
    }
    if (jb_failed(&b)) {
        cJSON_Delete(h);
        return NULL;
    }
    return h;
}

cJSON *run_verdicts_judge(struct store *store, int history_runs, cJSON *run,
                          const char *digest_text)
{
    double margin = GB_SHIFT_MARGIN_DEFAULT;
    const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(run, "id"));
    const char *benchmark = cJSON_GetStringValue(cJSON_GetObjectItem(run, "benchmark"));
    const cJSON *confirms;
    struct json_build b = {0};
    cJSON *history = NULL, *peers = NULL, *one = NULL, *cmp = NULL, *digest = NULL;
    cJSON *out = jb_new_object(&b);

    if (gb_validity_flag(cJSON_GetObjectItem(run, "validity")) == 0) {
        jb_bool(&b, out, "judged", 0);
        jb_string(&b, out, "reason",
                  "the run is not valid (see its validity): it is judged by "
                  "nothing and judges nothing");
        goto done;
    }
    jb_bool(&b, out, "judged", 1);
    jb_number(&b, out, "margin", margin);
    confirms = cJSON_GetObjectItem(run, "confirms");
    jb_item(&b, out, "confirms", confirms ? cJSON_Duplicate(confirms, 0) : cJSON_CreateNull());
    if (jb_failed(&b) || id == NULL || benchmark == NULL ||
        store_history_runs(store, id, history_runs, &history) != STORE_OK)
        goto fail;
    if (cJSON_GetArraySize(history) == 0) {
        jb_null(&b, out, "history");
    } else {
        struct verdict_group base = {.selector = "history", .runs = history};
        struct verdict_group cand = {.selector = "run"};
        if ((one = cJSON_CreateArray()) == NULL || !cJSON_AddItemReferenceToArray(one, run))
            goto fail;
        cand.runs = one;
        if ((cmp = verdicts_history(benchmark, &base, &cand, margin)) == NULL)
            goto fail;
        jb_item(&b, out, "history", history_part(cmp));
    }
    if (store_fleet_peers(store, id, &peers) != STORE_OK)
        goto fail;
    /* Its rows as the peers' are stored and read back: the digest as
     * stored (numbers as printed text until parsed), so that this run and
     * its peers are read alike. */
    if ((digest = cJSON_Parse(digest_text ? digest_text : "[]")) == NULL)
        goto fail;
    jb_item(&b, out, "fleet", fleet_judge_run(benchmark, digest, peers, margin));
    if (jb_failed(&b))
        goto fail;
    goto done;

fail:
    log_warn("run %s: its verdicts could not be made; it is stored without them",
             id ? id : "(no id)");
    cJSON_Delete(out);
    out = NULL;

done:
    if (out && jb_failed(&b)) {
        cJSON_Delete(out);
        out = NULL;
    }
    cJSON_Delete(history);
    cJSON_Delete(peers);
    cJSON_Delete(one);
    cJSON_Delete(cmp);
    cJSON_Delete(digest);
    return out;
}
