/*
 * fake_worker.c - a TEST DOUBLE of gpubench-worker, for the API tests on
 * machines without a GPU.  It speaks the worker protocol of worker/serve.h
 * exactly, checks params with the same table as the real worker, and
 * answers with SYNTHETIC numbers (every result says "synthetic": true): the
 * degree the prediction gives, made up as a time.  Nothing it prints was
 * measured.
 *
 * Environment:
 *   GPUBENCH_FAKE_GPUS=N        how many GPUs --list reports (default 1)
 *   GPUBENCH_FAKE_CONTROL=FILE  read before each job: one word telling how
 *                               to behave: normal, crash (dies mid-run),
 *                               hang (never answers), fault (a CUDA-style
 *                               error, then exit), garbage (prints junk,
 *                               then answers); or what the watch of the
 *                               card reports (meta.watch and the rows'
 *                               clocks, as the issue 13 contract has them):
 *                               normal is an idle card; contended (another
 *                               process seen), throttled (sw_power_cap),
 *                               noisy (half the samples 48% slower),
 *                               busy_start (the quiet wait timed out on a
 *                               busy card), clock_unstable (the first row
 *                               4% under the others' clock), ecc_errors
 *                               (one corrected error), skewed (an idle card
 *                               whose baseline row ran at 1943 MHz and the
 *                               rest at 1979: the time ratio is 1.8% under
 *                               the cycle ratio), nowatch (a worker from
 *                               before the watch: no meta.watch, no new
 *                               row fields), quiet_wait (waits for a
 *                               quiet card first: progress lines of 0 of
 *                               0 with a "message" naming pid 4242
 *                               python3 for GPUBENCH_FAKE_WAIT_MS, then
 *                               runs; the watch says the wait outlasted
 *                               it); slow=F (an idle card, every time
 *                               F times the normal one, e.g. slow=1.05);
 *                               once:MODE (MODE for the next job only,
 *                               then the file says normal; once:MODE:NEXT,
 *                               then NEXT);
 *                               link_degraded (pcie_bandwidth's
 *                               meta.link trained at gen 4 of 5);
 *                               replay=K or replay=K@F (the rows of
 *                               line K, modulo their count, of
 *                               GPUBENCH_FAKE_REPLAY, an export of
 *                               measured runs, every time F times its
 *                               own; the file then says replay=K+1@F,
 *                               so that the runs that follow, confirming
 *                               runs too, replay the next lines)
 *                               The issue 16 benchmarks' rows are drawn
 *                               by fake_peaks.c.
 *                               busy (the watch probe's answer: pid 4242
 *                               python3 on the card at 80%; any other word
 *                               answers an idle card; jobs run normally)
 *                               The issue 32 deep checks' rows are drawn
 *                               by fake_deep.c, which plants what its
 *                               words say (mismatch_sm=N,
 *                               memtest_error=0xA, memtest_ecc,
 *                               soak_thermal: fake_deep.h), then
 *                               after a comma what the watch sees
 *                               (mismatch_sm=3,contended).
 *   GPUBENCH_FAKE_SM_COUNT=N    the cards' SMs (default 4)
 *   GPUBENCH_FAKE_GPU_NAME=S    the cards' name (default "Fake GPU (test
 *                               double)"; slow=F divides the rates of
 *                               fake_peaks.c's rows by F too)
 *   GPUBENCH_FAKE_DELAY_MS=N    sleep this long per row (a slow worker)
 *   GPUBENCH_FAKE_WAIT_MS=N     how long quiet_wait waits (default 3000)
 *   GPUBENCH_FAKE_NO_READY=1    never say ready (a worker that cannot start)
 *   GPUBENCH_NVML_LIBRARY=PATH  the watch probe is answered by the real
 *                               worker's reading code (kernels/nvml_watch.c)
 *                               through this NVML: the stand-in
 *                               tests/fake_nvml.c replaying readings
 *   GPUBENCH_FAKE_PROBE=old     a worker from before the watch probe: the
 *                               probe line is taken as a job (an error
 *                               answers it); =mute: never answered
 *   GPUBENCH_FAKE_REPLAY=FILE   runs (GET /runs.ndjson lines) that replay=K
 *                               answers with
 */
#include "bench_spec.h"
#include "fake_deep.h"
#include "fake_peaks.h"
#include "nvml_watch.h"
#include "predict.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int env_int(const char *name, int fallback)
{
    const char *v = getenv(name);

    return v && *v ? atoi(v) : fallback;
}

static cJSON *device_json(int index)
{
    cJSON *d = cJSON_CreateObject();
    char uuid[64];

    /* GPUBENCH_FAKE_UUID_BASE: another node's cards, for tests that run
     * two daemons as two nodes (their UUIDs must differ). */
    snprintf(uuid, sizeof(uuid), "GPU-00000000-fake-4000-8000-%012d",
             env_int("GPUBENCH_FAKE_UUID_BASE", 0) + index);
    cJSON_AddNumberToObject(d, "index", index);
    /* GPUBENCH_FAKE_GPU_NAME: a card model the floors table knows
     * (common/expect.c), for the tests of checks and card states. */
    cJSON_AddStringToObject(d, "name",
                            getenv("GPUBENCH_FAKE_GPU_NAME") ? getenv("GPUBENCH_FAKE_GPU_NAME")
                                                             : "Fake GPU (test double)");
    cJSON_AddStringToObject(d, "uuid", uuid);
    cJSON_AddStringToObject(d, "compute_capability", "0.0");
    cJSON_AddNumberToObject(d, "sm_count", env_int("GPUBENCH_FAKE_SM_COUNT", 4));
    cJSON_AddNumberToObject(d, "memory_bytes", 4.0 * 1024 * 1024 * 1024);
    cJSON_AddBoolToObject(d, "synthetic", 1);
    return d;
}

static void print_line(cJSON *obj)
{
    char *text = cJSON_PrintUnformatted(obj);

    if (text) {
        fputs(text, stdout);
        fputc('\n', stdout);
        fflush(stdout);
    }
    free(text);
    cJSON_Delete(obj);
}

/* The control word without taking it (a once:MODE stays for the next
 * job): the watch probe only looks. */
static void peek_mode(char *mode, size_t cap)
{
    const char *path = getenv("GPUBENCH_FAKE_CONTROL");
    FILE *f = path ? fopen(path, "r") : NULL;

    snprintf(mode, cap, "normal");
    if (f) {
        if (fscanf(f, "%31s", mode) != 1)
            snprintf(mode, cap, "normal");
        fclose(f);
    }
}

/* The control word, taken: a once:MODE or replay=K word is moved on for
 * the jobs that follow. */
static void read_mode(char *mode, size_t cap)
{
    const char *path = getenv("GPUBENCH_FAKE_CONTROL");
    FILE *f;

    peek_mode(mode, cap);
    /* once:MODE - this job only; the next ones are normal, or NEXT with
     * once:MODE:NEXT (a slow run, then a confirming run that fails) */
    if (strncmp(mode, "once:", 5) == 0 && (f = fopen(path, "w")) != NULL) {
        char *next = strchr(mode + 5, ':');
        if (next)
            *next++ = '\0';
        fprintf(f, "%s\n", next ? next : "normal");
        fclose(f);
        memmove(mode, mode + 5, strlen(mode + 5) + 1);
    }
    /* replay=K[@F]: the next job replays line K + 1 */
    if (strncmp(mode, "replay=", 7) == 0 && (f = fopen(path, "w")) != NULL) {
        const char *at = strchr(mode, '@');
        fprintf(f, "replay=%ld%s\n", atol(mode + 7) + 1, at ? at : "");
        fclose(f);
    }
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* The keys of the rows: strides, one pattern, or the variants. */
static cJSON *make_rows(const char *bench, const cJSON *params, const char *mode)
{
    cJSON *rows = cJSON_CreateArray();
    const cJSON *v;

    if (strcmp(bench, "smem_stride") == 0) {
        cJSON_ArrayForEach(v, cJSON_GetObjectItem(params, "strides")) {
            cJSON *row = cJSON_CreateObject();
            int degree = gb_degree_for_stride((long)v->valuedouble);
            cJSON_AddNumberToObject(row, "stride", v->valuedouble);
            cJSON_AddNumberToObject(row, "predicted_degree", degree);
            cJSON_AddNumberToObject(row, "synthetic_ms", 0.25 * degree);
            cJSON_AddItemToArray(rows, row);
        }
    } else if (strcmp(bench, "smem_pattern") == 0) {
        long words[GB_WARP_LANES];
        int i = 0;
        cJSON *row = cJSON_CreateObject();
        cJSON_ArrayForEach(v, cJSON_GetObjectItem(params, "words"))
            words[i++] = (long)v->valuedouble;
        cJSON_AddStringToObject(row, "variant", "pattern"); /* as kernels/smem_pattern.c */
        cJSON_AddNumberToObject(row, "predicted_degree", gb_degree_for_words(words));
        cJSON_AddNumberToObject(row, "synthetic_ms", 0.25 * gb_degree_for_words(words));
        cJSON_AddItemToArray(rows, row);
    } else if (fake_peaks_knows(bench)) {
        cJSON_Delete(rows);
        rows = fake_peaks_rows(bench, params, mode, env_int("GPUBENCH_FAKE_GPUS", 1));
    } else if (strcmp(bench, "test_all_devices") == 0) {
        cJSON *row = cJSON_CreateObject();
        cJSON_AddStringToObject(row, "variant", "hold");
        cJSON_AddNumberToObject(row, "synthetic_ms", 1.0);
        cJSON_AddItemToArray(rows, row);
    } else if (strcmp(bench, "transpose") == 0) {
        cJSON_ArrayForEach(v, cJSON_GetObjectItem(params, "variants")) {
            cJSON *row = cJSON_CreateObject();
            cJSON_AddStringToObject(row, "variant", v->valuestring);
            cJSON_AddNumberToObject(row, "synthetic_ms",
                                    strcmp(v->valuestring, "tile32") == 0 ? 2.0 : 1.0);
            cJSON_AddItemToArray(rows, row);
        }
    }
    return rows;
}

#define FAKE_SM_MHZ 1980.0
#define FAKE_MEM_MHZ 3201.0

static int is_mode(const char *mode, const char *name)
{
    return strcmp(mode, name) == 0;
}

/* Every number of a replayed row that is a time (*_ms, samples) times f. */
static void scale_times(cJSON *row, double f)
{
    cJSON *field, *s;

    cJSON_ArrayForEach(field, row) {
        size_t len = strlen(field->string);
        if (cJSON_IsNumber(field) && len > 3 && strcmp(field->string + len - 3, "_ms") == 0)
            cJSON_SetNumberValue(field, field->valuedouble * f);
    }
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(row, "samples"))
        cJSON_SetNumberValue(s, s->valuedouble * f);
}

/* replay=K[@F]: the rows of line K (modulo the lines) of
 * GPUBENCH_FAKE_REPLAY, times F, in place of *rows; untouched otherwise or
 * when the file cannot be read. */
static void replay_rows(const char *mode, cJSON **rows)
{
    const char *path = getenv("GPUBENCH_FAKE_REPLAY"), *at = strchr(mode, '@');
    char *line = NULL;
    size_t cap = 0;
    long want, n = 0;
    FILE *f;
    cJSON *run = NULL, *measured;

    if (strncmp(mode, "replay=", 7) != 0 || path == NULL || (f = fopen(path, "r")) == NULL)
        return;
    while (getline(&line, &cap, f) > 0)
        n++;
    want = n ? atol(mode + 7) % n : 0;
    rewind(f);
    for (long i = 0; i <= want && getline(&line, &cap, f) > 0; i++)
        if (i == want)
            run = cJSON_Parse(line);
    fclose(f);
    free(line);
    measured = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "results"), "rows");
    if (cJSON_IsArray(measured)) {
        cJSON *row;
        measured = cJSON_DetachItemViaPointer(cJSON_GetObjectItem(run, "results"), measured);
        cJSON_ArrayForEach(row, measured)
            scale_times(row, at ? atof(at + 1) : 1.0);
        cJSON_Delete(*rows);
        *rows = measured;
    }
    cJSON_Delete(run);
}

/* The SM clock the watch reports for row i in mode. */
static double row_clock(const char *mode, int i)
{
    if (is_mode(mode, "skewed"))
        return i == 0 ? 1943.0 : 1979.0;
    if (is_mode(mode, "clock_unstable"))
        return i == 0 ? 0.96 * FAKE_SM_MHZ : FAKE_SM_MHZ;
    return FAKE_SM_MHZ;
}

static int cmp_ms(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The row fields of the watch (the contract's result.rows[i]). */
static void add_watch_fields(cJSON *row, const char *mode, int row_index, double clock,
                             double median, int samples)
{
    cJSON *reasons = cJSON_AddArrayToObject(row, "throttle_reasons");

    cJSON_AddNumberToObject(row, "sm_clock_mhz_measured", clock);
    cJSON_AddNumberToObject(row, "mem_clock_mhz", FAKE_MEM_MHZ);
    cJSON_AddItemToArray(reasons, cJSON_CreateString("gpu_idle"));
    /* throttled: sw_power_cap on every row but the first; a power-bound
     * row (compute_peak's GEMMs) at full rate always meets the cap. */
    if ((is_mode(mode, "throttled") && row_index > 0) ||
        cJSON_IsTrue(cJSON_GetObjectItem(row, "power_bound")))
        cJSON_AddItemToArray(reasons, cJSON_CreateString("sw_power_cap"));
    cJSON_AddNumberToObject(row, "ci_low_ms", median * 0.999);
    cJSON_AddNumberToObject(row, "ci_high_ms", median * 1.001);
    cJSON_AddNumberToObject(row, "sample_count", samples);
}

/* Fills the fields the real worker reports, from the synthetic time: a
 * fixed number of cycles, so a row's time is its cycles over its clock. */
/* slow=F: every time F times the normal one (a card that got slower). */
static double slow_factor(const char *mode)
{
    double f = strncmp(mode, "slow=", 5) == 0 ? atof(mode + 5) : 1.0;

    return f > 0 ? f : 1.0;
}

static int rate_unit(const cJSON *row)
{
    const char *unit = cJSON_GetStringValue(cJSON_GetObjectItem(row, "unit"));

    return unit && (strcmp(unit, "GB/s") == 0 || strcmp(unit, "TFLOP/s") == 0);
}

static void finish_rows(cJSON *rows, int samples, const char *mode)
{
    int watched = !is_mode(mode, "nowatch");
    double base = 0, base_cycles = 0;
    double *sorted = malloc(sizeof(double) * (size_t)(samples > 0 ? samples : 1));
    cJSON *row;
    int r = 0;

    cJSON_ArrayForEach(row, rows) {
        double clock = row_clock(mode, r);
        double ms = cJSON_GetObjectItem(row, "synthetic_ms")->valuedouble * FAKE_SM_MHZ / clock *
                    slow_factor(mode);
        const cJSON *degree = cJSON_GetObjectItem(row, "predicted_degree");
        cJSON *list = cJSON_AddArrayToObject(row, "samples");
        double med, lo, hi;

        for (int i = 0; i < samples; i++) {
            /* noisy: every other sample stretched, as by another
             * process's kernels (issue 13: 31.8 -> 47.2 ms) */
            sorted[i] = is_mode(mode, "noisy") && i % 2 ? ms * 1.48 : ms;
            cJSON_AddItemToArray(list, cJSON_CreateNumber(sorted[i]));
        }
        qsort(sorted, (size_t)samples, sizeof(double), cmp_ms);
        med = samples % 2 ? sorted[samples / 2]
                          : (sorted[samples / 2 - 1] + sorted[samples / 2]) / 2;
        lo = sorted[0];
        hi = sorted[samples - 1];
        if (base == 0) {
            base = med;
            base_cycles = med * clock;
        }
        cJSON_AddNumberToObject(row, "median_ms", med);
        cJSON_AddNumberToObject(row, "min_ms", lo);
        cJSON_AddNumberToObject(row, "max_ms", hi);
        cJSON_AddNumberToObject(row, "ratio", med / base);
        if (watched) {
            cJSON_AddNumberToObject(row, "spread", (hi - lo) / med);
            add_watch_fields(row, mode, r, clock, med, samples);
            if (cJSON_IsNumber(degree)) {
                double cycles = med * clock / base_cycles;
                cJSON_AddNumberToObject(row, "ratio_to_predicted",
                                        med / base / degree->valuedouble);
                cJSON_AddNumberToObject(row, "ratio_cycles", cycles);
                cJSON_AddNumberToObject(row, "ratio_cycles_to_predicted",
                                        cycles / degree->valuedouble);
            }
        }
        cJSON_DeleteItemFromObject(row, "synthetic_ms");
        /* a rate (fake_peaks.c's rows) falls as the time grows */
        if (cJSON_IsNumber(cJSON_GetObjectItem(row, "value")) && rate_unit(row))
            cJSON_SetNumberValue(cJSON_GetObjectItem(row, "value"),
                                 cJSON_GetObjectItem(row, "value")->valuedouble /
                                     slow_factor(mode));
        r++;
    }
    free(sorted);
}

static cJSON *process(int pid, const char *name)
{
    cJSON *p = cJSON_CreateObject();

    cJSON_AddNumberToObject(p, "pid", pid);
    cJSON_AddStringToObject(p, "name", name);
    return p;
}

static cJSON *min_max(double lo, double hi)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "min", lo);
    cJSON_AddNumberToObject(o, "max", hi);
    return o;
}

static cJSON *ecc_counts(double corrected)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "corrected", corrected);
    cJSON_AddNumberToObject(o, "uncorrected", 0);
    return o;
}

/* Whether a row of rows is power_bound. */
static int any_power_bound(const cJSON *rows)
{
    const cJSON *row;

    cJSON_ArrayForEach(row, rows)
        if (cJSON_IsTrue(cJSON_GetObjectItem(row, "power_bound")))
            return 1;
    return 0;
}

/* meta.watch as the contract has it, for what mode pretends to see;
 * power_capped: the power-bound rows met the cap (their sw_power_cap is in
 * the union, not among the reasons seen outside the rows). */
static cJSON *watch_json(const char *mode, int power_capped)
{
    int busy = is_mode(mode, "busy_start");
    int shared = busy || is_mode(mode, "contended");
    int waited = is_mode(mode, "quiet_wait");
    cJSON *w = cJSON_CreateObject();
    cJSON *quiet = cJSON_AddObjectToObject(w, "quiet");
    cJSON *found = cJSON_AddArrayToObject(quiet, "found");
    cJSON *seen, *reasons, *ecc, *replay;

    cJSON_AddBoolToObject(w, "available", 1);
    cJSON_AddStringToObject(quiet, "mode", busy ? "wait" : shared ? "check"
                                                                  : "wait");
    cJSON_AddNumberToObject(quiet, "waited_s",
                            busy ? 30.0 : waited ? env_int("GPUBENCH_FAKE_WAIT_MS", 3000) / 1e3
                                                 : 0.0);
    cJSON_AddBoolToObject(quiet, "timed_out", busy);
    if (shared || waited)
        cJSON_AddItemToArray(found, process(4242, "python3"));
    cJSON_AddNumberToObject(quiet, "utilization_max_percent", shared || waited ? 87 : 0);
    seen = cJSON_AddArrayToObject(w, "processes_seen");
    if (shared)
        cJSON_AddItemToArray(seen, process(4242, "python3"));
    reasons = cJSON_AddArrayToObject(w, "throttle_reasons");
    cJSON_AddItemToArray(reasons, cJSON_CreateString("gpu_idle"));
    if (is_mode(mode, "throttled") || power_capped)
        cJSON_AddItemToArray(reasons, cJSON_CreateString("sw_power_cap"));
    if (is_mode(mode, "soak_thermal"))
        cJSON_AddItemToArray(reasons, cJSON_CreateString("hw_thermal_slowdown"));
    reasons = cJSON_AddArrayToObject(w, "throttle_reasons_outside_rows");
    cJSON_AddItemToArray(reasons, cJSON_CreateString("gpu_idle"));
    cJSON_AddItemToObject(w, "power_w", min_max(120.5, is_mode(mode, "throttled") ? 700 : 410));
    cJSON_AddItemToObject(w, "temperature_c", min_max(41, 55));
    ecc = cJSON_AddObjectToObject(w, "ecc_volatile");
    cJSON_AddItemToObject(ecc, "before", ecc_counts(0));
    cJSON_AddItemToObject(ecc, "after",
                          ecc_counts(is_mode(mode, "ecc_errors") || is_mode(mode, "memtest_ecc")));
    replay = cJSON_AddObjectToObject(w, "pcie_replay");
    cJSON_AddNumberToObject(replay, "before", 0);
    cJSON_AddNumberToObject(replay, "after", 0);
    return w;
}

/* quiet_wait: what the real worker prints while another process holds
 * the card (worker/watch.c): a line every 100 ms, none of them a sample. */
static void wait_for_quiet_card(const char *id)
{
    int wait_ms = env_int("GPUBENCH_FAKE_WAIT_MS", 3000);

    for (int waited = 0; waited < wait_ms; waited += 100) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "id", id);
        cJSON_AddStringToObject(p, "event", "progress");
        cJSON_AddNumberToObject(p, "done", 0);
        cJSON_AddNumberToObject(p, "total", 0);
        cJSON_AddStringToObject(p, "message",
                                "waiting for a quiet card: pid 4242 python3; utilisation 87%");
        print_line(p);
        sleep_ms(100);
    }
}

static int run_job(const cJSON *job, int device)
{
    const cJSON *id = cJSON_GetObjectItem(job, "id");
    const cJSON *name = cJSON_GetObjectItem(job, "benchmark");
    const struct gb_benchmark *b =
        cJSON_IsString(name) ? gb_benchmark_find(name->valuestring) : NULL;
    struct gb_error err;
    cJSON *params, *rows, *out, *result, *meta, *summary;
    const cJSON *samples;
    char mode[32];
    int total, done = 0;

    read_mode(mode, sizeof(mode));
    out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "id", cJSON_IsString(id) ? id->valuestring : "");
    if (b == NULL) {
        cJSON_AddStringToObject(out, "event", "error");
        cJSON_AddStringToObject(out, "code", "unknown_benchmark");
        cJSON_AddStringToObject(out, "message", "this worker cannot run that benchmark");
        print_line(out);
        return 0;
    }
    params = gb_params_resolve(b, cJSON_GetObjectItem(job, "params"), &err);
    if (params == NULL) {
        cJSON_AddStringToObject(out, "event", "error");
        cJSON_AddStringToObject(out, "code", "invalid_params");
        cJSON_AddStringToObject(out, "message", err.message);
        print_line(out);
        return 0;
    }
    /* The test-only benchmarks behave as their real kernels would. */
    if (strcmp(b->name, "test_fault") == 0)
        snprintf(mode, sizeof(mode), "fault");
    else if (strcmp(b->name, "test_hang") == 0)
        snprintf(mode, sizeof(mode), "hang");
    rows = make_rows(b->name, params, mode);
    total = cJSON_GetArraySize(rows);
    if (strcmp(mode, "garbage") == 0) {
        printf("this is not JSON\n{\"event\": \"progress\", \"id\": \"someone-else\"}\n");
        fflush(stdout);
    }
    if (strcmp(mode, "hang") == 0)
        for (;;)
            pause();
    if (is_mode(mode, "quiet_wait"))
        wait_for_quiet_card(id->valuestring);
    for (done = 0; done < total; done++) {
        cJSON *p = cJSON_CreateObject();
        if (strcmp(mode, "crash") == 0 && done == total / 2)
            raise(SIGKILL); /* no sanitizer can catch this one */
        sleep_ms(env_int("GPUBENCH_FAKE_DELAY_MS", 0));
        cJSON_AddStringToObject(p, "id", id->valuestring);
        cJSON_AddStringToObject(p, "event", "progress");
        cJSON_AddNumberToObject(p, "done", done + 1);
        cJSON_AddNumberToObject(p, "total", total);
        print_line(p);
    }
    if (strcmp(mode, "fault") == 0) {
        cJSON_AddStringToObject(out, "event", "error");
        cJSON_AddStringToObject(out, "code", "cuda_error");
        cJSON_AddStringToObject(out, "message",
                                "cudaErrorIllegalAddress: an illegal memory access "
                                "was encountered (simulated by the test double)");
        print_line(out);
        cJSON_Delete(rows);
        cJSON_Delete(params);
        return -1;
    }
    cJSON_AddStringToObject(out, "event", "result");
    if (fake_deep_knows(b->name)) {
        /* the deep checks time no samples: their rows are whole */
        cJSON_Delete(rows);
        result = fake_deep_result(b->name, params, mode, 4.0 * 1024 * 1024 * 1024,
                                  env_int("GPUBENCH_FAKE_SM_COUNT", 4));
        cJSON_AddItemToObject(out, "result", result);
        rows = cJSON_GetObjectItem(result, "rows");
        summary = cJSON_GetObjectItem(result, "summary");
    } else {
        samples = cJSON_GetObjectItem(params, "samples");
        finish_rows(rows, cJSON_IsNumber(samples) ? samples->valueint : 5, mode);
        fake_peaks_finish(b->name, rows);
        replay_rows(mode, &rows);
        result = cJSON_AddObjectToObject(out, "result");
        cJSON_AddItemToObject(result, "rows", rows);
        summary = cJSON_AddObjectToObject(result, "summary");
    }
    cJSON_AddBoolToObject(summary, "synthetic", 1);
    meta = cJSON_AddObjectToObject(out, "meta");
    fake_peaks_summary(b->name, mode, env_int("GPUBENCH_FAKE_GPUS", 1), summary, meta);
    cJSON_AddBoolToObject(meta, "synthetic", 1);
    cJSON_AddStringToObject(meta, "worker", "fake_worker (test double)");
    cJSON_AddItemToObject(meta, "device", device_json(device));
    /* a deep check's planted word may name what the watch sees after a
     * comma (mismatch_sm=3,contended) */
    if (fake_deep_knows(b->name) && strchr(mode, ',') != NULL)
        memmove(mode, strchr(mode, ',') + 1, strlen(strchr(mode, ',') + 1) + 1);
    if (!is_mode(mode, "nowatch"))
        cJSON_AddItemToObject(meta, "watch",
                              watch_json(mode, any_power_bound(rows) ||
                                                   cJSON_IsTrue(cJSON_GetObjectItem(
                                                       summary, "power_capped"))));
    print_line(out);
    cJSON_Delete(params);
    return 0;
}

/* The answer to the daemon's watch probe ({"watch":true}, between jobs):
 * through nvml when GPUBENCH_NVML_LIBRARY named one, else a busy or an
 * idle card, as the control word says. */
static void answer_watch(struct gb_nvml *nvml, const char *nvml_reason)
{
    cJSON *out = cJSON_CreateObject();
    cJSON *reading, *procs;
    char mode[32];
    int busy;

    if (getenv("GPUBENCH_NVML_LIBRARY") != NULL) {
        cJSON_AddStringToObject(out, "event", "watch");
        cJSON_AddItemToObject(out, "reading",
                              gb_nvml_watch_reading(nvml, "00000000:18:00.0", nvml_reason));
        print_line(out);
        return;
    }
    peek_mode(mode, sizeof(mode));
    busy = is_mode(mode, "busy");
    cJSON_AddStringToObject(out, "event", "watch");
    reading = cJSON_AddObjectToObject(out, "reading");
    cJSON_AddNumberToObject(reading, "t", (double)time(NULL) * 1000.0);
    cJSON_AddBoolToObject(reading, "available", 1);
    cJSON_AddNumberToObject(reading, "utilization_percent", busy ? 80 : 0);
    procs = cJSON_AddArrayToObject(reading, "processes");
    if (busy)
        cJSON_AddItemToArray(procs, process(4242, "python3"));
    print_line(out);
}

static int serve(int device)
{
    char *line = NULL, nvml_reason[256];
    size_t cap = 0;
    cJSON *ready;
    struct gb_nvml *nvml = NULL;
    int status = 0;

    if (env_int("GPUBENCH_FAKE_NO_READY", 0)) {
        fprintf(stderr, "fake worker: refusing to start (GPUBENCH_FAKE_NO_READY)\n");
        return 1;
    }
    ready = cJSON_CreateObject();
    cJSON_AddStringToObject(ready, "event", "ready");
    cJSON_AddItemToObject(ready, "device", device_json(device));
    print_line(ready);
    if (getenv("GPUBENCH_NVML_LIBRARY") != NULL)
        nvml = gb_nvml_open(nvml_reason, sizeof(nvml_reason));
    while (getline(&line, &cap, stdin) > 0) {
        cJSON *job = cJSON_Parse(line);
        const char *probe = getenv("GPUBENCH_FAKE_PROBE");
        int rc = 0;
        if (cJSON_IsTrue(cJSON_GetObjectItem(job, "watch")) && probe == NULL)
            answer_watch(nvml, nvml_reason);
        else if (cJSON_IsTrue(cJSON_GetObjectItem(job, "watch")) && strcmp(probe, "mute") == 0)
            rc = 0;
        else if (cJSON_IsObject(job))
            rc = run_job(job, device);
        cJSON_Delete(job);
        if (rc != 0) {
            status = 3;
            break;
        }
    }
    gb_nvml_close(nvml);
    free(line);
    return status;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--list") == 0) {
        int n = env_int("GPUBENCH_FAKE_GPUS", 1);
        cJSON *root = cJSON_CreateObject();
        cJSON *list = cJSON_AddArrayToObject(root, "devices");
        for (int i = 0; i < n; i++)
            cJSON_AddItemToArray(list, device_json(i));
        if (n == 0)
            cJSON_AddStringToObject(root, "reason",
                                    "the test double was told GPUBENCH_FAKE_GPUS=0");
        print_line(root);
        return 0;
    }
    if (argc >= 4 && strcmp(argv[1], "--serve") == 0 && strcmp(argv[2], "--device") == 0)
        return serve(atoi(argv[3]));
    fprintf(stderr, "usage: gpubench-fake-worker --list | --serve --device N\n");
    return 2;
}
