/*
 * hash.h - the one string hash of the in-memory tables (the result fields
 * by name, the finished-runs cache, /compare's series): FNV-1a, 32 bits;
 * and a body's tag for its ETag, 64 bits.  Fast and well spread for ids,
 * names and keys; no defence against chosen collisions, which the tables,
 * being bounded, only make slower.
 */
#ifndef GPUBENCH_COMMON_HASH_H
#define GPUBENCH_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a of the NUL-terminated s. */
uint32_t hash_fnv1a(const char *s);

/* FNV-1a of s with ASCII letters folded to lower case: names that
 * strcasecmp finds equal hash alike (an object's member names checked
 * for one named twice). */
uint32_t hash_fnv1a_casefold(const char *s);

/* FNV-1a, 64 bits, of len bytes at data: the tag of an answer's body (an
 * ETag), where 32 bits would make a stale copy look current too often. */
uint64_t hash_fnv1a64(const void *data, size_t len);

#endif
