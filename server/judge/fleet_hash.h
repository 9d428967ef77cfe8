/*
 * fleet_hash.h - the cards of a fleet group whose known_answer result_hash
 * differs from their model's majority (issue 32): every good card of a
 * model computes the same exact answers, so a card whose hash of a kind is
 * not the one most cards share computes differently, even where its own
 * mismatch count (against the host's answer) says nothing.  Pure, for
 * GET /fleet (fleet.c's groups).
 */
#ifndef GPUBENCH_JUDGE_FLEET_HASH_H
#define GPUBENCH_JUDGE_FLEET_HASH_H

#include "json_build.h"

#include <cjson/cJSON.h>

/* For n cards (rows[i]: each card's rows, or their digest, rows with a
 * "result_hash"), adds to group g "result_hashes": [{"key", "majority"
 * (the hash more than half the cards with the key share, or null),
 * "cards" (how many have the key), "differ" (how many do not share the
 * majority)}] when any row has a hash, and sets differs[i] to a NEW array
 * of the keys whose hash card i does not share with the majority (NULL
 * where the group has no hash).  What it makes fails jb as json_build
 * does. */
void fleet_hash_judge(struct json_build *jb, cJSON *g, const cJSON *const *rows, int n,
                      cJSON **differs);

#endif
