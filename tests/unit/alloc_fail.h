/*
 * alloc_fail.h - fails the Nth allocation on purpose, after curl's torture
 * mode and SQLite's test_malloc: cJSON's allocations are routed through
 * alloc_fail_malloc (cJSON_InitHooks), which answers NULL to the Nth call
 * after alloc_fail_arm(n) and to none before or after.  A test runs a
 * producer once with nothing failing to count its allocations
 * (alloc_fail_count), then once for each N in turn, and checks that every
 * run either succeeds whole or fails cleanly (no crash, nothing partial
 * kept); AddressSanitizer's pass sees any leak on the error paths.
 */
#ifndef GPUBENCH_TESTS_ALLOC_FAIL_H
#define GPUBENCH_TESTS_ALLOC_FAIL_H

#include <cjson/cJSON.h>

/* Routes cJSON's allocations through the counter (on the first call);
 * from now on the nth allocation (1-based) fails; 0: none fails.  Resets
 * the count. */
void alloc_fail_arm(long n);

/* Allocations since the last alloc_fail_arm. */
long alloc_fail_count(void);

/* 1 when the armed allocation was reached (and so failed). */
int alloc_fail_hit(void);

/* Calls produce(ctx) (it returns a NEW tree, or NULL) once with nothing
 * failing, then once with each of its cJSON allocations failing in turn,
 * and checks that each of those calls answered NULL: never a tree with a
 * part missing, nor the whole one (every allocation of it is one the
 * answer needs).  0, or 1 after saying on stderr, as what, which
 * allocation gave what.  Leaves nothing armed. */
int alloc_fail_whole_or_null(const char *what, cJSON *(*produce)(void *ctx), void *ctx);

#endif
