/*
 * store_canary.c - see store_canary.h.  Reads only, on the reader
 * connection: the scheduler asks every second, and a slow answer must not
 * wait behind a runner's write.
 */
#include "store_internal.h"
#include "store_canary.h"
#include "store_queue.h"

#include <stdio.h>
#include <string.h>

int store_canary_card(struct store *s, int device_index, struct store_card_queue *card)
{
    struct store_query q;
    int rc = STORE_ERROR;

    memset(card, 0, sizeof(*card));
    store_query_begin(&q, store_reader(s), "read a card's queue for its canaries");
    if (store_query_prepare(&q, "SELECT coalesce(sum(status = 'queued'), 0), "
                                "coalesce(sum(status = 'running'), 0), "
                                "coalesce(max(label IS '" STORE_CANARY_LABEL "'), 0) "
                                "FROM runs WHERE status IN ('queued', 'running') "
                                "AND device_index = ?1") != STORE_OK)
        goto done;
    store_bind_int64(&q, 1, device_index);
    if (store_query_step(&q) != STORE_STEP_ROW)
        goto done;
    card->queued = sqlite3_column_int64(q.st, 0);
    card->running = sqlite3_column_int64(q.st, 1);
    card->canary = sqlite3_column_int(q.st, 2);
    rc = STORE_OK;

done:
    return store_query_end(&q, rc);
}

/* The columns of the last canary run's query. */
enum {
    LAST_ID,
    LAST_BATCH,
    LAST_CREATED,
    LAST_CREATED_MS,
};

/* The columns of its batch's summary. */
enum {
    BATCH_RUNS,
    BATCH_QUEUED,
    BATCH_RUNNING,
    BATCH_FAILED,
    BATCH_CANCELLED,
    BATCH_INVALID,
    BATCH_FINISHED,
};

/* A batch's outcome, as one run status: running while any run is not
 * ended and one has started, then the worst end. */
static const char *batch_outcome(sqlite3_stmt *st)
{
    int runs = sqlite3_column_int(st, BATCH_RUNS);
    int queued = sqlite3_column_int(st, BATCH_QUEUED);

    if (queued == runs)
        return "queued";
    if (queued > 0 || sqlite3_column_int(st, BATCH_RUNNING) > 0)
        return "running";
    if (sqlite3_column_int(st, BATCH_FAILED) > 0)
        return "failed";
    if (sqlite3_column_int(st, BATCH_CANCELLED) > 0)
        return "cancelled";
    return "done";
}

int store_canary_last(struct store *s, const char *device_uuid, const char *benchmarks_json,
                      struct store_canary_run *last)
{
    struct store_query q;
    int rc = STORE_ERROR;

    memset(last, 0, sizeof(*last));
    store_query_begin(&q, store_reader(s), "read a canary's last run");
    /* clang-format off */
    if (store_query_prepare(&q, "SELECT id, batch_id, created_at, "
                                STORE_UNIX_MS("created_at") " FROM runs "
                                "WHERE label IS '" STORE_CANARY_LABEL "' AND device_uuid = ?1 "
                                "AND origin IS NULL "
                                "AND benchmark IN (SELECT value FROM json_each(?2)) "
                                "ORDER BY created_at DESC, rowid DESC LIMIT 1") != STORE_OK)
        goto done;
    /* clang-format on */
    store_bind_text(&q, 1, device_uuid);
    store_bind_text(&q, 2, benchmarks_json);
    if ((rc = store_query_one(&q)) != STORE_OK)
        goto done;
    snprintf(last->id, sizeof(last->id), "%s", store_col_text(q.st, LAST_ID));
    snprintf(last->batch, sizeof(last->batch), "%s",
             store_col_text(q.st, LAST_BATCH) ? store_col_text(q.st, LAST_BATCH) : "");
    snprintf(last->created_at, sizeof(last->created_at), "%s",
             store_col_text(q.st, LAST_CREATED));
    last->created_ms = sqlite3_column_int64(q.st, LAST_CREATED_MS);
    rc = STORE_ERROR;
    if (store_query_prepare(&q, "SELECT count(*), sum(status = 'queued'), "
                                "sum(status = 'running'), sum(status = 'failed'), "
                                "sum(status = 'cancelled'), sum(valid IS 0), "
                                "CASE WHEN sum(finished_at IS NULL) = 0 THEN max(finished_at) "
                                "END FROM runs WHERE id = ?1 OR batch_id = ?2") != STORE_OK)
        goto done;
    store_bind_text(&q, 1, last->id);
    store_bind_text(&q, 2, last->batch[0] ? last->batch : NULL);
    if (store_query_step(&q) != STORE_STEP_ROW)
        goto done;
    snprintf(last->outcome, sizeof(last->outcome), "%s", batch_outcome(q.st));
    snprintf(last->finished_at, sizeof(last->finished_at), "%s",
             store_col_text(q.st, BATCH_FINISHED) ? store_col_text(q.st, BATCH_FINISHED) : "");
    last->runs = sqlite3_column_int(q.st, BATCH_RUNS);
    last->failed = sqlite3_column_int(q.st, BATCH_FAILED);
    last->invalid = sqlite3_column_int(q.st, BATCH_INVALID);
    rc = STORE_OK;

done:
    return store_query_end(&q, rc);
}
