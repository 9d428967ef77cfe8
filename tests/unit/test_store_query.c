/* store_query (store_internal.h), the one way the store runs a statement:
 * values bound by their type (an integer stays an integer, NaN and a NULL
 * text bind SQL NULL), a refused bind fails the step, a failure is mapped
 * by store_fail before a transaction is rolled back (a full disk answers
 * STORE_NO_SPACE and shows in the health), a nested query leaves its
 * failure to the outer one, and the end gives the connection's lock back. */
#include "store_internal.h"
#include "test.h"
#include "test_store_tmp.h"

#include <math.h>
#include <stdlib.h>

/* 1 when nobody holds c's lock (store_query_end gave it back). */
static int unlocked(struct conn *c)
{
    if (pthread_mutex_trylock(&c->lock) != 0)
        return 0;
    pthread_mutex_unlock(&c->lock);
    return 1;
}

static int test_bind_types(struct store *s)
{
    struct store_query q;
    int changes = -1;

    store_query_begin(&q, &s->writer, "test binds");
    ASSERT_EQ(store_query_prepare(&q, "SELECT typeof(?1), ?1, typeof(?2), typeof(?3), ?3, "
                                      "typeof(?4), typeof(?5), ?1 + 1"),
              STORE_OK);
    store_bind_int64(&q, 1, (1LL << 40) + 3);
    store_bind_text(&q, 2, NULL);
    store_bind_double(&q, 3, 2.5);
    store_bind_double(&q, 4, NAN);
    store_bind_text(&q, 5, "x");
    ASSERT_EQ(store_query_one(&q), STORE_OK);
    ASSERT_STR_EQ(store_col_text(q.st, 0), "integer");
    ASSERT_EQ(sqlite3_column_int64(q.st, 1), (1LL << 40) + 3);
    ASSERT_STR_EQ(store_col_text(q.st, 2), "null");
    ASSERT_STR_EQ(store_col_text(q.st, 3), "real");
    ASSERT(sqlite3_column_double(q.st, 4) == 2.5);
    ASSERT_STR_EQ(store_col_text(q.st, 5), "null");
    ASSERT_STR_EQ(store_col_text(q.st, 6), "text");
    ASSERT_EQ(sqlite3_column_int64(q.st, 7), (1LL << 40) + 4);
    ASSERT_EQ(store_query_end(&q, STORE_OK), STORE_OK);
    ASSERT(unlocked(&s->writer));

    /* store_query_run binds by type too: into a column without affinity,
     * the integer stays an integer and the text stays text. */
    ASSERT_EQ(sqlite3_exec(s->writer.db, "CREATE TEMP TABLE kept (a, b)", NULL, NULL, NULL),
              SQLITE_OK);
    store_query_begin(&q, &s->writer, "test typed values");
    ASSERT_EQ(store_query_run(&q, "INSERT INTO kept VALUES (?1, ?2)", &changes, STORE_INT(7),
                              STORE_TEXT("7")),
              STORE_OK);
    ASSERT_EQ(changes, 1);
    ASSERT_EQ(store_query_prepare(&q, "SELECT typeof(a), typeof(b) FROM kept"), STORE_OK);
    ASSERT_EQ(store_query_step(&q), STORE_STEP_ROW);
    ASSERT_STR_EQ(store_col_text(q.st, 0), "integer");
    ASSERT_STR_EQ(store_col_text(q.st, 1), "text");
    ASSERT_EQ(store_query_step(&q), STORE_STEP_DONE);
    ASSERT_EQ(store_query_end(&q, STORE_OK), STORE_OK);
    ASSERT(unlocked(&s->writer));
    return 0;
}

static int test_refused_bind(struct store *s)
{
    struct store_query q;

    /* ?5 of a statement with one parameter: the step must not run with
     * the value missing. */
    store_query_begin(&q, store_reader(s), "test a refused bind");
    ASSERT_EQ(store_query_prepare(&q, "SELECT ?1"), STORE_OK);
    store_bind_int64(&q, 1, 1);
    store_bind_int64(&q, 5, 1);
    ASSERT_EQ(store_query_step(&q), STORE_ERROR);
    ASSERT_EQ(store_query_end(&q, STORE_ERROR), STORE_ERROR);
    /* A prepare that fails is a failure too, and the lock is given back. */
    store_query_begin(&q, store_reader(s), "test a failed prepare");
    ASSERT_EQ(store_query_prepare(&q, "SELECT * FROM no_such_table"), STORE_ERROR);
    ASSERT_EQ(store_query_end(&q, STORE_ERROR), STORE_ERROR);
    ASSERT(unlocked(store_reader(s)));
    return 0;
}

/* Caps the database at its size now: the next write that needs a page
 * fails with SQLITE_FULL, as on a full disk. */
static int cap_pages(struct store *s, int on)
{
    return sqlite3_exec(s->writer.db,
                        on ? "PRAGMA max_page_count = 1" : "PRAGMA max_page_count = 1073741823",
                        NULL, NULL, NULL);
}

static int test_full_disk(struct store *s)
{
    struct store_query q, sub;
    struct store_health h;

    ASSERT_EQ(sqlite3_exec(s->writer.db, "CREATE TABLE big (x)", NULL, NULL, NULL), SQLITE_OK);
    ASSERT_EQ(cap_pages(s, 1), SQLITE_OK);
    /* In a transaction: the failure is mapped before the rollback (which
     * would leave SQLite saying "ok"). */
    store_query_begin(&q, &s->writer, "test a full disk");
    ASSERT_EQ(store_query_transaction(&q), STORE_OK);
    ASSERT_EQ(store_query_run(&q, "INSERT INTO big VALUES (randomblob(?1))", NULL,
                              STORE_INT(1 << 20)),
              STORE_ERROR);
    ASSERT_EQ(store_query_end(&q, STORE_ERROR), STORE_NO_SPACE);
    ASSERT(unlocked(&s->writer));
    store_health_get(s, &h);
    ASSERT_EQ(h.no_space, 1);
    ASSERT(strstr(h.message, "test a full disk") != NULL);

    /* A nested query leaves its failure to the outer one, which maps it
     * by its own words and gives the lock back once. */
    store_query_begin(&q, &s->writer, "test a nested failure");
    ASSERT_EQ(store_query_transaction(&q), STORE_OK);
    ASSERT_EQ(store_query_prepare(&q, "SELECT 1 UNION ALL SELECT 2"), STORE_OK);
    ASSERT_EQ(store_query_step(&q), STORE_STEP_ROW);
    store_query_nest(&sub, &q);
    ASSERT_EQ(store_query_run(&sub, "INSERT INTO big VALUES (randomblob(?1))", NULL,
                              STORE_INT(1 << 20)),
              STORE_ERROR);
    ASSERT_EQ(store_query_end(&sub, STORE_ERROR), STORE_ERROR);
    ASSERT(!unlocked(&s->writer));
    ASSERT_EQ(store_query_end(&q, STORE_ERROR), STORE_NO_SPACE);
    ASSERT(unlocked(&s->writer));

    /* Room again: a write that succeeds ends the full disk. */
    ASSERT_EQ(cap_pages(s, 0), SQLITE_OK);
    store_query_begin(&q, &s->writer, "test a write");
    ASSERT_EQ(store_query_run(&q, "INSERT INTO big VALUES (randomblob(?1))", NULL,
                              STORE_INT(1000)),
              STORE_OK);
    ASSERT_EQ(store_query_end(&q, STORE_OK), STORE_OK);
    store_health_get(s, &h);
    ASSERT_EQ(h.no_space, 0);
    return 0;
}

/* fn on a store of its own, in memory (each reader is an empty database
 * of its own: only the writer holds the schema). */
static int with_store(int (*fn)(struct store *))
{
    char err[256];
    struct store *s = NULL;
    int rc;

    ASSERT_EQ(test_store_open(":memory:", &s, err, sizeof(err)), STORE_OK);
    rc = fn(s);
    store_close(s);
    return rc;
}

static int test_binds(void)
{
    return with_store(test_bind_types);
}

static int test_bind_refused(void)
{
    return with_store(test_refused_bind);
}

static int test_no_space(void)
{
    return with_store(test_full_disk);
}

/* Damage noted on this thread outside the query that fails (a row helper
 * whose caller went on) is not that query's: a plain failure stays a plain
 * error and the health is not marked corrupt (issue 31: it was, for good). */
static int test_damage_noted_before(struct store *s)
{
    struct store_query q;
    struct store_health h;

    store_note_damaged_value();
    store_query_begin(&q, &s->writer, "test an unrelated failure");
    ASSERT_EQ(store_query_prepare(&q, "SELECT nothing FROM no_such_table"), STORE_ERROR);
    ASSERT_EQ(store_query_end(&q, STORE_ERROR), STORE_ERROR);
    store_health_get(s, &h);
    ASSERT_EQ(h.corrupt, 0);
    /* Damage noted within the query still makes its failure corrupt. */
    store_query_begin(&q, &s->writer, "test a damaged value");
    store_note_damaged_value();
    ASSERT_EQ(store_query_end(&q, STORE_ERROR), STORE_CORRUPT);
    store_health_get(s, &h);
    ASSERT_EQ(h.corrupt, 1);
    return 0;
}

static int test_damage_per_query(void)
{
    return with_store(test_damage_noted_before);
}

/* PRAGMA synchronous on q's connection, read through q. */
static int synchronous_of(struct store_query *q)
{
    int level = -1;

    if (store_query_prepare(q, "PRAGMA synchronous") == STORE_OK &&
        store_query_step(q) == STORE_STEP_ROW)
        level = sqlite3_column_int(q->st, 0);
    return level;
}

/* A relaxed transaction (a hub's pulled runs) commits without waiting for
 * fsync, and only it: the writer is back at FULL (2) after it, whether it
 * committed or was rolled back. */
static int test_relaxed_is_one_transaction(struct store *s)
{
    struct store_query q;

    for (int commit = 0; commit < 2; commit++) {
        store_query_begin(&q, &s->writer, "test a relaxed transaction");
        ASSERT_EQ(store_query_transaction_relaxed(&q), STORE_OK);
        ASSERT_EQ(synchronous_of(&q), 1);
        ASSERT_EQ(store_query_end(&q, commit ? store_query_commit(&q) : STORE_ERROR),
                  commit ? STORE_OK : STORE_ERROR);
        store_query_begin(&q, &s->writer, "test the writer after it");
        ASSERT_EQ(synchronous_of(&q), 2);
        ASSERT_EQ(store_query_end(&q, STORE_OK), STORE_OK);
    }
    return 0;
}

static int test_relaxed(void)
{
    return with_store(test_relaxed_is_one_transaction);
}

TEST_MAIN({"binds", test_binds}, {"relaxed", test_relaxed}, {"bind_refused", test_bind_refused},
          {"no_space", test_no_space}, {"damage_per_query", test_damage_per_query})
