/*
 * store_canary.h - what the canaries (runs/canaries.c) read of the runs
 * table: a card's queue as the rule sees it, and a canary's last run on a
 * card.  A canary run is a run labelled STORE_CANARY_LABEL
 * (store_queue.h); its last run is found among those, so "at most once a
 * period" holds across a restart with nothing stored but the runs.
 */
#ifndef GPUBENCH_STORE_STORE_CANARY_H
#define GPUBENCH_STORE_STORE_CANARY_H

#include <stdint.h>

#include "store.h"

/* The runs of one card (device_index, this node's) that hold or will hold
 * it: queued and running ones, and whether one of those is a canary. */
struct store_card_queue {
    long queued;
    long running;
    int canary; /* a canary run is queued or running there */
};
int store_canary_card(struct store *s, int device_index, struct store_card_queue *card);

/* A canary's last run on a card: the newest run labelled canary of the
 * card (device_uuid) whose benchmark is one of the canary's, and how its
 * batch went (a suite is one batch; a benchmark alone is a batch of one). */
struct store_canary_run {
    char id[40];
    char batch[40]; /* "" for a run alone */
    char created_at[32];
    int64_t created_ms;   /* created_at, unix ms */
    char finished_at[32]; /* the batch's last end; "" while any run is not ended */
    char outcome[16];     /* a run status: queued, running, done, failed, cancelled */
    int runs, failed, invalid;
};

/* benchmarks_json is a JSON array of benchmark names.  Only runs measured
 * here count (origin NULL): an imported or pulled run labelled canary is
 * never this card's canary.  STORE_OK with last
 * filled, STORE_NOT_FOUND when the card never ran one, or a failure. */
int store_canary_last(struct store *s, const char *device_uuid, const char *benchmarks_json,
                      struct store_canary_run *last);

#endif
