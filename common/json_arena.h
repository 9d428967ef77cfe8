/*
 * json_arena.h - a bump arena for cJSON's allocations on one thread, for a
 * tree that is parsed, read and dropped in one go (a pulled run's line:
 * peers_batch.c).  cJSON makes three allocations a node (the node, its
 * name, its string) and one more for each number it reads, and frees them
 * one by one: a pulled run of ~700 nodes spent about a fifth of the hub's
 * instructions in malloc and free (bench/RESULTS.md).
 *
 * cJSON's hooks are global (cJSON_InitHooks), so json_arena_install, called
 * once by main() before any thread starts, routes every cJSON allocation
 * through this file: where the calling thread has an arena begun and not
 * stopped, the bytes come from it (bumped, 16-aligned); anywhere else from
 * malloc, as before.  A free of a pointer inside the thread's bound arena
 * is a no-op; any other goes to free.  json_arena_end rewinds the arena
 * for the next tree.  A program that never calls json_arena_install (the
 * client, the worker, the unit tests with their own hooks: alloc_fail.h)
 * keeps cJSON's defaults, and begin/stop/end do nothing then but bind.
 *
 * The rules for a caller (the arena cannot check them):
 * - only allocations between begin and stop come from the arena: keep
 *   that to the parse; anything printed (cJSON_Print*) while allocating
 *   from it would be arena bytes handed to a caller who frees them with
 *   free();
 * - every tree parsed in it is deleted (or forgotten) before
 *   json_arena_end, on the same thread: after it, its pointers are stale;
 * - no arena pointer leaves the thread, and no string of a tree is taken
 *   over by a caller to be free()d (copy it instead).
 * An allocation that does not fit is a new chunk from malloc (a failure is
 * NULL, as malloc's: cJSON then fails the parse as before).
 *
 * Under AddressSanitizer a rewound arena is poisoned and each allocation
 * unpoisoned with a poisoned gap after it, so a tree read after
 * json_arena_end or past an allocation's end is still reported; a tree
 * never deleted is not (the arena frees it all at once).
 */
#ifndef GPUBENCH_COMMON_JSON_ARENA_H
#define GPUBENCH_COMMON_JSON_ARENA_H

#include <stddef.h>

struct json_arena_chunk;

/* Owned by its user (one thread at a time); zero it to start.  A tree
 * that fitted in one chunk leaves it for the next; one that took more
 * frees them all at its end, and the next first chunk is made as large as
 * the largest tree so far.  json_arena_free gives the chunks back. */
struct json_arena {
    struct json_arena_chunk *chunks; /* newest first */
    size_t used;                     /* bytes given from the newest chunk */
    size_t taken;                    /* bytes given since the last rewind */
    size_t want;                     /* the next first chunk's size: the most one tree took */
};

/* Routes cJSON's allocations through the arenas (cJSON_InitHooks).  Once,
 * before any other thread exists; a later cJSON_InitHooks (a test's)
 * replaces it. */
void json_arena_install(void);

/* From now on this thread's cJSON allocations come from a (when
 * installed), and frees of a's pointers are no-ops.  Nests with nothing:
 * one arena a thread at a time. */
void json_arena_begin(struct json_arena *a);

/* Allocations go to malloc again; frees of the arena's pointers are still
 * no-ops until json_arena_end. */
void json_arena_stop(void);

/* Unbinds the thread's arena and rewinds it: every pointer it gave is
 * stale from now on. */
void json_arena_end(void);

/* The bytes an arena holds (its chunks), for a test. */
size_t json_arena_bytes(const struct json_arena *a);

/* Frees every chunk; the arena must not be bound. */
void json_arena_free(struct json_arena *a);

#endif
