/*
 * metrics_cache.c - see metrics_cache.h.
 */
#include "metrics_cache.h"

#include "counted.h"
#include "log.h"
#include "store.h"
#include "timeutil.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define METRICS_TEXT_CAP (32 * 1024 * 1024)

/* One collector's kept text, under the cache's lock. */
struct kept {
    int building;               /* a build is under way (the thread's or a scrape's) */
    int built;                  /* a build has ended (ok or not) */
    int ok;                     /* the last build succeeded */
    unsigned long long changes; /* store_changes read before that build */
    int64_t built_ms;           /* time_mono_ms at its end */
    int64_t took_ms;            /* its duration */
    int64_t scraped_ms;         /* time_mono_ms of its last scrape, 0: none yet */
    int wanted;                 /* a scrape after a quiet spell waits for a build */
    struct dynbuf text;
    struct prom_set aged;
};

/* A whole answer, counted by its holders: the cache while it keeps it,
 * and each reply sending it. */
struct body {
    struct counted ref; /* first: a hold is the body */
    size_t len;
    char *data;
};

struct metrics_cache {
    const struct metrics_heavy *h;
    int n;
    void *ctx;
    struct store *store;
    pthread_mutex_t lock; /* guards kept[] and stopping */
    pthread_cond_t wake;  /* the thread: stop */
    pthread_cond_t ended; /* a build ended */
    pthread_t thread;
    int stopping;
    int64_t idle_ms; /* METRICS_IDLE_S: made again only this long after a scrape */
    struct kept *kept;
    struct body *body;               /* the kept whole answer, or NULL */
    unsigned long long body_changes; /* store_changes read before it was made */
    int64_t body_ms;                 /* time_mono_ms when it was kept */
};

/* Builds collector i and keeps what it made (the old text freed).  The
 * caller has set its building mark, under the lock, and does not hold
 * the lock. */
static void build(struct metrics_cache *c, int i)
{
    struct dynbuf text;
    struct prom_set aged = {0};
    unsigned long long changes = store_changes(c->store);
    int64_t t0 = time_mono_ms(), t1;
    int ok;
    struct kept *k = &c->kept[i];

    dynbuf_init(&text, METRICS_TEXT_CAP);
    ok = c->h[i].build(c->ctx, &text, &aged) == 0 && !dynbuf_failed(&text) && !aged.failed;
    t1 = time_mono_ms();
    pthread_mutex_lock(&c->lock);
    dynbuf_free(&k->text);
    prom_set_free(&k->aged);
    k->text = text;
    k->aged = aged;
    if (!ok) {
        dynbuf_free(&k->text);
        prom_set_free(&k->aged);
    }
    k->built = 1;
    k->ok = ok;
    k->changes = changes;
    k->built_ms = t1;
    k->took_ms = t1 - t0;
    k->building = 0;
    k->wanted = 0;
    pthread_cond_broadcast(&c->ended);
    pthread_mutex_unlock(&c->lock);
}

/* Under the lock: 1 when collector i was scraped within the idle window
 * before now_ms (never scraped: not read). */
static int read_lately(const struct metrics_cache *c, const struct kept *k, int64_t now_ms)
{
    return k->scraped_ms != 0 && now_ms - k->scraped_ms <= c->idle_ms;
}

/* Under the lock: 1 when collector i is due in the background. */
static int due(const struct metrics_cache *c, int i, int64_t now_ms)
{
    const struct kept *k = &c->kept[i];
    int64_t wait_ms = 4 * k->took_ms;
    int64_t since = now_ms - k->built_ms;

    if (k->building)
        return 0;
    if (!k->built || k->wanted)
        return 1; /* the first, read or not: a first scrape finds it ready */
    if (!read_lately(c, k, now_ms))
        return 0;
    if (c->h[i].timed && since >= (int64_t)METRICS_MAX_AGE_S * 1000)
        return 1;
    if (wait_ms < (int64_t)METRICS_REFRESH_MIN_S * 1000)
        wait_ms = (int64_t)METRICS_REFRESH_MIN_S * 1000;
    return k->changes != store_changes(c->store) && since >= wait_ms;
}

static void *builder(void *arg)
{
    struct metrics_cache *c = arg;

    pthread_mutex_lock(&c->lock);
    while (!c->stopping) {
        struct timespec until;

        for (int i = 0; i < c->n && !c->stopping; i++) {
            if (!due(c, i, time_mono_ms()))
                continue;
            c->kept[i].building = 1;
            pthread_mutex_unlock(&c->lock);
            build(c, i);
#ifdef __GLIBC__
            /* a big hub's build makes and frees trees of hundreds of MB:
             * handed back to the system rather than kept in the arena */
            malloc_trim(0);
#endif
            pthread_mutex_lock(&c->lock);
        }
        until = time_after_ms(CLOCK_REALTIME, 1000);
        if (!c->stopping)
            pthread_cond_timedwait(&c->wake, &c->lock, &until);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

struct metrics_cache *metrics_cache_start(const struct metrics_heavy *h, int n, void *ctx,
                                          struct store *store)
{
    struct metrics_cache *c = calloc(1, sizeof(*c));

    if (c == NULL || (c->kept = calloc((size_t)n, sizeof(*c->kept))) == NULL) {
        free(c);
        return NULL;
    }
    c->h = h;
    c->n = n;
    c->ctx = ctx;
    c->store = store;
    c->idle_ms = (int64_t)METRICS_IDLE_S * 1000;
    for (int i = 0; i < n; i++)
        dynbuf_init(&c->kept[i].text, METRICS_TEXT_CAP);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->wake, NULL);
    pthread_cond_init(&c->ended, NULL);
    if (pthread_create(&c->thread, NULL, builder, c) != 0) {
        log_error("the /metrics builder thread could not start");
        pthread_cond_destroy(&c->ended);
        pthread_cond_destroy(&c->wake);
        pthread_mutex_destroy(&c->lock);
        free(c->kept);
        free(c);
        return NULL;
    }
    return c;
}

void metrics_cache_set_idle_ms(struct metrics_cache *c, int64_t idle_ms)
{
    pthread_mutex_lock(&c->lock);
    c->idle_ms = idle_ms;
    pthread_mutex_unlock(&c->lock);
}

/* Under the lock: after a quiet spell (the thread stopped making
 * collector i), a text made before it is not served: the thread is asked
 * for a build, which is waited for up to METRICS_FIRST_WAIT_MS.  0 when
 * the kept text may be served (a build ended, or it was not stale), -1
 * when the wait ran out. */
static int fresh_after_quiet(struct metrics_cache *c, struct kept *k, int was_read)
{
    int64_t before = k->built_ms;
    struct timespec until;

    if (was_read || !k->built || k->changes == store_changes(c->store))
        return 0;
    k->wanted = 1;
    pthread_cond_signal(&c->wake);
    until = time_after_ms(CLOCK_REALTIME, METRICS_FIRST_WAIT_MS);
    while (k->built_ms == before || k->building)
        if (pthread_cond_timedwait(&c->ended, &c->lock, &until) != 0)
            return k->built_ms == before ? -1 : 0;
    return 0;
}

void metrics_cache_stop(struct metrics_cache *c)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&c->lock);
    c->stopping = 1;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->thread, NULL);
    counted_release(c->body);
    for (int i = 0; i < c->n; i++) {
        dynbuf_free(&c->kept[i].text);
        prom_set_free(&c->kept[i].aged);
    }
    pthread_cond_destroy(&c->ended);
    pthread_cond_destroy(&c->wake);
    pthread_mutex_destroy(&c->lock);
    free(c->kept);
    free(c);
}

int metrics_cache_write(struct metrics_cache *c, int i, struct dynbuf *b)
{
    const struct metrics_heavy *h;
    struct kept *k;
    int inline_build, was_read, rc = -1;
    double now_s;
    int64_t now_ms;
    struct timespec until;

    if (c == NULL)
        return -1; /* not started: reported as a failed collector */
    h = &c->h[i];
    k = &c->kept[i];
    pthread_mutex_lock(&c->lock);
    now_ms = time_mono_ms();
    was_read = read_lately(c, k, now_ms);
    k->scraped_ms = now_ms; /* the thread keeps it fresh from now on */
    /* a build under way is waited for where there is nothing yet (the
     * thread's first) or builds are quick (it may have begun before the
     * latest write: the check below makes one more then) rather than a
     * second one made beside it */
    until = time_after_ms(CLOCK_REALTIME, METRICS_FIRST_WAIT_MS);
    while (k->building && (!k->built || k->took_ms < METRICS_INLINE_MS)) {
        if (pthread_cond_timedwait(&c->ended, &c->lock, &until) == 0)
            continue;
        if (!k->built) {
            /* the first build is long (a big hub just started): this
             * scrape reports the collector as failed rather than pass
             * Prometheus's scrape timeout */
            pthread_mutex_unlock(&c->lock);
            return -1;
        }
        break; /* what was made before is served */
    }
    inline_build = !k->building &&
                   (!k->built ||
                    (k->changes != store_changes(c->store) && k->took_ms < METRICS_INLINE_MS));
    if (inline_build)
        k->building = 1;
    else if (fresh_after_quiet(c, k, was_read) != 0) {
        pthread_mutex_unlock(&c->lock);
        return -1; /* reported as failed rather than older than the quiet spell */
    }
    pthread_mutex_unlock(&c->lock);
    if (inline_build)
        build(c, i);
    now_s = (double)time_now_unix_ms() / 1000.0;
    pthread_mutex_lock(&c->lock);
    if (k->ok) {
        if (h->aged_metric && k->aged.n > 0) {
            prom_help(b, h->aged_metric, "gauge", h->aged_help);
            for (size_t j = 0; j < k->aged.n; j++) {
                (void)!dynbuf_add(b, k->aged.e[j].line, strlen(k->aged.e[j].line));
                double age = now_s - k->aged.e[j].v;
                prom_sample(b, age > 0 ? (double)(int64_t)age : 0);
            }
        }
        (void)!dynbuf_add(b, k->text.data ? k->text.data : "", k->text.len);
        rc = 0;
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int metrics_cache_body(struct metrics_cache *c, const char **text, size_t *len, void **hold)
{
    int found = 0;

    if (c == NULL)
        return 0;
    pthread_mutex_lock(&c->lock);
    if (c->body != NULL && time_mono_ms() - c->body_ms < METRICS_BODY_KEEP_MS &&
        c->body_changes == store_changes(c->store)) {
        counted_hold(&c->body->ref);
        *text = c->body->data;
        *len = c->body->len;
        *hold = c->body;
        found = 1;
    }
    pthread_mutex_unlock(&c->lock);
    return found;
}

unsigned long long metrics_cache_changes(const struct metrics_cache *c)
{
    return c ? store_changes(c->store) : 0;
}

static void body_free(struct counted *ref)
{
    struct body *b = (struct body *)ref; /* its first member */

    free(b->data);
    free(b);
}

int metrics_cache_keep_body(struct metrics_cache *c, char *body, size_t len,
                            unsigned long long changes, void **hold)
{
    struct body *b, *old;

    if (c == NULL || len < METRICS_BODY_KEEP_MIN_BYTES || (b = malloc(sizeof(*b))) == NULL)
        return -1;
    counted_init(&b->ref, 2, body_free); /* the cache's and the reply's */
    b->len = len;
    b->data = body;
    pthread_mutex_lock(&c->lock);
    old = c->body;
    c->body = b;
    c->body_changes = changes;
    c->body_ms = time_mono_ms();
    pthread_mutex_unlock(&c->lock);
    counted_release(old);
    *hold = b;
    return 0;
}
