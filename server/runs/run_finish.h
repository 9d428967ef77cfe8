/*
 * run_finish.h - the one way a run's end is judged, whoever made it: a run
 * measured here (its worker's answer, through the pool's run_end hook in
 * run_end.c), an import (POST /runs/import) or a run pulled from a peer
 * (peers.c).  Each becomes a typed record (core/run_record.h) whose
 * results and meta are parsed once; run_finish_judge judges it once
 * (judge/run_judge.h: validity, checks, summary, digest, method, key; and
 * for a run measured here its verdicts against the card's history and the
 * fleet, run_verdicts.h); the store then only writes the record
 * (store_finish_run, store_import_runs).
 *
 * A run measured elsewhere gets no verdicts here: it was judged where it
 * was measured, against that node's history, and is shown with none.
 */
#ifndef GPUBENCH_RUNS_RUN_FINISH_H
#define GPUBENCH_RUNS_RUN_FINISH_H

#include "run_record.h"

#include <cjson/cJSON.h>

struct alerts;
/* The origin of an imported run (POST /runs/import), wherever it was
 * imported: no node vouches for it. */
#define RUN_ORIGIN_IMPORT "import"

struct store;
struct store_pull;
struct import_tally;

/* Where the records of a foreign run come from: what a judged measured
 * run needs from the store. */
struct run_finish_ctx {
    struct store *store;
    int history_runs; /* --history-runs: what a measured run is judged against */
};

/* Fills r (zeroed) from run, a finished run object as GET /runs/ID shows
 * it, already checked by import_check_run: its envelope copied, its
 * results and meta detached from run and kept (run keeps the rest; the
 * caller still owns and frees it).  line (len bytes), when not NULL, is
 * the text run was parsed from: the results' and meta's own bytes are
 * then kept as their text rather than printed again (json_span.h).
 * origin is the run's as stored, decided by the caller, never taken from
 * the run (README "A fleet": a pulled run gets its peer's URL, or the
 * origin it names where that lies in the peer's published subtree; an
 * imported one "import").  0, or -1 when memory ran out (r then holds
 * what it had: run_record_clear it). */
int run_finish_from_json(struct run_record *r, cJSON *run, const char *line, size_t len,
                         const char *origin);

/* Judges r once.  A foreign record (measured 0) must be filled whole
 * (run_finish_from_json); a measured one (measured 1) carries its id,
 * status, finished_at, error and, if done, its results and meta trees: the
 * rest of its envelope is read from the store here, and a valid done run
 * gets its verdicts (r->judged.verdicts).  *judged_run, when not NULL,
 * gets a NEW run object as it will be stored (done, with its results,
 * meta, validity and checks), and *verdicts the verdicts as a NEW object
 * (NULL: none), for the alerts (alerts.h).  Verdicts that cannot be made
 * are logged and left out: the run is stored without them.
 * Returns 0; -1 when the run cannot be judged (memory ran out): such a run
 * must not be stored as done; or a STORE_* code when its envelope could
 * not be read (a measured run: try again). */
int run_finish_judge(const struct run_finish_ctx *ctx, struct run_record *r, int measured,
                     cJSON **judged_run, cJSON **verdicts);

/* Runs made elsewhere gathered for one store_import_runs: each added run
 * is a record judged once; the batch owns them. */
struct run_batch {
    struct run_record *recs;
    int n;
    int cap;
    /* Set by the caller, or NULL: once stored, the change alerts the
     * runs' series found are told to its webhook (alerts_on_stored). */
    struct alerts *alerts;
};

/* Adds run (checked by import_check_run; its results and meta taken, the
 * rest still the caller's), from line (len bytes, or NULL) as
 * run_finish_from_json takes it, judged; the record keeps the texts and
 * what judging found, its trees are deleted before this returns.  0, or
 * -1 when memory ran out (the batch is as it was). */
int run_batch_add(struct run_batch *b, cJSON *run, const char *line, size_t len,
                  const char *origin);

/* Stores the batch in one transaction (store_import_runs) and empties
 * it, stored or not.  STORE_OK with *tally, or the store's code. */
int run_batch_store(struct run_batch *b, struct store *store, struct import_tally *tally);

/* As run_batch_store, for runs pulled from a peer: stored with the peer's
 * cursor moved on, in one transaction (store_pull_runs).  An empty batch
 * only moves the cursor. */
int run_batch_store_pull(struct run_batch *b, struct store *store,
                         const struct store_pull *pull, struct import_tally *tally);

/* Frees every record and the batch's array; the batch is empty after. */
void run_batch_clear(struct run_batch *b);

/* An import's runs (an array of run objects checked by import_check_run;
 * their results and meta are taken from them) made into records, each
 * judged once, and stored in one transaction: run_batch_add each, then
 * run_batch_store (alerts, or NULL: the batch's alerts), every run with
 * origin.  STORE_OK with *tally, or a
 * STORE_* code (memory running out is STORE_ERROR): nothing is stored
 * then. */
int run_finish_import(struct store *store, struct alerts *alerts, cJSON *runs,
                      const char *origin, struct import_tally *tally);

#endif
