/*
 * dynbuf.h - a growable byte buffer that refuses to grow past a cap (after
 * curl's dynbuf): request bodies and worker lines are read into these, so
 * no peer can make the daemon allocate without bound.
 *
 * The buffer owns its bytes; dynbuf_take() hands them to the caller.  The
 * contents are always NUL-terminated (the NUL is not counted in len).
 *
 * A refused append also sets `failed`, kept until the buffer is emptied
 * (reset, take, free): a writer that makes a whole text (an export, the
 * metrics) can append piece by piece and ask dynbuf_failed() once whether
 * anything was left out, instead of sending a text with holes in it.
 *
 * An append's result must be used (warn_unused_result, as curl's dynbuf):
 * a writer either checks it, or drops it with `(void)!` because it asks
 * dynbuf_failed() before the text is used (GCC warns through a plain
 * (void) cast; the `!` makes it a use).  A `(void)!` with no such check
 * after it is a bug.
 */
#ifndef GPUBENCH_COMMON_DYNBUF_H
#define GPUBENCH_COMMON_DYNBUF_H

#include <stddef.h>

struct dynbuf {
    char *data;
    size_t len;
    size_t alloc;
    size_t cap; /* the most bytes it will ever hold */
    int failed; /* an append was refused since the buffer was emptied */
};

void dynbuf_init(struct dynbuf *b, size_t cap);
void dynbuf_free(struct dynbuf *b);
void dynbuf_reset(struct dynbuf *b);

/* Appends n bytes.  Returns 0, or -1 (contents unchanged) if that would
 * pass the cap or memory ran out. */
int dynbuf_add(struct dynbuf *b, const void *p, size_t n)
#ifdef __GNUC__
    __attribute__((warn_unused_result))
#endif
    ;

/* printf-style append under the same rules. */
int dynbuf_printf(struct dynbuf *b, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3), warn_unused_result))
#endif
    ;

/* 1 when an append was refused (cap or memory) since the buffer was last
 * emptied: what it holds is not the whole text its writer meant. */
int dynbuf_failed(const struct dynbuf *b);

/* Cuts the contents back to their first len bytes (len <= b->len); the
 * failed mark is kept. */
void dynbuf_truncate(struct dynbuf *b, size_t len);

/* Drops the first n bytes, keeping the rest. */
void dynbuf_consume(struct dynbuf *b, size_t n);

/* Hands the bytes (NUL-terminated, never NULL) to the caller, who frees
 * them; the buffer is left empty.  *len gets the length if len is not NULL.
 * Returns NULL only if memory ran out. */
char *dynbuf_take(struct dynbuf *b, size_t *len);

#endif
