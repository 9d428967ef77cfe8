/*
 * store_baselines.h - pinned baselines (migrations/0006_baselines.sql,
 * store_baselines.c): a named set of runs a candidate is judged against.
 * See store.h for the store itself.
 */
#ifndef GPUBENCH_STORE_STORE_BASELINES_H
#define GPUBENCH_STORE_STORE_BASELINES_H

#include <cjson/cJSON.h>

#include "store.h"

/* insert: STORE_CONFLICT when the name is taken; created_at gets the time
 * stored.  get: one by name (STORE_NOT_FOUND), or with name NULL all of
 * them as an array, by name; each {"name", "created_at", "spec", "runs"},
 * NEW.  delete: STORE_NOT_FOUND when there is none. */
int store_baseline_insert(struct store *s, const char *name, const char *spec_json,
                          const char *runs_json, char created_at[32]);
int store_baseline_get(struct store *s, const char *name, cJSON **out);
int store_baseline_delete(struct store *s, const char *name);

#endif
