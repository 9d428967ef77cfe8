/*
 * store_coverage.h - what GET /coverage reads (store_coverage.c): for each
 * card in the store (own runs, imported or pulled) and each benchmark run
 * on it, the newest valid done run.  The judging (fresh, stale, never,
 * failing) is server/judge/coverage.c's.
 */
#ifndef GPUBENCH_STORE_STORE_COVERAGE_H
#define GPUBENCH_STORE_STORE_COVERAGE_H

#include <cjson/cJSON.h>

#include "store.h"

/* One object per card (host, device UUID) and benchmark with a stored
 * result, of the cards on host (NULL: every host): {"host", "uuid",
 * "index" (number or null), "name", "benchmark", "run_id" (the newest
 * valid done run, null when none is valid), "at_ms" (its finished_at in
 * Unix ms, null without one), "checks" (its checks against the floors,
 * null where none were judged), "checks_failed" (how many missed, null
 * where not judged)}, ordered by host, index, uuid.  Read from
 * the per-card tables store_put_results keeps (latest_by_card,
 * fleet_latest), so the cost follows the cards, not the runs.  *out is a
 * NEW array. */
int store_coverage_cells(struct store *s, const char *host, cJSON **out);

#endif
