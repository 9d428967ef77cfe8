/*
 * store_queue.c - a run's life in the store: accepted (queued), claimed by
 * its GPU's runner (running), progress, and its end (done, failed,
 * cancelled), or back into the queue; and what a crash left running.  All
 * on the writer connection.  See store_queue.h.
 */
#include "store_internal.h"
#include "store_queue.h"
#include "store_runs.h"
#include "compare.h"
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
    struct conn *c = &s->writer;
    char now[32];
    int rc = STORE_OK, changes = 0;

    *count = 0;
    time_now_rfc3339(now, sizeof(now));
    pthread_mutex_lock(&c->lock);
    /* One run at a time, so that each gets its own final_seq. */
    do {
        rc = store_exec(c,
                        "UPDATE runs SET status = 'failed', finished_at = ?1, "
                        "error_code = 'interrupted', error_message = 'the daemon "
                        "stopped while this run was running; the result was lost', "
                        "final_seq = " NEXT_SEQ " "
                        "WHERE id = (SELECT id FROM runs WHERE status = 'running' "
                        "AND origin IS NULL LIMIT 1)",
                        now, NULL, NULL, NULL, &changes);
        *count += changes;
    } while (rc == STORE_OK && changes > 0);
    if (rc != STORE_OK)
        rc = store_fail(c, "mark interrupted runs failed");
    else
        store_wrote(c);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_count_queued(struct conn *c, int device_index, long *depth)
{
    sqlite3_stmt *st = NULL;
    int rc = STORE_ERROR;

    if (store_conn_prepare(c, "SELECT count(*) FROM runs WHERE status = 'queued' "
                           "AND (?1 < 0 OR device_index = ?1)", &st) != SQLITE_OK)
        goto done;
    sqlite3_bind_int(st, 1, device_index);
    if (sqlite3_step(st) != SQLITE_ROW)
        goto done;
    *depth = sqlite3_column_int64(st, 0);
    rc = STORE_OK;

done:
    store_conn_release(c, st);
    return rc;
}

int store_queue_depth(struct store *s, int device_index, long *depth)
{
    struct conn *c = store_reader(s);
    int rc;

    pthread_mutex_lock(&c->lock);
    rc = store_count_queued(c, device_index, depth);
    if (rc != STORE_OK)
        rc = store_fail(c, "count queued runs");
    pthread_mutex_unlock(&c->lock);
    return rc;
}

static int insert_one(sqlite3_stmt *st, const struct run_new *r, const char *now)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    store_bind_text(st, 1, r->id);
    store_bind_text(st, 2, r->benchmark);
    store_bind_text(st, 3, r->params_json);
    store_bind_text(st, 4, r->label);
    store_bind_text(st, 5, r->batch_id);
    store_bind_text(st, 6, r->host);
    sqlite3_bind_int(st, 7, r->device_index);
    store_bind_text(st, 8, r->device_uuid);
    store_bind_text(st, 9, r->device_name);
    sqlite3_bind_int(st, 10, r->timeout_s);
    store_bind_text(st, 11, now);
    store_bind_text(st, 12, r->confirms);
    return sqlite3_step(st) == SQLITE_DONE ? STORE_OK : STORE_ERROR;
}

int store_insert_runs(struct store *s, const struct run_new *runs, int n,
                      int max_queue)
{
    struct conn *c = &s->writer;
    sqlite3_stmt *st = NULL;
    char now[32];
    long queued = 0;
    int rc = STORE_ERROR;
    int in_tx = 0;

    time_now_rfc3339(now, sizeof(now));
    pthread_mutex_lock(&c->lock);
    if (sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        goto done;
    in_tx = 1;
    if (store_count_queued(c, -1, &queued) != STORE_OK)
        goto done;
    if (queued + n > max_queue) {
        rc = STORE_FULL;
        goto done;
    }
    if (store_conn_prepare(c, "INSERT INTO runs (id, benchmark, params, label, "
                           "batch_id, host, device_index, device_uuid, "
                           "device_name, status, timeout_s, created_at, confirms) "
                           "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
                           "'queued', ?10, ?11, ?12)", &st) != SQLITE_OK)
        goto done;
    for (int i = 0; i < n; i++)
        if (insert_one(st, &runs[i], now) != STORE_OK)
            goto done;
    if (sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        goto done;
    in_tx = 0;
    rc = STORE_OK;

done:
    if (rc == STORE_ERROR)
        rc = store_fail(c, "insert runs");
    else if (rc == STORE_OK)
        store_wrote(c);
    store_conn_release(c, st);
    if (in_tx)
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_cancel_run(struct store *s, const char *id, char status[16])
{
    struct conn *c = &s->writer;
    char now[32];
    int changes = 0;
    int rc;

    time_now_rfc3339(now, sizeof(now));
    pthread_mutex_lock(&c->lock);
    rc = store_exec(c,
                    "UPDATE runs SET status = 'cancelled', finished_at = ?2, "
                    "final_seq = " NEXT_SEQ " WHERE id = ?1 AND status = 'queued'",
                    id, now, NULL, NULL, &changes);
    if (rc != STORE_OK)
        rc = store_fail(c, "cancel a run");
    else
        store_wrote(c);
    pthread_mutex_unlock(&c->lock);
    if (rc != STORE_OK)
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
    struct conn *c = &s->writer;
    sqlite3_stmt *st = NULL;
    int rc = STORE_ERROR;

    benchmark[0] = '\0';
    pthread_mutex_lock(&c->lock);
    if (store_conn_prepare(c, "SELECT benchmark FROM runs WHERE status = 'queued' "
                           "AND device_index = ?1 ORDER BY rowid LIMIT 1", &st) != SQLITE_OK)
        goto done;
    sqlite3_bind_int(st, 1, device_index);
    if ((rc = store_step_one(st)) == STORE_OK)
        snprintf(benchmark, 64, "%s", store_col_text(st, 0) ? store_col_text(st, 0) : "");

done:
    if (rc == STORE_ERROR)
        rc = store_fail(c, "look at the next queued run");
    store_conn_release(c, st);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_claim_next(struct store *s, int device_index, struct run_job *job)
{
    struct conn *c = &s->writer;
    sqlite3_stmt *st = NULL;
    char now[32];
    int rc = STORE_ERROR, step;
    int in_tx = 0;

    memset(job, 0, sizeof(*job));
    time_now_rfc3339(now, sizeof(now));
    pthread_mutex_lock(&c->lock);
    if (sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        goto done;
    in_tx = 1;
    if (store_conn_prepare(c, "SELECT id, benchmark, params, timeout_s FROM runs "
                           "WHERE status = 'queued' AND device_index = ?1 "
                           "ORDER BY rowid LIMIT 1", &st) != SQLITE_OK)
        goto done;
    sqlite3_bind_int(st, 1, device_index);
    if ((step = store_step_one(st)) != STORE_OK) {
        rc = step;
        goto done;
    }
    snprintf(job->id, sizeof(job->id), "%s", store_col_text(st, 0));
    snprintf(job->benchmark, sizeof(job->benchmark), "%s", store_col_text(st, 1));
    job->params_json = store_col_text(st, 2) ? strdup(store_col_text(st, 2)) : NULL;
    job->timeout_s = sqlite3_column_int(st, 3);
    store_conn_release(c, st);
    st = NULL;
    if (job->params_json == NULL)
        goto done;
    if (store_exec(c,
                   "UPDATE runs SET status = 'running', started_at = ?2 "
                   "WHERE id = ?1 AND status = 'queued'",
                   job->id, now, NULL, NULL, NULL) != STORE_OK)
        goto done;
    if (sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        goto done;
    in_tx = 0;
    rc = STORE_OK;
    store_wrote(c);

done:
    if (rc == STORE_ERROR)
        rc = store_fail(c, "claim the next run");
    store_conn_release(c, st);
    if (in_tx)
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_unlock(&c->lock);
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
    struct conn *c = &s->writer;
    sqlite3_stmt *st = NULL;
    int rc = STORE_ERROR;

    pthread_mutex_lock(&c->lock);
    if (store_conn_prepare(c, "UPDATE runs SET progress_done = ?2, progress_total = ?3, "
                           "progress_message = substr(?4, 1, ?5) "
                           "WHERE id = ?1 AND status = 'running'", &st) != SQLITE_OK)
        goto done;
    store_bind_text(st, 1, id);
    sqlite3_bind_int64(st, 2, done);
    sqlite3_bind_int64(st, 3, total);
    store_bind_text(st, 4, message);
    sqlite3_bind_int(st, 5, STORE_PROGRESS_MESSAGE_MAX);
    if (sqlite3_step(st) != SQLITE_DONE)
        goto done;
    rc = sqlite3_changes(c->db) == 1 ? STORE_OK : STORE_CONFLICT;
    store_wrote(c);

done:
    if (rc == STORE_ERROR)
        rc = store_fail(c, "record a run's progress");
    store_conn_release(c, st);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_finish_run(struct store *s, const char *id, const char *status,
                     const char *results_json, const char *meta_json,
                     const char *error_code, const char *error_message,
                     const char *verdicts_json)
{
    struct conn *c = &s->writer;
    char now[32];
    int rc = STORE_ERROR;
    int in_tx = 0, changes = 0;

    time_now_rfc3339(now, sizeof(now));
    pthread_mutex_lock(&c->lock);
    if (sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        goto done;
    in_tx = 1;
    if (store_exec(c,
                   "UPDATE runs SET status = ?2, finished_at = ?3, "
                   "error_code = ?4, final_seq = " NEXT_SEQ " "
                   "WHERE id = ?1 AND status = 'running'",
                   id, status, now, error_code, &changes) != STORE_OK)
        goto done;
    if (changes != 1) {
        /* Not running (ended already, or never claimed): its results
         * must not land on a run that is not this runner's. */
        rc = STORE_CONFLICT;
        goto done;
    }
    if (error_message &&
        store_exec(c, "UPDATE runs SET error_message = ?2 WHERE id = ?1",
                   id, error_message, NULL, NULL, NULL) != STORE_OK)
        goto done;
    if (results_json && store_put_results(c, id, results_json, meta_json) != STORE_OK)
        goto done;
    if (verdicts_json &&
        store_exec(c, "INSERT OR REPLACE INTO run_verdicts (run_id, verdicts) VALUES (?1, ?2)",
                   id, verdicts_json, NULL, NULL, NULL) != STORE_OK)
        goto done;
    if (sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        goto done;
    in_tx = 0;
    rc = STORE_OK;
    store_wrote(c);

done:
    if (rc == STORE_ERROR)
        rc = store_fail(c, "store a run's end");
    if (in_tx)
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int store_requeue_run(struct store *s, const char *id)
{
    struct conn *c = &s->writer;
    int rc, changes = 0;

    pthread_mutex_lock(&c->lock);
    rc = store_exec(c,
                    "UPDATE runs SET status = 'queued', started_at = NULL, "
                    "progress_done = NULL, progress_total = NULL, "
                    "progress_message = NULL "
                    "WHERE id = ?1 AND status = 'running'",
                    id, NULL, NULL, NULL, &changes);
    if (rc != STORE_OK)
        rc = store_fail(c, "put a run back in the queue");
    else if (changes != 1)
        rc = STORE_CONFLICT;
    else
        store_wrote(c);
    pthread_mutex_unlock(&c->lock);
    return rc;
}
