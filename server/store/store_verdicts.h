/*
 * store_verdicts.h - what a verdict reads (store_verdicts.c,
 * store_baselines.c): the runs a selector picks, a run as a verdict reads
 * it, a card's history and the fleet (migrations/0007_run_verdicts.sql).
 * See store.h for the store itself.
 */
#ifndef GPUBENCH_STORE_STORE_VERDICTS_H
#define GPUBENCH_STORE_STORE_VERDICTS_H

#include <cjson/cJSON.h>

#include "store.h"

/* The runs a verdict's selector picks (GET /compare?baseline=card:...):
 * done runs matching every field given (NULL or "" is any), created_at
 * within [since, until] (RFC 3339 UTC text, compared as text), newest
 * first, at most limit.  *ids is a NEW array of run id strings. */
struct run_select {
    const char *benchmark;
    const char *card; /* device UUID */
    const char *host;
    const char *label;
    const char *driver; /* meta.driver.nvidia_version */
    const char *since;
    const char *until;
    int limit;
};
int store_select_runs(struct store *s, const struct run_select *sel, cJSON **ids);

/* The done runs of run_id's card (host, device UUID) and key (benchmark,
 * card model, params: what decides a verdict), run_id's own included,
 * made within since..until (either NULL or ""), newest first, at most
 * limit; a NEW array of ids.  STORE_NOT_FOUND when run_id is not a done
 * run here. */
int store_select_like(struct store *s, const char *run_id, const char *since,
                      const char *until, int limit, cJSON **ids);

/* A run as a verdict reads it (verdicts.h): its id, benchmark, params,
 * device name, status, created_at, confirms, validity.valid and
 * results.rows (null without results) with every sample; not its meta nor
 * its results' summary.  NEW; STORE_NOT_FOUND when there is no such run. */
int store_get_verdict_run(struct store *s, const char *id, cJSON **out);

/* The runs of a verdict's group picked by filters (GET /compare's card:,
 * host:, label:, driver: selectors; sel as for store_select_runs): among
 * the done runs that match, the group's key is the verdict key (benchmark,
 * card model, params) of the newest one (the newest valid one unless
 * include_invalid; of the newest run's benchmark when sel->benchmark is
 * not given), and the group the newest sel->limit runs of that key, valid
 * or not, read as store_get_verdict_run reads them, newest first.  Runs of
 * other keys are not read: *other_key gets how many of them (matching,
 * done, of the benchmark) were made since the oldest run taken.  *runs is
 * a NEW array (empty when nothing matches). */
int store_select_verdict_runs(struct store *s, const struct run_select *sel,
                              int include_invalid, cJSON **runs, int *other_key);

/* What a run is judged against at its end (store_verdicts.c), by run id:
 * history: the card's (host, device UUID) newest valid done runs of the
 * run's key (benchmark, card model, params), at most limit, newest first,
 * as store_get_verdict_run reads them.  peers: each other card's newest
 * valid done run of the key, as {"host", "device_uuid", "run_id", "rows"}
 * (rows: the digest).  cards:
 * every card's newest valid done run of each key of benchmark (NULL: of
 * every benchmark), as {"group" (the key), "benchmark", "card_model",
 * "params", "host", "device_uuid", "run_id", "rows", "method", "build",
 * "own" (true: measured here; false: pulled or imported)}, grouped by key.
 * All NEW arrays. */
int store_history_runs(struct store *s, const char *id, int limit, cJSON **runs);
int store_fleet_peers(struct store *s, const char *id, cJSON **peers);
int store_fleet_cards(struct store *s, const char *benchmark, cJSON **cards);

#endif
