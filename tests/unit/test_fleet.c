/*
 * test_fleet.c - server/judge/fleet.c, pure: the robust z of each card's median
 * among its fleet (z = 0.6745 (x - median) / MAD), the outlier rule (|z|
 * past 3.5 and beyond the margin), rows judged only with FLEET_MIN_CARDS or
 * more, a MAD of 0, and GET /fleet's order (cards with an outlier row
 * first, the farthest first, the others as stored), for a run judged at
 * its end (fleet_judge_run) and for GET /fleet (fleet_build).
 */
#include "alloc_fail.h"
#include "test.h"

#include <cjson/cJSON.h>
#include <stdio.h>

#include "fleet.h"

#define MARGIN 0.01

/* One card's rows of smem_stride: strides 1 and 32 with these medians. */
static cJSON *rows2(double ms1, double ms32)
{
    char text[160];

    snprintf(text, sizeof(text), "[{\"stride\": 1, \"median_ms\": %.17g}, "
                                 "{\"stride\": 32, \"median_ms\": %.17g}]",
             ms1, ms32);
    return cJSON_Parse(text);
}

/* A card of GET /fleet's input. */
static cJSON *card(const char *group, const char *uuid, double ms1, double ms32)
{
    cJSON *c = cJSON_CreateObject();

    cJSON_AddStringToObject(c, "group", group);
    cJSON_AddStringToObject(c, "benchmark", "smem_stride");
    cJSON_AddStringToObject(c, "card_model", group);
    cJSON_AddItemToObject(c, "params", cJSON_Parse("{\"strides\": [1, 32]}"));
    cJSON_AddStringToObject(c, "host", "h");
    cJSON_AddStringToObject(c, "device_uuid", uuid);
    cJSON_AddStringToObject(c, "run_id", uuid);
    cJSON_AddItemToObject(c, "rows", rows2(ms1, ms32));
    return c;
}

static cJSON *peer(const char *id, double ms1, double ms32)
{
    cJSON *p = cJSON_CreateObject();

    cJSON_AddStringToObject(p, "host", "h");
    cJSON_AddStringToObject(p, "device_uuid", id);
    cJSON_AddStringToObject(p, "run_id", id);
    cJSON_AddItemToObject(p, "rows", rows2(ms1, ms32));
    return p;
}

static double num(const cJSON *obj, const char *name)
{
    return cJSON_GetNumberValue(cJSON_GetObjectItem(obj, name));
}

static int is_true(const cJSON *obj, const char *name)
{
    return cJSON_IsTrue(cJSON_GetObjectItem(obj, name));
}

/* The run 12 ms among peers of 9.9, 9.95, 10, 10.05, 10.1 (row 1): median
 * 10.025, MAD 0.075, z = 0.6745 * 1.975 / 0.075 = 17.76: an outlier; row
 * 32 as its peers. */
static int test_judge_run_robust_z(void)
{
    static const double others[] = {9.9, 9.95, 10, 10.05, 10.1};
    cJSON *peers = cJSON_CreateArray(), *mine = rows2(12, 5.0), *out;
    const cJSON *r1, *r32;
    char id[8];

    for (int i = 0; i < 5; i++) {
        snprintf(id, sizeof(id), "p%d", i);
        cJSON_AddItemToArray(peers, peer(id, others[i], 5.0 + 0.01 * (i - 2)));
    }
    out = fleet_judge_run("smem_stride", mine, peers, MARGIN);
    ASSERT(out != NULL);
    ASSERT_EQ(num(out, "cards"), 6);
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(out, "peers")), 5);
    r1 = cJSON_GetArrayItem(cJSON_GetObjectItem(out, "rows"), 0);
    r32 = cJSON_GetArrayItem(cJSON_GetObjectItem(out, "rows"), 1);
    ASSERT_EQ(num(r1, "key"), 1);
    ASSERT_NEAR(num(r1, "value_ms"), 12, 1e-12);
    ASSERT_NEAR(num(r1, "median_ms"), 10.025, 1e-9);
    ASSERT_NEAR(num(r1, "mad_ms"), 0.075, 1e-9);
    ASSERT_NEAR(num(r1, "z"), 0.6745 * 1.975 / 0.075, 1e-6);
    ASSERT(is_true(r1, "outlier"));
    ASSERT_EQ(num(r32, "key"), 32);
    ASSERT(fabs(num(r32, "z")) < 3.5);
    ASSERT(!is_true(r32, "outlier"));
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(out, "outlier_rows")), 1);
    ASSERT_EQ(cJSON_GetArrayItem(cJSON_GetObjectItem(out, "outlier_rows"), 0)->valuedouble, 1);
    cJSON_Delete(out);
    cJSON_Delete(mine);
    cJSON_Delete(peers);
    return 0;
}

/* Two cards say nothing of which is off: z null, no outlier, even 2x. */
static int test_too_few_cards(void)
{
    cJSON *peers = cJSON_CreateArray(), *mine = rows2(20, 10), *out;
    const cJSON *r;

    cJSON_AddItemToArray(peers, peer("p", 10, 5));
    out = fleet_judge_run("smem_stride", mine, peers, MARGIN);
    ASSERT(out != NULL);
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(out, "rows")) {
        ASSERT(cJSON_IsNull(cJSON_GetObjectItem(r, "z")));
        ASSERT(!is_true(r, "outlier"));
    }
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(out, "outlier_rows")), 0);
    cJSON_Delete(out);
    cJSON_Delete(mine);
    cJSON_Delete(peers);
    return 0;
}

/* A MAD of 0 (equal peers): z is infinite (null) and the margin decides:
 * 5% off is an outlier, 0.5% off is not. */
static int test_mad_zero_margin_decides(void)
{
    cJSON *peers = cJSON_CreateArray(), *mine = rows2(10.5, 10.05), *out;
    const cJSON *r1, *r32;

    for (int i = 0; i < 4; i++)
        cJSON_AddItemToArray(peers, peer("p", 10, 10));
    out = fleet_judge_run("smem_stride", mine, peers, MARGIN);
    ASSERT(out != NULL);
    r1 = cJSON_GetArrayItem(cJSON_GetObjectItem(out, "rows"), 0);
    r32 = cJSON_GetArrayItem(cJSON_GetObjectItem(out, "rows"), 1);
    ASSERT_NEAR(num(r1, "mad_ms"), 0, 0);
    ASSERT(cJSON_IsNull(cJSON_GetObjectItem(r1, "z")));
    ASSERT(is_true(r1, "outlier"));
    ASSERT(!is_true(r32, "outlier"));
    cJSON_Delete(out);
    cJSON_Delete(mine);
    cJSON_Delete(peers);
    return 0;
}

/* Past |z| 3.5 but within the margin is no outlier: a very quiet fleet. */
static int test_within_margin_not_outlier(void)
{
    static const double others[] = {10.000, 10.001, 9.999, 10.0005, 9.9995};
    cJSON *peers = cJSON_CreateArray(), *mine = rows2(10.05, 10), *out;
    const cJSON *r1;

    for (int i = 0; i < 5; i++)
        cJSON_AddItemToArray(peers, peer("p", others[i], 10));
    out = fleet_judge_run("smem_stride", mine, peers, MARGIN);
    ASSERT(out != NULL);
    r1 = cJSON_GetArrayItem(cJSON_GetObjectItem(out, "rows"), 0);
    ASSERT(num(r1, "z") > 3.5);
    ASSERT(!is_true(r1, "outlier"));
    cJSON_Delete(out);
    cJSON_Delete(mine);
    cJSON_Delete(peers);
    return 0;
}

/* GET /fleet: groups by key; in a group the cards with an outlier row
 * first, the farthest first, the rest in the order given; a slow and a
 * fast outlier both count. */
static int test_build_order(void)
{
    cJSON *cards = cJSON_CreateArray(), *out;
    const cJSON *groups, *a, *b, *list;
    static const char *const order[] = {"far", "near", "ok1", "ok2", "ok3", "ok4", "ok5"};

    cJSON_AddItemToArray(cards, card("A", "ok1", 10.0, 5.0));
    cJSON_AddItemToArray(cards, card("B", "b1", 1.0, 1.0));
    cJSON_AddItemToArray(cards, card("A", "near", 9.0, 5.0)); /* fast: z -13.5 */
    cJSON_AddItemToArray(cards, card("A", "ok2", 10.05, 5.01));
    cJSON_AddItemToArray(cards, card("A", "far", 10.0, 7.0)); /* slow: z +134 */
    cJSON_AddItemToArray(cards, card("A", "ok3", 9.95, 4.99));
    cJSON_AddItemToArray(cards, card("B", "b2", 1.0, 1.0));
    cJSON_AddItemToArray(cards, card("A", "ok4", 10.1, 5.0));
    cJSON_AddItemToArray(cards, card("A", "ok5", 9.9, 5.02));
    out = fleet_build(cards, MARGIN);
    ASSERT(out != NULL);
    ASSERT_NEAR(num(out, "outlier_z"), 3.5, 0);
    groups = cJSON_GetObjectItem(out, "groups");
    ASSERT_EQ(cJSON_GetArraySize(groups), 2);
    a = cJSON_GetArrayItem(groups, 0);
    b = cJSON_GetArrayItem(groups, 1);
    ASSERT_STR_EQ(cJSON_GetStringValue(
                      cJSON_GetObjectItem(cJSON_GetObjectItem(a, "key"), "card_model")),
                  "A");
    list = cJSON_GetObjectItem(a, "cards");
    ASSERT_EQ(cJSON_GetArraySize(list), 7);
    for (int i = 0; i < 7; i++) {
        const cJSON *c = cJSON_GetArrayItem(list, i);
        ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(c, "device_uuid")), order[i]);
        ASSERT_EQ(is_true(c, "outlier"), i < 2);
    }
    /* the group's rows: median and MAD of its seven cards */
    ASSERT_EQ(num(cJSON_GetArrayItem(cJSON_GetObjectItem(a, "rows"), 0), "cards"), 7);
    ASSERT_NEAR(num(cJSON_GetArrayItem(cJSON_GetObjectItem(a, "rows"), 0), "median_ms"), 10.0,
                1e-12);
    /* two cards: nothing judged, nobody an outlier */
    list = cJSON_GetObjectItem(b, "cards");
    ASSERT_EQ(cJSON_GetArraySize(list), 2);
    ASSERT(!is_true(cJSON_GetArrayItem(list, 0), "outlier"));
    ASSERT(cJSON_IsNull(cJSON_GetObjectItem(
        cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "rows"), 0), "z")));
    cJSON_Delete(out);
    cJSON_Delete(cards);
    return 0;
}

/* known_answer's cards: three share each kind's hash, one computes fp32
 * otherwise (issue 32); a group of two that disagree has no majority. */
static cJSON *hash_card(const char *uuid, const char *fp32)
{
    char text[512];

    snprintf(text, sizeof(text),
             "{\"group\": \"k\", \"benchmark\": \"known_answer\", \"card_model\": \"H\","
             " \"host\": \"h\", \"device_uuid\": \"%s\", \"run_id\": \"r%s\", \"rows\": ["
             "{\"label\": \"fp32_fma\", \"result_hash\": \"%s\"},"
             "{\"label\": \"int_mix\", \"result_hash\": \"aaaa\"}]}",
             uuid, uuid, fp32);
    return cJSON_Parse(text);
}

static int test_result_hashes(void)
{
    cJSON *cards = cJSON_CreateArray(), *out;
    const cJSON *g, *h, *c;

    cJSON_AddItemToArray(cards, hash_card("a", "1111"));
    cJSON_AddItemToArray(cards, hash_card("b", "2222"));
    cJSON_AddItemToArray(cards, hash_card("c", "1111"));
    cJSON_AddItemToArray(cards, hash_card("d", "1111"));
    out = fleet_build(cards, MARGIN);
    g = cJSON_GetArrayItem(cJSON_GetObjectItem(out, "groups"), 0);
    h = cJSON_GetObjectItem(g, "result_hashes");
    ASSERT_EQ(cJSON_GetArraySize(h), 2);
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(h, 0), "majority")),
                  "1111");
    ASSERT_EQ(num(cJSON_GetArrayItem(h, 0), "cards"), 4);
    ASSERT_EQ(num(cJSON_GetArrayItem(h, 0), "differ"), 1);
    ASSERT_EQ(num(cJSON_GetArrayItem(h, 1), "differ"), 0);
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(g, "cards")) {
        int off = strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "device_uuid")), "b") == 0;
        ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(c, "hash_differs")), off);
    }
    cJSON_Delete(out);
    /* two cards that disagree: no majority, both differ */
    cJSON_DeleteItemFromArray(cards, 3);
    cJSON_DeleteItemFromArray(cards, 2);
    out = fleet_build(cards, MARGIN);
    g = cJSON_GetArrayItem(cJSON_GetObjectItem(out, "groups"), 0);
    h = cJSON_GetArrayItem(cJSON_GetObjectItem(g, "result_hashes"), 0);
    ASSERT(cJSON_IsNull(cJSON_GetObjectItem(h, "majority")));
    ASSERT_EQ(num(h, "differ"), 2);
    cJSON_Delete(out);
    /* rows without a hash: no such part */
    cJSON_Delete(cards);
    cards = cJSON_CreateArray();
    cJSON_AddItemToArray(cards, card("A", "x", 1.0, 1.0));
    out = fleet_build(cards, MARGIN);
    g = cJSON_GetArrayItem(cJSON_GetObjectItem(out, "groups"), 0);
    ASSERT(cJSON_GetObjectItem(g, "result_hashes") == NULL);
    ASSERT(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(g, "cards"), 0),
                               "hash_differs") == NULL);
    cJSON_Delete(out);
    cJSON_Delete(cards);
    return 0;
}

/* A card without a row the others have is judged on the rows it has. */
static int test_missing_row(void)
{
    cJSON *cards = cJSON_CreateArray(), *out, *c;
    const cJSON *g;

    for (int i = 0; i < 4; i++)
        cJSON_AddItemToArray(cards, card("A", "x", 10 + 0.01 * i, 5 + 0.01 * i));
    c = card("A", "short", 10, 5);
    cJSON_DeleteItemFromArray(cJSON_GetObjectItem(c, "rows"), 1);
    cJSON_AddItemToArray(cards, c);
    out = fleet_build(cards, MARGIN);
    ASSERT(out != NULL);
    g = cJSON_GetArrayItem(cJSON_GetObjectItem(out, "groups"), 0);
    ASSERT_EQ(num(cJSON_GetArrayItem(cJSON_GetObjectItem(g, "rows"), 0), "cards"), 5);
    ASSERT_EQ(num(cJSON_GetArrayItem(cJSON_GetObjectItem(g, "rows"), 1), "cards"), 4);
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(g, "cards")) {
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "device_uuid")), "short") == 0)
            ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(c, "rows")), 1);
    }
    cJSON_Delete(out);
    cJSON_Delete(cards);
    return 0;
}

/* Digest rows of smem_stride whose samples held iters iterations, at
 * us1 and us32 microseconds an iteration (a sample's time grows with
 * the work the calibration picked, the speed does not). */
static cJSON *rows_iters(double us1, double us32, int iters)
{
    char text[240];

    snprintf(text, sizeof(text),
             "[{\"stride\": 1, \"median_ms\": %.17g, \"iterations_per_sample\": %d}, "
             "{\"stride\": 32, \"median_ms\": %.17g, \"iterations_per_sample\": %d}]",
             us1 * 1e-3 * iters, iters, us32 * 1e-3 * iters, iters);
    return cJSON_Parse(text);
}

/* Issue 21: seven cards of one speed, one of whose calibration landed on
 * 4096 iterations a sample and the others on 1024 (4x its milliseconds):
 * judged per iteration, nobody is an outlier, each value and the median
 * are the time of one iteration, and the answer says so. */
static int test_per_unit_of_work(void)
{
    cJSON *cards = cJSON_CreateArray(), *peers = cJSON_CreateArray(), *out, *c;
    const cJSON *g, *cell;
    char id[8];

    for (int i = 0; i < 7; i++) {
        snprintf(id, sizeof(id), "c%d", i);
        c = card("A", id, 0, 0);
        cJSON_ReplaceItemInObject(c, "rows",
                                  rows_iters(1.0 + 0.001 * i, 32.0, i == 3 ? 4096 : 1024));
        cJSON_AddItemToArray(cards, c);
        if (i > 0) {
            c = peer(id, 0, 0);
            cJSON_ReplaceItemInObject(c, "rows", rows_iters(1.0 + 0.001 * i, 32.0, 1024));
            cJSON_AddItemToArray(peers, c);
        }
    }
    out = fleet_build(cards, MARGIN);
    ASSERT(out != NULL);
    g = cJSON_GetArrayItem(cJSON_GetObjectItem(out, "groups"), 0);
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(g, "time_per")), "iteration");
    ASSERT_NEAR(num(cJSON_GetArrayItem(cJSON_GetObjectItem(g, "rows"), 1), "median_ms"), 32e-3,
                1e-12);
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(g, "cards")) {
        ASSERT(!is_true(c, "outlier"));
        cJSON_ArrayForEach(cell, cJSON_GetObjectItem(c, "rows"))
            ASSERT(num(cell, "value_ms") < 33e-3);
    }
    cJSON_Delete(out);

    /* the same card judged at its run's end: its own rows at 4096 */
    out = fleet_judge_run("smem_stride", cJSON_GetObjectItem(cJSON_GetArrayItem(cards, 3), "rows"),
                          peers, MARGIN);
    ASSERT(out != NULL);
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(out, "time_per")), "iteration");
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(out, "outlier_rows")), 0);
    cell = cJSON_GetArrayItem(cJSON_GetObjectItem(out, "rows"), 1);
    ASSERT_NEAR(num(cell, "value_ms"), 32e-3, 1e-12);
    ASSERT_NEAR(num(cell, "median_ms"), 32e-3, 1e-12);
    cJSON_Delete(out);
    cJSON_Delete(peers);
    cJSON_Delete(cards);
    return 0;
}

/* What the torture test gives both answers. */
struct fleet_input {
    cJSON *cards, *mine, *peers;
};

static cJSON *build_of(void *ctx)
{
    return fleet_build(((struct fleet_input *)ctx)->cards, MARGIN);
}

static cJSON *run_of(void *ctx)
{
    const struct fleet_input *in = ctx;

    return fleet_judge_run("smem_stride", in->mine, in->peers, MARGIN);
}

/* Every cJSON allocation of both answers failed in turn: each answer is
 * the whole one or NULL, never one with a field, a card or a row missing
 * (AddressSanitizer's pass sees a leak on the way out). */
static int test_allocation_fails_in_turn(void)
{
    struct fleet_input in = {cJSON_CreateArray(), rows2(10.0, 7.0), cJSON_CreateArray()};
    static const char *const uuids[] = {"u1", "u2", "u3", "u4", "u5"};

    for (int i = 0; i < 5; i++) {
        cJSON_AddItemToArray(in.cards, card(i < 4 ? "A" : "B", uuids[i], 10.0 + 0.01 * i, 5.0));
        cJSON_AddItemToArray(in.peers, peer(uuids[i], 10.0 + 0.01 * i, 5.0));
    }
    ASSERT_EQ(alloc_fail_whole_or_null("fleet_build", build_of, &in), 0);
    ASSERT_EQ(alloc_fail_whole_or_null("fleet_judge_run", run_of, &in), 0);
    cJSON_Delete(in.mine);
    cJSON_Delete(in.peers);
    cJSON_Delete(in.cards);
    return 0;
}

TEST_MAIN({"result_hashes", test_result_hashes},
          {"judge_run_robust_z", test_judge_run_robust_z}, {"too_few_cards", test_too_few_cards},
          {"mad_zero_margin_decides", test_mad_zero_margin_decides},
          {"within_margin_not_outlier", test_within_margin_not_outlier},
          {"build_order", test_build_order}, {"missing_row", test_missing_row},
          {"per_unit_of_work", test_per_unit_of_work},
          {"allocation_fails_in_turn", test_allocation_fails_in_turn})
