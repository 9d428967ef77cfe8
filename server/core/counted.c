/*
 * counted.c - see counted.h.
 */
#include "counted.h"

#include <stddef.h>

void counted_init(struct counted *c, int holders, void (*free_fn)(struct counted *c))
{
    atomic_init(&c->holders, holders);
    c->free_fn = free_fn;
}

void counted_hold(struct counted *c)
{
    atomic_fetch_add(&c->holders, 1);
}

void counted_release(void *hold)
{
    struct counted *c = hold;

    if (c != NULL && atomic_fetch_sub(&c->holders, 1) == 1)
        c->free_fn(c);
}
