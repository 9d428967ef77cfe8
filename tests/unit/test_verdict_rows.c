/*
 * test_verdict_rows.c - a run's rows packed for verdicts and unpacked
 * (server/verdict_rows.c) give back exactly the doubles the results parse
 * to, including those that cJSON's own printing would round (it keeps 15
 * digits when they read back only nearly equal), and refuse what they
 * could not keep exactly.
 */
#include "test.h"
#include "verdict_rows.h"

#include <float.h>
#include <stdlib.h>

static const char rows_text[] =
    "[{\"stride\":1,\"predicted_degree\":1,\"median_ms\":1.0940479636192322,"
    "\"min_ms\":1.0679999589920044,\"samples\":[1.0679999589920044,0.30000000000000004,"
    "1e-300,33.922431945800781,1.7976931348623157e308],"
    "\"sm_clock_mhz_measured\":1925.2457961909433},"
    "{\"stride\":32,\"median_ms\":33.9140796661377,\"samples\":[]},"
    "{\"variant\":\"tile32\",\"samples\":[2.5]}]";

static int test_round_trip_is_exact(void)
{
    cJSON *rows = cJSON_Parse(rows_text), *back;
    unsigned char *blob = NULL;
    char *text = NULL;
    size_t len = 0;
    const cJSON *a, *b;

    ASSERT(rows != NULL);
    ASSERT_EQ(verdict_rows_pack(rows, &text, &blob, &len), 0);
    ASSERT_EQ(len, 6 * 8);
    back = verdict_rows_unpack(text, blob, len);
    ASSERT(back != NULL);
    ASSERT_EQ(cJSON_GetArraySize(back), 3);
    for (a = rows->child, b = back->child; a && b; a = a->next, b = b->next) {
        static const char *const same[] = {"stride", "variant", "median_ms",
                                           "sm_clock_mhz_measured"};
        const cJSON *sa = cJSON_GetObjectItem(a, "samples");
        const cJSON *sb = cJSON_GetObjectItem(b, "samples");
        for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
            const cJSON *x = cJSON_GetObjectItem(a, same[i]), *y = cJSON_GetObjectItem(b, same[i]);
            ASSERT((x == NULL) == (y == NULL));
            if (cJSON_IsNumber(x)) /* the very same double, not a near one */
                ASSERT(memcmp(&x->valuedouble, &y->valuedouble, sizeof(double)) == 0);
            if (cJSON_IsString(x))
                ASSERT_STR_EQ(x->valuestring, y->valuestring);
        }
        /* what verdicts.c does not read is not kept */
        ASSERT(cJSON_GetObjectItem(b, "min_ms") == NULL);
        ASSERT(cJSON_GetObjectItem(b, "predicted_degree") == NULL);
        if (cJSON_GetArraySize(sa) == 0) { /* none or empty: the median is read */
            ASSERT(sb == NULL);
            continue;
        }
        ASSERT_EQ(cJSON_GetArraySize(sb), cJSON_GetArraySize(sa));
        for (const cJSON *x = sa->child, *y = sb->child; x && y; x = x->next, y = y->next)
            ASSERT(memcmp(&x->valuedouble, &y->valuedouble, sizeof(double)) == 0);
    }
    /* a blob that does not match its text is refused */
    ASSERT(verdict_rows_unpack(text, blob, len - 8) == NULL);
    ASSERT(verdict_rows_unpack(text, blob, len + 8) == NULL || len == 0);
    cJSON_Delete(back);
    cJSON_Delete(rows);
    free(text);
    free(blob);
    return 0;
}

static int test_inexact_rows_are_not_packed(void)
{
    static const char *const bad[] = {
        "[{\"stride\":1,\"samples\":[1.0,null,2.0]}]",
        "[{\"stride\":1,\"samples\":[1.0,\"x\"]}]",
        "[{\"stride\":1,\"samples\":[1e999]}]",
    };
    unsigned char *blob;
    char *text;
    size_t len;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cJSON *rows = cJSON_Parse(bad[i]);
        ASSERT(rows != NULL);
        ASSERT_EQ(verdict_rows_pack(rows, &text, &blob, &len), 1);
        ASSERT(text == NULL && blob == NULL);
        cJSON_Delete(rows);
    }
    return 0;
}

TEST_MAIN({"round_trip_is_exact", test_round_trip_is_exact},
          {"inexact_rows_are_not_packed", test_inexact_rows_are_not_packed})
