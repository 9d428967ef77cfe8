/*
 * store_peers.h - each peer's pull state (migrations/0002_fleet.sql and
 * 0011_peer_skipped.sql, store_fleet.c); the runs a pull brings are
 * stored by store_import_runs (store_runs.h).  See store.h for the store
 * itself.
 */
#ifndef GPUBENCH_STORE_STORE_PEERS_H
#define GPUBENCH_STORE_STORE_PEERS_H

#include "run_record.h"
#include "store.h"
#include "store_runs.h"

/* A peer's pull state. */
struct peer_row {
    long long cursor;
    long long runs_pulled;
    long long skipped;        /* runs passed over: benchmarks unknown here */
    char skipped_reason[400]; /* why the last one was, "" before any */
    long long conflicts;      /* runs refused: their id held here with another origin */
    char last_success_at[32];
    char last_error[256];
    char last_error_at[32];
    /* the newest run held from the peer (finished last), "" before any */
    char newest_run_id[64];
    char newest_finished_at[40];
};
/* The pull state of n peers (urls[i] into rows[i]), each row made if
 * new, in one transaction: a hub given 10,000 new peers at once pays one
 * commit, not 10,000. */
int store_peer_load_many(struct store *s, const char *const *urls, int n, struct peer_row *rows);

/* What a good pull moves on with the runs it brought: the peer (url), its
 * new cursor, and how many runs it skipped (skip_reason: why the last of
 * them was, or NULL when none).  The peer's newest run (store_peer_load's
 * newest_run_id) becomes the batch's that finished last, when it finished
 * after the one held. */
struct store_pull {
    const char *url;
    long long cursor;
    long long skipped;
    const char *skip_reason;
};

/* Stores n runs pulled from pull->url (judged records, as
 * store_import_runs takes them) and moves the peer's cursor and counts on
 * with them, in one transaction: the cursor never passes a run that is not
 * stored, and a batch costs one commit.  STORE_OK with *tally (as
 * store_import_runs fills it; the conflicts counted in the peer's row
 * too, a run naming a card another origin speaks for among them: refused,
 * the rest stored), or the store's code (nothing is written then). */
int store_pull_runs(struct store *s, const struct store_pull *pull, const struct run_record *runs,
                    int n, struct import_tally *tally);

/* Records a pull: on success (error NULL) the new cursor, how many runs
 * it stored and how many it skipped (skip_reason: why the last of them
 * was, or NULL when none); on failure the error, with the time. */
int store_peer_record(struct store *s, const char *url, long long cursor,
                      long long pulled, long long skipped, const char *skip_reason,
                      const char *error);

#endif
