/*
 * job.c - check, measure, add metadata; see job.h.
 *
 * The card's state is read while a timed sample is running on the GPU
 * (the in_flight hook): before = during the first sample, after = during
 * the last, so both clocks are clocks under load, and a fall between them
 * means the samples were taken at two speeds.
 *
 * before any of the job's own kernels (warm-up included) the
 * quiet check looks at the card (watch.h); between samples the card is
 * read again and what was seen goes into meta.watch and each row.
 */
#include "job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_spec.h"
#include "bench_table.h"
#include "device_json.h"
#include "meta.h"
#include "quiet.h"
#include "rounds.h"
#include "watch.h"

int gb_worker_open(struct gb_worker *w, int device, struct gb_job_error *err)
{
    struct gb_cuda_error cuda;

    memset(w, 0, sizeof(*w));
    memset(&cuda, 0, sizeof(cuda));
    w->device = device;
    if (gb_device_open(device, &cuda) != 0 || gb_device_query(device, &w->info, &cuda) != 0) {
        gb_job_fail(err, "device_unavailable", "GPU %d cannot be opened: %s%s%s: %s: %s",
                    device, gb_driver_missing() ? GB_NO_DRIVER_SENTENCE : "",
                    gb_driver_missing() ? "; " : "", cuda.call, cuda.name, cuda.text);
        return -1;
    }
    w->nvml = gb_nvml_open(w->nvml_reason, sizeof(w->nvml_reason));
    return 0;
}

void gb_worker_close(struct gb_worker *w)
{
    gb_nvml_close(w->nvml);
    w->nvml = NULL;
}

cJSON *gb_job_resolve(const char *benchmark, const cJSON *params,
                      struct gb_job_error *err)
{
    const struct gb_benchmark *b;
    struct gb_error spec;
    cJSON *resolved;

    b = gb_benchmark_find(benchmark);
    if (gb_bench_impl_for(b) == NULL) {
        char names[320]; /* every name of bench_table.c, room to grow */
        gb_bench_impl_names(names, sizeof(names));
        gb_job_fail(err, "unknown_benchmark",
                    "unknown benchmark \"%.60s\"; this worker runs %s",
                    benchmark ? benchmark : "", names);
        snprintf(err->field, sizeof(err->field), "benchmark");
        return NULL;
    }
    memset(&spec, 0, sizeof(spec));
    resolved = gb_params_resolve(b, params, &spec);
    if (resolved == NULL)
        gb_job_fail_params(err, &spec);
    return resolved;
}

struct job_state {
    struct gb_worker *w;
    cJSON *before, *after;
    gb_job_progress_fn progress;
    void *progress_arg;
    struct gb_watch *watch;
};

static void on_in_flight(void *arg, int done, int total)
{
    struct job_state *s = arg;

    if (done == 0 && s->before == NULL)
        s->before = gb_nvml_card_state(s->w->nvml, s->w->info.pci_bus_id,
                                       "during the first timed sample", s->w->nvml_reason);
    if (done == total - 1) {
        cJSON_Delete(s->after);
        s->after = gb_nvml_card_state(s->w->nvml, s->w->info.pci_bus_id,
                                      "during the last timed sample", s->w->nvml_reason);
    }
}

/* The `counters` parameter of a benchmark that has one: env->counters is
 * pointed at st and the probe runs before any sample is timed, so that
 * counters: on fails at once where they cannot be read.  A benchmark
 * without the parameter makes no counter pass (env->counters stays NULL). */
static int counters_begin(const cJSON *resolved, struct gb_counters_state *st,
                          struct gb_bench_env *env, struct gb_job_error *err)
{
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive(resolved, "counters");
    char reason[640];

    gb_counters_state_init(st, gb_counters_mode_parse(cJSON_IsString(mode) ? mode->valuestring
                                                                           : NULL));
    if (!cJSON_IsString(mode))
        return 0;
    env->counters = st;
    gb_counters_probe(st);
    if (st->mode == GB_COUNTERS_ON && !gb_counters_wanted(st)) {
        gb_counters_reason(st, reason, sizeof(reason));
        gb_job_fail(err, "counters_unavailable", "counters: on, but %s", reason);
        snprintf(err->field, sizeof(err->field), "params.counters");
        return -1;
    }
    return 0;
}

/* After the run: counters: on fails a run whose counters were not all
 * read (CUPTI can refuse only once profiling starts). */
static int counters_end(struct gb_counters_state *st, struct gb_job_error *err)
{
    char reason[640];

    gb_counters_state_finish(st);
    if (st->mode == GB_COUNTERS_ON && st->status != GB_COUNTERS_READ) {
        gb_counters_reason(st, reason, sizeof(reason));
        gb_job_fail(err, "counters_unavailable", "counters: on, but %s", reason);
        snprintf(err->field, sizeof(err->field), "params.counters");
        return -1;
    }
    return 0;
}

static void on_progress(void *arg, int done, int total)
{
    struct job_state *s = arg;

    if (s->progress)
        s->progress(s->progress_arg, done, total, NULL);
}

static void on_between(void *arg, struct gb_samples *row)
{
    struct job_state *s = arg;

    gb_watch_poll(s->watch, &row->watch);
}

static void on_quiet_note(void *arg, const char *message)
{
    struct job_state *s = arg;

    if (s->progress)
        s->progress(s->progress_arg, 0, 0, message);
}

/* The quiet check, as the params ask (benchmarks without the parameter,
 * the test-only ones, are not checked). */
static void watch_begin(const cJSON *resolved, struct job_state *s)
{
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive(resolved, "quiet");
    const cJSON *wait_s = cJSON_GetObjectItemCaseSensitive(resolved, "quiet_wait_s");

    gb_watch_start(s->watch,
                   cJSON_IsString(mode) ? gb_quiet_mode_parse(mode->valuestring)
                                        : GB_QUIET_OFF,
                   cJSON_IsNumber(wait_s) ? wait_s->valuedouble : 30, on_quiet_note, s);
}

int gb_job_run(struct gb_worker *w, const char *benchmark, const cJSON *resolved,
               double timeout_s, gb_job_progress_fn progress, void *progress_arg,
               cJSON **result, cJSON **meta, struct gb_job_error *err)
{
    struct gb_watch watch;
    struct job_state state = {w, NULL, NULL, progress, progress_arg, &watch};
    struct gb_hooks hooks = {on_progress, on_in_flight, on_between, &state, 0, 0};
    struct gb_bench_env env = {&w->info, &hooks, NULL, 0, w->nvml, w->nvml_reason, NULL};
    struct gb_counters_state counters;
    struct gb_meta_input in;
    char started[40], finished[40];
    const struct gb_bench_impl *impl = gb_bench_impl_find(benchmark);
    gb_bench_fn run = impl ? impl->run : NULL;
    int rc = -1;

    *result = NULL;
    *meta = NULL;
    if (run == NULL)
        return gb_job_fail(err, "unknown_benchmark", "unknown benchmark \"%.60s\"",
                           benchmark);
    gb_rfc3339_now(started, sizeof(started));
    env.deadline_s = gb_monotonic_s() +
                     GB_JOB_DEADLINE_SHARE * (timeout_s > 0 ? timeout_s : GB_JOB_DEFAULT_TIMEOUT_S);
    gb_watch_init(&watch, w->nvml, w->nvml_reason, w->info.pci_bus_id);
    env.meta_extra = cJSON_CreateObject();
    if (env.meta_extra == NULL) {
        gb_job_fail(err, "internal", "out of memory");
        goto out;
    }
    if (counters_begin(resolved, &counters, &env, err) != 0)
        goto out;
    watch_begin(resolved, &state);
    if (run(&env, resolved, result, err) != 0 || counters_end(&counters, err) != 0)
        goto out;
    gb_watch_finish(&watch);
    gb_rfc3339_now(finished, sizeof(finished));
    memset(&in, 0, sizeof(in));
    in.dev = &w->info;
    in.nvml = w->nvml;
    in.nvml_reason = w->nvml_reason;
    in.state_before = state.before;
    in.state_after = state.after;
    in.started_at = started;
    in.finished_at = finished;
    in.counters = &counters;
    state.before = state.after = NULL;
    *meta = gb_meta_build(&in);
    /* What the benchmark adds to meta (pcie_bandwidth: link), moved over. */
    while (*meta != NULL && env.meta_extra->child != NULL) {
        cJSON *item = cJSON_DetachItemViaPointer(env.meta_extra, env.meta_extra->child);
        cJSON_AddItemToObject(*meta, item->string, item);
    }
    if (*meta != NULL && !cJSON_AddItemToObject(*meta, "watch", gb_watch_json(&watch))) {
        cJSON_Delete(*meta);
        *meta = NULL;
    }
    if (*meta == NULL) {
        gb_job_fail(err, "internal", "out of memory building the metadata");
        goto out;
    }
    rc = 0;

out:
    if (rc != 0) {
        cJSON_Delete(*result);
        *result = NULL;
    }
    gb_watch_close(&watch);
    cJSON_Delete(env.meta_extra);
    cJSON_Delete(state.before);
    cJSON_Delete(state.after);
    return rc;
}
