/*
 * deep_bench.c - the deep checks, known_answer, memtest and soak:
 * parameters in, the backend's work (gb_deep.h) and NVML's readings, rows
 * and summary out through deep_report.c.  A wrong answer or a memory error is
 * reported in the rows (verified: false) and the job still succeeds: the
 * daemon judges it; only a CUDA failure fails the job.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "deep_report.h"

static double param_number(const cJSON *params, const char *name, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(params, name);

    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* The choice list params[name] through parse into out (at most cap);
 * how many, or -1 when an entry is not a choice (gb_params_resolve has
 * ruled that out). */
static int choice_list(const cJSON *params, const char *name, int (*parse)(const char *),
                       int *out, int cap)
{
    const cJSON *item;
    int n = 0;

    cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(params, name)) {
        int v = cJSON_IsString(item) ? parse(item->valuestring) : -1;
        if (v < 0 || n >= cap)
            return -1;
        out[n++] = v;
    }
    return n;
}

/* 0 when the report was built (*result NULL otherwise: out of memory). */
static int report_made(const cJSON *result, struct gb_job_error *err)
{
    return result ? 0 : gb_job_fail(err, "internal", "out of memory building the result");
}

static void progress(const struct gb_bench_env *env, int done, int total)
{
    env->hooks->done = done;
    env->hooks->total = total;
    if (env->hooks->progress)
        env->hooks->progress(env->hooks->arg, done, total);
}

/* ---- known_answer ----------------------------------------------------- */

int gb_bench_known_answer(const struct gb_bench_env *env, const cJSON *params, cJSON **result,
                          struct gb_job_error *err)
{
    struct gb_ka_result *res = NULL;
    struct gb_cuda_error cuda;
    int kinds[GB_KA_KINDS], count, rc = -1;
    double seconds = param_number(params, "seconds", 20);

    *result = NULL;
    memset(&cuda, 0, sizeof(cuda));
    count = choice_list(params, "kinds", gb_ka_kind_parse, kinds, GB_KA_KINDS);
    if (count < 1)
        return gb_job_fail(err, "invalid_params", "params.kinds is missing or wrong");
    res = calloc((size_t)count, sizeof(*res));
    if (res == NULL)
        return gb_job_fail(err, "internal", "out of memory");
    progress(env, 0, count);
    for (int i = 0; i < count; i++) {
        if (gb_known_answer_run(env->dev->index, kinds[i], seconds / count, &res[i], &cuda) != 0) {
            gb_job_fail_cuda(err, &cuda);
            goto out;
        }
        progress(env, i + 1, count);
    }
    *result = gb_ka_report(kinds, res, count);
    rc = report_made(*result, err);

out:
    free(res);
    return rc;
}

/* ---- memtest ---------------------------------------------------------- */

int gb_bench_memtest(const struct gb_bench_env *env, const cJSON *params, cJSON **result,
                     struct gb_job_error *err)
{
    struct gb_memtest_result *m = NULL;
    struct gb_mt_ecc ecc;
    struct gb_cuda_error cuda;
    char reason[200];
    int patterns[GB_MT_PATTERNS], count, rc = -1;
    int passes = (int)param_number(params, "passes", 1);
    double fraction = param_number(params, "fraction", 0.9);

    *result = NULL;
    memset(&cuda, 0, sizeof(cuda));
    memset(&ecc, 0, sizeof(ecc));
    count = choice_list(params, "patterns", gb_mt_pattern_parse, patterns, GB_MT_PATTERNS);
    if (count < 1)
        return gb_job_fail(err, "invalid_params", "params.patterns is missing or wrong");
    m = calloc(1, sizeof(*m));
    if (m == NULL)
        return gb_job_fail(err, "internal", "out of memory");
    ecc.read = gb_nvml_read_health(env->nvml, env->dev->pci_bus_id, &ecc.before, reason,
                                   sizeof(reason)) == 0;
    env->hooks->done = 0;
    if (gb_memtest_run(env->dev->index, fraction, patterns, count, passes < 1 ? 1 : passes,
                       (uint64_t)param_number(params, "seed", 1), env->hooks, m, &cuda) != 0) {
        gb_job_fail_cuda(err, &cuda);
        goto out;
    }
    ecc.read = ecc.read && gb_nvml_read_health(env->nvml, env->dev->pci_bus_id, &ecc.after,
                                               reason, sizeof(reason)) == 0;
    ecc.reason = env->nvml ? reason : env->nvml_reason;
    *result = gb_memtest_report(m, passes, &ecc);
    rc = report_made(*result, err);

out:
    free(m);
    return rc;
}

/* ---- soak ------------------------------------------------------------- */

struct soak_state {
    const struct gb_bench_env *env;
    struct gb_soak_second *s;
    int total;
};

/* Each second: NVML's view of the card, and progress for the daemon. */
static void soak_tick(void *arg, int second)
{
    struct soak_state *st = arg;
    struct gb_soak_second *s = &st->s[second];
    struct gb_nvml_reading r;
    char reason[200];
    double mhz = -1;

    memset(&r, 0, sizeof(r));
    s->sm_clock_mhz = s->mem_clock_mhz = s->power_w = s->temperature_c = -1;
    if (gb_nvml_read(st->env->nvml, st->env->dev->pci_bus_id, &r, reason, sizeof(reason)) == 0) {
        s->mem_clock_mhz = r.mem_clock_mhz > 0 ? r.mem_clock_mhz : -1;
        s->power_w = r.power_w;
        s->temperature_c = r.temperature_c;
        s->throttle_read = r.throttle_read;
        s->throttle_mask = r.throttle_mask;
    }
    if (gb_nvml_sm_clock(st->env->nvml, st->env->dev->pci_bus_id, &mhz, reason,
                         sizeof(reason)) == 0)
        s->sm_clock_mhz = mhz;
    /* The job's card state "before" and "after" (job.c reads it in this
     * hook), read during the first and the last second, under load. */
    if (st->env->hooks->in_flight && (second == 0 || second == st->total - 1))
        st->env->hooks->in_flight(st->env->hooks->arg, second == 0 ? 0 : st->total - 1,
                                  st->total);
    progress(st->env, second + 1, st->total);
}

int gb_bench_soak(const struct gb_bench_env *env, const cJSON *params, cJSON **result,
                  struct gb_job_error *err)
{
    const cJSON *load = cJSON_GetObjectItemCaseSensitive(params, "load");
    const char *which = cJSON_IsString(load) ? load->valuestring : "both";
    double seconds = param_number(params, "seconds", 120);
    int cap = (int)seconds + 1, rc = -1;
    struct gb_soak_result res;
    struct gb_soak_second *s = NULL;
    struct soak_state st;
    struct gb_cuda_error cuda;
    char reason[200];
    double slowdown_c = -1;

    *result = NULL;
    memset(&res, 0, sizeof(res));
    memset(&cuda, 0, sizeof(cuda));
    res.load[GB_SOAK_GEMM] = strcmp(which, "hbm") != 0;
    res.load[GB_SOAK_HBM] = strcmp(which, "gemm") != 0;
    s = calloc((size_t)cap, sizeof(*s));
    res.rate[GB_SOAK_GEMM] = calloc((size_t)cap, sizeof(double));
    res.rate[GB_SOAK_HBM] = calloc((size_t)cap, sizeof(double));
    if (s == NULL || res.rate[0] == NULL || res.rate[1] == NULL) {
        gb_job_fail(err, "internal", "out of memory");
        goto out;
    }
    for (int i = 0; i < cap; i++) /* nothing read until a tick reads it */
        s[i].sm_clock_mhz = s[i].mem_clock_mhz = s[i].power_w = s[i].temperature_c = -1;
    st.env = env;
    st.s = s;
    st.total = (int)seconds;
    progress(env, 0, st.total);
    if (gb_soak_run(env->dev->index, seconds, cap, soak_tick, &st, &res, &cuda) != 0) {
        gb_job_fail_cuda(err, &cuda);
        goto out;
    }
    for (int i = 0; i < res.seconds; i++)
        for (int k = 0; k < GB_SOAK_LOADS; k++)
            s[i].rate[k] = res.rate[k][i];
    if (gb_nvml_slowdown_temperature(env->nvml, env->dev->pci_bus_id, &slowdown_c, reason,
                                     sizeof(reason)) != 0)
        slowdown_c = -1;
    *result = gb_soak_report(&res, s, slowdown_c,
                             env->nvml ? "NVML gave no throttle reasons" : env->nvml_reason);
    rc = report_made(*result, err);

out:
    free(s);
    free(res.rate[0]);
    free(res.rate[1]);
    return rc;
}
