/*
 * test_card_faults.c - server/runs/card_faults.c reading a peer's GET
 * /card_faults: each fault one hop further than the peer said, those past
 * CARD_FAULTS_HOPS_MAX left out (so an ended event that daemons pulling
 * each other hand back and forth dies out), and one bad entry refusing
 * the whole answer (the peer's last good one is kept).
 */
#include "card_faults.h"
#include "test.h"

#include <stdio.h>

/* {"cards": [one card with one fault of hops]}, kind and at as given. */
static void answer(char *buf, size_t cap, const char *kind, int hops, const char *at)
{
    snprintf(buf, cap,
             "{\"cards\": [{\"host\": \"node01\", \"uuid\": \"GPU-1\", \"faults\": ["
             "{\"kind\": \"%s\", \"subject\": \"xid 79\", \"message\": \"XID 79: fell off "
             "the bus\", \"at\": %s, \"source\": null, \"hops\": %d}]}]}",
             kind, at, hops);
}

static int test_hops(void)
{
    char body[512], err[200];
    cJSON *rows;

    for (int hops = 0; hops <= CARD_FAULTS_HOPS_MAX; hops++) {
        answer(body, sizeof(body), "card_event", hops, "\"2026-12-01T10:00:00.000Z\"");
        ASSERT_EQ(card_faults_parse(body, strlen(body), &rows, err, sizeof(err)), 0);
        if (hops + 1 > CARD_FAULTS_HOPS_MAX) { /* too far: not kept */
            ASSERT_EQ(cJSON_GetArraySize(rows), 0);
        } else {
            const cJSON *r = cJSON_GetArrayItem(rows, 0);
            ASSERT_EQ(cJSON_GetArraySize(rows), 1);
            ASSERT_EQ(cJSON_GetNumberValue(cJSON_GetObjectItem(r, "hops")), hops + 1);
            ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(r, "uuid")), "GPU-1");
            ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(r, "host")), "node01");
            ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(r, "message")),
                          "XID 79: fell off the bus");
        }
        cJSON_Delete(rows);
    }
    return 0;
}

static int test_refused(void)
{
    char body[512], err[200];
    cJSON *rows = NULL;
    static const char *const bad[] = {
        "",
        "[]",
        "{\"cards\": {}}",
        "{\"cards\": [{\"uuid\": \"\", \"host\": \"h\", \"faults\": []}]}",
        "{\"cards\": [{\"uuid\": \"GPU-1\", \"host\": \"h\"}]}",
        "{\"cards\": []} {}",
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        ASSERT_EQ(card_faults_parse(bad[i], strlen(bad[i]), &rows, err, sizeof(err)), -1);
        ASSERT(rows == NULL && err[0]);
    }
    answer(body, sizeof(body), "floor", 0, "\"2026-12-01T10:00:00.000Z\"");
    ASSERT_EQ(card_faults_parse(body, strlen(body), &rows, err, sizeof(err)), -1);
    answer(body, sizeof(body), "card_event", -1, "\"2026-12-01T10:00:00.000Z\"");
    ASSERT_EQ(card_faults_parse(body, strlen(body), &rows, err, sizeof(err)), -1);
    answer(body, sizeof(body), "card_event", 0, "7");
    ASSERT_EQ(card_faults_parse(body, strlen(body), &rows, err, sizeof(err)), -1);
    ASSERT_STR_EQ(err, "cards[0].faults[0]: at is not a string of at most 40 bytes");
    ASSERT(rows == NULL);
    ASSERT_EQ(card_faults_parse("{\"cards\": []}", 13, &rows, err, sizeof(err)), 0);
    ASSERT_EQ(cJSON_GetArraySize(rows), 0);
    cJSON_Delete(rows);
    return 0;
}

TEST_MAIN({"hops", test_hops}, {"refused", test_refused})
