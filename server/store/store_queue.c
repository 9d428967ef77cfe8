/*
 * store_queue.c - a run's life in the store: accepted (queued), claimed by
 * its GPU's runner (running), progress, and its end (done, failed,
 * cancelled), or back into the queue; and what a crash left running.  All
 * on the writer connection.  See store_queue.h.
 */
#include "store_internal.h"
#include "store_touch.h"
#include "store_queue.h"
#include "store_runs.h"
#include "bench_spec.h"
#include "dynbuf.h"
#include "log.h"
#include "migrate.h"
#include "run_cache.h"
#include "timeutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int store_recover(struct store *s, int *count)
{
    struct store_query q;
    char now[32];
    int rc = STORE_OK, changes = 0;

    *count = 0;
    time_now_rfc3339(now, sizeof(now));
    store_query_begin(&q, &s->writer, "mark interrupted runs failed");
    /* One run at a time, so that each gets its own final_seq. */
    do {
        rc = store_query_run(&q,
                             "UPDATE runs SET status = 'failed', finished_at = ?1, "
                             "error_code = 'interrupted', error_message = 'the daemon "
                             "stopped while this run was running; the result was lost', "
                             "final_seq = " NEXT_SEQ " "
                             "WHERE id = (SELECT id FROM runs WHERE status = 'running' "
                             "AND origin IS NULL LIMIT 1)",
                             &changes, STORE_TEXT(now));
        *count += changes;
    } while (rc == STORE_OK && changes > 0);
    return store_query_end(&q, rc);
}

int store_count_queued(struct store_query *q, int device_index, long *depth)
{
    if (store_query_prepare(q, "SELECT count(*) FROM runs WHERE status = 'queued' "
                               "AND (?1 < 0 OR device_index = ?1)") != STORE_OK)
        return STORE_ERROR;
    store_bind_int64(q, 1, device_index);
    if (store_query_step(q) != STORE_STEP_ROW)
        return STORE_ERROR;
    *depth = sqlite3_column_int64(q->st, 0);
    return STORE_OK;
}

int store_queue_depth(struct store *s, int device_index, long *depth)
{
    struct store_query q;

    store_query_begin(&q, store_reader(s), "count queued runs");
    return store_query_end(&q, store_count_queued(&q, device_index, depth));
}

/* A queued run is measured by this build's worker, so it is stamped with
 * the method this build's spec gives its benchmark (bench_spec.h). */
static int insert_one(struct store_query *q, const struct run_new *r, const char *now)
{
    const struct gb_benchmark *b = gb_benchmark_find(r->benchmark);

    if (store_query_prepare(q, "INSERT INTO runs (id, benchmark, params, label, "
                               "batch_id, host, device_index, device_uuid, "
                               "device_name, status, timeout_s, created_at, confirms, "
                               "method) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
                               "'queued', ?10, ?11, ?12, ?13)") != STORE_OK)
        return STORE_ERROR;
    if (b != NULL && gb_benchmark_method(b) > 0)
        store_bind_int64(q, 13, gb_benchmark_method(b));
    store_bind_text(q, 1, r->id);
    store_bind_text(q, 2, r->benchmark);
    store_bind_text(q, 3, r->params_json);
    store_bind_text(q, 4, r->label);
    store_bind_text(q, 5, r->batch_id);
    store_bind_text(q, 6, r->host);
    store_bind_int64(q, 7, r->device_index);
    store_bind_text(q, 8, r->device_uuid);
    store_bind_text(q, 9, r->device_name);
    store_bind_int64(q, 10, r->timeout_s);
    store_bind_text(q, 11, now);
    store_bind_text(q, 12, r->confirms);
    return store_query_exec(q, NULL);
}

int store_insert_runs(struct store *s, const struct run_new *runs, int n,
                      int max_queue)
{
    struct store_query q;
    char now[32];
    long queued = 0;
    int rc = STORE_ERROR;

    time_now_rfc3339(now, sizeof(now));
    store_query_begin(&q, &s->writer, "insert runs");
    store_query_touch(&q, STORE_TOUCH_OWN, NULL); /* its own queue: read by no coverage */
    if (store_query_transaction(&q) != STORE_OK ||
        store_count_queued(&q, -1, &queued) != STORE_OK)
        goto done;
    if (queued + n > max_queue) {
        rc = STORE_FULL;
        goto done;
    }
    for (int i = 0; i < n; i++)
        if (insert_one(&q, &runs[i], now) != STORE_OK)
            goto done;
    rc = store_query_commit(&q);

done:
    return store_query_end(&q, rc);
}

int store_cancel_run(struct store *s, const char *id, char status[16])
{
    struct store_query q;
    char now[32];
    int changes = 0;
    int rc;

    time_now_rfc3339(now, sizeof(now));
    store_query_begin(&q, &s->writer, "cancel a run");
    store_query_touch(&q, STORE_TOUCH_OWN, NULL); /* its own queue: read by no coverage */
    rc = store_query_run(&q,
                         "UPDATE runs SET status = 'cancelled', finished_at = ?2, "
                         "final_seq = " NEXT_SEQ " WHERE id = ?1 AND status = 'queued'",
                         &changes, STORE_TEXT(id), STORE_TEXT(now));
    if ((rc = store_query_end(&q, rc)) != STORE_OK)
        return rc;
    if (changes == 1) {
        snprintf(status, 16, "%s", run_status_names[RUN_CANCELLED]);
        return STORE_OK;
    }
    rc = store_run_status(s, id, status);
    return rc == STORE_OK ? STORE_CONFLICT : rc;
}

int store_peek_next(struct store *s, int device_index, char benchmark[64])
{
    struct store_query q;
    int rc = STORE_ERROR;

    benchmark[0] = '\0';
    store_query_begin(&q, &s->writer, "look at the next queued run");
    if (store_query_prepare(&q, "SELECT benchmark FROM runs WHERE status = 'queued' "
                                "AND device_index = ?1 "
                                "ORDER BY " STORE_QUEUE_RANK("runs") " LIMIT 1") != STORE_OK)
        goto done;
    store_bind_int64(&q, 1, device_index);
    if ((rc = store_query_one(&q)) == STORE_OK)
        snprintf(benchmark, 64, "%s", store_col_text(q.st, 0) ? store_col_text(q.st, 0) : "");

done:
    return store_query_end(&q, rc);
}

/* The columns store_claim_next reads of the run it claims. */
enum {
    CLAIM_ID,
    CLAIM_BENCHMARK,
    CLAIM_PARAMS,
    CLAIM_TIMEOUT,
};

int store_claim_next(struct store *s, int device_index, struct run_job *job)
{
    struct store_query q;
    char now[32];
    int rc = STORE_ERROR, step;

    memset(job, 0, sizeof(*job));
    time_now_rfc3339(now, sizeof(now));
    store_query_begin(&q, &s->writer, "claim the next run");
    store_query_touch(&q, STORE_TOUCH_OWN, NULL); /* its own queue: read by no coverage */
    if (store_query_transaction(&q) != STORE_OK ||
        store_query_prepare(&q, "SELECT id, benchmark, params, timeout_s FROM runs "
                                "WHERE status = 'queued' AND device_index = ?1 "
                                "ORDER BY " STORE_QUEUE_RANK("runs") " LIMIT 1") != STORE_OK)
        goto done;
    store_bind_int64(&q, 1, device_index);
    if ((step = store_query_one(&q)) != STORE_OK) {
        rc = step;
        goto done;
    }
    snprintf(job->id, sizeof(job->id), "%s", store_col_text(q.st, CLAIM_ID));
    snprintf(job->benchmark, sizeof(job->benchmark), "%s", store_col_text(q.st, CLAIM_BENCHMARK));
    job->params_json =
        store_col_text(q.st, CLAIM_PARAMS) ? strdup(store_col_text(q.st, CLAIM_PARAMS)) : NULL;
    job->timeout_s = sqlite3_column_int(q.st, CLAIM_TIMEOUT);
    if (job->params_json == NULL)
        goto done;
    if (store_query_run(&q,
                        "UPDATE runs SET status = 'running', started_at = ?2 "
                        "WHERE id = ?1 AND status = 'queued'",
                        NULL, STORE_TEXT(job->id), STORE_TEXT(now)) != STORE_OK)
        goto done;
    rc = store_query_commit(&q);

done:
    rc = store_query_end(&q, rc);
    if (rc != STORE_OK)
        store_job_clear(job);
    return rc;
}

void store_job_clear(struct run_job *job)
{
    free(job->params_json);
    memset(job, 0, sizeof(*job));
}

int store_set_progress(struct store *s, const char *id, long done, long total,
                       const char *message)
{
    struct store_query q;
    int rc = STORE_ERROR, changes = 0;

    store_query_begin(&q, &s->writer, "record a run's progress");
    store_query_touch(&q, STORE_TOUCH_OWN, NULL); /* its own queue: read by no coverage */
    if (store_query_prepare(&q, "UPDATE runs SET progress_done = ?2, progress_total = ?3, "
                                "progress_message = substr(?4, 1, ?5) "
                                "WHERE id = ?1 AND status = 'running'") != STORE_OK)
        goto done;
    store_bind_text(&q, 1, id);
    store_bind_int64(&q, 2, done);
    store_bind_int64(&q, 3, total);
    store_bind_text(&q, 4, message);
    store_bind_int64(&q, 5, STORE_PROGRESS_MESSAGE_MAX);
    if (store_query_exec(&q, &changes) != STORE_OK)
        goto done;
    rc = changes == 1 ? STORE_OK : STORE_CONFLICT;

done:
    return store_query_end(&q, rc);
}

int store_finish_run(struct store *s, const struct run_record *r)
{
    struct store_query q;
    int rc = STORE_ERROR, changes = 0;

    store_query_begin(&q, &s->writer, "store a run's end");
    store_query_touch(&q, STORE_TOUCH_OWN, NULL);
    if (store_query_transaction(&q) != STORE_OK ||
        store_query_run(&q,
                        "UPDATE runs SET status = ?2, finished_at = ?3, "
                        "error_code = ?4, error_message = ?5, final_seq = " NEXT_SEQ " "
                        "WHERE id = ?1 AND status = 'running'",
                        &changes, STORE_TEXT(r->id), STORE_TEXT(r->status),
                        STORE_TEXT(r->finished_at), STORE_TEXT(r->error_code),
                        STORE_TEXT(r->error_message)) != STORE_OK)
        goto done;
    if (changes != 1) {
        /* Not running (ended already, or never claimed): its results
         * must not land on a run that is not this runner's. */
        rc = STORE_CONFLICT;
        goto done;
    }
    /* measured here: this node speaks for the card (store_owners.c) */
    if (store_card_claim_here(&q, r->id) != STORE_OK)
        goto done;
    if (store_touch_run(&q, r->id) != STORE_OK)
        goto done;
    if (r->results_text && store_put_results(&q, r, 0) != STORE_OK)
        goto done;
    if (r->judged.verdicts &&
        store_query_run(&q,
                        "INSERT OR REPLACE INTO run_verdicts (run_id, verdicts) "
                        "VALUES (?1, ?2)",
                        NULL, STORE_TEXT(r->id), STORE_TEXT(r->judged.verdicts)) != STORE_OK)
        goto done;
    rc = store_query_commit(&q);

done:
    return store_query_end(&q, rc);
}

int store_requeue_run(struct store *s, const char *id)
{
    struct store_query q;
    int rc, changes = 0;

    store_query_begin(&q, &s->writer, "put a run back in the queue");
    store_query_touch(&q, STORE_TOUCH_OWN, NULL); /* its own queue: read by no coverage */
    rc = store_query_run(&q,
                         "UPDATE runs SET status = 'queued', started_at = NULL, "
                         "progress_done = NULL, progress_total = NULL, "
                         "progress_message = NULL "
                         "WHERE id = ?1 AND status = 'running'",
                         &changes, STORE_TEXT(id));
    if (rc == STORE_OK && changes != 1)
        rc = STORE_CONFLICT;
    return store_query_end(&q, rc);
}
