/* Issue 16's common/ rules (server side): the gmem sector prediction
 * (gb_predict_gmem_sectors), the link_degraded rule of the validity judge,
 * and the health suite's expansion (common/bench_suite.c). */
#include "bench_suite.h"
#include "predict.h"
#include "test.h"
#include "validity.h"

#include <stdio.h>
#include <string.h>

/* 4-byte words: stride s puts lanes 4*s bytes apart, so 32 lanes touch
 * 32*4*s bytes: s sectors' worth up to 32 bytes apart (s = 8), then one
 * sector a lane; stride 0 is one word, one sector. */
static int test_gmem_sectors_4_byte_words(void)
{
    static const struct {
        int stride, sectors;
    } cases[] = {
        {0, 1},
        {1, 4},
        {2, 8},
        {3, 12},
        {4, 16},
        {5, 20},
        {6, 24},
        {7, 28},
        {8, 32},
        {9, 32},
        {16, 32},
        {32, 32},
        {33, 32},
        {1024, 32},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ASSERT_EQ(gb_predict_gmem_sectors(cases[i].stride, 4), cases[i].sectors);
    return 0;
}

/* Wider words: 8-byte words at stride 1 are 256 bytes, 8 sectors; 16-byte
 * ones 16 sectors; 1-byte words at stride 1 fit in one sector. */
static int test_gmem_sectors_word_sizes(void)
{
    ASSERT_EQ(gb_predict_gmem_sectors(1, 8), 8);
    ASSERT_EQ(gb_predict_gmem_sectors(1, 16), 16);
    ASSERT_EQ(gb_predict_gmem_sectors(1, 1), 1);
    ASSERT_EQ(gb_predict_gmem_sectors(4, 8), 32);
    /* a 16-byte word at byte 16*3=48 .. 63 stays in one sector */
    ASSERT_EQ(gb_predict_gmem_sectors(2, 16), 32);
    /* one 16-byte word read by every lane: one sector */
    ASSERT_EQ(gb_predict_gmem_sectors(0, 16), 1);
    ASSERT_EQ(gb_predict_gmem_sectors(-1, 4), 0);
    ASSERT_EQ(gb_predict_gmem_sectors(1, 0), 0);
    return 0;
}

/* The count must equal a brute-force set of sector numbers. */
static int test_gmem_sectors_match_brute_force(void)
{
    for (int wb = 1; wb <= 16; wb++) {
        for (int s = 0; s <= 80; s++) {
            char seen[32 * 80 * 16 / 32 + 2] = {0};
            int n = 0;
            for (int lane = 0; lane < 32; lane++)
                for (int b = 0; b < wb; b++) {
                    int sec = (lane * s * wb + b) / 32;
                    if (!seen[sec]) {
                        seen[sec] = 1;
                        n++;
                    }
                }
            ASSERT_EQ(gb_predict_gmem_sectors(s, wb), n);
        }
    }
    return 0;
}

/* 128-byte lines of 4-byte words: one per 32 words of stride 1, then one
 * per lane once the lanes are 128 bytes (32 words) apart; stride 33 has
 * 32 too; never fewer than the sectors divided by 4. */
static int test_gmem_lines(void)
{
    static const struct {
        int stride, lines;
    } cases[] = {
        {1, 1},
        {2, 2},
        {4, 4},
        {8, 8},
        {12, 12},
        {16, 16},
        {24, 24},
        {31, 31},
        {32, 32},
        {33, 32},
        {64, 32},
        {1024, 32},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ASSERT_EQ(gb_predict_gmem_lines(cases[i].stride, 4), cases[i].lines);
        ASSERT_EQ(gb_lines_for_stride(cases[i].stride), cases[i].lines);
    }
    ASSERT_EQ(gb_lines_for_stride(0), 0);
    for (int wb = 1; wb <= 16; wb++)
        for (int s = 0; s <= 80; s++) {
            char seen[32 * 80 * 16 / 128 + 2] = {0};
            int n = 0;
            for (int lane = 0; lane < 32; lane++)
                for (int b = 0; b < wb; b++) {
                    int line = (lane * s * wb + b) / 128;
                    n += !seen[line];
                    seen[line] = 1;
                }
            ASSERT_EQ(gb_predict_gmem_lines(s, wb), n);
            ASSERT(4 * n >= gb_predict_gmem_sectors(s, wb));
        }
    return 0;
}

static cJSON *judge_link(const char *link, int watched)
{
    char text[1024];
    cJSON *meta, *v;

    snprintf(text, sizeof(text), "{%s\"link\":%s}",
             watched ? "\"watch\":{\"available\":true}," : "", link);
    meta = cJSON_Parse(text);
    v = gb_validity_judge(NULL, meta);
    cJSON_Delete(meta);
    return v;
}

static const cJSON *reason_at(const cJSON *v, int i)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(v, "reasons"), i);
}

static int test_link_full_is_valid(void)
{
    cJSON *v = judge_link("{\"gen_current\":5,\"gen_max\":5,\"width_current\":16,"
                          "\"width_max\":16,\"predicted_gbps\":63}",
                          1);
    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(v, "valid")));
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(v, "reasons")), 0);
    cJSON_Delete(v);
    return 0;
}

static int test_link_gen_degraded(void)
{
    cJSON *v = judge_link("{\"gen_current\":4,\"gen_max\":5,\"width_current\":16,"
                          "\"width_max\":16}",
                          1);
    const cJSON *r = reason_at(v, 0);
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(v, "valid")));
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(r, "code")), "link_degraded");
    ASSERT_EQ(cJSON_GetObjectItem(r, "gen_current")->valuedouble, 4);
    ASSERT_EQ(cJSON_GetObjectItem(r, "gen_max")->valuedouble, 5);
    ASSERT(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(r, "message")), "gen 4") != NULL);
    cJSON_Delete(v);
    return 0;
}

static int test_link_width_degraded(void)
{
    cJSON *v = judge_link("{\"gen_current\":5,\"gen_max\":5,\"width_current\":8,"
                          "\"width_max\":16}",
                          1);
    const cJSON *r = reason_at(v, 0);
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(v, "valid")));
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(r, "code")), "link_degraded");
    ASSERT_EQ(cJSON_GetObjectItem(r, "width_current")->valuedouble, 8);
    ASSERT_EQ(cJSON_GetObjectItem(r, "width_max")->valuedouble, 16);
    ASSERT(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(r, "message")), "x8") != NULL);
    cJSON_Delete(v);
    return 0;
}

/* Without meta.watch a run is "unknown", unless its link is known bad. */
static int test_link_judged_without_watch(void)
{
    cJSON *v = judge_link("{\"gen_current\":3,\"gen_max\":5,\"width_current\":16,"
                          "\"width_max\":16}",
                          0);
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(v, "valid")));
    cJSON_Delete(v);
    v = judge_link("{\"gen_current\":5,\"gen_max\":5}", 0);
    ASSERT(cJSON_IsNull(cJSON_GetObjectItem(v, "valid")));
    cJSON_Delete(v);
    /* a field NVML could not read (null) is not judged */
    v = judge_link("{\"gen_current\":null,\"gen_max\":5,\"width_current\":16,"
                   "\"width_max\":16}",
                   1);
    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(v, "valid")));
    cJSON_Delete(v);
    return 0;
}

/* The suite's members are the table's benchmarks with health_params, and
 * requested params go over the short form of those that take them. */
static int test_health_suite_expands(void)
{
    const struct gb_suite *s = gb_suite_find("health");
    const struct gb_benchmark *members[GB_SUITE_MAX_MEMBERS];
    struct gb_error err;
    cJSON *given, *p;
    int n, found_stride = 0;

    ASSERT(s != NULL);
    ASSERT(gb_suite_find("nightly") == NULL);
    n = gb_suite_members(s, members, GB_SUITE_MAX_MEMBERS);
    ASSERT(n >= 1);
    for (int i = 0; i < n; i++) {
        ASSERT(members[i]->health_params != NULL);
        ASSERT(!members[i]->test_only);
        found_stride |= strcmp(members[i]->name, "smem_stride") == 0;
    }
    ASSERT(found_stride);
    given = cJSON_Parse("{\"samples\":7}");
    p = gb_suite_member_params(s, gb_benchmark_find("smem_stride"), given, &err);
    ASSERT(p != NULL);
    ASSERT_EQ(cJSON_GetObjectItem(p, "samples")->valueint, 7);
    /* the short form's strides, not the benchmark's default */
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(p, "strides")), 4);
    cJSON_Delete(p);
    cJSON_Delete(given);
    given = cJSON_Parse("{\"stides\":[1]}");
    ASSERT(gb_suite_check_params(s, given, &err) != 0);
    ASSERT_STR_EQ(err.field, "params.stides");
    cJSON_Delete(given);
    return 0;
}

TEST_MAIN({"gmem_sectors_4_byte_words", test_gmem_sectors_4_byte_words},
          {"gmem_sectors_word_sizes", test_gmem_sectors_word_sizes},
          {"gmem_sectors_match_brute_force", test_gmem_sectors_match_brute_force},
          {"gmem_lines", test_gmem_lines},
          {"link_full_is_valid", test_link_full_is_valid},
          {"link_gen_degraded", test_link_gen_degraded},
          {"link_width_degraded", test_link_width_degraded},
          {"link_judged_without_watch", test_link_judged_without_watch},
          {"health_suite_expands", test_health_suite_expands})
