/*
 * change_replay.c - see change_replay.h.  A stored run is read with only
 * what its points need (its results and the validity and key it was
 * stored with) and made a record of them (judge_run_points): the same
 * points as when it was first stored, from its rows' medians, which
 * --keep-samples keeps; validity and checks are not judged again.
 */
#include "change_replay.h"

#include "log.h"
#include "run_judge.h"
#include "store_changes.h"
#include "timeutil.h"

#include <stdlib.h>

/* One page of stored runs (store_changes_replay_page's) made records of
 * their series points in recs (calloc'd, one a run: the caller clears and
 * frees them).  0, or -1 when memory ran out. */
static int judge_page(cJSON *runs, struct run_record *recs)
{
    cJSON *run;
    int k = 0;

    cJSON_ArrayForEach(run, runs) {
        struct run_record *r = &recs[k++];
        const char *key = cJSON_GetStringValue(cJSON_GetObjectItem(run, "verdict_key"));
        /* the record owns the results tree (run_record_clear frees it); its
         * text is not printed: nothing here writes it */
        r->results = cJSON_DetachItemFromObject(run, "results");
        if (run_record_set(&r->id, cJSON_GetStringValue(cJSON_GetObjectItem(run, "id"))) != 0 ||
            run_record_set(&r->benchmark,
                           cJSON_GetStringValue(cJSON_GetObjectItem(run, "benchmark"))) != 0 ||
            run_record_set(&r->device_uuid,
                           cJSON_GetStringValue(cJSON_GetObjectItem(run, "device_uuid"))) != 0 ||
            judge_run_points(r, cJSON_GetObjectItem(run, "valid")->valueint, key) != 0)
            return -1;
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
            rc = judge_page(ids, recs);
        if (rc == 0)
            rc = store_changes_replay_put(s, recs, n, n > 0 ? recs[n - 1].id : NULL);
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
