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

/* name: n, or null where not read. */
static void add_count(cJSON *o, const char *name, int read, double n)
{
    if (read)
        cJSON_AddNumberToObject(o, name, n);
    else
        cJSON_AddNullToObject(o, name);
}

static cJSON *ecc_json(const struct gb_nvml_health *h, int kind)
{
    cJSON *o = cJSON_CreateObject();

    add_count(o, "corrected", h->ecc_read[kind], (double)h->ecc[kind][0]);
    add_count(o, "uncorrected", h->ecc_read[kind], (double)h->ecc[kind][1]);
    return o;
}

/* The health half of a reading: each object null where NVML gave none of
 * it. */
static void add_health(cJSON *o, const struct gb_nvml_health *h, double t)
{
    static const char *const link_counters[4] = {"replay", "recovery", "crc_flit", "crc_data"};
    static const char *const remap_names[4] = {"correctable", "uncorrectable", "pending",
                                               "failed"};
    static const char *const pcie_names[4] = {"gen", "width", "gen_max", "width_max"};
    cJSON *x, *list;

    if (h->xid_read) {
        list = cJSON_AddArrayToObject(o, "xid");
        for (int i = 0; list && i < h->xid_count && i < GB_NVML_MAX_XIDS; i++) {
            x = cJSON_CreateObject();
            cJSON_AddNumberToObject(x, "xid", (double)h->xids[i]);
            cJSON_AddNumberToObject(x, "at", t);
            cJSON_AddItemToArray(list, x);
        }
    } else {
        cJSON_AddNullToObject(o, "xid");
    }
    if (h->remap_read) {
        x = cJSON_AddObjectToObject(o, "remapped_rows");
        for (int i = 0; x && i < 4; i++)
            cJSON_AddNumberToObject(x, remap_names[i], h->remap[i]);
    } else {
        cJSON_AddNullToObject(o, "remapped_rows");
    }
    if (h->ecc_read[0] || h->ecc_read[1]) {
        x = cJSON_AddObjectToObject(o, "ecc");
        cJSON_AddItemToObject(x, "volatile", ecc_json(h, 0));
        cJSON_AddItemToObject(x, "aggregate", ecc_json(h, 1));
    } else {
        cJSON_AddNullToObject(o, "ecc");
    }
    if (h->retired_read) {
        x = cJSON_AddObjectToObject(o, "retired_pages");
        cJSON_AddNumberToObject(x, "sbe", h->retired_sbe);
        cJSON_AddNumberToObject(x, "dbe", h->retired_dbe);
        cJSON_AddBoolToObject(x, "pending", h->retired_pending);
    } else {
        cJSON_AddNullToObject(o, "retired_pages");
    }
    list = cJSON_AddArrayToObject(o, "nvlink");
    for (int i = 0; list && i < h->link_count; i++) {
        const struct gb_nvml_nvlink *l = &h->links[i];
        x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "link", l->link);
        cJSON_AddBoolToObject(x, "up", l->up);
        for (int c = 0; c < 4; c++)
            add_count(x, link_counters[c], l->errors_read[c], (double)l->errors[c]);
        cJSON_AddItemToArray(list, x);
    }
    x = cJSON_AddObjectToObject(o, "pcie");
    for (int i = 0; x && i < 4; i++)
        add_count(x, pcie_names[i], h->pcie_read[i], h->pcie[i]);
    add_count(x, "replay", h->replay_read, h->replay);
}

cJSON *gb_nvml_watch_reading(struct gb_nvml *nvml, const char *pci_bus_id,
                             const char *unavailable_reason)
{
    cJSON *o = cJSON_CreateObject();
    struct gb_nvml_reading r;
    struct gb_nvml_health h;
    char reason[256];
    double t = now_unix_ms();

    if (o == NULL)
        return NULL;
    cJSON_AddNumberToObject(o, "t", t);
    if (nvml == NULL) {
        cJSON_AddBoolToObject(o, "available", 0);
        cJSON_AddStringToObject(o, "reason",
                                unavailable_reason ? unavailable_reason : "NVML not available");
        return o;
    }
    if (gb_nvml_read(nvml, pci_bus_id, &r, reason, sizeof(reason)) != 0 ||
        gb_nvml_read_health(nvml, pci_bus_id, &h, reason, sizeof(reason)) != 0) {
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
    add_health(o, &h, t);
    return o;
}
