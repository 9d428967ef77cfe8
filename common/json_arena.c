/*
 * json_arena.c - see json_arena.h.  The hooks read two thread-locals: the
 * thread's bound arena and whether it is allocating from it.
 */
#include "json_arena.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define ARENA_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define ARENA_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#define ARENA_GAP 16 /* poisoned bytes after each allocation */
#else
#define ARENA_POISON(p, n) ((void)(p), (void)(n))
#define ARENA_UNPOISON(p, n) ((void)(p), (void)(n))
#define ARENA_GAP 0
#endif

#define ARENA_ALIGN 16
#define ARENA_CHUNK (256 * 1024) /* a pulled run of ~16 kB takes about 100 kB */

struct json_arena_chunk {
    struct json_arena_chunk *next;
    size_t size; /* bytes of data */
    _Alignas(ARENA_ALIGN) unsigned char data[];
};

/* initial-exec: read without a call, as the hooks run on every cJSON
 * allocation (the library is linked into programs, never loaded later) */
#define ARENA_TLS _Thread_local __attribute__((tls_model("initial-exec")))
static ARENA_TLS struct json_arena *bound;
static ARENA_TLS int allocating;

/* A new newest chunk of at least n bytes, or NULL when malloc failed. */
static struct json_arena_chunk *add_chunk(struct json_arena *a, size_t n)
{
    size_t size = n > a->want ? n : a->want;
    struct json_arena_chunk *c;

    if (size < ARENA_CHUNK)
        size = ARENA_CHUNK;
    if ((c = malloc(sizeof(*c) + size)) == NULL)
        return NULL;
    c->size = size;
    c->next = a->chunks;
    a->chunks = c;
    a->used = 0;
    ARENA_POISON(c->data, size);
    return c;
}

static void *arena_take(struct json_arena *a, size_t n)
{
    size_t need = (n + ARENA_GAP + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    struct json_arena_chunk *c = a->chunks;
    void *p;

    if (need < n)
        return NULL; /* wrapped: no such allocation */
    if ((c == NULL || c->size - a->used < need) && (c = add_chunk(a, need)) == NULL)
        return NULL;
    p = c->data + a->used;
    a->used += need;
    a->taken += need;
    ARENA_UNPOISON(p, n);
    return p;
}

static int owns(const struct json_arena *a, const void *p)
{
    for (const struct json_arena_chunk *c = a->chunks; c; c = c->next)
        if ((uintptr_t)p >= (uintptr_t)c->data && (uintptr_t)p < (uintptr_t)(c->data + c->size))
            return 1;
    return 0;
}

static void *arena_malloc(size_t n)
{
    return bound && allocating ? arena_take(bound, n) : malloc(n);
}

static void arena_free(void *p)
{
    if (p != NULL && bound != NULL && owns(bound, p))
        return; /* given back all at once, at json_arena_end */
    free(p);
}

void json_arena_install(void)
{
    cJSON_Hooks hooks = {.malloc_fn = arena_malloc, .free_fn = arena_free};

    cJSON_InitHooks(&hooks);
}

void json_arena_begin(struct json_arena *a)
{
    bound = a;
    allocating = 1;
}

void json_arena_stop(void)
{
    allocating = 0;
}

/* Frees every chunk but, where there is one alone, keeps it. */
static void rewind_chunks(struct json_arena *a)
{
    struct json_arena_chunk *c = a->chunks;

    if (a->taken > a->want)
        a->want = a->taken; /* one chunk the next time */
    if (c != NULL && c->next == NULL) {
        ARENA_POISON(c->data, c->size);
    } else {
        while ((c = a->chunks) != NULL) {
            a->chunks = c->next;
            free(c);
        }
    }
    a->used = 0;
    a->taken = 0;
}

void json_arena_end(void)
{
    struct json_arena *a = bound;

    bound = NULL;
    allocating = 0;
    if (a != NULL)
        rewind_chunks(a);
}

size_t json_arena_bytes(const struct json_arena *a)
{
    size_t n = 0;

    for (const struct json_arena_chunk *c = a->chunks; c; c = c->next)
        n += c->size;
    return n;
}

void json_arena_free(struct json_arena *a)
{
    struct json_arena_chunk *c;

    while ((c = a->chunks) != NULL) {
        a->chunks = c->next;
        ARENA_UNPOISON(c->data, c->size);
        free(c);
    }
    a->used = 0;
    a->taken = 0;
}
