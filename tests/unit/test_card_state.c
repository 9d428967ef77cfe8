/*
 * test_card_state.c - server/judge/card_state.c: healthy, degraded (by a
 * confirmed floor alert or by another source's fault), unknown (no valid
 * health run, or none within max_age), a floor missed once but not yet
 * confirmed, and the learned fleet median.
 */
#include "card_state.h"
#include "test.h"

#define HOUR_MS (3600LL * 1000)
#define NOW_MS 1796000000000LL

/* A health run of benchmark that ended age_ms before NOW_MS, with checks. */
static cJSON *health_run(cJSON *runs, const char *benchmark, int64_t age_ms, const char *checks)
{
    cJSON *r = cJSON_CreateObject();

    cJSON_AddStringToObject(r, "benchmark", benchmark);
    cJSON_AddStringToObject(r, "finished_at", "2026-12-01T10:00:00.000Z");
    cJSON_AddNumberToObject(r, "finished_ms", (double)(NOW_MS - age_ms));
    cJSON_AddItemToObject(r, "checks", cJSON_Parse(checks));
    cJSON_AddItemToArray(runs, r);
    return r;
}

static const char *state_of(const cJSON *s)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(s, "state"));
}

static const char *reason_of(const cJSON *s)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(s, "reason"));
}

#define TRIAD_PASS \
    "[{\"row\":\"triad\",\"value\":4353,\"unit\":\"GB/s\",\"floor\":3917.7,\"pass\":true}]"
#define TRIAD_FAIL_ONE \
    "{\"row\":\"triad\",\"value\":3100,\"unit\":\"GB/s\",\"floor\":3917.7,\"pass\":false}"
#define TRIAD_FAIL "[" TRIAD_FAIL_ONE "]"

static int test_healthy_and_unknown(void)
{
    cJSON *runs = cJSON_CreateArray(), *s;

    s = card_state_judge(NULL, NULL, NOW_MS, CARD_MAX_AGE_DEFAULT_MS);
    ASSERT_STR_EQ(state_of(s), "unknown");
    ASSERT_STR_EQ(reason_of(s), "no valid health run");
    ASSERT(cJSON_IsNull(cJSON_GetObjectItem(s, "last_checked_at")));
    cJSON_Delete(s);

    health_run(runs, "hbm_bandwidth", 2 * HOUR_MS, TRIAD_PASS);
    s = card_state_judge(runs, NULL, NOW_MS, CARD_MAX_AGE_DEFAULT_MS);
    ASSERT_STR_EQ(state_of(s), "healthy");
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(s, "last_checked_at")),
                  "2026-12-01T10:00:00.000Z");
    cJSON_Delete(s);
    /* the same run is too old for a 1 h window */
    s = card_state_judge(runs, NULL, NOW_MS, HOUR_MS);
    ASSERT_STR_EQ(state_of(s), "unknown");
    ASSERT(strstr(reason_of(s), "within 1h") != NULL);
    cJSON_Delete(s);
    cJSON_Delete(runs);
    return 0;
}

static int test_degraded(void)
{
    cJSON *runs = cJSON_CreateArray(), *faults = cJSON_CreateArray(), *s, *f;
    cJSON *fail = cJSON_Parse(TRIAD_FAIL);
    cJSON *alert = cJSON_Parse("{\"benchmark\":\"hbm_bandwidth\",\"row\":\"triad\","
                               "\"at\":\"2026-12-01T11:00:00.000Z\",\"check\":" TRIAD_FAIL "}");

    /* a floor missed once: still healthy, saying so */
    health_run(runs, "hbm_bandwidth", HOUR_MS, TRIAD_FAIL);
    s = card_state_judge(runs, faults, NOW_MS, CARD_MAX_AGE_DEFAULT_MS);
    ASSERT_STR_EQ(state_of(s), "healthy");
    ASSERT(strstr(reason_of(s), "hbm_bandwidth triad 3.1 TB/s < 3.9 TB/s floor") != NULL);
    cJSON_Delete(s);

    /* confirmed: degraded, the reason the line */
    cJSON_ReplaceItemInObject(alert, "check", cJSON_DetachItemFromArray(fail, 0));
    f = card_floor_fault(alert);
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(f, "kind")), "floor");
    cJSON_AddItemToArray(faults, f);
    s = card_state_judge(runs, faults, NOW_MS, CARD_MAX_AGE_DEFAULT_MS);
    ASSERT_STR_EQ(state_of(s), "degraded");
    ASSERT_STR_EQ(reason_of(s), "hbm_bandwidth triad 3.1 TB/s < 3.9 TB/s floor");
    cJSON_Delete(s);

    /* another source's fault, newer: degraded by it even with no runs */
    cJSON_AddItemToArray(faults, cJSON_Parse("{\"kind\":\"xid\",\"message\":\"XID 79: the GPU "
                                             "fell off the bus\",\"at\":"
                                             "\"2026-12-01T12:00:00.000Z\"}"));
    s = card_state_judge(NULL, faults, NOW_MS, CARD_MAX_AGE_DEFAULT_MS);
    ASSERT_STR_EQ(state_of(s), "degraded");
    ASSERT_STR_EQ(reason_of(s), "XID 79: the GPU fell off the bus (and 1 more)");
    cJSON_Delete(s);
    cJSON_Delete(alert);
    cJSON_Delete(fail);
    cJSON_Delete(faults);
    cJSON_Delete(runs);
    return 0;
}

static int test_learned(void)
{
    cJSON *model = cJSON_CreateArray();
    const double values[] = {4300, 4353, 4200, 4400};
    double median;
    int n;

    for (int i = 0; i < 4; i++) {
        char checks[160];
        cJSON *r = cJSON_CreateObject();
        snprintf(checks, sizeof(checks), "[{\"row\":\"triad\",\"value\":%g}]", values[i]);
        cJSON_AddStringToObject(r, "benchmark", "hbm_bandwidth");
        cJSON_AddItemToObject(r, "checks", cJSON_Parse(checks));
        cJSON_AddItemToArray(model, r);
        ASSERT_EQ(card_learned(model, "hbm_bandwidth", "triad", 4, &median, &n), i == 3);
        ASSERT_EQ(n, i + 1);
    }
    ASSERT_NEAR(median, (4300 + 4353) / 2.0, 1e-9);
    ASSERT_EQ(card_learned(model, "hbm_bandwidth", "memcpy", 4, &median, &n), 0);
    ASSERT_EQ(n, 0);
    cJSON_Delete(model);
    return 0;
}

/* The drain reason's figures: the larger unit from 1000 up, and as many
 * decimals as it takes for the value and its floor to read differently. */
static int test_check_line(void)
{
    const struct {
        const char *check, *line;
    } cases[] = {
        {"{\"row\":\"triad\",\"value\":3900,\"unit\":\"GB/s\",\"floor\":3917.7}",
         "hbm_bandwidth triad 3.90 TB/s < 3.92 TB/s floor"},
        {"{\"row\":\"h2d pinned 64 MiB\",\"value\":30.25,\"unit\":\"GB/s\",\"floor\":41.4}",
         "hbm_bandwidth h2d pinned 64 MiB 30.2 GB/s < 41.4 GB/s floor"},
        {"{\"row\":\"bandwidth\",\"value\":300,\"unit\":\"GB/s\",\"floor\":337.5}",
         "hbm_bandwidth bandwidth 300 GB/s < 338 GB/s floor"},
        /* a ceiling's (soak's hottest second) and a deep check's own line */
        {"{\"row\":\"max_temperature_c\",\"value\":89,\"unit\":\"C\",\"ceiling\":87}",
         "hbm_bandwidth max_temperature_c 89.0 C > 87.0 C ceiling"},
        {"{\"row\":\"fp32_fma\",\"value\":3,\"ceiling\":0,\"message\":"
         "\"known_answer fp32_fma: 3 mismatches on SM 17\"}",
         "known_answer fp32_fma: 3 mismatches on SM 17"},
    };
    char line[200];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *c = cJSON_Parse(cases[i].check);
        card_check_line("hbm_bandwidth", c, line, sizeof(line));
        ASSERT_STR_EQ(line, cases[i].line);
        cJSON_Delete(c);
    }
    return 0;
}

#define MEMCPY_FAIL \
    "{\"row\":\"memcpy\",\"value\":3000,\"unit\":\"GB/s\",\"floor\":3785.4,\"pass\":false}"
#define MEMCPY_PASS \
    "{\"row\":\"memcpy\",\"value\":4000,\"unit\":\"GB/s\",\"floor\":3785.4,\"pass\":true}"

/* A pair as store_card_repeat_misses reads it: the newest run's checks and
 * the previous one's of the same request. */
static cJSON *pair(const char *checks, const char *previous)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"benchmark\":\"hbm_bandwidth\",\"run_id\":\"n\",\"at\":"
             "\"2026-12-01T12:00:00.000Z\",\"checks\":%s,\"previous_run_id\":\"p\","
             "\"previous_checks\":%s}",
             checks, previous);
    return cJSON_Parse(text);
}

/* The floors missed twice in a row are faults: only rows that failed in
 * both runs, and none that an open alert already stands for. */
static int test_repeat_faults(void)
{
    const struct {
        const char *checks, *previous, *alerts;
        int n;
        const char *message;
    } cases[] = {
        /* triad missed twice, memcpy once: triad's fault only */
        {"[" TRIAD_FAIL_ONE "," MEMCPY_FAIL "]", "[" TRIAD_FAIL_ONE "," MEMCPY_PASS "]", "[]", 1,
         "hbm_bandwidth triad 3.1 TB/s < 3.9 TB/s floor"},
        /* each missed a different row: no row missed twice */
        {"[" MEMCPY_FAIL "]", "[" TRIAD_FAIL_ONE "]", "[]", 0, NULL},
        /* the previous run had no checks (judged before floors existed) */
        {"[" TRIAD_FAIL_ONE "]", "null", "[]", 0, NULL},
        /* both missed, but an open alert of that row says so already */
        {"[" TRIAD_FAIL_ONE "]", "[" TRIAD_FAIL_ONE "]",
         "[{\"benchmark\":\"hbm_bandwidth\",\"row\":\"triad\"}]", 0, NULL},
        /* an alert of another benchmark's triad is not this one's */
        {"[" TRIAD_FAIL_ONE "]", "[" TRIAD_FAIL_ONE "]",
         "[{\"benchmark\":\"other\",\"row\":\"triad\"}]", 1,
         "hbm_bandwidth triad 3.1 TB/s < 3.9 TB/s floor"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *pairs = cJSON_CreateArray(), *faults = cJSON_CreateArray();
        cJSON *alerts = cJSON_Parse(cases[i].alerts);
        const cJSON *f;

        cJSON_AddItemToArray(pairs, pair(cases[i].checks, cases[i].previous));
        ASSERT(cJSON_GetArraySize(pairs) == 1 && alerts != NULL);
        ASSERT(card_repeat_faults(pairs, alerts, faults) == 0);
        ASSERT(cJSON_GetArraySize(faults) == cases[i].n);
        if (cases[i].n) {
            f = cJSON_GetArrayItem(faults, 0);
            ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(f, "kind")), "floor");
            ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(f, "message")),
                          cases[i].message);
            ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(f, "at")),
                          "2026-12-01T12:00:00.000Z");
        }
        cJSON_Delete(pairs);
        cJSON_Delete(faults);
        cJSON_Delete(alerts);
    }
    return 0;
}

TEST_MAIN({"healthy_and_unknown", test_healthy_and_unknown}, {"degraded", test_degraded},
          {"repeat_faults", test_repeat_faults},
          {"learned", test_learned}, {"check_line", test_check_line})
