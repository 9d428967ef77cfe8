/*
 * test_store_touch.c - server/store/store_touch.c, the log of what each
 * write touched (issue 33: a hub's whole GET /coverage is made again only
 * for the hosts and cards touched): a run's end says its host and card
 * (and the own queue), its queueing and claiming the own queue alone; a
 * write whose query said nothing is told as everything; a query that
 * changed no row is not a write; a failure after rows changed is told as
 * everything; a reader further behind than the log reaches is told
 * everything; what the reader is told covers every write up to the count
 * it gets back.
 */
#include "store_internal.h"
#include "store_touch.h"
#include "test.h"
#include "test_store_tmp.h"

#include <stdio.h>
#include <string.h>

/* What a reader was told, as "KIND:NAME " words. */
struct told {
    char text[4096];
    int n; /* how many */
};

static void tell(void *ctx, enum store_touch_kind kind, const char *name)
{
    static const char *const kinds[] = {"all", "host", "card", "own", "none"};
    struct told *t = ctx;
    size_t n = strlen(t->text);

    t->n++;
    snprintf(t->text + n, sizeof(t->text) - n, "%s:%s ", kinds[kind], name ? name : "");
}

/* What the writes after *since touched; *since moves to the count now. */
static const char *since(struct store *s, unsigned long long *from, struct told *t)
{
    t->text[0] = '\0';
    t->n = 0;
    *from = store_touched_since(s, *from, tell, t);
    return t->text;
}

/* A write on the writer whose query says nothing (or says host). */
static int raw_write(struct store *s, const char *sql, const char *host)
{
    struct store_query q;

    store_query_begin(&q, &s->writer, "test write");
    if (host)
        store_query_touch(&q, STORE_TOUCH_HOST, host);
    return store_query_end(&q, store_query_run(&q, sql, NULL, STORE_INT(0)));
}

static int test_touches(void)
{
    struct tmp_store t;
    struct told told;
    struct run_job job;
    unsigned long long at = 0, before;
    char id[40];

    ASSERT_EQ(tmp_store_open(&t, "touch"), 0);
    since(t.s, &at, &told); /* whatever the opening wrote */
    ASSERT_EQ(at, store_changes(t.s));
    ASSERT_STR_EQ(since(t.s, &at, &told), "");

    /* queued and claimed: this daemon's own queue alone */
    ASSERT_EQ(tmp_store_queue(t.s, "smem_stride", "{}", 0, TEST_FAKE_UUID(0), id), STORE_OK);
    ASSERT_EQ(store_claim_next(t.s, 0, &job), STORE_OK);
    store_job_clear(&job);
    ASSERT_STR_EQ(since(t.s, &at, &told), "own: own: ");
    /* its end: its host and card too */
    ASSERT_EQ(tmp_finish_run(t.s, id, "failed", NULL, NULL, "worker_crashed", "gone", NULL),
              STORE_OK);
    ASSERT_STR_EQ(since(t.s, &at, &told),
                  "own: host:unit-host card:" TEST_FAKE_UUID(0) " ");
    ASSERT_EQ(at, store_changes(t.s));

    /* a write that says nothing is everything; one that changes nothing
     * is no write */
    ASSERT_EQ(sqlite3_exec(t.s->writer.db, "CREATE TEMP TABLE x (a)", NULL, NULL, NULL),
              SQLITE_OK);
    ASSERT_EQ(raw_write(t.s, "INSERT INTO x VALUES (?1)", NULL), STORE_OK);
    ASSERT_EQ(raw_write(t.s, "DELETE FROM x WHERE a = 99 + ?1", "h"), STORE_OK);
    ASSERT_EQ(raw_write(t.s, "INSERT INTO x VALUES (?1)", "node-7"), STORE_OK);
    ASSERT_STR_EQ(since(t.s, &at, &told), "all: host:node-7 ");

    /* a failure after a row changed: everything */
    {
        struct store_query q;
        store_query_begin(&q, &t.s->writer, "test failure");
        store_query_touch(&q, STORE_TOUCH_HOST, "node-8");
        ASSERT_EQ(store_query_transaction(&q), STORE_OK);
        ASSERT_EQ(store_query_run(&q, "INSERT INTO x VALUES (?1)", NULL, STORE_INT(1)), STORE_OK);
        ASSERT(store_query_end(&q, STORE_CONFLICT) == STORE_CONFLICT);
    }
    ASSERT_STR_EQ(since(t.s, &at, &told), "all: ");

    /* a reader the log no longer reaches back to: everything */
    before = at;
    for (int i = 0; i < STORE_TOUCH_LOG + 1; i++)
        ASSERT_EQ(raw_write(t.s, "INSERT INTO x VALUES (?1)", "node-9"), STORE_OK);
    ASSERT_STR_EQ(since(t.s, &before, &told), "all: ");
    /* one that it still reaches: each write's own */
    before = at + 2;
    since(t.s, &before, &told);
    ASSERT_EQ(told.n, STORE_TOUCH_LOG - 1);
    ASSERT(strncmp(told.text, "host:node-9 host:node-9 ", 24) == 0);
    tmp_store_close(&t);
    return 0;
}

TEST_MAIN({"touches", test_touches})
