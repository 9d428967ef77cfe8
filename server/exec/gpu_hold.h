/*
 * gpu_hold.h - which runner may start its next run, for runs that need
 * every GPU of the node (a benchmark whose spec has all_devices, such as
 * p2p_bandwidth: its worker opens every other GPU itself).
 *
 * Each runner claims its next run through gpu_hold_claim instead of
 * claiming from the store directly.  An ordinary run starts as before,
 * unless another runner holds the node.  When a runner's next queued run
 * needs every GPU, that runner takes the hold at once (so that the others
 * start nothing new and the run cannot be starved), then waits until every
 * other runner has finished what it was running; the run then starts and
 * the hold is kept until it ends.  The other GPUs' queued runs wait
 * meanwhile.  On a one-GPU node there is nothing to hold.
 *
 * Locking: one mutex guards the hold and every runner's busy flag; the
 * store is called with it held (the store never calls back), so a peek at
 * the next run and its claim are one step for the other runners.  Every
 * claim, on a one-GPU node too, is made under it, so that once
 * gpu_hold_close has returned no claim is under way and none succeeds.
 */
#ifndef GPUBENCH_EXEC_GPU_HOLD_H
#define GPUBENCH_EXEC_GPU_HOLD_H

#include "store_queue.h"

struct gpu_hold;

/* A hold for count runners (slots 0..count-1).  NULL when out of memory.
 * Free with gpu_hold_free once no runner uses it. */
struct gpu_hold *gpu_hold_new(int count);
void gpu_hold_free(struct gpu_hold *h);

/* Claims the next run of device_index (runner slot) into job when it may
 * start now.  STORE_OK: claimed, the slot is busy until gpu_hold_release;
 * STORE_NOT_FOUND: nothing may start now (none queued, another runner
 * holds the node, or this one waits for the others to finish); or the
 * store's error.  *waiting is set to 1 when this slot holds the node but
 * waits for others (the caller sleeps until woken). */
int gpu_hold_claim(struct gpu_hold *h, int slot, int device_index, struct store *s,
                   struct run_job *job, int *waiting);

/* Shutdown: from its return on, gpu_hold_claim claims nothing
 * (STORE_NOT_FOUND), and no claim is under way. */
void gpu_hold_close(struct gpu_hold *h);

/* The slot's run has ended.  Returns 1 when the other runners should be
 * woken (the hold was released, or another slot waits for this one). */
int gpu_hold_release(struct gpu_hold *h, int slot);

/* The slot holding the node (running or waiting to run an all-devices
 * run), or -1. */
int gpu_hold_holder(struct gpu_hold *h);

#endif
