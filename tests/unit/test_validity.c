/* gb_validity_judge: each rule flips the verdict of an otherwise valid run,
 * the meta.watch objects recorded on the H200 (tests/fixtures/) and the
 * idle runs in examples/h200_validity_*.json get the verdicts they should,
 * and the rows recorded on an idle H200 (examples/h200_smem_stride.json,
 * examples/h200_counters_smem_stride.json) stay valid. */
#include "alloc_fail.h"
#include "test.h"
#include "validity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rows measured on an idle H200: stride 1 and 65 of h200_smem_stride.json
 * (65 has the widest middle 80% of any idle row, 2.7%), and stride 33 of
 * h200_counters_smem_stride.json, whose one stray sample (1.11578) makes
 * the widest max-min spread of them all, 4.4%. */
#define H200_ROWS                                                                      \
    "{\"stride\":1,\"sm_clock_mhz_measured\":1967.09,\"samples\":[1.07722,1.07818,"    \
    "1.06669,1.06602,1.06691,1.06979,1.07501,1.06694,1.0695,1.06797,1.07498,"          \
    "1.07837,1.06774,1.06736,1.06704,1.06717,1.06714,1.0672,1.06819,1.06662]},"        \
    "{\"stride\":65,\"sm_clock_mhz_measured\":1960.97,\"samples\":[1.09773,1.0761,"    \
    "1.07248,1.07779,1.08592,1.09798,1.06922,1.09635,1.09059,1.09693,1.0679,1.0665,"   \
    "1.068,1.08413,1.06765,1.06998,1.08138,1.0689,1.068,1.06992]},"                    \
    "{\"stride\":33,\"sm_clock_mhz_measured\":1961.49,\"spread\":0.0442,\"samples\":[" \
    "1.07901,1.07917,1.07965,1.07085,1.07635,1.06934,1.06842,1.11578,1.06896,1.06979," \
    "1.0735,1.06986,1.07475,1.07104,1.06842,1.06867,1.07978,1.07325,1.07619,1.06966]}"

#define IDLE_WATCH                                                      \
    "\"available\":true,\"quiet\":{\"mode\":\"wait\",\"waited_s\":0.4," \
    "\"timed_out\":false,\"found\":[],\"utilization_max_percent\":0},"  \
    "\"processes_seen\":[],\"throttle_reasons\":[\"gpu_idle\"],"        \
    "\"power_w\":{\"min\":120.5,\"max\":410.0},"                        \
    "\"temperature_c\":{\"min\":41,\"max\":55},"                        \
    "\"ecc_volatile\":{\"before\":{\"corrected\":0,\"uncorrected\":0}," \
    "\"after\":{\"corrected\":0,\"uncorrected\":0}},"                   \
    "\"pcie_replay\":{\"before\":0,\"after\":0}"

/* The verdict on rows (a JSON array's inside) with meta (a JSON object). */
static cJSON *judge(const char *rows, const char *meta)
{
    char text[8192];
    cJSON *results, *m, *v;

    snprintf(text, sizeof(text), "{\"rows\":[%s]}", rows);
    results = cJSON_Parse(text);
    m = cJSON_Parse(meta);
    v = gb_validity_judge(results, m);
    cJSON_Delete(results);
    cJSON_Delete(m);
    return v;
}

/* An idle watch with some fields replaced or added (extra: "name":value,...). */
static cJSON *judge_watch(const char *rows, const char *extra)
{
    char text[8192];
    cJSON *meta, *watch, *over, *item, *results, *v;

    snprintf(text, sizeof(text), "{\"synthetic\":false,\"watch\":{%s}}", IDLE_WATCH);
    meta = cJSON_Parse(text);
    watch = cJSON_GetObjectItem(meta, "watch");
    snprintf(text, sizeof(text), "{%s}", extra ? extra : "");
    over = cJSON_Parse(text);
    cJSON_ArrayForEach(item, over) {
        cJSON_DeleteItemFromObject(watch, item->string);
        cJSON_AddItemToObject(watch, item->string, cJSON_Duplicate(item, 1));
    }
    snprintf(text, sizeof(text), "{\"rows\":[%s]}", rows);
    results = cJSON_Parse(text);
    v = gb_validity_judge(results, meta);
    cJSON_Delete(results);
    cJSON_Delete(over);
    cJSON_Delete(meta);
    return v;
}

/* The first reason of a verdict, or NULL. */
static const cJSON *first_reason(const cJSON *v)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(v, "reasons"), 0);
}

static const char *first_code(const cJSON *v)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(
        cJSON_GetArrayItem(cJSON_GetObjectItem(v, "reasons"), 0), "code"));
}

static int reason_count(const cJSON *v)
{
    return cJSON_GetArraySize(cJSON_GetObjectItem(v, "reasons"));
}

static int test_no_watch_is_unknown(void)
{
    cJSON *v = judge(H200_ROWS, "{\"synthetic\":false}");

    ASSERT(cJSON_IsNull(cJSON_GetObjectItem(v, "valid")));
    ASSERT_EQ(reason_count(v), 0);
    ASSERT_EQ(gb_validity_flag(v), -1);
    cJSON_Delete(v);
    v = gb_validity_judge(NULL, NULL);
    ASSERT_EQ(gb_validity_flag(v), -1);
    cJSON_Delete(v);
    return 0;
}

static int test_idle_h200_rows_are_valid(void)
{
    cJSON *v = judge_watch(H200_ROWS, NULL);

    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(v, "valid")));
    ASSERT_EQ(reason_count(v), 0);
    ASSERT_EQ(gb_validity_flag(v), 1);
    cJSON_Delete(v);
    return 0;
}

static int test_contended(void)
{
    cJSON *v = judge_watch(H200_ROWS, "\"processes_seen\":[{\"pid\":4242,\"name\":\"python3\"}]");
    const cJSON *r = first_reason(v), *p;

    ASSERT_EQ(gb_validity_flag(v), 0);
    ASSERT_STR_EQ(first_code(v), "contended");
    p = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "processes"), 0);
    ASSERT_EQ(cJSON_GetObjectItem(p, "pid")->valueint, 4242);
    ASSERT(strstr(cJSON_GetObjectItem(r, "message")->valuestring, "4242 python3"));
    cJSON_Delete(v);
    /* Seen only by the start check (quiet: check), still contended; the
     * same pid in both lists is named once. */
    v = judge_watch(H200_ROWS, "\"quiet\":{\"mode\":\"check\",\"timed_out\":false,"
                               "\"found\":[{\"pid\":7,\"name\":\"x\"}]},"
                               "\"processes_seen\":[{\"pid\":7,\"name\":\"x\"}]");
    r = cJSON_GetArrayItem(cJSON_GetObjectItem(v, "reasons"), 0);
    ASSERT_STR_EQ(first_code(v), "contended");
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(r, "processes")), 1);
    cJSON_Delete(v);
    return 0;
}

static int test_throttled(void)
{
    cJSON *v = judge_watch(H200_ROWS, "\"throttle_reasons\":[\"gpu_idle\","
                                      "\"applications_clocks_setting\",\"sync_boost\","
                                      "\"display_clock_setting\"]");
    const cJSON *names;

    ASSERT_EQ(gb_validity_flag(v), 1); /* settings and idle are not slowdowns */
    cJSON_Delete(v);
    v = judge_watch(H200_ROWS, "\"throttle_reasons\":[\"gpu_idle\",\"sw_power_cap\"]");
    ASSERT_EQ(gb_validity_flag(v), 0);
    ASSERT_STR_EQ(first_code(v), "throttled");
    names = cJSON_GetObjectItem(first_reason(v), "reasons");
    ASSERT_STR_EQ(cJSON_GetArrayItem(names, 0)->valuestring, "sw_power_cap");
    ASSERT_EQ(cJSON_GetArraySize(names), 1);
    cJSON_Delete(v);
    /* A row's reasons count too. */
    v = judge_watch("{\"stride\":1,\"throttle_reasons\":[\"hw_thermal_slowdown\"]}", NULL);
    ASSERT_STR_EQ(first_code(v), "throttled");
    cJSON_Delete(v);
    return 0;
}

/* compute_peak's rows as the H200 health run recorded them
 * (examples/h200x2_daemon_health/health_runs.ndjson: the FMA rows clean,
 * every GEMM row sw_power_cap), with the power_bound mark the worker now
 * gives the GEMM rows; GEMM_REASONS is the GEMM rows' throttle list. */
#define COMPUTE_ROWS(GEMM_REASONS, GEMM_BOUND)                                        \
    "{\"label\":\"fp32_fma\",\"kind\":\"fp32_fma\",\"power_bound\":false,"            \
    "\"sm_clock_mhz_measured\":1979.70,\"throttle_reasons\":[]},"                     \
    "{\"label\":\"fp64_fma\",\"kind\":\"fp64_fma\",\"power_bound\":false,"            \
    "\"sm_clock_mhz_measured\":1979.52,\"throttle_reasons\":[]},"                     \
    "{\"label\":\"gemm_bf16\",\"kind\":\"gemm_bf16\",\"power_bound\":" GEMM_BOUND "," \
    "\"sm_clock_mhz_measured\":null,\"throttle_reasons\":[" GEMM_REASONS "]},"        \
    "{\"label\":\"gemm_tf32\",\"kind\":\"gemm_tf32\",\"power_bound\":" GEMM_BOUND "," \
    "\"sm_clock_mhz_measured\":null,\"throttle_reasons\":[" GEMM_REASONS "]}"
#define CAPPED_WATCH \
    "\"throttle_reasons\":[\"sw_power_cap\"],\"throttle_reasons_outside_rows\":[]"

static const cJSON *first_note(const cJSON *v)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(v, "notes"), 0);
}

/* Power-bound rows at the power cap: valid, with the power_capped note
 * naming those rows (and not the others). */
static int test_power_bound_rows_capped_are_valid(void)
{
    cJSON *v = judge_watch(COMPUTE_ROWS("\"sw_power_cap\"", "true"), CAPPED_WATCH);
    const cJSON *note = first_note(v), *rows = cJSON_GetObjectItem(note, "rows");

    ASSERT_EQ(gb_validity_flag(v), 1);
    ASSERT_EQ(reason_count(v), 0);
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(note, "code")), "power_capped");
    ASSERT_EQ(cJSON_GetArraySize(rows), 2);
    ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 0), "row")->valueint, 2);
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 1), "label")),
                  "gemm_tf32");
    cJSON_Delete(v);
    /* A worker without throttle_reasons_outside_rows: the union's
     * sw_power_cap is the capped rows' own. */
    v = judge_watch(COMPUTE_ROWS("\"sw_power_cap\"", "true"),
                    "\"throttle_reasons\":[\"gpu_idle\",\"sw_power_cap\"]");
    ASSERT_EQ(gb_validity_flag(v), 1);
    ASSERT(first_note(v) != NULL);
    cJSON_Delete(v);
    /* The cap the run ran under goes into the note. */
    {
        cJSON *results = cJSON_Parse("{\"rows\":[" COMPUTE_ROWS("\"sw_power_cap\"", "true") "]}");
        cJSON *meta = cJSON_Parse("{\"enforced_power_limit_w\":700,\"watch\":{" IDLE_WATCH "}}");
        v = gb_validity_judge(results, meta);
        ASSERT_EQ(gb_validity_flag(v), 1);
        ASSERT_NEAR(cJSON_GetObjectItem(first_note(v), "enforced_power_limit_w")->valuedouble,
                    700, 0);
        cJSON_Delete(v);
        cJSON_Delete(results);
        cJSON_Delete(meta);
    }
    /* No cap seen: no note. */
    v = judge_watch(COMPUTE_ROWS("", "true"), NULL);
    ASSERT_EQ(gb_validity_flag(v), 1);
    ASSERT(cJSON_GetObjectItem(v, "notes") == NULL);
    cJSON_Delete(v);
    return 0;
}

/* An FMA row (not power-bound) that says sw_power_cap. */
#define FP32_ROW_CAPPED \
    "{\"label\":\"fp32_fma\",\"power_bound\":false,\"throttle_reasons\":[\"sw_power_cap\"]}"

/* sw_power_cap anywhere else still makes the run throttled: on rows not
 * marked power_bound (a worker from before the mark), on an FMA row, or
 * outside every row. */
static int test_power_cap_elsewhere_is_throttled(void)
{
    cJSON *v = judge_watch(COMPUTE_ROWS("\"sw_power_cap\"", "false"), CAPPED_WATCH);

    ASSERT_EQ(gb_validity_flag(v), 0);
    ASSERT_STR_EQ(first_code(v), "throttled");
    ASSERT(cJSON_GetObjectItem(v, "notes") == NULL);
    cJSON_Delete(v);
    v = judge_watch(FP32_ROW_CAPPED "," COMPUTE_ROWS("\"sw_power_cap\"", "true"), CAPPED_WATCH);
    ASSERT_EQ(gb_validity_flag(v), 0);
    ASSERT_STR_EQ(first_code(v), "throttled");
    ASSERT(first_note(v) != NULL); /* the GEMM rows' cap is still noted */
    cJSON_Delete(v);
    v = judge_watch(COMPUTE_ROWS("\"sw_power_cap\"", "true"),
                    "\"throttle_reasons\":[\"sw_power_cap\"],"
                    "\"throttle_reasons_outside_rows\":[\"sw_power_cap\"]");
    ASSERT_EQ(gb_validity_flag(v), 0);
    ASSERT_STR_EQ(first_code(v), "throttled");
    cJSON_Delete(v);
    /* Without the outside list and without a capped power-bound row, the
     * union's sw_power_cap counts. */
    v = judge_watch(COMPUTE_ROWS("", "true"), "\"throttle_reasons\":[\"sw_power_cap\"]");
    ASSERT_EQ(gb_validity_flag(v), 0);
    cJSON_Delete(v);
    return 0;
}

/* Thermal and hardware slowdowns on a power-bound row still invalidate. */
static int test_power_bound_row_thermal_is_throttled(void)
{
    static const char *const slowdowns[] = {"\"hw_thermal_slowdown\"", "\"sw_thermal_slowdown\"",
                                            "\"hw_slowdown\"", "\"hw_power_brake_slowdown\"",
                                            "\"sw_power_cap\",\"hw_thermal_slowdown\""};
    char rows[4096];

    for (size_t i = 0; i < sizeof(slowdowns) / sizeof(slowdowns[0]); i++) {
        cJSON *v, *names;
        snprintf(rows, sizeof(rows),
                 "{\"label\":\"gemm_bf16\",\"kind\":\"gemm_bf16\",\"power_bound\":true,"
                 "\"throttle_reasons\":[%s]}",
                 slowdowns[i]);
        v = judge_watch(rows, "\"throttle_reasons_outside_rows\":[]");
        ASSERT_EQ(gb_validity_flag(v), 0);
        ASSERT_STR_EQ(first_code(v), "throttled");
        names = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(v, "reasons"), 0),
                                    "reasons");
        ASSERT_EQ(cJSON_GetArraySize(names), 1); /* sw_power_cap never among them */
        ASSERT(strcmp(cJSON_GetArrayItem(names, 0)->valuestring, "sw_power_cap") != 0);
        cJSON_Delete(v);
    }
    return 0;
}

static int test_clock_unstable(void)
{
    /* The idle run: stride 1 at 1943 MHz, stride 32 at 1979, and a
     * third row: 1.8% from the median is within the 2%. */
    cJSON *v = judge_watch("{\"stride\":1,\"sm_clock_mhz_measured\":1943},"
                           "{\"stride\":32,\"sm_clock_mhz_measured\":1979},"
                           "{\"stride\":33,\"sm_clock_mhz_measured\":1979}",
                           NULL);
    const cJSON *rows;

    ASSERT_EQ(gb_validity_flag(v), 1);
    cJSON_Delete(v);
    /* 1930 is 2.5% under 1979. */
    v = judge_watch("{\"stride\":1,\"sm_clock_mhz_measured\":1930},"
                    "{\"stride\":32,\"sm_clock_mhz_measured\":1979},"
                    "{\"stride\":33,\"sm_clock_mhz_measured\":1979}",
                    NULL);
    ASSERT_EQ(gb_validity_flag(v), 0);
    ASSERT_STR_EQ(first_code(v), "clock_unstable");
    rows = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(v, "reasons"), 0), "rows");
    ASSERT_EQ(cJSON_GetArraySize(rows), 1);
    ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 0), "row")->valueint, 0);
    ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 0), "stride")->valueint, 1);
    cJSON_Delete(v);
    return 0;
}

static int test_ecc_errors(void)
{
    cJSON *v = judge_watch(H200_ROWS, "\"ecc_volatile\":null");

    ASSERT_EQ(gb_validity_flag(v), 1); /* ECC off: nothing to count */
    cJSON_Delete(v);
    v = judge_watch(H200_ROWS, "\"ecc_volatile\":{\"before\":{\"corrected\":3,\"uncorrected\":0},"
                               "\"after\":{\"corrected\":3,\"uncorrected\":1}}");
    ASSERT_EQ(gb_validity_flag(v), 0);
    ASSERT_STR_EQ(first_code(v), "ecc_errors");
    ASSERT_EQ(cJSON_GetObjectItem(first_reason(v), "uncorrected")->valueint, 1);
    cJSON_Delete(v);
    v = judge_watch(H200_ROWS, "\"ecc_volatile\":{\"before\":{\"corrected\":3,\"uncorrected\":0},"
                               "\"after\":{\"corrected\":5,\"uncorrected\":0}}");
    ASSERT_STR_EQ(first_code(v), "ecc_errors");
    cJSON_Delete(v);
    return 0;
}

static int test_noisy(void)
{
    /* The contended row: 20 samples, half of them stretched by the
     * other process's kernels (31.8 -> 47.2 ms): noisy. */
    cJSON *v = judge_watch("{\"stride\":32,\"samples\":[31.8,31.9,47.2,31.8,46.0,"
                           "45.1,31.9,47.9,31.8,50.6,31.7,44.0,31.9,47.2,31.8,48.3,"
                           "31.8,46.5,31.9,47.0]}",
                           NULL);
    const cJSON *rows;

    ASSERT_EQ(gb_validity_flag(v), 0);
    ASSERT_STR_EQ(first_code(v), "noisy");
    rows = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(v, "reasons"), 0), "rows");
    ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 0), "stride")->valueint, 32);
    cJSON_Delete(v);
    /* One stray sample out of 20 (three times the others) moves max-min
     * to 200%, not the middle 80%. */
    v = judge_watch("{\"stride\":32,\"samples\":[10,10,10,10,10,10,10,10,10,10,"
                    "10,10,10,10,10,10,10,10,10.2,30]}",
                    NULL);
    ASSERT_EQ(gb_validity_flag(v), 1);
    cJSON_Delete(v);
    /* A row without samples is judged on its max-min spread. */
    v = judge_watch("{\"variant\":\"copy\",\"spread\":0.59}", NULL);
    ASSERT_STR_EQ(first_code(v), "noisy");
    cJSON_Delete(v);
    v = judge_watch("{\"variant\":\"copy\",\"spread\":0.044}", NULL);
    ASSERT_EQ(gb_validity_flag(v), 1);
    cJSON_Delete(v);
    return 0;
}

static int test_busy_start(void)
{
    cJSON *v = judge_watch(H200_ROWS, "\"quiet\":{\"mode\":\"wait\",\"waited_s\":30,"
                                      "\"timed_out\":true,\"found\":[],"
                                      "\"utilization_max_percent\":97}");

    ASSERT_EQ(gb_validity_flag(v), 0);
    ASSERT_STR_EQ(first_code(v), "busy_start");
    ASSERT_EQ(reason_count(v), 1);
    cJSON_Delete(v);
    return 0;
}

/* The whole of a file under dir as parsed JSON (NULL when unreadable). */
static cJSON *load_json(const char *dir, const char *name)
{
    char path[512];
    char *text = NULL;
    long size;
    cJSON *o = NULL;
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = malloc((size_t)size + 1)) != NULL &&
        fread(text, 1, (size_t)size, f) == (size_t)size) {
        text[size] = '\0';
        o = cJSON_Parse(text);
    }
    free(text);
    fclose(f);
    return o;
}

/* The verdict on H200_ROWS with a meta.watch recorded on the H200
 * (tests/fixtures/NAME). */
static cJSON *judge_fixture_watch(const char *name)
{
    char text[8192];
    cJSON *watch = load_json(GB_FIXTURES, name), *meta, *results, *v = NULL;

    if (watch == NULL)
        return NULL;
    snprintf(text, sizeof(text), "{\"rows\":[%s]}", H200_ROWS);
    results = cJSON_Parse(text);
    meta = cJSON_CreateObject();
    if (results != NULL && meta != NULL && cJSON_AddItemToObject(meta, "watch", watch)) {
        watch = NULL;
        v = gb_validity_judge(results, meta);
    }
    cJSON_Delete(watch);
    cJSON_Delete(results);
    cJSON_Delete(meta);
    return v;
}

/* The reason with code in v, or NULL. */
static const cJSON *reason(const cJSON *v, const char *code)
{
    const cJSON *r;

    cJSON_ArrayForEach(r, cJSON_GetObjectItem(v, "reasons")) {
        const char *c = cJSON_GetStringValue(cJSON_GetObjectItem(r, "code"));
        if (c != NULL && strcmp(c, code) == 0)
            return r;
    }
    return NULL;
}

/* The card watched on the H200: idle and waited-out runs are valid (a load
 * the wait outlasted is only in quiet.found); quiet: check with the load on
 * the card is contended with the load's recorded pid; a timed-out wait is
 * busy_start and contended. */
static int test_h200_watch_fixtures(void)
{
    cJSON *v = judge_fixture_watch("h200_watch_idle.json");
    const cJSON *r, *p;

    ASSERT(v != NULL);
    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(v, "valid")));
    ASSERT_EQ(reason_count(v), 0);
    cJSON_Delete(v);

    v = judge_fixture_watch("h200_watch_waited.json");
    ASSERT(v != NULL);
    ASSERT_EQ(gb_validity_flag(v), 1);
    cJSON_Delete(v);

    v = judge_fixture_watch("h200_watch_contended.json");
    ASSERT(v != NULL);
    ASSERT_EQ(gb_validity_flag(v), 0);
    ASSERT_EQ(reason_count(v), 1);
    r = reason(v, "contended");
    ASSERT(r != NULL);
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(r, "processes")), 1);
    p = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "processes"), 0);
    ASSERT_EQ(cJSON_GetObjectItem(p, "pid")->valueint, 464);
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(p, "name")), "gpubench-load");
    cJSON_Delete(v);

    v = judge_fixture_watch("h200_watch_busy_start.json");
    ASSERT(v != NULL);
    ASSERT_EQ(gb_validity_flag(v), 0);
    ASSERT_EQ(reason_count(v), 2);
    ASSERT(reason(v, "busy_start") != NULL);
    r = reason(v, "contended");
    ASSERT(r != NULL);
    p = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "processes"), 0);
    ASSERT_EQ(cJSON_GetObjectItem(p, "pid")->valueint, 464);
    cJSON_Delete(v);
    return 0;
}

/* Whole runs the worker printed on the idle H200 (examples/), judged as
 * the daemon will: valid.  Before the SM clock was measured on the SM,
 * the 1 ms rows of h200_validity_strides.json read 1929 MHz against 1975
 * (the event time holds the launch) and the run was clock_unstable. */
static int test_h200_idle_runs_valid(void)
{
    const char *names[] = {"h200_validity_strides.json", "h200_validity_1_32.json"};

    for (int i = 0; i < 2; i++) {
        cJSON *run = load_json(GB_EXAMPLES, names[i]), *v;
        ASSERT(run != NULL);
        v = gb_validity_judge(cJSON_GetObjectItem(run, "result"), cJSON_GetObjectItem(run, "meta"));
        if (gb_validity_flag(v) != 1) {
            char *text = cJSON_PrintUnformatted(v);
            fprintf(stderr, "%s: %s\n", names[i], text ? text : "(no verdict)");
            free(text);
        }
        ASSERT_EQ(gb_validity_flag(v), 1);
        ASSERT_EQ(reason_count(v), 0);
        cJSON_Delete(v);
        cJSON_Delete(run);
    }
    return 0;
}

static int test_unwatched_card(void)
{
    /* NVML unreadable: nothing seen is not the same as nothing there. */
    cJSON *v = judge(H200_ROWS, "{\"watch\":{\"available\":false,"
                                "\"reason\":\"libnvidia-ml.so.1 not found\","
                                "\"processes_seen\":[{\"pid\":1,\"name\":\"stale\"}]}}");

    ASSERT_EQ(gb_validity_flag(v), -1);
    ASSERT_EQ(reason_count(v), 0);
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(v, "note")),
                  "libnvidia-ml.so.1 not found");
    cJSON_Delete(v);
    /* ... but its rows can still be judged. */
    v = judge("{\"stride\":1,\"spread\":0.9}", "{\"watch\":{\"available\":false}}");
    ASSERT_EQ(gb_validity_flag(v), 0);
    cJSON_Delete(v);
    return 0;
}

/* A row whose output check failed makes the run invalid, watched or not
 * (issue 35: an imported p2p run with "verified": false was judged valid),
 * naming the row; a row verified or without the check does not. */
static int test_unverified(void)
{
    const cJSON *rows;
    cJSON *v = judge("{\"variant\":\"copy\",\"verified\":true},"
                     "{\"variant\":\"tile32\",\"verified\":false}",
                     "{}");

    ASSERT_EQ(gb_validity_flag(v), 0);
    ASSERT_STR_EQ(first_code(v), "unverified");
    rows = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(v, "reasons"), 0), "rows");
    ASSERT_EQ(cJSON_GetArraySize(rows), 1);
    ASSERT_EQ(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 0), "row")), 1);
    cJSON_Delete(v);
    v = judge("{\"variant\":\"tile32\",\"verified\":false}", "{\"watch\":{\"available\":true}}");
    ASSERT_EQ(gb_validity_flag(v), 0);
    ASSERT_STR_EQ(first_code(v), "unverified");
    cJSON_Delete(v);
    v = judge("{\"variant\":\"copy\",\"verified\":true},{\"variant\":\"tile32\"}", "{}");
    ASSERT_EQ(gb_validity_flag(v), -1); /* unwatched, nothing wrong: unknown */
    ASSERT_EQ(reason_count(v), 0);
    cJSON_Delete(v);
    return 0;
}

static int test_spread80_known_distribution(void)
{
    /* 1..101 uniform: 10th percentile 11, 90th 91, median 51. */
    double v[101];

    for (int i = 0; i < 101; i++)
        v[100 - i] = i + 1; /* unsorted on purpose */
    ASSERT_NEAR(gb_validity_spread80(v, 101), 80.0 / 51.0, 1e-12);
    ASSERT_NEAR(gb_validity_spread80(v, 1), -1, 0);
    return 0;
}

static int test_several_reasons(void)
{
    cJSON *v = judge_watch(H200_ROWS, "\"processes_seen\":[{\"pid\":9,\"name\":\"load\"}],"
                                      "\"throttle_reasons\":[\"sw_thermal_slowdown\"]");

    ASSERT_EQ(reason_count(v), 2);
    ASSERT_EQ(gb_validity_flag(v), 0);
    cJSON_Delete(v);
    return 0;
}

/* A run that every rule finds something in: the link, contention at the
 * start and during the run, a throttle beside a capped power-bound row
 * (a note), ECC errors, an unstable clock and two noisy rows. */
#define EVERY_RULE_ROWS                                                                     \
    "{\"rows\":[{\"label\":\"gemm_bf16\",\"power_bound\":true,"                             \
    "\"throttle_reasons\":[\"sw_power_cap\"],\"sm_clock_mhz_measured\":1980,\"spread\":0}," \
    "{\"stride\":1,\"sm_clock_mhz_measured\":1700,\"spread\":0.5,"                          \
    "\"throttle_reasons\":[\"sw_thermal_slowdown\"]},"                                      \
    "{\"stride\":2,\"sm_clock_mhz_measured\":1980,\"samples\":[1,1.5,2,1,3]}]}"
#define EVERY_RULE_META                                                                        \
    "{\"enforced_power_limit_w\":700,\"link\":{\"gen_current\":3,\"gen_max\":5,"               \
    "\"width_current\":8,\"width_max\":16},\"watch\":{\"available\":true,"                     \
    "\"quiet\":{\"mode\":\"wait\",\"waited_s\":30,\"timed_out\":true,"                         \
    "\"found\":[{\"pid\":7,\"name\":\"x\"}]},\"processes_seen\":[{\"pid\":9,\"name\":\"y\"}]," \
    "\"throttle_reasons\":[\"sw_power_cap\",\"sw_thermal_slowdown\"],"                         \
    "\"ecc_volatile\":{\"before\":{\"corrected\":0,\"uncorrected\":0},"                        \
    "\"after\":{\"corrected\":2,\"uncorrected\":1}}}}"

/* The verdict of ctx: {results, meta}. */
static cJSON *verdict_of(void *ctx)
{
    cJSON **in = ctx;

    return gb_validity_judge(in[0], in[1]);
}

/* Every cJSON allocation of that verdict failed in turn: the verdict is
 * the whole one or NULL, never one with "valid", a reason or a field of
 * one missing (as a run once was stored: {"reasons":[]}). */
static int test_allocation_fails_in_turn(void)
{
    cJSON *in[2] = {cJSON_Parse(EVERY_RULE_ROWS), cJSON_Parse(EVERY_RULE_META)};
    cJSON *v = verdict_of(in);

    ASSERT_EQ(reason_count(v), 7);
    ASSERT(first_note(v) != NULL);
    cJSON_Delete(v);
    ASSERT_EQ(alloc_fail_whole_or_null("gb_validity_judge", verdict_of, in), 0);
    cJSON_Delete(in[0]);
    cJSON_Delete(in[1]);
    return 0;
}

TEST_MAIN({"no watch: unknown", test_no_watch_is_unknown},
          {"idle H200 rows: valid", test_idle_h200_rows_are_valid},
          {"contended", test_contended},
          {"throttled", test_throttled},
          {"power-bound rows at the cap: valid, noted", test_power_bound_rows_capped_are_valid},
          {"power cap elsewhere: throttled", test_power_cap_elsewhere_is_throttled},
          {"power-bound row slowed otherwise: throttled",
           test_power_bound_row_thermal_is_throttled},
          {"clock_unstable", test_clock_unstable},
          {"ecc_errors", test_ecc_errors},
          {"noisy", test_noisy},
          {"busy_start", test_busy_start},
          {"H200 watch fixtures", test_h200_watch_fixtures},
          {"H200 idle runs valid", test_h200_idle_runs_valid},
          {"NVML unavailable", test_unwatched_card},
          {"unverified", test_unverified},
          {"spread80 of a known distribution", test_spread80_known_distribution},
          {"several reasons", test_several_reasons},
          {"each allocation failed in turn", test_allocation_fails_in_turn})
