/*
 * nvml_watch.c - see nvml_watch.h.
 */
#include "nvml_watch.h"

#include <stdio.h>
#include <time.h>

static double now_unix_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)(ts.tv_nsec / 1000000L);
}

static cJSON *processes_json(const struct gb_nvml_reading *r)
{
    cJSON *list = cJSON_CreateArray();

    for (int i = 0; list != NULL && i < r->proc_count && i < GB_NVML_MAX_PROCS; i++) {
        cJSON *p = cJSON_CreateObject();
        if (p == NULL || !cJSON_AddItemToArray(list, p)) {
            cJSON_Delete(p);
            cJSON_Delete(list);
            return NULL;
        }
        cJSON_AddNumberToObject(p, "pid", r->procs[i].pid);
        if (r->procs[i].name[0] != '\0')
            cJSON_AddStringToObject(p, "name", r->procs[i].name);
        else
            cJSON_AddNullToObject(p, "name");
    }
    return list;
}

cJSON *gb_nvml_watch_reading(struct gb_nvml *nvml, const char *pci_bus_id,
                             const char *unavailable_reason)
{
    cJSON *o = cJSON_CreateObject();
    struct gb_nvml_reading r;
    char reason[256];

    if (o == NULL)
        return NULL;
    cJSON_AddNumberToObject(o, "t", now_unix_ms());
    if (nvml == NULL) {
        cJSON_AddBoolToObject(o, "available", 0);
        cJSON_AddStringToObject(o, "reason",
                                unavailable_reason ? unavailable_reason : "NVML not available");
        return o;
    }
    if (gb_nvml_read(nvml, pci_bus_id, &r, reason, sizeof(reason)) != 0) {
        cJSON_AddBoolToObject(o, "available", 0);
        cJSON_AddStringToObject(o, "reason", reason);
        return o;
    }
    cJSON_AddBoolToObject(o, "available", 1);
    if (r.util_percent >= 0)
        cJSON_AddNumberToObject(o, "utilization_percent", r.util_percent);
    else
        cJSON_AddNullToObject(o, "utilization_percent");
    if (r.procs_read)
        cJSON_AddItemToObject(o, "processes", processes_json(&r));
    else
        cJSON_AddNullToObject(o, "processes");
    return o;
}
