/* The /metrics heavy collectors' kept text (server/http/metrics_cache.h):
 * a quick collector is made again at the scrape after a write; a slow one
 * is served as kept, the scrape not waiting for it, and made again in the
 * background; a failed build reports -1 (success 0) and nothing of it;
 * nothing is made in the background while nobody scrapes, and the first
 * scrape after such a quiet spell gets a text made after it, or -1. */
#include "counted.h"
#include "metrics_cache.h"
#include "test.h"
#include "test_store_tmp.h"

#include <stdatomic.h>

static atomic_int quick_builds, slow_builds, fail_next;
static atomic_int slow_ms;

static int quick(void *ctx, struct dynbuf *text, struct prom_set *aged)
{
    struct dynbuf line;
    int n = atomic_fetch_add(&quick_builds, 1) + 1;

    (void)ctx;
    if (atomic_exchange(&fail_next, 0))
        return -1;
    (void)!dynbuf_printf(text, "quick_builds %d\n", n);
    /* an aged series: made 100 s before the build, so at least 100 old */
    dynbuf_init(&line, 64);
    (void)!dynbuf_printf(&line, "age_seconds{card=\"a\"}");
    (void)prom_set_put(aged, &line, (double)time_now_unix_ms() / 1000.0 - 100, NULL);
    dynbuf_free(&line);
    return 0;
}

static int slow(void *ctx, struct dynbuf *text, struct prom_set *aged)
{
    int n = atomic_fetch_add(&slow_builds, 1) + 1;

    (void)ctx;
    (void)aged;
    usleep((useconds_t)atomic_load(&slow_ms) * 1000);
    (void)!dynbuf_printf(text, "slow_builds %d\n", n);
    return 0;
}

static const struct metrics_heavy heavy[] = {
    {"age_seconds", "Age.", 0, quick},
    {NULL, NULL, 0, slow},
};

/* A write the store counts (store_changes). */
static int write_one(struct store *s)
{
    char id[40];

    return tmp_store_queue(s, "smem_stride", "{}", 0, TEST_FAKE_UUID(0), id);
}

static int scrape(struct metrics_cache *c, int i, char *out, size_t cap)
{
    struct dynbuf b;
    int rc;

    dynbuf_init(&b, 1 << 16);
    rc = metrics_cache_write(c, i, &b);
    snprintf(out, cap, "%s", b.data ? b.data : "");
    dynbuf_free(&b);
    return rc;
}

static int test_kept_and_made_again(void)
{
    struct tmp_store t;
    struct metrics_cache *c;
    char text[4096];
    int64_t t0;

    ASSERT_EQ(tmp_store_open(&t, "metrics-cache"), 0);
    atomic_store(&slow_ms, 700);
    c = metrics_cache_start(heavy, 2, NULL, t.s);
    ASSERT(c != NULL);
    /* the first scrape waits for the thread's first builds */
    ASSERT_EQ(scrape(c, 0, text, sizeof(text)), 0);
    ASSERT(strstr(text, "# TYPE age_seconds gauge\n") != NULL);
    ASSERT(strstr(text, "age_seconds{card=\"a\"} 10") != NULL); /* 100 or 101 */
    ASSERT(strstr(text, "quick_builds ") != NULL);
    ASSERT_EQ(scrape(c, 1, text, sizeof(text)), 0);
    ASSERT_STR_EQ(text, "slow_builds 1\n");

    /* nothing written: nothing made again */
    ASSERT_EQ(scrape(c, 0, text, sizeof(text)), 0);
    ASSERT_EQ(atomic_load(&quick_builds), 1);

    /* a write: the quick one is made at the scrape, the slow one is
     * served as kept without waiting for a build */
    ASSERT_EQ(write_one(t.s), 0);
    ASSERT_EQ(scrape(c, 0, text, sizeof(text)), 0);
    ASSERT(strstr(text, "quick_builds 2\n") != NULL);
    t0 = time_mono_ms();
    ASSERT_EQ(scrape(c, 1, text, sizeof(text)), 0);
    ASSERT(time_mono_ms() - t0 < 500);
    ASSERT_STR_EQ(text, "slow_builds 1\n");

    /* a failed build: -1, nothing of it; the next write's build is back */
    atomic_store(&fail_next, 1);
    ASSERT_EQ(write_one(t.s), 0);
    ASSERT_EQ(scrape(c, 0, text, sizeof(text)), -1);
    ASSERT_STR_EQ(text, "");
    ASSERT_EQ(write_one(t.s), 0);
    ASSERT_EQ(scrape(c, 0, text, sizeof(text)), 0);
    ASSERT(strstr(text, "quick_builds 4\n") != NULL);
    metrics_cache_stop(c);
    tmp_store_close(&t);
    return 0;
}

/* A cache over the two collectors in a fresh store, the slow one 600 ms a
 * build, scraped once (its first build); idle_ms, when not 0, its idle
 * window. */
static int start_slow(struct tmp_store *t, const char *name, int64_t idle_ms,
                      struct metrics_cache **c)
{
    char text[4096];

    ASSERT_EQ(tmp_store_open(t, name), 0);
    atomic_store(&slow_builds, 0);
    atomic_store(&slow_ms, 600);
    *c = metrics_cache_start(heavy, 2, NULL, t->s);
    ASSERT(*c != NULL);
    if (idle_ms != 0)
        metrics_cache_set_idle_ms(*c, idle_ms);
    ASSERT_EQ(scrape(*c, 1, text, sizeof(text)), 0);
    ASSERT_STR_EQ(text, "slow_builds 1\n");
    return 0;
}

static int test_slow_made_in_background(void)
{
    struct tmp_store t;
    struct metrics_cache *c;
    char text[4096];
    int64_t until;

    ASSERT_EQ(start_slow(&t, "metrics-cache-bg", 0, &c), 0);
    ASSERT_EQ(write_one(t.s), 0);
    /* made again by the thread, METRICS_REFRESH_MIN_S after the last */
    until = time_mono_ms() + (METRICS_REFRESH_MIN_S + 10) * 1000;
    while (time_mono_ms() < until && atomic_load(&slow_builds) < 2)
        usleep(100 * 1000);
    ASSERT_EQ(atomic_load(&slow_builds), 2);
    until = time_mono_ms() + 5000;
    do {
        ASSERT_EQ(scrape(c, 1, text, sizeof(text)), 0);
    } while (strcmp(text, "slow_builds 2\n") != 0 && time_mono_ms() < until);
    ASSERT_STR_EQ(text, "slow_builds 2\n");
    metrics_cache_stop(c);
    tmp_store_close(&t);
    return 0;
}

/* Not scraped within the idle window: the thread leaves the slow
 * collector as it is, writes or not; the next scrape asks for a build and
 * gets it, or -1 (never the text from before the quiet spell) when it
 * takes longer than METRICS_FIRST_WAIT_MS. */
static int test_quiet_then_fresh(void)
{
    struct tmp_store t;
    struct metrics_cache *c;
    char text[4096];
    int64_t until;

    ASSERT_EQ(start_slow(&t, "metrics-cache-quiet", 300, &c), 0);
    usleep(400 * 1000); /* past the idle window */
    ASSERT_EQ(write_one(t.s), 0);
    /* a scraped collector would be made again by now
     * (test_slow_made_in_background) */
    usleep((METRICS_REFRESH_MIN_S + 2) * 1000 * 1000);
    ASSERT_EQ(atomic_load(&slow_builds), 1);
    /* the scrape after the quiet spell: made for it */
    ASSERT_EQ(scrape(c, 1, text, sizeof(text)), 0);
    ASSERT_STR_EQ(text, "slow_builds 2\n");

    /* a build longer than the wait: -1 and nothing, then the text once
     * it is made */
    atomic_store(&slow_ms, METRICS_FIRST_WAIT_MS + 1500);
    usleep(400 * 1000);
    ASSERT_EQ(write_one(t.s), 0);
    ASSERT_EQ(scrape(c, 1, text, sizeof(text)), -1);
    ASSERT_STR_EQ(text, "");
    until = time_mono_ms() + 5000;
    while (time_mono_ms() < until && atomic_load(&slow_builds) < 3)
        usleep(100 * 1000);
    usleep((useconds_t)atomic_load(&slow_ms) * 1000);
    ASSERT_EQ(scrape(c, 1, text, sizeof(text)), 0);
    ASSERT_STR_EQ(text, "slow_builds 3\n");
    metrics_cache_stop(c);
    tmp_store_close(&t);
    return 0;
}

/* A whole body of METRICS_BODY_KEEP_MIN_BYTES or more is kept and served
 * (the same bytes, held) until the store changes or METRICS_BODY_KEEP_MS
 * pass; a smaller one is never kept; a body replaced while a reply holds
 * it lives until that reply lets go. */
static int test_whole_body_kept(void)
{
    struct tmp_store t;
    struct metrics_cache *c;
    const char *text;
    size_t len;
    void *hold, *hold2, *hold3;
    char *small = strdup("small 1\n"), *big = malloc(METRICS_BODY_KEEP_MIN_BYTES),
         *big2 = malloc(METRICS_BODY_KEEP_MIN_BYTES);
    unsigned long long changes;

    ASSERT(small != NULL && big != NULL && big2 != NULL);
    memset(big, 'a', METRICS_BODY_KEEP_MIN_BYTES);
    memset(big2, 'b', METRICS_BODY_KEEP_MIN_BYTES);
    ASSERT_EQ(tmp_store_open(&t, "metrics-cache-body"), 0);
    c = metrics_cache_start(heavy, 0, NULL, t.s);
    ASSERT(c != NULL);
    ASSERT_EQ(metrics_cache_body(c, &text, &len, &hold), 0); /* nothing kept yet */
    changes = metrics_cache_changes(c);
    ASSERT_EQ(metrics_cache_keep_body(c, small, strlen(small), changes, &hold), -1);
    free(small); /* not kept: still the caller's */
    ASSERT_EQ(metrics_cache_body(c, &text, &len, &hold), 0);

    ASSERT_EQ(metrics_cache_keep_body(c, big, METRICS_BODY_KEEP_MIN_BYTES, changes, &hold), 0);
    ASSERT_EQ(metrics_cache_body(c, &text, &len, &hold2), 1);
    ASSERT(text == big && len == METRICS_BODY_KEEP_MIN_BYTES && hold2 == hold);
    counted_release(hold2);

    /* a write: not served any more */
    ASSERT_EQ(write_one(t.s), 0);
    ASSERT_EQ(metrics_cache_body(c, &text, &len, &hold2), 0);
    /* replaced while the first reply still holds it: its bytes live on */
    changes = metrics_cache_changes(c);
    ASSERT_EQ(metrics_cache_keep_body(c, big2, METRICS_BODY_KEEP_MIN_BYTES, changes, &hold2), 0);
    ASSERT_EQ(big[METRICS_BODY_KEEP_MIN_BYTES - 1], 'a');
    counted_release(hold);
    counted_release(hold2);
    ASSERT_EQ(metrics_cache_body(c, &text, &len, &hold3), 1);
    ASSERT(text == big2);
    counted_release(hold3);
    /* and not past METRICS_BODY_KEEP_MS */
    usleep((METRICS_BODY_KEEP_MS + 50) * 1000);
    ASSERT_EQ(metrics_cache_body(c, &text, &len, &hold3), 0);
    metrics_cache_stop(c);
    tmp_store_close(&t);
    return 0;
}

TEST_MAIN({"kept_and_made_again", test_kept_and_made_again},
          {"slow_made_in_background", test_slow_made_in_background},
          {"quiet_then_fresh", test_quiet_then_fresh},
          {"whole_body_kept", test_whole_body_kept})
