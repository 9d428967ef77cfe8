/*
 * store_changes.h - change points and drift
 * (migrations/0018_changes.sql; the method is judge/changepoint.h's): the
 * series are stepped as each run is stored (store_put_results, through
 * the judge's SQL function gb_change_step), and read here.  A change is
 * shown as {"id", "kind" ("step" or "drift"), "card": {"host",
 * "device_uuid", "device_name"}, "benchmark", "key" (the comparability
 * key), "row", "run_id", "found_by", "at", "found_at", then its detail:
 * a step's "level_before", "level_after", "shift", "ci_low", "ci_high",
 * "p_value", "n_before", "n_after"; a drift's "per_month", "ci_low",
 * "ci_high", "p_value", "n", "span_days", "window_days"}.  See store.h for
 * the store itself.
 */
#ifndef GPUBENCH_STORE_STORE_CHANGES_H
#define GPUBENCH_STORE_STORE_CHANGES_H

#include <cjson/cJSON.h>

#include "run_record.h"
#include "store.h"

/* Which changes to list, newest first (by at, then id): every field
 * optional (NULL or "": any).  since is RFC 3339 text compared with at. */
struct change_select {
    const char *uuid;  /* a card */
    const char *host;  /* a node */
    const char *model; /* device_name */
    const char *since;
    int limit;
};
/* The changes sel picks, as above: a NEW array. */
int store_changes_list(struct store *s, const struct change_select *sel, cJSON **out);

/* Each card's changes (steps and drifts) found at or after since, for
 * /metrics: a NEW array of {"host", "device_uuid", "kind", "count"}. */
int store_changes_counts(struct store *s, const char *since, cJSON **out);

/* The replay of stored runs into the series (migrations/0022, driven by
 * runs/change_replay.c): the next page of at most limit runs after the
 * replay's cursor (done, valid or unknown, keyed runs of a card, in id
 * order) as a NEW array of {"id", "benchmark", "device_uuid",
 * "verdict_key", "valid" (1, or -1 unknown), "results"}, empty when the
 * replay is done or was never due (no cursor row); *left, when not NULL,
 * gets the runs after the cursor, of any kind, for the log. */
int store_changes_replay_page(struct store *s, int limit, cJSON **runs, long *left);

/* The page's records (judged: their series points) stepped into their
 * series, what they find stored as changes without alerts (where not
 * stored already), and the cursor moved to last_id, in one transaction;
 * last_id NULL: the replay is done (its cursor row removed). */
int store_changes_replay_put(struct store *s, const struct run_record *rs, int n,
                             const char *last_id);

#endif
