/* The builder: a failure anywhere sticks, items handed in are never lost
 * or leaked, and under a failing allocator every Nth failure is seen. */
#include "alloc_fail.h"
#include "json_build.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

/* A run-shaped tree, as the store's readers make one. */
static cJSON *build_run(int *failed)
{
    struct json_build b = {0};
    cJSON *run = jb_new_object(&b), *device, *rows;

    jb_string(&b, run, "id", "0190a1b2-0000-7000-8000-000000000001");
    jb_string(&b, run, "label", NULL);
    jb_number(&b, run, "timeout_s", 600);
    device = jb_object(&b, run, "device");
    jb_number(&b, device, "index", 0);
    jb_string(&b, device, "name", "NVIDIA H200");
    rows = jb_array(&b, run, "rows");
    for (int i = 0; i < 4; i++) {
        cJSON *row = cJSON_CreateObject();
        if (row && !cJSON_AddNumberToObject(row, "median_ms", 1.5 * i)) {
            cJSON_Delete(row);
            row = NULL;
        }
        jb_push(&b, rows, row);
    }
    jb_item(&b, run, "params", cJSON_Parse("{\"strides\":[1,2,4]}"));
    jb_bool(&b, run, "valid", 1);
    jb_null(&b, run, "error");
    *failed = jb_failed(&b);
    if (*failed) {
        cJSON_Delete(run);
        return NULL;
    }
    return run;
}

static int test_whole_tree(void)
{
    int failed;
    cJSON *run;
    char *text;

    alloc_fail_arm(0);
    run = build_run(&failed);
    ASSERT(run != NULL && !failed);
    text = cJSON_PrintUnformatted(run);
    ASSERT(text != NULL);
    ASSERT(strstr(text, "\"label\":null") != NULL);
    ASSERT(strstr(text, "\"device\":{\"index\":0,\"name\":\"NVIDIA H200\"}") != NULL);
    ASSERT(strstr(text, "\"params\":{\"strides\":[1,2,4]}") != NULL);
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(run, "rows")), 4);
    free(text);
    cJSON_Delete(run);
    return 0;
}

/* Every allocation of the build failed in turn: each build must say so
 * (never a tree with a field missing passed as whole); ASan finds a leak
 * of any item handed in and dropped. */
static int test_every_allocation_fails_in_turn(void)
{
    long total;
    int failed;
    cJSON *run;

    alloc_fail_arm(0);
    run = build_run(&failed);
    total = alloc_fail_count();
    cJSON_Delete(run);
    ASSERT(total > 20);
    for (long n = 1; n <= total; n++) {
        alloc_fail_arm(n);
        run = build_run(&failed);
        ASSERT(alloc_fail_hit());
        if (!failed || run != NULL) {
            fprintf(stderr, "allocation %ld of %ld failed unseen\n", n, total);
            return 1;
        }
    }
    alloc_fail_arm(0);
    return 0;
}

/* Once failed, nothing more is added, and an item handed in is deleted
 * rather than leaked; a NULL parent or item fails the builder. */
static int test_failure_sticks(void)
{
    struct json_build b = {0};
    cJSON *obj = jb_new_object(&b);

    ASSERT(obj != NULL);
    ASSERT(jb_object(&b, NULL, "x") == NULL);
    ASSERT(jb_failed(&b));
    jb_string(&b, obj, "after", "no");
    jb_item(&b, obj, "owned", cJSON_CreateString("deleted, not leaked"));
    ASSERT(cJSON_GetObjectItem(obj, "after") == NULL);
    ASSERT(cJSON_GetObjectItem(obj, "owned") == NULL);
    cJSON_Delete(obj);

    b.failed = 0;
    obj = jb_new_object(&b);
    jb_item(&b, obj, "missing", NULL);
    ASSERT(jb_failed(&b));
    cJSON_Delete(obj);

    b.failed = 0;
    obj = jb_new_object(&b);
    jb_number(&b, obj, "nan", NAN);
    ASSERT(jb_failed(&b));
    cJSON_Delete(obj);
    return 0;
}

/* jb_number_or_null adds null for what JSON cannot hold, without failing
 * (a value read from outside); jb_copy copies a member when there is one
 * and adds nothing, failing nothing, when there is none. */
static int test_or_null_and_copy(void)
{
    struct json_build b = {0};
    cJSON *from = cJSON_Parse("{\"a\":{\"b\":[1,2]}}");
    cJSON *obj = jb_new_object(&b);
    char *text;

    ASSERT(from != NULL && obj != NULL);
    jb_number_or_null(&b, obj, "inf", INFINITY);
    jb_number_or_null(&b, obj, "nan", NAN);
    jb_number_or_null(&b, obj, "one", 1);
    jb_copy(&b, obj, from, "a");
    jb_copy(&b, obj, from, "absent");
    ASSERT(!jb_failed(&b));
    text = cJSON_PrintUnformatted(obj);
    ASSERT(text != NULL);
    ASSERT_STR_EQ(text, "{\"inf\":null,\"nan\":null,\"one\":1,\"a\":{\"b\":[1,2]}}");
    free(text);
    /* the copy is deep: the source can go */
    cJSON_Delete(from);
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "a"), "b")), 2);
    cJSON_Delete(obj);
    return 0;
}

TEST_MAIN({"whole_tree", test_whole_tree},
          {"or_null_and_copy", test_or_null_and_copy},
          {"every_allocation_fails_in_turn", test_every_allocation_fails_in_turn},
          {"failure_sticks", test_failure_sticks})
