/*
 * test_card_events.c - server/judge/card_events.c, pure: the watch's
 * readings diffed into card events, starting from an idle H200's reading
 * (tests/fixtures/h200_watch_readings.ndjson, its first reading) with one
 * fault injected at a time: an XID of a critical kind and of another, a
 * pending and a failed row remap, an uncorrected ECC error, a PCIe link
 * trained narrower and only slower (gen), an NVLink down and its CRC
 * errors rising; and the critical XID list parsed; and the diff under a
 * failing allocator (alloc_fail.h): every event whole, or -1.
 */
#include "test.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#include "alloc_fail.h"
#include "card_events.h"

static int critical[CARD_CRITICAL_XIDS_MAX];
static int n_critical;

/* The recording (tests/fixtures/README.md) was made on a single H200 of a
 * virtual machine, whose NVML lists no NVLink; an H200 of an NVLink node
 * has 18 (examples/h200_p2p_bandwidth.json).  Adds 18 links up with zero
 * counters (INJECTED, not recorded) where r has none, for the link faults
 * to be injected into. */
static void add_nvlinks(cJSON *r)
{
    cJSON *links = cJSON_GetObjectItem(r, "nvlink");

    if (r == NULL || cJSON_GetArraySize(links) > 0)
        return;
    links = cJSON_CreateArray();
    for (int i = 0; i < 18 && links != NULL; i++) {
        cJSON *l = cJSON_CreateObject();
        cJSON_AddItemToArray(links, l);
        cJSON_AddNumberToObject(l, "link", i);
        cJSON_AddBoolToObject(l, "up", 1);
        cJSON_AddNumberToObject(l, "replay", 0);
        cJSON_AddNumberToObject(l, "recovery", 0);
        cJSON_AddNumberToObject(l, "crc_flit", 0);
        cJSON_AddNumberToObject(l, "crc_data", 0);
    }
    cJSON_ReplaceItemInObject(r, "nvlink", links);
}

/* The recording's first reading (the idle card), with NVLinks. */
static cJSON *h200_idle(void)
{
    FILE *f = fopen(GB_FIXTURES "/h200_watch_readings.ndjson", "r");
    char *line = NULL;
    size_t cap = 0;
    cJSON *r = NULL;

    while (f != NULL && r == NULL && getline(&line, &cap, f) > 0)
        if (line[0] != '#') /* a comment line (the stand-in NVML skips them too) */
            r = cJSON_Parse(line);
    if (f != NULL)
        fclose(f);
    free(line);
    add_nvlinks(r);
    return r;
}

/* The events from the idle reading to it with path.field set to v. */
static int diff_with(const char *obj, const char *sub, const char *name, double v,
                     struct card_event *ev)
{
    cJSON *prev = h200_idle(), *cur = cJSON_Duplicate(prev, 1);
    cJSON *o = cJSON_GetObjectItem(cur, obj);
    int n;

    if (sub != NULL)
        o = cJSON_GetObjectItem(o, sub);
    cJSON_ReplaceItemInObject(o, name, cJSON_CreateNumber(v));
    n = card_events_diff(prev, cur, critical, n_critical, ev, CARD_EVENTS_MAX);
    cJSON_Delete(prev);
    cJSON_Delete(cur);
    return n;
}

static int test_idle_h200_has_no_events(void)
{
    struct card_event ev[CARD_EVENTS_MAX];
    cJSON *r = h200_idle();

    ASSERT(r != NULL);
    ASSERT_EQ(card_events_diff(NULL, r, critical, n_critical, ev, CARD_EVENTS_MAX), 0);
    ASSERT_EQ(card_events_diff(r, r, critical, n_critical, ev, CARD_EVENTS_MAX), 0);
    cJSON_Delete(r);
    return 0;
}

static int test_xids(void)
{
    struct card_event ev[CARD_EVENTS_MAX];
    cJSON *prev = h200_idle(), *cur = cJSON_Duplicate(prev, 1);
    cJSON *list = cJSON_GetObjectItem(cur, "xid");
    int n;

    cJSON_AddItemToArray(list, cJSON_Parse("{\"xid\": 79, \"at\": 1}"));
    cJSON_AddItemToArray(list, cJSON_Parse("{\"xid\": 13, \"at\": 1}"));
    n = card_events_diff(prev, cur, critical, n_critical, ev, CARD_EVENTS_MAX);
    ASSERT_EQ(n, 2);
    ASSERT_STR_EQ(ev[0].kind, "xid");
    ASSERT_EQ(ev[0].critical, 1);
    ASSERT_EQ(ev[1].critical, 0); /* 13: an application's fault */
    card_events_free(ev, n);
    cJSON_Delete(prev);
    cJSON_Delete(cur);
    return 0;
}

static int one(const char *obj, const char *sub, const char *name, double v, const char *kind,
               int is_critical)
{
    struct card_event ev[CARD_EVENTS_MAX];
    int n = diff_with(obj, sub, name, v, ev);

    ASSERT_EQ(n, 1);
    ASSERT_STR_EQ(ev[0].kind, kind);
    ASSERT_EQ(ev[0].critical, is_critical);
    card_events_free(ev, n);
    return 0;
}

static int test_faults(void)
{
    struct card_event ev[CARD_EVENTS_MAX];

    ASSERT_EQ(one("remapped_rows", NULL, "pending", 1, "row_remap_pending", 1), 0);
    ASSERT_EQ(one("remapped_rows", NULL, "failed", 1, "row_remap_failed", 1), 0);
    ASSERT_EQ(one("remapped_rows", NULL, "correctable", 2, "row_remapped", 0), 0);
    ASSERT_EQ(one("ecc", "volatile", "uncorrected", 1, "ecc_uncorrected", 1), 0);
    ASSERT_EQ(one("ecc", "aggregate", "corrected", 3, "ecc_corrected", 0), 0);
    ASSERT_EQ(one("pcie", NULL, "width", 8, "pcie_width_down", 1), 0);
    ASSERT_EQ(one("pcie", NULL, "replay", 5, "pcie_replay", 0), 0);
    /* An idle link trains to a lower generation to save power: no event. */
    ASSERT_EQ(diff_with("pcie", NULL, "gen", 4, ev), 0);
    /* A counter that went down (a driver reload zeroes volatile counts). */
    ASSERT_EQ(diff_with("pcie", NULL, "replay", 0, ev), 0);
    return 0;
}

static int test_nvlink(void)
{
    struct card_event ev[CARD_EVENTS_MAX];
    cJSON *prev = h200_idle(), *cur = cJSON_Duplicate(prev, 1);
    cJSON *links = cJSON_GetObjectItem(cur, "nvlink");
    int n;

    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(links, 3), "up", cJSON_CreateFalse());
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(links, 7), "crc_flit", cJSON_CreateNumber(12));
    n = card_events_diff(prev, cur, critical, n_critical, ev, CARD_EVENTS_MAX);
    ASSERT_EQ(n, 2);
    ASSERT_STR_EQ(ev[0].kind, "nvlink_down");
    ASSERT_EQ(ev[0].critical, 1);
    ASSERT_STR_EQ(ev[0].message, "NVLink 3 is down");
    ASSERT_STR_EQ(ev[1].kind, "nvlink_errors");
    ASSERT_EQ(ev[1].critical, 0);
    ASSERT_STR_EQ(ev[1].message, "NVLink 7 crc_flit errors rose by 12 to 12");
    card_events_free(ev, n);
    /* Down already at the last reading: not a new event. */
    ASSERT_EQ(card_events_diff(cur, cur, critical, n_critical, ev, CARD_EVENTS_MAX), 0);
    /* A first reading with a state fault reports it. */
    n = card_events_diff(NULL, cur, critical, n_critical, ev, CARD_EVENTS_MAX);
    ASSERT_EQ(n, 1);
    ASSERT_STR_EQ(ev[0].kind, "nvlink_down");
    card_events_free(ev, n);
    cJSON_Delete(prev);
    cJSON_Delete(cur);
    return 0;
}

/* Each allocation of a diff with several events (an XID, a pending row
 * remap, a narrower PCIe link, an NVLink down) failing in turn: the diff
 * answers -1 (none kept), never an event whose detail lacks a field. */
static int test_diff_under_failing_allocs(void)
{
    struct card_event ev[CARD_EVENTS_MAX];
    cJSON *prev = h200_idle(), *cur = cJSON_Duplicate(prev, 1);
    long total;
    int n;

    ASSERT(prev != NULL && cur != NULL);
    /* the changed reading: an XID 79, a pending remap, a narrow link, link 3 down */
    ASSERT(cJSON_AddItemToArray(cJSON_GetObjectItem(cur, "xid"), cJSON_Parse("{\"xid\": 79}")));
    ASSERT(cJSON_ReplaceItemInObject(cJSON_GetObjectItem(cur, "remapped_rows"), "pending",
                                     cJSON_CreateNumber(1)));
    ASSERT(cJSON_ReplaceItemInObject(cJSON_GetObjectItem(cur, "pcie"), "width",
                                     cJSON_CreateNumber(8)));
    ASSERT(cJSON_ReplaceItemInObject(cJSON_GetArrayItem(cJSON_GetObjectItem(cur, "nvlink"), 3),
                                     "up", cJSON_CreateFalse()));
    alloc_fail_arm(0);
    n = card_events_diff(prev, cur, critical, n_critical, ev, CARD_EVENTS_MAX);
    total = alloc_fail_count();
    ASSERT_EQ(n, 4);
    ASSERT(cJSON_GetObjectItem(ev[1].detail, "remapped_rows") != NULL);
    card_events_free(ev, n);
    ASSERT(total >= 8);
    for (long i = 1; i <= total; i++) {
        alloc_fail_arm(i);
        n = card_events_diff(prev, cur, critical, n_critical, ev, CARD_EVENTS_MAX);
        ASSERT(alloc_fail_hit());
        alloc_fail_arm(0);
        if (n != -1) {
            fprintf(stderr, "allocation %ld of %ld failed, yet %d event(s) came back\n", i,
                    total, n);
            card_events_free(ev, n);
            return 1;
        }
    }
    cJSON_Delete(prev);
    cJSON_Delete(cur);
    return 0;
}

static int test_unavailable_reading_has_none(void)
{
    struct card_event ev[CARD_EVENTS_MAX];
    cJSON *prev = h200_idle();
    cJSON *cur = cJSON_Parse("{\"available\": false, \"reason\": \"NVML not loaded\"}");

    ASSERT_EQ(card_events_diff(prev, cur, critical, n_critical, ev, CARD_EVENTS_MAX), 0);
    cJSON_Delete(prev);
    cJSON_Delete(cur);
    return 0;
}

static int test_critical_xids_parse(void)
{
    int xids[4];

    ASSERT_EQ(card_critical_xids_parse("48,79", xids, 4), 2);
    ASSERT_EQ(xids[1], 79);
    ASSERT_EQ(card_critical_xids_parse("48,,79", xids, 4), -1);
    ASSERT_EQ(card_critical_xids_parse("48,x", xids, 4), -1);
    ASSERT_EQ(card_critical_xids_parse("1,2,3,4,5", xids, 4), -1);
    ASSERT_EQ(card_critical_xids_parse("", xids, 4), 0);
    return 0;
}

/* A lasting event holds until a reading shows its state gone; its subject
 * names the XID or the link. */
static int test_lasting_and_subject(void)
{
    struct card_event ev[CARD_EVENTS_MAX];
    cJSON *idle = h200_idle(), *narrow = cJSON_Duplicate(idle, 1);
    char subject[64];
    int n;

    ASSERT(idle != NULL);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(narrow, "pcie"), "width", cJSON_CreateNumber(8));
    n = card_events_diff(idle, narrow, critical, n_critical, ev, CARD_EVENTS_MAX);
    ASSERT_EQ(n, 1);
    ASSERT(card_event_lasting(ev[0].kind));
    ASSERT_EQ(card_event_holds(ev[0].kind, ev[0].detail, narrow), 1);
    ASSERT_EQ(card_event_holds(ev[0].kind, ev[0].detail, idle), 0);
    card_event_subject(&ev[0], subject, sizeof(subject));
    ASSERT_STR_EQ(subject, "pcie_width_down");
    card_events_free(ev, n);

    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(cJSON_GetObjectItem(narrow, "nvlink"), 3), "up",
                              cJSON_CreateFalse());
    n = card_events_diff(idle, narrow, critical, n_critical, ev, CARD_EVENTS_MAX);
    ASSERT_EQ(n, 2);
    ASSERT_STR_EQ(ev[0].kind, "nvlink_down");
    card_event_subject(&ev[0], subject, sizeof(subject));
    ASSERT_STR_EQ(subject, "nvlink_down 3");
    ASSERT_EQ(card_event_holds(ev[0].kind, ev[0].detail, narrow), 1);
    ASSERT_EQ(card_event_holds(ev[0].kind, ev[0].detail, idle), 0);
    card_events_free(ev, n);

    ASSERT_EQ(diff_with("remapped_rows", NULL, "pending", 2, ev), 1);
    ASSERT(card_event_lasting(ev[0].kind));
    ASSERT_EQ(card_event_holds(ev[0].kind, ev[0].detail, idle), 0);
    card_events_free(ev, 1);

    cJSON_AddItemToArray(cJSON_GetObjectItem(narrow, "xid"),
                         cJSON_Parse("{\"xid\":79,\"at\":1764600001000}"));
    n = card_events_diff(narrow, narrow, critical, n_critical, ev, CARD_EVENTS_MAX);
    ASSERT_EQ(n, 1);
    ASSERT(!card_event_lasting(ev[0].kind));
    card_event_subject(&ev[0], subject, sizeof(subject));
    ASSERT_STR_EQ(subject, "xid 79");
    card_events_free(ev, n);
    cJSON_Delete(idle);
    cJSON_Delete(narrow);
    return 0;
}

static int setup(void)
{
    n_critical = card_critical_xids_parse(CARD_CRITICAL_XIDS_DEFAULT, critical,
                                          CARD_CRITICAL_XIDS_MAX);
    ASSERT_EQ(n_critical, 10);
    return 0;
}

TEST_MAIN({"setup", setup}, {"idle_h200_has_no_events", test_idle_h200_has_no_events},
          {"xids", test_xids}, {"faults", test_faults}, {"nvlink", test_nvlink},
          {"diff_under_failing_allocs", test_diff_under_failing_allocs},
          {"unavailable_reading_has_none", test_unavailable_reading_has_none},
          {"critical_xids_parse", test_critical_xids_parse},
          {"lasting_and_subject", test_lasting_and_subject})
