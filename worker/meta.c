/*
 * meta.c - a run's metadata; see meta.h.
 */
#include "meta.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "counters_report.h"
#include "device_json.h"
#include "proc_version.h"
#include "version.h"

cJSON *gb_driver_json(struct gb_nvml *nvml, const char *nvml_reason,
                      const char *proc_path)
{
    cJSON *o = cJSON_CreateObject();
    char version[96], why_nvml[256], why_proc[256];

    if (o == NULL)
        return NULL;
    snprintf(why_nvml, sizeof(why_nvml), "%s", nvml_reason ? nvml_reason : "NVML not loaded");
    if (nvml != NULL &&
        gb_nvml_driver_version(nvml, version, sizeof(version), why_nvml, sizeof(why_nvml)) == 0) {
        cJSON_AddStringToObject(o, "nvidia_version", version);
        cJSON_AddStringToObject(o, "source", "nvml");
        return o;
    }
    if (gb_read_proc_driver_version(proc_path, version, sizeof(version), why_proc,
                                    sizeof(why_proc)) == 0) {
        cJSON_AddStringToObject(o, "nvidia_version", version);
        cJSON_AddStringToObject(o, "source", "proc");
        cJSON_AddStringToObject(o, "reason", why_nvml);
        return o;
    }
    cJSON_AddNullToObject(o, "nvidia_version");
    cJSON_AddNullToObject(o, "source");
    {
        char both[600];
        snprintf(both, sizeof(both), "%s; %s", why_nvml, why_proc);
        cJSON_AddStringToObject(o, "reason", both);
    }
    return o;
}

static void version_text(int v, char *buf, size_t cap)
{
    if (v <= 0)
        snprintf(buf, cap, "unknown");
    else
        snprintf(buf, cap, "%d.%d", v / 1000, (v % 1000) / 10);
}

static cJSON *cuda_json(void)
{
    cJSON *o = cJSON_CreateObject();
    int driver = 0, runtime = 0;
    char buf[32];

    if (o == NULL)
        return NULL;
    gb_cuda_versions(&driver, &runtime);
    version_text(driver, buf, sizeof(buf));
    cJSON_AddStringToObject(o, "driver_version", buf);
    version_text(runtime, buf, sizeof(buf));
    cJSON_AddStringToObject(o, "runtime_version", buf);
    cJSON_AddStringToObject(o, "runtime_linkage", "static");
    return o;
}

static cJSON *build_json(void)
{
    cJSON *o = cJSON_CreateObject();

    if (o == NULL)
        return NULL;
    cJSON_AddStringToObject(o, "gpubench_version", GPUBENCH_VERSION);
    cJSON_AddStringToObject(o, "git_commit", GPUBENCH_GIT_COMMIT);
    cJSON_AddStringToObject(o, "nvcc_version", GPUBENCH_CUDA_COMPILER_VERSION);
    cJSON_AddStringToObject(o, "architectures", GPUBENCH_CUDA_ARCHITECTURES);
    cJSON_AddBoolToObject(o, "cuda", gb_backend_has_cuda());
    return o;
}

static double number_or_negative(const cJSON *obj, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

int gb_clock_dropped(const cJSON *before, const cJSON *after, double tolerance,
                     char *reason, size_t reason_cap)
{
    double b = number_or_negative(before, "sm_clock_mhz");
    double a = number_or_negative(after, "sm_clock_mhz");

    if (b <= 0 || a <= 0) {
        snprintf(reason, reason_cap,
                 "SM clock not read before and after (NVML unavailable or refused)");
        return -1;
    }
    return a < b * (1 - tolerance);
}

void gb_rfc3339_now(char *buf, size_t cap)
{
    struct timespec ts;
    struct tm tm;
    char base[32];

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, cap, "%s.%03ldZ", base, ts.tv_nsec / 1000000);
}

cJSON *gb_meta_build(struct gb_meta_input *in)
{
    cJSON *meta = cJSON_CreateObject();
    char host[256] = "", why[160] = "";
    int dropped;

    if (meta == NULL) {
        cJSON_Delete(in->state_before);
        cJSON_Delete(in->state_after);
        return NULL;
    }
    if (gethostname(host, sizeof(host) - 1) != 0)
        snprintf(host, sizeof(host), "unknown");
    cJSON_AddStringToObject(meta, "hostname", host);
    cJSON_AddStringToObject(meta, "started_at", in->started_at);
    cJSON_AddStringToObject(meta, "finished_at", in->finished_at);
    cJSON_AddItemToObject(meta, "device", gb_device_json(in->dev));
    cJSON_AddItemToObject(meta, "driver",
                          gb_driver_json(in->nvml, in->nvml_reason, GB_PROC_DRIVER_VERSION_PATH));
    cJSON_AddItemToObject(meta, "cuda", cuda_json());
    cJSON_AddItemToObject(meta, "build", build_json());
    dropped = gb_clock_dropped(in->state_before, in->state_after,
                               GB_CLOCK_DROP_TOLERANCE, why, sizeof(why));
    cJSON_AddItemToObject(meta, "state_before",
                          in->state_before ? in->state_before : cJSON_CreateNull());
    cJSON_AddItemToObject(meta, "state_after",
                          in->state_after ? in->state_after : cJSON_CreateNull());
    in->state_before = in->state_after = NULL;
    if (dropped < 0) {
        cJSON_AddNullToObject(meta, "clock_dropped");
        cJSON_AddStringToObject(meta, "clock_dropped_reason", why);
    } else {
        cJSON_AddBoolToObject(meta, "clock_dropped", dropped);
    }
    cJSON_AddNumberToObject(meta, "clock_drop_tolerance", GB_CLOCK_DROP_TOLERANCE);
    cJSON_AddItemToObject(meta, "counters", gb_counters_meta_json(in->counters));
    cJSON_AddBoolToObject(meta, "synthetic", 0);
    cJSON_AddStringToObject(meta, "card_settings",
                            "measured as found: the worker never changes clocks, power limits "
                            "or persistence mode");
    return meta;
}
