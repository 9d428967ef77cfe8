/* json_arena.h: a tree parsed in an arena takes no malloc a node and its
 * frees are no-ops; what is allocated outside begin/stop (a print, another
 * thread's parse) is malloc's and is freed by free(); a rewound arena
 * keeps one chunk for the next tree, grown to the largest one so far. */
#include "json_arena.h"
#include "test.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char run_text[] = "{\"id\":\"x\",\"results\":{\"rows\":[{\"median_ms\":1.5,"
                               "\"samples\":[1.25,1.5,1.75,2]}]},\"meta\":{\"k\":\"v\"}}";

/* A parse on another thread while the main one has an arena bound. */
static void *parse_elsewhere(void *arg)
{
    cJSON *v = cJSON_Parse(run_text);
    char *text = v ? cJSON_PrintUnformatted(v) : NULL;

    (void)arg;
    cJSON_Delete(v);
    free(text); /* malloc's, or ASan says so */
    return text ? (void *)1 : NULL;
}

static int test_a_tree_in_the_arena(void)
{
    struct json_arena a = {0};
    cJSON *run;
    char *printed;
    void *other = NULL;
    pthread_t th;
    size_t bytes;

    json_arena_install(); /* as main() does */

    json_arena_begin(&a);
    run = cJSON_Parse(run_text);
    json_arena_stop();
    ASSERT(run != NULL);
    bytes = json_arena_bytes(&a);
    ASSERT(bytes > 0); /* the tree took the arena's bytes */
    /* a print after stop is malloc's: the caller frees it with free() */
    printed = cJSON_PrintUnformatted(run);
    ASSERT(printed != NULL);
    ASSERT_STR_EQ(printed, run_text);
    free(printed);
    ASSERT_EQ(pthread_create(&th, NULL, parse_elsewhere, NULL), 0);
    ASSERT_EQ(pthread_join(th, &other), 0);
    ASSERT(other != NULL);
    cJSON_Delete(run); /* no-ops: the arena's */
    json_arena_end();
    ASSERT_EQ(json_arena_bytes(&a), bytes); /* one chunk kept */
    /* the next tree in the same chunk, read whole */
    json_arena_begin(&a);
    run = cJSON_Parse(run_text);
    json_arena_stop();
    ASSERT(run != NULL);
    ASSERT_EQ(json_arena_bytes(&a), bytes);
    ASSERT(cJSON_GetNumberValue(cJSON_GetArrayItem(
               cJSON_GetObjectItem(cJSON_GetArrayItem(
                                       cJSON_GetObjectItem(cJSON_GetObjectItem(run, "results"),
                                                           "rows"),
                                       0),
                                   "samples"),
               3)) == 2);
    cJSON_Delete(run);
    json_arena_end();
    json_arena_free(&a);
    ASSERT_EQ(json_arena_bytes(&a), 0);
    return 0;
}

static int test_a_tree_larger_than_a_chunk(void)
{
    struct json_arena a = {0};
    size_t n = 600 * 1024, first;
    char *big = malloc(n + 3);
    cJSON *v;

    json_arena_install(); /* as main() does */

    ASSERT(big != NULL);
    big[0] = '"';
    memset(big + 1, 'a', n);
    big[n + 1] = '"';
    big[n + 2] = '\0';
    json_arena_begin(&a);
    v = cJSON_Parse(run_text);
    first = json_arena_bytes(&a);
    cJSON_Delete(v);
    v = cJSON_Parse(big); /* a second, larger chunk */
    json_arena_stop();
    ASSERT(v != NULL);
    ASSERT_EQ(strlen(cJSON_GetStringValue(v)), n);
    ASSERT(json_arena_bytes(&a) > first + n);
    cJSON_Delete(v);
    json_arena_end();
    /* both chunks given back; the next first chunk holds such a tree */
    ASSERT_EQ(json_arena_bytes(&a), 0);
    json_arena_begin(&a);
    v = cJSON_Parse(big);
    json_arena_stop();
    ASSERT(v != NULL);
    ASSERT(json_arena_bytes(&a) >= n);
    cJSON_Delete(v);
    json_arena_end();
    json_arena_free(&a);
    free(big);
    return 0;
}

static int test_no_arena_is_malloc(void)
{
    struct json_arena a = {0};
    cJSON *v;

    json_arena_install(); /* as main() does */

    /* nothing bound: malloc's, as without the hooks */
    v = cJSON_Parse(run_text);
    ASSERT(v != NULL);
    cJSON_Delete(v);
    /* bound but stopped: frees of malloc's pointers still reach free() */
    v = cJSON_Parse(run_text);
    json_arena_begin(&a);
    json_arena_stop();
    cJSON_Delete(v);
    json_arena_end();
    ASSERT_EQ(json_arena_bytes(&a), 0);
    return 0;
}

TEST_MAIN({"a tree in the arena", test_a_tree_in_the_arena},
          {"a tree larger than a chunk", test_a_tree_larger_than_a_chunk},
          {"no arena: malloc", test_no_arena_is_malloc})
