/*
 * fuzz_common.h - what the harnesses share: CHECK, which aborts (so that
 * libFuzzer keeps the input as a crash) when a property that the code
 * under test promises does not hold, and a check that a struct gb_error
 * was filled as bench_spec.h says (code, field and message all
 * NUL-terminated, code not empty).
 */
#ifndef GPUBENCH_FUZZ_COMMON_H
#define GPUBENCH_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_spec.h"

#define CHECK(cond)                                                   \
    do {                                                              \
        if (!(cond)) {                                                \
            fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, \
                    __LINE__, #cond);                                 \
            abort();                                                  \
        }                                                             \
    } while (0)

/* Poisons err so that a field the code forgets to set is noticed. */
static inline void fuzz_error_poison(struct gb_error *err)
{
    memset(err, 'Z', sizeof(*err));
}

static inline void fuzz_error_check(const struct gb_error *err)
{
    CHECK(memchr(err->code, '\0', sizeof(err->code)) != NULL);
    CHECK(memchr(err->field, '\0', sizeof(err->field)) != NULL);
    CHECK(memchr(err->message, '\0', sizeof(err->message)) != NULL);
    CHECK(err->code[0] != '\0');
    CHECK(err->message[0] != '\0');
}

#endif
