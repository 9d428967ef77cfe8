/*
 * uuid7.h - run ids: UUIDv7 (RFC 9562), 48 bits of Unix milliseconds then
 * random bits, so ids sort by creation time and never collide across a
 * fleet.  Within one process, ids made in the same millisecond still sort
 * in the order they were made (a 12-bit counter in rand_a, RFC 9562 6.2
 * method 1), which the per-GPU queue relies on.
 */
#ifndef GPUBENCH_CORE_UUID7_H
#define GPUBENCH_CORE_UUID7_H

#include <stddef.h>
#include <stdint.h>

#define UUID7_STRLEN 36

/* Writes a new id, lower-case, 36 characters and a NUL, into out.
 * Returns 0, or -1 if no random bytes could be had. Thread-safe. */
int uuid7_new(char out[UUID7_STRLEN + 1]);

/* The same from a given time and random bytes (for tests). */
void uuid7_format(uint64_t unix_ms, uint16_t counter, const uint8_t rnd[8],
                  char out[UUID7_STRLEN + 1]);

/* 1 if s is a well-formed UUID string (any version), else 0. */
int uuid_is_valid(const char *s);

#endif
