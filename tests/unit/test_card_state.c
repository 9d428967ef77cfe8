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
#define TRIAD_FAIL \
    "[{\"row\":\"triad\",\"value\":3100,\"unit\":\"GB/s\",\"floor\":3917.7,\"pass\":false}]"

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
    ASSERT(strstr(reason_of(s), "hbm_bandwidth triad 3100 GB/s < 3918 GB/s floor") != NULL);
    cJSON_Delete(s);

    /* confirmed: degraded, the reason the line */
    cJSON_ReplaceItemInObject(alert, "check", cJSON_DetachItemFromArray(fail, 0));
    f = card_floor_fault(alert);
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(f, "kind")), "floor");
    cJSON_AddItemToArray(faults, f);
    s = card_state_judge(runs, faults, NOW_MS, CARD_MAX_AGE_DEFAULT_MS);
    ASSERT_STR_EQ(state_of(s), "degraded");
    ASSERT_STR_EQ(reason_of(s), "hbm_bandwidth triad 3100 GB/s < 3918 GB/s floor");
    cJSON_Delete(s);

    /* another source's fault, newer: degraded by it even with no runs */
    cJSON_AddItemToArray(faults, cJSON_Parse("{\"kind\":\"xid\",\"message\":\"XID 79: the GPU "
                                             "fell off the bus\",\"at\":"
                                             "\"2026-12-01T12:00:00.000Z\"}"));
    s = card_state_judge(NULL, faults, NOW_MS, CARD_MAX_AGE_DEFAULT_MS);
    ASSERT_STR_EQ(state_of(s), "degraded");
    ASSERT(strncmp(reason_of(s), "XID 79", 6) == 0);
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

TEST_MAIN({"healthy_and_unknown", test_healthy_and_unknown}, {"degraded", test_degraded},
          {"learned", test_learned})
