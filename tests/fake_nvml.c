/*
 * fake_nvml.c - a STAND-IN for libnvidia-ml.so.1, for the tests of the
 * watch (issue 24) on machines without a GPU: the worker (and the worker
 * test double) load it with GPUBENCH_NVML_LIBRARY=<this library>.  It
 * exports the NVML entry points the watch reads (kernels/nvml_state.c) and
 * answers them from readings in GPUBENCH_FAKE_NVML_READINGS: one reading a
 * line, in the format `gpubench-worker watch` prints (recorded on a card),
 * so a recording replays as it was taken.
 *
 * Each reading the caller takes (one call of the compute process list,
 * which starts every reading) moves to the next line, and stays on the
 * last one; the file is read again each time, so a test injects a fault
 * by appending a line.  A field null or missing in the line answers
 * NOT_SUPPORTED, as a card without it does.  A line's "xid" list becomes
 * XID events, drained by nvmlEventSetWait_v2, raised once: when the
 * reading first comes to the line, not again while it stays on it.  One device, whatever bus
 * id is asked.  Nothing here is measured.
 */
#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OK 0
#define NOT_SUPPORTED 3
#define NOT_FOUND 6
#define INSUFFICIENT_SIZE 7
#define TIMEOUT 10
#define XID_EVENT 0x8ULL
#define MAX_PENDING_XIDS 64

struct event_data {
    void *device;
    unsigned long long event_type, event_data;
    unsigned int gpu_instance_id, compute_instance_id;
};

struct process_info {
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id, compute_instance_id;
};

static long readings_taken;
static cJSON *current; /* the line of the reading being taken */
static unsigned long long pending_xids[MAX_PENDING_XIDS];
static int pending_count;
static int device_token;

/* Line `want` of the file (or its last: *past is then 1), parsed; NULL
 * when unreadable. */
static cJSON *read_line(long want, int *past)
{
    const char *path = getenv("GPUBENCH_FAKE_NVML_READINGS");
    FILE *f = path ? fopen(path, "r") : NULL;
    char *line = NULL, *last = NULL;
    size_t cap = 0;
    long n = 0;
    cJSON *parsed = NULL;

    *past = 1;
    if (f == NULL)
        return NULL;
    while (getline(&line, &cap, f) > 0) {
        if (line[0] == '\n' || line[0] == '#')
            continue;
        free(last);
        last = strdup(line);
        if (n++ == want) {
            *past = 0;
            break;
        }
    }
    fclose(f);
    if (last != NULL)
        parsed = cJSON_Parse(last);
    free(line);
    free(last);
    return parsed;
}

static void next_reading(void)
{
    const cJSON *x;
    int past;

    cJSON_Delete(current);
    current = read_line(readings_taken, &past);
    if (past)
        return; /* stays on the last line: its XIDs were raised */
    readings_taken++;
    cJSON_ArrayForEach(x, cJSON_GetObjectItem(current, "xid")) {
        if (pending_count < MAX_PENDING_XIDS)
            pending_xids[pending_count++] =
                (unsigned long long)cJSON_GetNumberValue(cJSON_GetObjectItem(x, "xid"));
    }
}

/* current.a.b as an unsigned number; 0 when there. */
static int field(const char *a, const char *b, unsigned long long *out)
{
    const cJSON *o = cJSON_GetObjectItem(current, a);

    if (b != NULL)
        o = cJSON_GetObjectItem(o, b);
    if (cJSON_IsBool(o)) {
        *out = cJSON_IsTrue(o);
        return 0;
    }
    if (!cJSON_IsNumber(o))
        return -1;
    *out = (unsigned long long)o->valuedouble;
    return 0;
}

static int field_u(const char *a, const char *b, unsigned int *out)
{
    unsigned long long v;

    if (field(a, b, &v) != 0)
        return NOT_SUPPORTED;
    *out = (unsigned int)v;
    return OK;
}

int nvmlInit_v2(void)
{
    return getenv("GPUBENCH_FAKE_NVML_READINGS") ? OK : NOT_FOUND;
}

int nvmlShutdown(void)
{
    cJSON_Delete(current);
    current = NULL;
    return OK;
}

const char *nvmlErrorString(int rc)
{
    return rc == NOT_SUPPORTED ? "Not Supported (the stand-in's reading lacks it)"
                               : "error (the stand-in NVML)";
}

int nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, void **device)
{
    (void)bus_id;
    *device = &device_token;
    return OK;
}

int nvmlDeviceGetComputeRunningProcesses_v3(void *dev, unsigned int *count,
                                            struct process_info *out)
{
    const cJSON *p;
    unsigned int n = 0;

    (void)dev;
    next_reading();
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(current, "processes")) {
        if (n < *count) {
            memset(&out[n], 0, sizeof(out[n]));
            out[n].pid = (unsigned int)cJSON_GetNumberValue(cJSON_GetObjectItem(p, "pid"));
        }
        n++;
    }
    if (n > *count) {
        *count = n;
        return INSUFFICIENT_SIZE;
    }
    *count = n;
    return OK;
}

int nvmlDeviceGetGraphicsRunningProcesses_v3(void *dev, unsigned int *count,
                                             struct process_info *out)
{
    (void)dev;
    (void)out;
    *count = 0;
    return OK;
}

int nvmlDeviceGetUtilizationRates(void *dev, unsigned int util[2])
{
    (void)dev;
    util[1] = 0;
    return field_u("utilization_percent", NULL, &util[0]);
}

int nvmlDeviceGetRemappedRows(void *dev, unsigned int *corr, unsigned int *unc,
                              unsigned int *pending, unsigned int *failed)
{
    (void)dev;
    if (field_u("remapped_rows", "correctable", corr) != OK ||
        field_u("remapped_rows", "uncorrectable", unc) != OK ||
        field_u("remapped_rows", "pending", pending) != OK ||
        field_u("remapped_rows", "failed", failed) != OK)
        return NOT_SUPPORTED;
    return OK;
}

int nvmlDeviceGetTotalEccErrors(void *dev, int error_type, int counter_type,
                                unsigned long long *count)
{
    const cJSON *ecc = cJSON_GetObjectItem(cJSON_GetObjectItem(current, "ecc"),
                                           counter_type ? "aggregate" : "volatile");
    const cJSON *v = cJSON_GetObjectItem(ecc, error_type ? "uncorrected" : "corrected");

    (void)dev;
    if (!cJSON_IsNumber(v))
        return NOT_SUPPORTED;
    *count = (unsigned long long)v->valuedouble;
    return OK;
}

int nvmlDeviceGetRetiredPages(void *dev, int cause, unsigned int *count,
                              unsigned long long *addresses)
{
    unsigned int n;

    (void)dev;
    (void)addresses;
    if (field_u("retired_pages", cause ? "dbe" : "sbe", &n) != OK)
        return NOT_SUPPORTED;
    if (n > *count) {
        *count = n;
        return INSUFFICIENT_SIZE;
    }
    *count = n;
    return OK;
}

int nvmlDeviceGetRetiredPagesPendingStatus(void *dev, int *pending)
{
    unsigned int v;

    (void)dev;
    if (field_u("retired_pages", "pending", &v) != OK)
        return NOT_SUPPORTED;
    *pending = (int)v;
    return OK;
}

static const cJSON *link_of(unsigned int link)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(current, "nvlink"), (int)link);
}

int nvmlDeviceGetNvLinkState(void *dev, unsigned int link, int *active)
{
    const cJSON *l = link_of(link);

    (void)dev;
    if (l == NULL)
        return NOT_SUPPORTED;
    *active = cJSON_IsTrue(cJSON_GetObjectItem(l, "up"));
    return OK;
}

int nvmlDeviceGetNvLinkErrorCounter(void *dev, unsigned int link, int counter,
                                    unsigned long long *value)
{
    static const char *const names[4] = {"replay", "recovery", "crc_flit", "crc_data"};
    const cJSON *v = counter >= 0 && counter < 4
                         ? cJSON_GetObjectItem(link_of(link), names[counter])
                         : NULL;

    (void)dev;
    if (!cJSON_IsNumber(v))
        return NOT_SUPPORTED;
    *value = (unsigned long long)v->valuedouble;
    return OK;
}

int nvmlDeviceGetCurrPcieLinkGeneration(void *dev, unsigned int *v)
{
    (void)dev;
    return field_u("pcie", "gen", v);
}

int nvmlDeviceGetCurrPcieLinkWidth(void *dev, unsigned int *v)
{
    (void)dev;
    return field_u("pcie", "width", v);
}

int nvmlDeviceGetMaxPcieLinkGeneration(void *dev, unsigned int *v)
{
    (void)dev;
    return field_u("pcie", "gen_max", v);
}

int nvmlDeviceGetMaxPcieLinkWidth(void *dev, unsigned int *v)
{
    (void)dev;
    return field_u("pcie", "width_max", v);
}

int nvmlDeviceGetPcieReplayCounter(void *dev, unsigned int *v)
{
    (void)dev;
    return field_u("pcie", "replay", v);
}

int nvmlEventSetCreate(void **set)
{
    *set = &pending_count;
    return OK;
}

int nvmlEventSetFree(void *set)
{
    (void)set;
    return OK;
}

int nvmlDeviceRegisterEvents(void *dev, unsigned long long types, void *set)
{
    (void)dev;
    (void)set;
    return types & XID_EVENT ? OK : NOT_SUPPORTED;
}

int nvmlEventSetWait_v2(void *set, struct event_data *data, unsigned int timeout_ms)
{
    (void)set;
    (void)timeout_ms;
    if (pending_count == 0)
        return TIMEOUT;
    memset(data, 0, sizeof(*data));
    data->device = &device_token;
    data->event_type = XID_EVENT;
    data->event_data = pending_xids[0];
    memmove(pending_xids, pending_xids + 1, sizeof(pending_xids[0]) * (size_t)--pending_count);
    return OK;
}
