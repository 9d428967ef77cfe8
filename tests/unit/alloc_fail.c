/*
 * alloc_fail.c - see alloc_fail.h.  The counter is one thread's: the tests
 * that use it drive their producer on the thread that armed it.
 */
#include "alloc_fail.h"

#include <stdlib.h>

#include <cjson/cJSON.h>

static long calls, fail_at;
static int hit, installed;

static void *alloc_fail_malloc(size_t n)
{
    calls++;
    if (fail_at > 0 && calls == fail_at) {
        hit = 1;
        return NULL;
    }
    return malloc(n);
}

void alloc_fail_arm(long n)
{
    if (!installed) {
        cJSON_Hooks hooks = {.malloc_fn = alloc_fail_malloc, .free_fn = free};

        cJSON_InitHooks(&hooks);
        installed = 1;
    }
    calls = 0;
    hit = 0;
    fail_at = n;
}

long alloc_fail_count(void)
{
    return calls;
}

int alloc_fail_hit(void)
{
    return hit;
}
