/*
 * hash.h - the one string hash of the server's in-memory tables (the
 * finished-runs cache, /compare's series): FNV-1a, 32 bits.  Fast and
 * well spread for ids and keys; no defence against chosen collisions,
 * which both tables, being bounded, only make slower.
 */
#ifndef GPUBENCH_CORE_HASH_H
#define GPUBENCH_CORE_HASH_H

#include <stdint.h>

/* FNV-1a of the NUL-terminated s. */
uint32_t hash_fnv1a(const char *s);

#endif
