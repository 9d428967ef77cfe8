/*
 * alloc_fail.c - see alloc_fail.h.  The counter is one thread's: the tests
 * that use it drive their producer on the thread that armed it.
 */
#include "alloc_fail.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* produce's answer as text, printed with nothing failing; NULL for NULL. */
static char *answer_text(cJSON *(*produce)(void *ctx), void *ctx, long fail)
{
    cJSON *out;
    char *text;

    alloc_fail_arm(fail);
    out = produce(ctx);
    alloc_fail_arm(0);
    text = out ? cJSON_PrintUnformatted(out) : NULL;
    cJSON_Delete(out);
    return text;
}

int alloc_fail_whole_or_null(const char *what, cJSON *(*produce)(void *ctx), void *ctx)
{
    char *whole, *text = NULL;
    long total;
    int rc = 1;

    alloc_fail_arm(0);
    cJSON_Delete(produce(ctx));
    total = alloc_fail_count();
    if ((whole = answer_text(produce, ctx, 0)) == NULL || total == 0) {
        fprintf(stderr, "%s: no answer with nothing failing (%ld allocations)\n", what, total);
        goto done;
    }
    for (long n = 1; n <= total; n++) {
        text = answer_text(produce, ctx, n);
        if (text != NULL) {
            fprintf(stderr, "%s: allocation %ld of %ld failed, yet it answered %s %s\n", what, n,
                    total, strcmp(text, whole) == 0 ? "(whole)" : "(partial)", text);
            goto done;
        }
    }
    rc = 0;

done:
    free(text);
    free(whole);
    alloc_fail_arm(0);
    return rc;
}
