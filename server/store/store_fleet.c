/*
 * store_fleet.c - runs made elsewhere (an import, a peer), stored whole in
 * one transaction and never twice, never naming a card another origin
 * speaks for (store_owners.c), and each peer's pull state.  See
 * store_runs.h and store_peers.h.
 */
#include "store_internal.h"
#include "store_touch.h"
#include "store_peers.h"
#include "store_runs.h"
#include "dynbuf.h"
#include "log.h"
#include "migrate.h"
#include "run_cache.h"
#include "timeutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prepares the INSERT of store_import_runs on q with run r bound, its
 * judged columns with it (a foreign run's row is written once, whole: an
 * UPDATE after it would write the row and four of its indexes twice).
 * STORE_OK or STORE_ERROR. */
static int bind_import(struct store_query *q, const struct run_record *r)
{
    if (store_query_prepare(q, "INSERT OR IGNORE INTO runs (id, benchmark, params, "
                               "label, batch_id, host, device_index, device_uuid, "
                               "device_name, status, timeout_s, created_at, "
                               "started_at, finished_at, error_code, error_message, "
                               "origin, final_seq, method, damaged_at_origin, "
                               "driver_version, cuda_version, build, validity, valid, "
                               "checks, checks_failed, verdict_key) VALUES (?1, ?2, "
                               "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
                               "?17, " NEXT_SEQ ", ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, "
                               "?26, CASE WHEN ?10 = 'done' THEN ?27 END)") != STORE_OK)
        return STORE_ERROR;
    /* The method it carries, else the one judging found from its gpubench
     * version (bench_spec.h); NULL where neither is known. */
    if (r->judged.method > 0)
        store_bind_int64(q, 18, r->judged.method);
    store_bind_judged(q, 20, &r->judged);
    store_bind_text(q, 1, r->id);
    store_bind_text(q, 2, r->benchmark);
    store_bind_text(q, 3, r->params);
    store_bind_text(q, 4, r->label);
    store_bind_text(q, 5, r->batch);
    store_bind_text(q, 6, r->host);
    if (r->has_device_index)
        store_bind_int64(q, 7, r->device_index);
    store_bind_text(q, 8, r->device_uuid);
    store_bind_text(q, 9, r->device_name);
    store_bind_text(q, 10, r->status);
    store_bind_int64(q, 11, r->timeout_s);
    store_bind_text(q, 12, r->created_at);
    store_bind_text(q, 13, r->started_at);
    store_bind_text(q, 14, r->finished_at);
    store_bind_text(q, 15, r->error_code);
    store_bind_text(q, 16, r->error_message);
    store_bind_text(q, 17, r->origin);
    store_bind_text(q, 19, r->damaged_at_origin);
    return STORE_OK;
}

/* A good pull's record of a peer: its cursor and counts moved on. */
#define PEER_PULLED_SQL                                                       \
    "UPDATE peers SET cursor = ?4, runs_pulled = runs_pulled + ?5, "          \
    "skipped = skipped + ?6, skipped_reason = COALESCE(?7, skipped_reason), " \
    "conflicts = conflicts + ?8, last_success_at = ?3 WHERE url = ?1"

static void bind_pulled(struct store_query *q, const char *url, const char *now,
                        long long cursor, long long pulled, long long skipped,
                        const char *skip_reason, long long conflicts)
{
    store_bind_text(q, 1, url);
    store_bind_text(q, 3, now);
    store_bind_int64(q, 4, cursor);
    store_bind_int64(q, 5, pulled);
    store_bind_int64(q, 6, skipped);
    store_bind_text(q, 7, skip_reason);
    store_bind_int64(q, 8, conflicts);
}

/* Whether the run id (held here) is held with origin (NULL: measured
 * here): 1 the same, 0 another (its origin copied into held), or -1 when
 * it could not be read. */
static int same_origin(struct store_query *q, const char *id, const char *origin, char *held,
                       size_t cap)
{
    const char *was;

    if (store_query_prepare(q, "SELECT origin FROM runs WHERE id = ?1") != STORE_OK)
        return -1;
    store_bind_text(q, 1, id);
    if (store_query_step(q) != STORE_STEP_ROW)
        return -1;
    was = store_col_text(q->st, 0);
    if (was == NULL ? origin == NULL : origin != NULL && strcmp(was, origin) == 0)
        return 1;
    snprintf(held, cap, "%s", was ? was : "");
    return 0;
}

/* Whether run r's id is held here (store_query_exec's changes of its
 * INSERT OR IGNORE: 0), counted in tally as existing (same origin) or a
 * conflict (another); via as insert_runs has it.  STORE_OK or
 * STORE_ERROR. */
static int count_held(struct store_query *q, const struct run_record *r, const char *via,
                      struct import_tally *tally)
{
    char held[sizeof(tally->conflict_held)];
    int same = same_origin(q, r->id, r->origin, held, sizeof(held));

    if (same < 0)
        return STORE_ERROR;
    if (same || (held[0] == '\0' && via && r->origin && strcmp(r->origin, via) != 0)) {
        tally->existing++;
        return STORE_OK;
    }
    if (tally->conflicts++ == 0) {
        snprintf(tally->conflict_id, sizeof(tally->conflict_id), "%s", r->id);
        memcpy(tally->conflict_held, held, sizeof(held));
    }
    return STORE_OK;
}

/* Counts run r (index i), a new id naming a card owner speaks for, in
 * tally's card conflicts. */
static void count_card_conflict(const struct run_record *r, int i, const struct card_owner *owner,
                                struct import_tally *tally)
{
    if (tally->card_conflicts++ > 0)
        return;
    tally->card_index = i;
    snprintf(tally->card_run_id, sizeof(tally->card_run_id), "%s", r->id);
    snprintf(tally->card_uuid, sizeof(tally->card_uuid), "%s", r->device_uuid);
    snprintf(tally->card_owner, sizeof(tally->card_owner), "%s", owner->origin);
    snprintf(tally->card_host, sizeof(tally->card_host), "%s", owner->host);
}

/* Inserts runs on q, inside its transaction: a run whose id is here
 * already is left as it is, counted in tally as existing (same origin)
 * or a conflict (another).  A new run naming a card another origin
 * speaks for (store_owners.c) is refused and counted in tally's card
 * conflicts.  via: the peer a pull's runs came from, or NULL (an import):
 * a run measured here that came back relayed through it (an echo of this
 * node's own run, origin not via's) is existing too. */
static int insert_runs(struct store_query *q, const struct run_record *runs, int n,
                       const char *via, struct import_tally *tally)
{
    for (int i = 0; i < n; i++) {
        const struct run_record *r = &runs[i];
        struct card_owner owner;
        int changes = 0, speaks = store_card_speaks(q, r, via, &owner);

        if (speaks < 0)
            return STORE_ERROR;
        if (!speaks) {
            /* its id held here: as any run held (an echo, a conflict);
             * else refused, whoever sent it */
            if (store_query_prepare(q, "SELECT 1 FROM runs WHERE id = ?1") != STORE_OK)
                return STORE_ERROR;
            store_bind_text(q, 1, r->id);
            if ((changes = store_query_step(q)) == STORE_STEP_ROW) {
                if (count_held(q, r, via, tally) != STORE_OK)
                    return STORE_ERROR;
            } else if (changes == STORE_STEP_DONE) {
                count_card_conflict(r, i, &owner, tally);
            } else {
                return STORE_ERROR;
            }
            continue;
        }
        if (bind_import(q, r) != STORE_OK || store_query_exec(q, &changes) != STORE_OK)
            return STORE_ERROR;
        if (changes == 0) {
            if (count_held(q, r, via, tally) != STORE_OK)
                return STORE_ERROR;
            continue;
        }
        tally->inserted++;
        if (owner.claim && store_card_claim(q, r) != STORE_OK)
            return STORE_ERROR;
        store_query_touch(q, STORE_TOUCH_HOST, r->host);
        if (r->device_uuid)
            store_query_touch(q, STORE_TOUCH_CARD, r->device_uuid);
        if (r->results_text && store_put_results(q, r, 1) != STORE_OK)
            return STORE_ERROR;
    }
    return STORE_OK;
}

int store_import_runs(struct store *s, const struct run_record *runs, int n,
                      struct import_tally *tally)
{
    struct store_query q;
    int rc = STORE_ERROR;

    memset(tally, 0, sizeof(*tally));
    store_query_begin(&q, &s->writer, "import runs");
    if (store_query_transaction(&q) != STORE_OK ||
        insert_runs(&q, runs, n, NULL, tally) != STORE_OK)
        goto done;
    if (tally->card_conflicts > 0) {
        rc = STORE_CONFLICT; /* all or nothing: rolled back */
        goto done;
    }
    rc = store_query_commit(&q);

done:
    return store_query_end(&q, rc);
}

int store_pull_runs(struct store *s, const struct store_pull *pull, const struct run_record *runs,
                    int n, struct import_tally *tally)
{
    struct store_query q;
    char now[32];
    int rc = STORE_ERROR, newest = -1;

    memset(tally, 0, sizeof(*tally));
    /* the batch's run that finished last (ids break a tie) */
    for (int i = 0; i < n; i++) {
        const char *at = runs[i].finished_at;
        if (at == NULL || runs[i].id == NULL)
            continue;
        if (newest < 0 || strcmp(at, runs[newest].finished_at) > 0 ||
            (strcmp(at, runs[newest].finished_at) == 0 && strcmp(runs[i].id, runs[newest].id) > 0))
            newest = i;
    }
    time_now_rfc3339(now, sizeof(now));
    store_query_begin(&q, &s->writer, "store a peer's runs");
    store_query_touch(&q, STORE_TOUCH_NONE, NULL); /* the peer's row; its runs say theirs */
    if (store_query_transaction_relaxed(&q) != STORE_OK ||
        insert_runs(&q, runs, n, pull->url, tally) != STORE_OK ||
        store_query_prepare(&q, PEER_PULLED_SQL) != STORE_OK)
        goto done;
    bind_pulled(&q, pull->url, now, pull->cursor, tally->inserted, pull->skipped,
                pull->skip_reason, (long long)tally->conflicts + tally->card_conflicts);
    if (store_query_exec(&q, NULL) != STORE_OK)
        goto done;
    if (newest >= 0 &&
        store_query_run(&q,
                        "UPDATE peers SET newest_run_id = ?2, newest_finished_at = ?3 "
                        "WHERE url = ?1 AND (newest_finished_at IS NULL OR "
                        "newest_finished_at < ?3 OR (newest_finished_at = ?3 AND "
                        "newest_run_id < ?2))",
                        NULL, STORE_TEXT(pull->url), STORE_TEXT(runs[newest].id),
                        STORE_TEXT(runs[newest].finished_at)) != STORE_OK)
        goto done;
    rc = store_query_commit(&q);

done:
    return store_query_end(&q, rc);
}

/* The columns store_peer_load reads. */
enum {
    PEER_CURSOR,
    PEER_PULLED,
    PEER_SUCCESS_AT,
    PEER_ERROR,
    PEER_ERROR_AT,
    PEER_SKIPPED,
    PEER_SKIPPED_REASON,
    PEER_CONFLICTS,
    PEER_NEWEST_ID,
    PEER_NEWEST_AT,
};

/* Reads url's row on q (made first if new) into row. */
static int load_one(struct store_query *q, const char *url, struct peer_row *row)
{
    memset(row, 0, sizeof(*row));
    if (store_query_run(q, "INSERT OR IGNORE INTO peers (url) VALUES (?1)", NULL,
                        STORE_TEXT(url)) != STORE_OK ||
        store_query_prepare(q, "SELECT cursor, runs_pulled, last_success_at, "
                               "last_error, last_error_at, skipped, skipped_reason, "
                               "conflicts, newest_run_id, newest_finished_at "
                               "FROM peers WHERE url = ?1") != STORE_OK)
        return STORE_ERROR;
    store_bind_text(q, 1, url);
    if (store_query_step(q) != STORE_STEP_ROW)
        return STORE_ERROR;
    row->cursor = sqlite3_column_int64(q->st, PEER_CURSOR);
    row->runs_pulled = sqlite3_column_int64(q->st, PEER_PULLED);
    snprintf(row->last_success_at, sizeof(row->last_success_at), "%s",
             store_col_text(q->st, PEER_SUCCESS_AT) ? store_col_text(q->st, PEER_SUCCESS_AT)
                                                    : "");
    snprintf(row->last_error, sizeof(row->last_error), "%s",
             store_col_text(q->st, PEER_ERROR) ? store_col_text(q->st, PEER_ERROR) : "");
    snprintf(row->last_error_at, sizeof(row->last_error_at), "%s",
             store_col_text(q->st, PEER_ERROR_AT) ? store_col_text(q->st, PEER_ERROR_AT) : "");
    row->skipped = sqlite3_column_int64(q->st, PEER_SKIPPED);
    row->conflicts = sqlite3_column_int64(q->st, PEER_CONFLICTS);
    snprintf(row->skipped_reason, sizeof(row->skipped_reason), "%s",
             store_col_text(q->st, PEER_SKIPPED_REASON)
                 ? store_col_text(q->st, PEER_SKIPPED_REASON)
                 : "");
    snprintf(row->newest_run_id, sizeof(row->newest_run_id), "%s",
             store_col_text(q->st, PEER_NEWEST_ID) ? store_col_text(q->st, PEER_NEWEST_ID) : "");
    snprintf(row->newest_finished_at, sizeof(row->newest_finished_at), "%s",
             store_col_text(q->st, PEER_NEWEST_AT) ? store_col_text(q->st, PEER_NEWEST_AT) : "");
    return STORE_OK;
}

int store_peer_load_many(struct store *s, const char *const *urls, int n, struct peer_row *rows)
{
    struct store_query q;
    int rc = STORE_ERROR;

    store_query_begin(&q, &s->writer, "read the peers' pull state");
    if (store_query_transaction(&q) != STORE_OK)
        goto done;
    for (int i = 0; i < n; i++)
        if (load_one(&q, urls[i], &rows[i]) != STORE_OK)
            goto done;
    rc = store_query_commit(&q);

done:
    return store_query_end(&q, rc);
}

int store_peer_record(struct store *s, const char *url, long long cursor,
                      long long pulled, long long skipped, const char *skip_reason,
                      const char *error)
{
    struct store_query q;
    char now[32];
    int rc = STORE_ERROR;

    time_now_rfc3339(now, sizeof(now));
    store_query_begin(&q, &s->writer, "record a peer's pull");
    store_query_touch(&q, STORE_TOUCH_NONE, NULL); /* the peer's row alone */
    store_query_no_run_rows(&q);
    if (error) {
        rc = store_query_run(&q,
                             "UPDATE peers SET last_error = ?2, last_error_at = ?3 WHERE url = ?1",
                             NULL, STORE_TEXT(url), STORE_TEXT(error), STORE_TEXT(now));
        goto done;
    }
    if (store_query_prepare(&q, PEER_PULLED_SQL) != STORE_OK)
        goto done;
    bind_pulled(&q, url, now, cursor, pulled, skipped, skip_reason, 0);
    rc = store_query_exec(&q, NULL);

done:
    return store_query_end(&q, rc);
}
