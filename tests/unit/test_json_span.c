/* The span of a member's value: found exactly where cJSON finds the
 * member, and "not found" wherever the two could disagree. */
#include "json_span.h"
#include "test.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

/* The span of name in text parses to the same value as cJSON's member. */
static int same_as_cjson(const char *text, const char *name)
{
    size_t start, len;
    cJSON *whole = cJSON_Parse(text), *part;
    int same;

    if (whole == NULL || json_member_span(text, strlen(text), name, &start, &len) != 0) {
        cJSON_Delete(whole);
        return 0;
    }
    part = cJSON_ParseWithLength(text + start, len);
    same = part && cJSON_Compare(part, cJSON_GetObjectItemCaseSensitive(whole, name), 1);
    cJSON_Delete(part);
    cJSON_Delete(whole);
    return same;
}

static int test_found(void)
{
    ASSERT(same_as_cjson("{\"id\":\"x\",\"results\":{\"rows\":[{\"a\":1.5e3}]},\"meta\":{}}",
                         "results"));
    ASSERT(same_as_cjson("{\"id\":\"x\",\"results\":{\"rows\":[{\"a\":1.5e3}]},\"meta\":{}}",
                         "meta"));
    /* strings with brackets, quotes and escapes inside the value */
    ASSERT(same_as_cjson("{\"results\":{\"s\":\"} ] \\\" {\",\"t\":[\"\\\\\",\"]\"]},\"z\":1}",
                         "results"));
    /* whitespace everywhere, scalars before it */
    ASSERT(same_as_cjson(" {\n \"n\" : -1.25e-7 , \"b\" : true ,\"x\":null, \"meta\" : "
                         "[ 1 , {\"k\" : \"v\"} ] } ",
                         "meta"));
    /* runs of backslashes before a quote: even closes, odd escapes */
    ASSERT(same_as_cjson("{\"results\":{\"s\":\"a\\\\\\\\\",\"t\":\"\\\\\\\"}\\\\\"},\"z\":1}",
                         "results"));
    ASSERT(same_as_cjson("{\"meta\":\"just a string\"}", "meta"));
    ASSERT(same_as_cjson("{\"meta\":42}", "meta"));
    return 0;
}

static int test_not_found_where_cjson_could_differ(void)
{
    size_t s, n;
    const char *dup = "{\"results\":{\"a\":1},\"results\":{\"a\":2}}";
    const char *cased = "{\"Results\":{\"a\":1},\"results\":{\"a\":2}}";
    const char *escaped = "{\"res\\u0075lts\":{\"a\":1}}";
    const char *absent = "{\"id\":\"results\",\"x\":{\"results\":1}}";

    ASSERT_EQ(json_member_span(dup, strlen(dup), "results", &s, &n), -1);
    ASSERT_EQ(json_member_span(cased, strlen(cased), "results", &s, &n), -1);
    ASSERT_EQ(json_member_span(escaped, strlen(escaped), "results", &s, &n), -1);
    ASSERT_EQ(json_member_span(absent, strlen(absent), "results", &s, &n), -1);
    ASSERT_EQ(json_member_span("[1,2]", 5, "results", &s, &n), -1);
    ASSERT_EQ(json_member_span("", 0, "results", &s, &n), -1);
    /* cut short: never a span past the end */
    ASSERT_EQ(json_member_span("{\"results\":{\"a\":[1,2", 20, "results", &s, &n), -1);
    return 0;
}

/* The tree way json_copy_without stands for (run_judge.c's): the first
 * "samples" member of every object deleted, at any depth. */
static void prune_tree(cJSON *node)
{
    cJSON *c = cJSON_IsObject(node) ? cJSON_GetObjectItemCaseSensitive(node, "samples") : NULL;

    if (c != NULL)
        cJSON_Delete(cJSON_DetachItemViaPointer(node, c));
    for (c = node->child; c != NULL; c = c->next)
        if (c->child != NULL)
            prune_tree(c);
}

/* json_copy_without(text) parses to the tree pruned. */
static int same_as_pruned(const char *text)
{
    cJSON *tree = cJSON_Parse(text), *copy;
    char *pruned = json_copy_without(text, strlen(text), "samples", "series");
    int same;

    if (tree == NULL || pruned == NULL) {
        cJSON_Delete(tree);
        free(pruned);
        return 0;
    }
    prune_tree(tree);
    cJSON_DeleteItemFromObjectCaseSensitive(tree, "series");
    copy = cJSON_Parse(pruned);
    same = copy && cJSON_Compare(copy, tree, 1);
    cJSON_Delete(copy);
    cJSON_Delete(tree);
    free(pruned);
    return same;
}

static int test_copy_without(void)
{
    const char *escaped = "{\"sampl\\u0065s\":[1],\"a\":1}";
    const char *twice = "{\"samples\":[1],\"samples\":[2],\"a\":1}";
    const char *spaced = "{ \"samples\": [1], \"m\" : 1.50,\n \"r\": [ {\"x\": \"a b\", "
                         "\"samples\": [2]} ], \"series\": [] }";
    char *pruned;

    ASSERT(same_as_pruned("{\"samples\":[1,2.5e-3],\"median_ms\":1.25}"));
    ASSERT(same_as_pruned("{\"median_ms\":1.25,\"samples\":[1,2]}"));
    ASSERT(same_as_pruned("{ \"a\" : { \"samples\" : [ 1 ] , \"b\" : \"s a m\" } , "
                          "\"rows\" : [ {\"samples\":[3],\"x\":null}, [true, {}] ], "
                          "\"series\": [1,2], \"c\": []}"));
    /* a series below the top stays, an empty object is kept */
    ASSERT(same_as_pruned("{\"launch\":{\"series\":[1],\"samples\":{}},\"k\":{}}"));
    ASSERT(same_as_pruned("{\"samples\":[1]}"));
    ASSERT(same_as_pruned("{\"s\":\"} ] \\\" {\\\\\",\"samples\":[\"]\"]}"));
    /* the bytes as they were, whitespace out */
    pruned = json_copy_without(spaced, strlen(spaced), "samples", "series");
    ASSERT(pruned != NULL);
    ASSERT_STR_EQ(pruned, "{\"m\":1.50,\"r\":[{\"x\":\"a b\"}]}");
    free(pruned);
    /* where the tree could differ: no copy */
    ASSERT(json_copy_without(escaped, strlen(escaped), "samples", "series") == NULL);
    ASSERT(json_copy_without(twice, strlen(twice), "samples", "series") == NULL);
    ASSERT(json_copy_without("{\"a\":[1,2", 9, "samples", "series") == NULL);
    return 0;
}

TEST_MAIN({"found where cJSON finds it", test_found},
          {"copied without samples as the pruned tree", test_copy_without},
          {"not found where cJSON could pick another", test_not_found_where_cjson_could_differ})
