/*
 * test_kernels_watch.c - the quiet-card rule (worker/quiet.c) on NVML
 * readings recorded on an H200 (tests/fixtures/h200_quiet_*.txt), and the
 * run's watch (worker/watch.c): what one reading adds to the run and to
 * a row, and the meta.watch object, shaped like the one the H200 gave
 * (tests/fixtures/h200_watch_*.json).  No GPU, no NVML.
 */
#include <stdlib.h>
#include <string.h>

#include "quiet.h"
#include "test.h"
#include "watch.h"

#define MAX_READINGS 1024

static int load_trace(const char *name, struct gb_quiet_reading *out)
{
    char path[512];
    FILE *f;
    int n;

    snprintf(path, sizeof(path), "%s/%s", GB_FIXTURES, name);
    f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s\n", path);
        return -1;
    }
    n = gb_quiet_read_trace(f, out, MAX_READINGS);
    fclose(f);
    return n;
}

/* Feeds the readings in order until a decision other than waiting;
 * returns the index of the deciding reading (-1: never decided). */
static int decide(const struct gb_quiet_reading *r, int n, enum gb_quiet_mode mode,
                  double wait_s, enum gb_quiet_decision *d, struct gb_quiet_state *st)
{
    gb_quiet_begin(st);
    for (int i = 0; i < n; i++) {
        *d = gb_quiet_step(st, &r[i], mode, wait_s);
        if (*d != GB_QUIET_WAITING)
            return i;
    }
    return -1;
}

/* The idle H200: quiet from the first reading, so wait goes once the
 * 1 s hold is seen (at about 1.0 s, the trace's last reading). */
static int test_idle_card(void)
{
    struct gb_quiet_reading r[MAX_READINGS];
    struct gb_quiet_state st;
    enum gb_quiet_decision d;
    int n = load_trace("h200_quiet_idle.txt", r), at;

    ASSERT(n > 5);
    at = decide(r, n, GB_QUIET_WAIT, 30, &d, &st);
    ASSERT_EQ(d, GB_QUIET_GO);
    ASSERT_EQ(at, n - 1);
    ASSERT(r[at].t_s >= GB_QUIET_HOLD_S && r[at].t_s < GB_QUIET_HOLD_S + 0.2);
    ASSERT(st.util_max < GB_QUIET_UTIL_PERCENT);
    return 0;
}

/* gpubench-load on the card the whole time: wait with quiet_wait_s 3
 * times out at the first reading past 3 s; check goes at once and has
 * seen the 100% utilisation; off goes at once too. */
static int test_busy_card(void)
{
    struct gb_quiet_reading r[MAX_READINGS];
    struct gb_quiet_state st;
    enum gb_quiet_decision d;
    int n = load_trace("h200_quiet_busy.txt", r), at;

    ASSERT(n > 20);
    for (int i = 0; i < n; i++)
        ASSERT(!gb_quiet_reading_is_quiet(&r[i]));
    at = decide(r, n, GB_QUIET_WAIT, 3, &d, &st);
    ASSERT_EQ(d, GB_QUIET_TIMED_OUT);
    ASSERT(r[at].t_s >= 3 && r[at - 1].t_s < 3);
    at = decide(r, n, GB_QUIET_CHECK, 3, &d, &st);
    ASSERT_EQ(d, GB_QUIET_GO);
    ASSERT_EQ(at, 0);
    ASSERT_EQ(st.util_max, 100);
    ASSERT_EQ(decide(r, n, GB_QUIET_OFF, 3, &d, &st), 0);
    /* no time to wait at all: a busy card times out at the first look */
    ASSERT_EQ(decide(r, n, GB_QUIET_WAIT, 0, &d, &st), 0);
    ASSERT_EQ(d, GB_QUIET_TIMED_OUT);
    return 0;
}

/* The load ends at about 6.1 s; NVML's utilisation window still shows
 * 80% for two readings after its process is gone, then 0.  wait goes
 * only once both have been quiet for the whole hold, never while the
 * process or its utilisation is there. */
static int test_load_ends(void)
{
    struct gb_quiet_reading r[MAX_READINGS];
    struct gb_quiet_state st;
    enum gb_quiet_decision d;
    int n = load_trace("h200_quiet_load_ends.txt", r), at, last_busy = -1;

    ASSERT(n > 20);
    for (int i = 0; i < n; i++)
        if (!gb_quiet_reading_is_quiet(&r[i]))
            last_busy = i;
    ASSERT(last_busy > 0 && r[last_busy].procs == 0 && r[last_busy].util_percent >= 5);
    at = decide(r, n, GB_QUIET_WAIT, 60, &d, &st);
    ASSERT_EQ(d, GB_QUIET_GO);
    ASSERT(r[at].t_s - r[last_busy + 1].t_s >= GB_QUIET_HOLD_S);
    ASSERT(r[at - 1].t_s - r[last_busy + 1].t_s < GB_QUIET_HOLD_S);
    /* a wait shorter than the load times out */
    decide(r, n, GB_QUIET_WAIT, 5, &d, &st);
    ASSERT_EQ(d, GB_QUIET_TIMED_OUT);
    return 0;
}

/* A reading NVML could not fill does not hold the run up. */
static int test_unknown_reading(void)
{
    struct gb_quiet_reading r = {0, -1, -1};
    struct gb_quiet_state st;

    ASSERT(gb_quiet_reading_is_quiet(&r));
    gb_quiet_begin(&st);
    ASSERT_EQ(gb_quiet_step(&st, &r, GB_QUIET_WAIT, 0), GB_QUIET_GO);
    ASSERT_EQ(gb_quiet_mode_parse("check"), GB_QUIET_CHECK);
    ASSERT_EQ(gb_quiet_mode_parse("off"), GB_QUIET_OFF);
    ASSERT_EQ(gb_quiet_mode_parse("wait"), GB_QUIET_WAIT);
    ASSERT_STR_EQ(gb_quiet_mode_name(GB_QUIET_CHECK), "check");
    return 0;
}

static struct gb_nvml_reading reading(int util, double power, int temp, unsigned long long mask,
                                      double mem_mhz)
{
    struct gb_nvml_reading r;

    memset(&r, 0, sizeof(r));
    r.procs_read = 1;
    r.util_percent = util;
    r.power_w = power;
    r.temperature_c = temp;
    r.throttle_read = 1;
    r.throttle_mask = mask;
    r.mem_clock_mhz = mem_mhz;
    return r;
}

static void add_proc(struct gb_nvml_reading *r, unsigned pid, const char *name)
{
    r->procs[r->proc_count].pid = pid;
    snprintf(r->procs[r->proc_count].name, sizeof(r->procs[0].name), "%s", name);
    r->proc_count++;
}

static cJSON *fixture_json(const char *name)
{
    char path[512], buf[8192];
    size_t len;
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", GB_FIXTURES, name);
    f = fopen(path, "r");
    if (f == NULL)
        return NULL;
    len = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[len] = '\0';
    return cJSON_Parse(buf);
}

/* Same member names, recursively through objects (values may differ). */
static int same_shape(const cJSON *a, const cJSON *b)
{
    const cJSON *m;

    if (cJSON_IsObject(a) != cJSON_IsObject(b))
        return 0;
    if (!cJSON_IsObject(a))
        return 1;
    if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
        return 0;
    cJSON_ArrayForEach(m, a) {
        const cJSON *other = cJSON_GetObjectItemCaseSensitive(b, m->string);
        if (other == NULL || !same_shape(m, other)) {
            fprintf(stderr, "member %s differs\n", m->string);
            return 0;
        }
    }
    return 1;
}

/* Readings as the contended H200 run had them: the other process once
 * per reading (kept once), throttle reasons unioned over the run and per
 * row, power and temperature ranges, the row's lowest memory clock; the
 * object has the members of the one the H200 run stored. */
static int test_watch_fold(void)
{
    struct gb_watch w;
    struct gb_row_watch row;
    struct gb_nvml_reading a = reading(100, 216.8, 39, 0x0, 3201);
    struct gb_nvml_reading b = reading(100, 288.3, 42, 0x4, 3201);
    cJSON *o, *fixture, *seen, *reasons;

    gb_watch_init(&w, NULL, "unused", "0000:00:06.0");
    w.available = 1;
    w.mode = GB_QUIET_CHECK;
    w.quiet_done = 1;
    w.util_max = 100;
    w.errors_read = 1;
    w.before.ecc_read = w.after.ecc_read = 1;
    w.before.replay_read = w.after.replay_read = 1;
    w.after.ecc_corrected = 2;
    memset(&row, 0, sizeof(row));
    add_proc(&a, 466, "gpubench-load");
    add_proc(&b, 466, "gpubench-load");
    add_proc(&b, 4242, "");
    w.found[0] = a.procs[0];
    w.found_count = 1;
    gb_watch_add_reading(&w, &a, NULL); /* the start: outside every row */
    gb_watch_add_reading(&w, &a, &row);
    gb_watch_add_reading(&w, &b, &row);
    ASSERT_EQ(row.polls, 2);
    ASSERT_EQ(row.throttle_mask, 0x4);
    ASSERT_NEAR(row.mem_clock_mhz, 3201, 0);
    o = gb_watch_json(&w);
    ASSERT(o != NULL);
    seen = cJSON_GetObjectItem(o, "processes_seen");
    ASSERT_EQ(cJSON_GetArraySize(seen), 2);
    ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(seen, 0), "pid")->valuedouble, 466);
    ASSERT_STR_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(seen, 0), "name")->valuestring,
                  "gpubench-load");
    ASSERT(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(seen, 1), "name")));
    reasons = cJSON_GetObjectItem(o, "throttle_reasons");
    ASSERT_STR_EQ(cJSON_GetArrayItem(reasons, 0)->valuestring, "sw_power_cap");
    ASSERT_NEAR(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "power_w"), "min")->valuedouble,
                216.8, 1e-9);
    ASSERT_NEAR(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "temperature_c"), "max")->valuedouble,
                42, 0);
    ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "ecc_volatile"),
                                                      "after"),
                                  "corrected")
                  ->valuedouble,
              2);
    /* sw_power_cap came in a row's reading, not at the start. */
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(o, "throttle_reasons_outside_rows")), 0);
    cJSON_Delete(o);
    gb_watch_add_reading(&w, &b, NULL);
    o = gb_watch_json(&w);
    reasons = cJSON_GetObjectItem(o, "throttle_reasons_outside_rows");
    ASSERT_EQ(cJSON_GetArraySize(reasons), 1);
    ASSERT_STR_EQ(cJSON_GetArrayItem(reasons, 0)->valuestring, "sw_power_cap");
    /* The fixture was recorded before throttle_reasons_outside_rows. */
    cJSON_DeleteItemFromObject(o, "throttle_reasons_outside_rows");
    fixture = fixture_json("h200_watch_contended.json");
    ASSERT(fixture != NULL);
    ASSERT(same_shape(o, fixture));
    cJSON_Delete(fixture);
    cJSON_Delete(o);
    gb_watch_close(&w);
    return 0;
}

/* Without NVML: available false with the reason, nothing else; counters
 * not read are null, not zero. */
static int test_watch_unavailable(void)
{
    struct gb_watch w;
    cJSON *o, *fixture;

    gb_watch_init(&w, NULL, "NVML not loaded: libnvidia-ml.so.1: cannot open", "x");
    gb_watch_start(&w, GB_QUIET_WAIT, 30, NULL, NULL);
    gb_watch_poll(&w, NULL);
    gb_watch_finish(&w);
    o = gb_watch_json(&w);
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(o, "available")));
    ASSERT_STR_EQ(cJSON_GetObjectItem(o, "reason")->valuestring,
                  "NVML not loaded: libnvidia-ml.so.1: cannot open");
    ASSERT_EQ(cJSON_GetArraySize(o), 2);
    cJSON_Delete(o);
    gb_watch_close(&w);
    /* an idle run with ECC and replay counters unread */
    gb_watch_init(&w, NULL, "", "x");
    w.available = 1;
    w.mode = GB_QUIET_WAIT;
    o = gb_watch_json(&w);
    ASSERT(cJSON_IsNull(cJSON_GetObjectItem(o, "ecc_volatile")));
    ASSERT(cJSON_IsNull(cJSON_GetObjectItem(o, "pcie_replay")));
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(o, "processes_seen")), 0);
    cJSON_Delete(o);
    /* the recorded idle run says what a quiet start looks like */
    fixture = fixture_json("h200_watch_idle.json");
    ASSERT(fixture != NULL);
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(fixture, "quiet"), "timed_out")));
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(fixture, "processes_seen")), 0);
    cJSON_Delete(fixture);
    return 0;
}

static int test_waiting_text(void)
{
    struct gb_nvml_reading r = reading(87, -1, -1, 0, 0);
    char text[256];

    add_proc(&r, 4242, "python3");
    gb_watch_waiting_text(&r, text, sizeof(text));
    ASSERT_STR_EQ(text, "waiting for a quiet card: pid 4242 python3; utilisation 87%");
    r = reading(80, -1, -1, 0, 0);
    gb_watch_waiting_text(&r, text, sizeof(text));
    ASSERT_STR_EQ(text, "waiting for a quiet card: utilisation 80%");
    r = reading(0, -1, -1, 0, 0);
    add_proc(&r, 7, "");
    gb_watch_waiting_text(&r, text, sizeof(text));
    ASSERT_STR_EQ(text, "waiting for a quiet card: pid 7 (name unknown)");
    return 0;
}

TEST_MAIN({"quiet: idle H200", test_idle_card},
          {"quiet: busy H200", test_busy_card},
          {"quiet: load ends on the H200", test_load_ends},
          {"quiet: unknown readings", test_unknown_reading},
          {"watch: folding readings", test_watch_fold},
          {"watch: unavailable", test_watch_unavailable},
          {"watch: waiting text", test_waiting_text})
