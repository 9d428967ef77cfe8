/*
 * device_json.c - GPU descriptions as JSON; see device_json.h.
 */
#include "device_json.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

cJSON *gb_device_json(const struct gb_device_info *d)
{
    cJSON *o = cJSON_CreateObject();
    char cc[16];

    if (o == NULL)
        return NULL;
    snprintf(cc, sizeof(cc), "%d.%d", d->cc_major, d->cc_minor);
    cJSON_AddNumberToObject(o, "index", d->index);
    cJSON_AddStringToObject(o, "name", d->name);
    cJSON_AddStringToObject(o, "uuid", d->uuid);
    cJSON_AddStringToObject(o, "pci_bus_id", d->pci_bus_id);
    cJSON_AddStringToObject(o, "compute_capability", cc);
    cJSON_AddNumberToObject(o, "sm_count", d->sm_count);
    cJSON_AddNumberToObject(o, "memory_bytes", (double)d->memory_bytes);
    cJSON_AddNumberToObject(o, "bus_width_bits", d->bus_width_bits);
    cJSON_AddNumberToObject(o, "l2_bytes", d->l2_bytes);
    cJSON_AddNumberToObject(o, "smem_per_sm_bytes", d->smem_per_sm_bytes);
    cJSON_AddNumberToObject(o, "smem_per_block_bytes", d->smem_per_block_bytes);
    cJSON_AddNumberToObject(o, "smem_per_block_optin_bytes", d->smem_per_block_optin_bytes);
    cJSON_AddNumberToObject(o, "max_threads_per_sm", d->max_threads_per_sm);
    cJSON_AddNumberToObject(o, "max_sm_clock_mhz", d->max_clock_khz / 1000.0);
    cJSON_AddNumberToObject(o, "max_mem_clock_mhz", d->max_mem_clock_khz / 1000.0);
    return o;
}

cJSON *gb_device_list_json(void)
{
    cJSON *out = cJSON_CreateObject();
    cJSON *list = cJSON_AddArrayToObject(out, "devices");
    char reason[512] = "";
    int count = 0;

    if (out == NULL || list == NULL) {
        cJSON_Delete(out);
        return NULL;
    }
    gb_device_count(&count, reason, sizeof(reason));
    for (int i = 0; i < count; i++) {
        struct gb_device_info info;
        struct gb_cuda_error err;

        memset(&err, 0, sizeof(err));
        if (gb_device_query(i, &info, &err) != 0) {
            /* One unreadable GPU does not hide the others. */
            snprintf(reason, sizeof(reason), "device %d: %s: %s: %s", i, err.call,
                     err.name, err.text);
            continue;
        }
        cJSON_AddItemToArray(list, gb_device_json(&info));
    }
    /* "driver version is insufficient" is also what the runtime says when
     * there is no driver at all: say which it is. */
    if (count == 0 && gb_driver_missing()) {
        char why[sizeof(reason)];
        snprintf(why, sizeof(why), GB_NO_DRIVER_SENTENCE "%s%.400s",
                 reason[0] ? "; " : "", reason);
        snprintf(reason, sizeof(reason), "%s", why);
    }
    if (reason[0] != '\0')
        cJSON_AddStringToObject(out, "reason", reason);
    return out;
}

int gb_driver_missing(void)
{
    return gb_backend_has_cuda() && access("/proc/driver/nvidia/version", F_OK) != 0;
}
