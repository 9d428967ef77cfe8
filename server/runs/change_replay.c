/*
 * change_replay.c - see change_replay.h.  A stored run is read as the API
 * shows it (store_get_run) and made a record the way an imported run is
 * (run_finish_from_json), then judged: the points it gives its series are
 * the same as when it was first stored, from its medians, which
 * --keep-samples keeps.
 */
#include "change_replay.h"

#include "log.h"
#include "run_finish.h"
#include "run_judge.h"
#include "store_changes.h"
#include "store_runs.h"
#include "timeutil.h"

#include <stdlib.h>

/* One page of ids read and judged into recs (calloc'd, n of them, the
 * caller clears and frees).  0, or a STORE_* code or -1. */
static int judge_page(struct store *s, const cJSON *ids, struct run_record *recs)
{
    const cJSON *id;
    int k = 0;

    cJSON_ArrayForEach(id, ids) {
        cJSON *run = NULL;
        int rc = store_get_run(s, id->valuestring, &run);
        if (rc != STORE_OK)
            return rc;
        rc = run_finish_from_json(&recs[k], run, NULL, 0, "replay") != 0 ||
                     judge_run_record(&recs[k]) != 0
                 ? -1
                 : 0;
        cJSON_Delete(run);
        if (rc != 0)
            return rc;
        k++;
    }
    return 0;
}

int change_replay(struct store *s, long *replayed)
{
    int64_t t0 = time_mono_ms(), logged = t0;
    long left = 0;
    int rc = 0;

    *replayed = 0;
    for (;;) {
        cJSON *ids = NULL;
        struct run_record *recs = NULL;
        int n;
        rc = store_changes_replay_page(s, CHANGE_REPLAY_PAGE, &ids, *replayed ? NULL : &left);
        if (rc != STORE_OK)
            break;
        n = cJSON_GetArraySize(ids);
        if (n == 0 && *replayed == 0 && left == 0) {
            /* nothing due, or done before: the cursor row goes if it is there */
            cJSON_Delete(ids);
            rc = store_changes_replay_put(s, NULL, 0, NULL);
            break;
        }
        if (*replayed == 0)
            log_info("change series: replaying up to %ld stored run(s), %d a page", left,
                     CHANGE_REPLAY_PAGE);
        if (n > 0 && (recs = calloc((size_t)n, sizeof(*recs))) == NULL)
            rc = -1;
        if (rc == 0)
            rc = judge_page(s, ids, recs);
        if (rc == 0)
            rc = store_changes_replay_put(
                s, recs, n, n > 0 ? cJSON_GetArrayItem(ids, n - 1)->valuestring : NULL);
        for (int i = 0; recs && i < n; i++)
            run_record_clear(&recs[i]);
        free(recs);
        cJSON_Delete(ids);
        if (rc != 0)
            break;
        *replayed += n;
        int64_t now = time_mono_ms();
        if (n == 0 || now - logged > 5000) {
            log_info("change series: %ld run(s) replayed%s, %.1f s", *replayed,
                     n == 0 ? ": done" : "", (double)(now - t0) / 1e3);
            logged = now;
        }
        if (n == 0)
            break;
    }
    if (rc != 0)
        log_error("change series: the replay of stored runs stopped after %ld run(s) (%s); "
                  "it goes on at the next start",
                  *replayed, store_rc_words(rc));
    return rc;
}
