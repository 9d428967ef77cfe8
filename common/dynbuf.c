/*
 * dynbuf.c - see dynbuf.h.
 */
#include "dynbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dynbuf_init(struct dynbuf *b, size_t cap)
{
    b->data = NULL;
    b->len = 0;
    b->alloc = 0;
    b->cap = cap;
    b->failed = 0;
}

void dynbuf_free(struct dynbuf *b)
{
    free(b->data);
    dynbuf_init(b, b->cap);
}

void dynbuf_reset(struct dynbuf *b)
{
    b->len = 0;
    b->failed = 0;
    if (b->data)
        b->data[0] = '\0';
}

static int ensure(struct dynbuf *b, size_t need)
{
    size_t want;
    char *p;

    if (need > b->cap)
        return -1;
    if (need + 1 <= b->alloc)
        return 0;
    want = b->alloc ? b->alloc : 256;
    while (want < need + 1)
        want *= 2;
    if (want > b->cap + 1)
        want = b->cap + 1;
    p = realloc(b->data, want);
    if (p == NULL)
        return -1;
    b->data = p;
    b->alloc = want;
    return 0;
}

int dynbuf_add(struct dynbuf *b, const void *p, size_t n)
{
    if (n > b->cap - b->len || ensure(b, b->len + n) != 0) {
        b->failed = 1;
        return -1;
    }
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int dynbuf_printf(struct dynbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n > b->cap - b->len || ensure(b, b->len + (size_t)n) != 0) {
        b->failed = 1;
        return -1;
    }
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

int dynbuf_failed(const struct dynbuf *b)
{
    return b->failed;
}

void dynbuf_truncate(struct dynbuf *b, size_t len)
{
    if (len >= b->len)
        return;
    b->len = len;
    b->data[len] = '\0';
}

void dynbuf_consume(struct dynbuf *b, size_t n)
{
    if (n >= b->len) {
        dynbuf_reset(b);
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
    b->data[b->len] = '\0';
}

char *dynbuf_take(struct dynbuf *b, size_t *len)
{
    char *p = b->data;

    if (p == NULL) {
        p = calloc(1, 1);
        if (p == NULL)
            return NULL;
    }
    if (len)
        *len = b->len;
    dynbuf_init(b, b->cap);
    return p;
}
