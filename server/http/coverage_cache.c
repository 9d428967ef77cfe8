/*
 * coverage_cache.c - see coverage_cache.h.  The hosts are kept in an
 * array sorted by name (the answer's order: coverage_build orders the
 * cards by host first), each host's text its cards printed unformatted
 * and joined by commas, so the answer is the head, the texts joined by
 * commas, and the totals.
 */
#include "coverage_cache.h"

#include "dynbuf.h"
#include "store.h"
#include "store_coverage.h"
#include "store_touch.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The most an answer (or one host's text) takes: 8,000 cards take about
 * 10 MB. */
#define COVERAGE_TEXT_CAP (512u * 1024 * 1024)

/* One host's cards as kept. */
struct host {
    char *name;          /* NEW */
    struct dynbuf text;  /* its cards, printed, comma-joined, ages as holes */
    struct dynbuf uuids; /* "\nUUID\nUUID\n": its cards, for a card's touch */
    long totals[COVERAGE_STATES], deep_totals[COVERAGE_STATES];
    int64_t valid_until_ms;
    int touched; /* a write touched it since it was made */
};

struct coverage_cache {
    pthread_mutex_t lock; /* guards all below, held through an answer */
    /* hosts[] holds every host (the own one apart) as of changes */
    int made;
    int touched_all;                     /* store_touched_since said everything (during a call) */
    long long max_age_s, deep_max_age_s; /* what the texts were made for */
    unsigned long long changes;          /* the store's count they cover */
    struct host *hosts;                  /* sorted by name */
    int n, cap;
    char **fresh; /* hosts touched that have no entry yet (NEW strings) */
    int nfresh, capfresh;
};

struct coverage_cache *coverage_cache_new(void)
{
    struct coverage_cache *c = calloc(1, sizeof(*c));

    if (c && pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        return NULL;
    }
    return c;
}

static void host_free(struct host *h)
{
    free(h->name);
    dynbuf_free(&h->text);
    dynbuf_free(&h->uuids);
}

static void drop_all(struct coverage_cache *c)
{
    for (int i = 0; i < c->n; i++)
        host_free(&c->hosts[i]);
    c->n = 0;
    for (int i = 0; i < c->nfresh; i++)
        free(c->fresh[i]);
    c->nfresh = 0;
    c->made = 0;
}

void coverage_cache_free(struct coverage_cache *c)
{
    if (c == NULL)
        return;
    drop_all(c);
    free(c->hosts);
    free(c->fresh);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* The index of host name in c->hosts, or -(where it would go) - 1. */
static int find_host(const struct coverage_cache *c, const char *name)
{
    int lo = 0, hi = c->n - 1;

    while (lo <= hi) {
        int mid = (lo + hi) / 2, d = strcmp(c->hosts[mid].name, name);
        if (d == 0)
            return mid;
        if (d < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -lo - 1;
}

/* store_touch_fn: what a write touched, noted as "KIND NAME\n" into a
 * dynbuf (under the store's log lock, which a write waits for: the
 * marking is done after, by touched). */
static void told(void *ctx, enum store_touch_kind kind, const char *name)
{
    struct dynbuf *b = ctx;

    /* a name with a newline would read as two: everything, rather */
    if ((kind == STORE_TOUCH_HOST || kind == STORE_TOUCH_CARD) && !strchr(name, '\n'))
        (void)!dynbuf_printf(b, "%d %s\n", (int)kind, name);
    else if (kind != STORE_TOUCH_OWN && kind != STORE_TOUCH_NONE)
        (void)!dynbuf_printf(b, "%d -\n", (int)STORE_TOUCH_ALL);
}

/* Marks what one write touched (told's words). */
static void touched(struct coverage_cache *c, enum store_touch_kind kind, const char *name)
{
    int i;

    if (c->touched_all)
        return;
    switch (kind) {
    case STORE_TOUCH_OWN:
    case STORE_TOUCH_NONE:
        return; /* the own host is made at each answer */
    case STORE_TOUCH_HOST:
        if ((i = find_host(c, name)) >= 0) {
            c->hosts[i].touched = 1;
            return;
        }
        for (i = 0; i < c->nfresh; i++)
            if (strcmp(c->fresh[i], name) == 0)
                return;
        if (c->nfresh == c->capfresh) {
            int cap = c->capfresh ? 2 * c->capfresh : 16;
            char **more = realloc(c->fresh, (size_t)cap * sizeof(*more));
            if (more == NULL) {
                c->touched_all = 1;
                return;
            }
            c->fresh = more;
            c->capfresh = cap;
        }
        if ((c->fresh[c->nfresh] = strdup(name)) == NULL)
            c->touched_all = 1;
        else
            c->nfresh++;
        return;
    case STORE_TOUCH_CARD: {
        /* a card's rows are read by its UUID wherever it is held */
        size_t n = strlen(name);
        for (i = 0; i < c->n; i++) {
            const char *u = c->hosts[i].uuids.data, *p = u;
            while (p && (p = strstr(p, name)) != NULL) {
                if (p > u && p[-1] == '\n' && p[n] == '\n') {
                    c->hosts[i].touched = 1;
                    break;
                }
                p += n;
            }
        }
        return;
    }
    default:
        c->touched_all = 1;
    }
}

/* What a build of one or every host gathers: the host being filled (its
 * index in hosts, -1 before the first card), the own host left out. */
struct build {
    struct coverage_cache *c;
    const char *own_host;
    struct host *into; /* building: the one host's, or the every-host build's current */
    struct host *list; /* an every-host build's hosts (NEW array), n of them */
    int n, cap;
    int64_t now_ms;
};

/* Room for one more host in *list (n of them, room for *cap); 0 or -1. */
static int host_room(struct host **list, int n, int *cap)
{
    int more_cap = *cap ? 2 * *cap : 64;
    struct host *more;

    if (n < *cap)
        return 0;
    if ((more = realloc(*list, (size_t)more_cap * sizeof(*more))) == NULL)
        return -1;
    *list = more;
    *cap = more_cap;
    return 0;
}

/* Moves h into *to (whose old bytes are the caller's), leaving h empty. */
static void host_move(struct host *to, struct host *h)
{
    *to = *h;
    h->name = NULL;
    dynbuf_init(&h->text, 0);
    dynbuf_init(&h->uuids, 0);
}

/* Appends card c to h; 0 or -1. */
static int host_add(struct host *h, const struct coverage_card *c)
{
    char *text = cJSON_PrintUnformatted(c->card);

    if (text == NULL)
        return -1;
    if (h->text.len)
        (void)!dynbuf_add(&h->text, ",", 1);
    (void)!dynbuf_add(&h->text, text, strlen(text));
    free(text);
    if (h->uuids.len == 0)
        (void)!dynbuf_add(&h->uuids, "\n", 1);
    (void)!dynbuf_printf(&h->uuids, "%s\n", c->uuid);
    for (int s = 0; s < COVERAGE_STATES; s++) {
        h->totals[s] += c->totals[s];
        h->deep_totals[s] += c->deep_totals[s];
    }
    if (c->valid_until_ms < h->valid_until_ms)
        h->valid_until_ms = c->valid_until_ms;
    return dynbuf_failed(&h->text) || dynbuf_failed(&h->uuids) ? -1 : 0;
}

static int host_init(struct host *h, const char *name)
{
    memset(h, 0, sizeof(*h));
    dynbuf_init(&h->text, COVERAGE_TEXT_CAP);
    dynbuf_init(&h->uuids, COVERAGE_TEXT_CAP);
    h->valid_until_ms = INT64_MAX;
    return (h->name = strdup(name)) ? 0 : -1;
}

/* coverage_card_fn of a build of every host: a new host begins a new
 * entry. */
static int every_card(void *ctx, const struct coverage_card *c)
{
    struct build *b = ctx;
    int rc = -1;

    if (strcmp(c->host, b->own_host) == 0) {
        rc = 0; /* made at each answer */
    } else {
        if (b->n == 0 || strcmp(b->list[b->n - 1].name, c->host) != 0) {
            if (host_room(&b->list, b->n, &b->cap) != 0 ||
                host_init(&b->list[b->n++], c->host) != 0)
                goto done;
        }
        rc = host_add(&b->list[b->n - 1], c);
    }

done:
    cJSON_Delete(c->card);
    return rc;
}

/* coverage_card_fn of a build of one host into b->into. */
static int one_card(void *ctx, const struct coverage_card *c)
{
    struct build *b = ctx;
    int rc = host_add(b->into, c);

    cJSON_Delete(c->card);
    return rc;
}

/* Makes every host again from the store; STORE_OK or a code. */
static int build_every(struct coverage_cache *c, struct store *store,
                       const struct coverage_query *q)
{
    struct coverage_query all = *q;
    struct build b = {.c = c, .own_host = q->own_host, .now_ms = q->now_ms};
    cJSON *cells = NULL;
    int rc;

    all.host = NULL;
    all.n_own = 0;
    all.age_holes = 1;
    if ((rc = store_coverage_cells(store, NULL, &cells)) != STORE_OK)
        goto done;
    rc = STORE_ERROR;
    if (coverage_cards(cells, &all, every_card, &b) != 0)
        goto done;
    drop_all(c);
    free(c->hosts);
    c->hosts = b.list; /* in the cards' order: sorted by host */
    c->n = c->cap = b.n;
    b.list = NULL;
    b.n = 0;
    rc = STORE_OK;

done:
    for (int i = 0; i < b.n; i++)
        host_free(&b.list[i]);
    free(b.list);
    cJSON_Delete(cells);
    return rc;
}

/* Makes host name again (adding or dropping its entry); STORE_OK or a
 * code. */
static int build_host(struct coverage_cache *c, struct store *store,
                      const struct coverage_query *q, const char *name)
{
    struct coverage_query one = *q;
    struct host h;
    struct build b = {.c = c, .own_host = q->own_host, .into = &h, .now_ms = q->now_ms};
    cJSON *cells = NULL;
    int rc, i;

    if (strcmp(name, q->own_host) == 0)
        return STORE_OK;
    one.host = name;
    one.n_own = 0;
    one.age_holes = 1;
    if (host_init(&h, name) != 0) {
        host_free(&h);
        return STORE_ERROR;
    }
    if ((rc = store_coverage_cells(store, name, &cells)) != STORE_OK)
        goto done;
    rc = STORE_ERROR;
    if (coverage_cards(cells, &one, one_card, &b) != 0)
        goto done;
    i = find_host(c, name);
    if (i >= 0) {
        host_free(&c->hosts[i]);
        if (h.text.len) {
            host_move(&c->hosts[i], &h);
        } else {
            memmove(&c->hosts[i], &c->hosts[i + 1], (size_t)(c->n - i - 1) * sizeof(h));
            c->n--;
        }
    } else if (h.text.len) {
        i = -i - 1;
        if (host_room(&c->hosts, c->n, &c->cap) != 0)
            goto done;
        memmove(&c->hosts[i + 1], &c->hosts[i], (size_t)(c->n - i) * sizeof(h));
        host_move(&c->hosts[i], &h);
        c->n++;
    }
    rc = STORE_OK;

done:
    host_free(&h);
    cJSON_Delete(cells);
    return rc;
}

/* Brings every kept host up to date for q; STORE_OK or a code (then
 * nothing is kept: the next answer makes everything again). */
static int refresh(struct coverage_cache *c, struct store *store, const struct coverage_query *q)
{
    struct dynbuf said; /* what the writes since touched (told) */
    unsigned long long changes;
    int rc = STORE_OK;

    if (c->made && (c->max_age_s != q->max_age_s || c->deep_max_age_s != q->deep_max_age_s))
        drop_all(c);
    c->touched_all = 0;
    dynbuf_init(&said, COVERAGE_TEXT_CAP);
    changes = store_touched_since(store, c->changes, told, &said);
    for (char *line = said.data, *end; line && (end = strchr(line, '\n')) != NULL;
         line = end + 1) {
        *end = '\0';
        touched(c, (enum store_touch_kind)atoi(line), strchr(line, ' ') + 1);
    }
    if (dynbuf_failed(&said))
        c->touched_all = 1;
    dynbuf_free(&said);
    if (!c->made || c->touched_all) {
        drop_all(c);
        rc = build_every(c, store, q);
    } else {
        /* a host touched or past its time (a copy of the names: a
         * rebuild moves the entries) */
        for (int i = 0; rc == STORE_OK && i < c->nfresh; i++)
            rc = build_host(c, store, q, c->fresh[i]);
        for (int i = 0; rc == STORE_OK && i < c->n;) {
            struct host *h = &c->hosts[i];
            char *name;
            if (!h->touched && h->valid_until_ms > q->now_ms) {
                i++;
                continue;
            }
            if ((name = strdup(h->name)) == NULL) {
                rc = STORE_ERROR;
                break;
            }
            rc = build_host(c, store, q, name);
            /* the entry is at i again, or gone (the next one is at i) */
            if (rc == STORE_OK && i < c->n && strcmp(c->hosts[i].name, name) == 0)
                i++;
            free(name);
        }
    }
    for (int i = 0; i < c->nfresh; i++)
        free(c->fresh[i]);
    c->nfresh = 0;
    if (rc != STORE_OK) {
        drop_all(c);
        return rc;
    }
    c->made = 1;
    c->changes = changes;
    c->max_age_s = q->max_age_s;
    c->deep_max_age_s = q->deep_max_age_s;
    return STORE_OK;
}

/* The cards of host name for q (the own host's with its GPUs), made now
 * without holes, into h.  STORE_OK or a code. */
static int host_now(struct store *store, const struct coverage_query *q, const char *name,
                    struct host *h)
{
    struct coverage_query mine = *q;
    struct build b = {.own_host = "", .into = h, .now_ms = q->now_ms};
    cJSON *cells = NULL;
    int rc;

    mine.host = name;
    mine.age_holes = 0;
    if ((rc = store_coverage_cells(store, name, &cells)) == STORE_OK &&
        coverage_cards(cells, &mine, one_card, &b) != 0)
        rc = STORE_ERROR;
    cJSON_Delete(cells);
    return rc;
}

/* Appends host h's cards to out, ages filled at now_ms, with their totals;
 * 0 or -1. */
static int put_host(struct dynbuf *out, const struct host *h, int64_t now_ms, int *first,
                    long *totals, long *deep_totals)
{
    if (h->text.len == 0)
        return 0;
    if (!*first)
        (void)!dynbuf_add(out, ",", 1);
    *first = 0;
    for (int s = 0; s < COVERAGE_STATES; s++) {
        totals[s] += h->totals[s];
        deep_totals[s] += h->deep_totals[s];
    }
    return coverage_fill_ages(out, h->text.data, h->text.len, now_ms);
}

/* Every kept host's cards into out, the own host's (own) in its place by
 * name (they are never kept); 0 or -1. */
static int put_every(struct coverage_cache *c, struct dynbuf *out, const struct host *own,
                     int64_t now_ms, long *totals, long *deep_totals)
{
    int first = 1, own_put = 0;

    for (int i = 0; i < c->n; i++) {
        if (!own_put && strcmp(own->name, c->hosts[i].name) < 0) {
            own_put = 1;
            if (put_host(out, own, now_ms, &first, totals, deep_totals) != 0)
                return -1;
        }
        if (put_host(out, &c->hosts[i], now_ms, &first, totals, deep_totals) != 0)
            return -1;
    }
    return own_put ? 0 : put_host(out, own, now_ms, &first, totals, deep_totals);
}

int coverage_cache_answer(struct coverage_cache *c, struct store *store,
                          const struct coverage_query *q, char **text, size_t *len)
{
    long totals[COVERAGE_STATES] = {0}, deep_totals[COVERAGE_STATES] = {0};
    struct dynbuf out;
    struct host own; /* the own host's cards, or those of the one host asked for */
    cJSON *head = coverage_head(q), *tail = cJSON_CreateObject();
    char *head_text = NULL, *tail_text = NULL;
    int rc = STORE_ERROR, first = 1;
    size_t n;

    *text = NULL;
    *len = 0;
    dynbuf_init(&out, COVERAGE_TEXT_CAP);
    if (host_init(&own, q->own_host) != 0 || head == NULL || tail == NULL ||
        (head_text = cJSON_PrintUnformatted(head)) == NULL)
        goto fail;
    /* the head ends with its empty "cards":[]}: the cards go in there */
    n = strlen(head_text);
    if (n < 2 || strcmp(head_text + n - 2, "]}") != 0)
        goto fail;
    (void)!dynbuf_add(&out, head_text, n - 2);
    /* one host asked for (a node's check on its hub) is read as it is: a
     * few ms, where the kept texts may need a build of every host */
    if ((rc = host_now(store, q, q->host ? q->host : q->own_host, &own)) != STORE_OK)
        goto fail;
    rc = STORE_ERROR;
    if (q->host) {
        if (put_host(&out, &own, q->now_ms, &first, totals, deep_totals) != 0)
            goto fail;
    } else {
        rc = STORE_OK;
        pthread_mutex_lock(&c->lock);
        if ((rc = refresh(c, store, q)) == STORE_OK &&
            put_every(c, &out, &own, q->now_ms, totals, deep_totals) != 0)
            rc = STORE_ERROR;
        pthread_mutex_unlock(&c->lock);
        if (rc != STORE_OK)
            goto fail;
    }
    rc = STORE_ERROR;
    /* then "],", and the totals' object without its "{" */
    if (coverage_add_totals(tail, totals, deep_totals) != 0 ||
        (tail_text = cJSON_PrintUnformatted(tail)) == NULL)
        goto fail;
    (void)!dynbuf_add(&out, "],", 2);
    (void)!dynbuf_add(&out, tail_text + 1, strlen(tail_text + 1));
    (void)!dynbuf_add(&out, "\n", 1);
    if (dynbuf_failed(&out))
        goto fail;
    *text = dynbuf_take(&out, len);
    rc = *text ? STORE_OK : STORE_ERROR;

fail:
    free(tail_text);
    free(head_text);
    cJSON_Delete(tail);
    cJSON_Delete(head);
    host_free(&own);
    dynbuf_free(&out);
    return rc;
}
