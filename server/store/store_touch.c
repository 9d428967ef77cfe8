/*
 * store_touch.c - see store_touch.h.  The writer's query collects what it
 * says it touches in the store's pending list (under the writer's lock,
 * which the query holds from its begin to its end); its end, when rows
 * changed, counts the write and moves the list into the log.
 */
#include "store_touch.h"
#include "store_internal.h"

#include <string.h>

void store_query_touch(struct store_query *q, int kind, const char *name)
{
    struct store *s = q->c->owner;

    if (q->c != &s->writer)
        return;
    if (kind == STORE_TOUCH_HOST || kind == STORE_TOUCH_CARD) {
        if (name == NULL || strlen(name) >= STORE_TOUCH_NAME) {
            s->pending_all = 1;
            return;
        }
    } else {
        name = "";
    }
    for (int i = s->npending - 1; i >= 0; i--)
        if (s->pending[i].kind == kind && strcmp(s->pending[i].name, name) == 0)
            return;
    if (s->npending == STORE_TOUCH_PENDING) {
        s->pending_all = 1;
        return;
    }
    s->pending[s->npending].kind = kind;
    strcpy(s->pending[s->npending].name, name);
    s->npending++;
}

void store_query_no_run_rows(struct store_query *q)
{
    struct store *s = q->c->owner;

    if (q->c == &s->writer)
        s->pending_no_runs = 1;
}

int store_touch_run(struct store_query *q, const char *id)
{
    int step;

    if (store_query_prepare(q, "SELECT host, device_uuid FROM runs WHERE id = ?1") != STORE_OK)
        return STORE_ERROR;
    store_bind_text(q, 1, id);
    if ((step = store_query_step(q)) == STORE_STEP_ROW) {
        store_query_touch(q, STORE_TOUCH_HOST, store_col_text(q->st, 0));
        if (store_col_text(q->st, 1))
            store_query_touch(q, STORE_TOUCH_CARD, store_col_text(q->st, 1));
    }
    return step == STORE_STEP_ROW || step == STORE_STEP_DONE ? STORE_OK : STORE_ERROR;
}

void store_touch_begin(struct conn *c)
{
    struct store *s = c->owner;

    if (c != &s->writer)
        return;
    s->npending = 0;
    s->pending_all = 0;
    s->pending_no_runs = 0;
}

/* Under touch_lock: one entry into the ring. */
static void log_one(struct store *s, unsigned long long seq, int kind, const char *name)
{
    struct store_touch *e = &s->log[s->nlogged % STORE_TOUCH_LOG];

    if (s->nlogged >= STORE_TOUCH_LOG && e->seq > s->lost)
        s->lost = e->seq;
    e->seq = seq;
    e->kind = kind;
    strcpy(e->name, name);
    s->nlogged++;
}

void store_touch_count(struct conn *c)
{
    struct store *s = c->owner;
    int writer = c == &s->writer;
    unsigned long long seq;

    pthread_mutex_lock(&s->touch_lock);
    seq = (unsigned long long)atomic_fetch_add(&s->writes, 1) + 1;
    if (!writer || s->pending_all || s->npending == 0)
        log_one(s, seq, STORE_TOUCH_ALL, "");
    else
        for (int i = 0; i < s->npending; i++)
            log_one(s, seq, s->pending[i].kind, s->pending[i].name);
    pthread_mutex_unlock(&s->touch_lock);
    if (!writer || !s->pending_no_runs)
        atomic_fetch_add(&s->run_writes, 1);
    if (writer) {
        s->npending = 0;
        s->pending_all = 0;
        s->pending_no_runs = 0;
    }
}

unsigned long long store_touched_since(struct store *s, unsigned long long since, store_touch_fn fn,
                                       void *ctx)
{
    unsigned long long now, first;

    pthread_mutex_lock(&s->touch_lock);
    now = (unsigned long long)atomic_load(&s->writes);
    if (since < now) {
        if (since < s->lost) {
            fn(ctx, STORE_TOUCH_ALL, NULL);
        } else {
            first = s->nlogged > STORE_TOUCH_LOG ? s->nlogged - STORE_TOUCH_LOG : 0;
            for (unsigned long long i = first; i < s->nlogged; i++) {
                const struct store_touch *e = &s->log[i % STORE_TOUCH_LOG];
                if (e->seq > since)
                    fn(ctx, (enum store_touch_kind)e->kind,
                       e->kind == STORE_TOUCH_HOST || e->kind == STORE_TOUCH_CARD ? e->name
                                                                                  : NULL);
            }
        }
    }
    pthread_mutex_unlock(&s->touch_lock);
    return now;
}
