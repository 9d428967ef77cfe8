/* The finished-runs cache: hits are exact copies, the byte bound holds,
 * the least recently used entry is the one that goes, and a held entry
 * outlives its replacement, its eviction and the cache itself. */
#include "counted.h"
#include "hash.h"
#include "run_cache.h"
#include "test.h"

#include <stdlib.h>

static int test_hit_and_miss(void)
{
    struct run_cache *c = run_cache_new(1 << 20);
    size_t len = 0;
    uint64_t tag = 0;
    char *body;

    ASSERT(run_cache_get(c, "a", &len, NULL) == NULL);
    run_cache_put(c, "a", "{\"id\":\"a\"}", 10);
    body = run_cache_get(c, "a", &len, NULL);
    ASSERT(body != NULL);
    ASSERT_EQ(len, 10);
    ASSERT_STR_EQ(body, "{\"id\":\"a\"}");
    free(body);
    /* Replacing keeps one entry with the new body, and its tag (the
     * ETag's hash) is the new body's. */
    run_cache_put(c, "a", "{}", 2);
    body = run_cache_get(c, "a", &len, &tag);
    ASSERT_STR_EQ(body, "{}");
    ASSERT(tag == hash_fnv1a64("{}", 2));
    ASSERT(tag != hash_fnv1a64("{\"id\":\"a\"}", 10));
    free(body);
    ASSERT(run_cache_get(NULL, "a", &len, NULL) == NULL);
    run_cache_free(c);
    return 0;
}

static int test_bound_and_lru(void)
{
    char big[1000], id[8];
    struct run_cache *c = run_cache_new(5000);
    size_t len;
    int kept = 0;
    char *b;

    memset(big, 'x', sizeof(big));
    run_cache_put(c, "first", big, sizeof(big));
    run_cache_put(c, "second", big, sizeof(big));
    /* Touch "first" so that "second" is the least recently used. */
    free(run_cache_get(c, "first", &len, NULL));
    for (int i = 0; i < 3; i++) {
        snprintf(id, sizeof(id), "n%d", i);
        run_cache_put(c, id, big, sizeof(big));
    }
    b = run_cache_get(c, "second", &len, NULL);
    ASSERT(b == NULL);
    b = run_cache_get(c, "first", &len, NULL);
    ASSERT(b != NULL);
    free(b);
    /* Never more than the bound: at most 4 entries of ~1 KB fit in 5000. */
    for (int i = 0; i < 3; i++) {
        snprintf(id, sizeof(id), "n%d", i);
        b = run_cache_get(c, id, &len, NULL);
        kept += b != NULL;
        free(b);
    }
    ASSERT(kept + 1 <= 4);
    /* A body larger than the whole cache is not kept at all. */
    {
        char *huge = calloc(1, 6000);
        run_cache_put(c, "huge", huge, 5999);
        free(huge);
    }
    ASSERT(run_cache_get(c, "huge", &len, NULL) == NULL);
    run_cache_free(c);
    return 0;
}

/* A hold is the entry's own bytes (no copy), and they stay as they were
 * while held, whatever the cache does meanwhile.  Under ASan a free too
 * early is a use after free here; without it, the bytes' check. */
static int test_hold(void)
{
    struct run_cache *c = run_cache_new(3000);
    char big[1000];
    void *h1, *h2, *h3, *none = &none;
    const char *b1, *b2, *b3;
    size_t len = 0;
    uint64_t tag = 0;

    ASSERT(run_cache_hold(c, "a", &len, &tag, &none) == NULL);
    ASSERT(none == NULL);
    run_cache_put(c, "a", "{\"v\":1}", 7);
    b1 = run_cache_hold(c, "a", &len, &tag, &h1);
    b2 = run_cache_hold(c, "a", &len, NULL, &h2);
    ASSERT(b1 != NULL && h1 != NULL && b1 == b2 && h1 == h2);
    ASSERT_EQ(len, 7);
    ASSERT(tag == hash_fnv1a64("{\"v\":1}", 7));
    /* Replaced: the holds keep the old bytes, a new hold gets the new. */
    run_cache_put(c, "a", "{\"v\":2}", 7);
    b3 = run_cache_hold(c, "a", &len, NULL, &h3);
    ASSERT(b3 != b1);
    ASSERT_STR_EQ(b3, "{\"v\":2}");
    ASSERT_STR_EQ(b1, "{\"v\":1}");
    counted_release(h1);
    ASSERT_STR_EQ(b2, "{\"v\":1}"); /* one hold let go, the other still reads */
    counted_release(h2);
    /* Evicted by the bound while held, then the cache freed: still there. */
    memset(big, 'x', sizeof(big));
    for (int i = 0; i < 4; i++) {
        char id[8];
        snprintf(id, sizeof(id), "n%d", i);
        run_cache_put(c, id, big, sizeof(big));
    }
    ASSERT(run_cache_get(c, "a", &len, NULL) == NULL);
    run_cache_free(c);
    ASSERT_STR_EQ(b3, "{\"v\":2}");
    counted_release(h3);
    counted_release(NULL);
    return 0;
}

TEST_MAIN({"hit, miss and replace", test_hit_and_miss}, {"holds", test_hold},
          {"byte bound and least recently used", test_bound_and_lru})
