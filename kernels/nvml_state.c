/*
 * nvml_state.c - NVML through dlopen; see nvml_state.h.
 *
 * The prototypes below are NVML's own (nvml.h), written out because the
 * header is not installed with the CUDA toolkit here and the worker must
 * build without it.  Every entry point but init/shutdown/error-string is
 * optional: an older driver without one just gives null for that field.
 */
#include "nvml_state.h"
#include "throttle.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

typedef struct nvml_device_opaque *nvml_device;

/* nvmlClockType_t, nvmlTemperatureSensors_t, nvmlEnableState_t values */
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
#define NVML_TEMPERATURE_GPU 0
#define NVML_TEMPERATURE_THRESHOLD_SLOWDOWN 1 /* nvmlTemperatureThresholds_t */
#define NVML_SUCCESS 0
/* nvmlMemoryErrorType_t, nvmlEccCounterType_t */
#define NVML_MEMORY_ERROR_TYPE_CORRECTED 0
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1
#define NVML_VOLATILE_ECC 0
#define NVML_AGGREGATE_ECC 1
/* nvmlPageRetirementCause_t; NVML_ERROR_INSUFFICIENT_SIZE, _TIMEOUT */
#define NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS 0
#define NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR 1
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_TIMEOUT 10
/* nvmlNvLinkErrorCounter_t: replay, recovery, CRC flit, CRC data */
#define NVML_NVLINK_ERROR_COUNTERS 4
#define NVML_EVENT_TYPE_XID_CRITICAL_ERROR 0x8ULL
typedef struct nvml_event_set_opaque *nvml_event_set;
/* nvmlEventData_t (the _v2 wait fills it) */
struct nvml_event_data {
    nvml_device device;
    unsigned long long event_type;
    unsigned long long event_data; /* the XID */
    unsigned int gpu_instance_id;
    unsigned int compute_instance_id;
};

/* nvmlProcessInfo_t as the _v3 and _v2 entry points fill it, and the
 * older two-field one (nvmlProcessInfo_v1_t) of the unversioned entry
 * point: the layouts differ, so each getter is paired with its own. */
struct nvml_process_v2 {
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id;
    unsigned int compute_instance_id;
};
struct nvml_process_v1 {
    unsigned int pid;
    unsigned long long used_gpu_memory;
};
/* nvmlPciInfo_t */
struct nvml_pci_info {
    char bus_id_legacy[16];
    unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
};
#define NVML_NVLINK_MAX_LINKS 18
#define NVML_P2P_CAPS_INDEX_NVLINK 2
struct nvml_utilization {
    unsigned int gpu, memory;
};

struct gb_nvml {
    void *lib;
    int (*init)(void);
    int (*shutdown)(void);
    const char *(*error_string)(int);
    int (*driver_version)(char *, unsigned int);
    int (*handle_by_pci)(const char *, nvml_device *);
    int (*clock)(nvml_device, int, unsigned int *);
    int (*max_clock)(nvml_device, int, unsigned int *);
    int (*temperature)(nvml_device, int, unsigned int *);
    int (*temperature_threshold)(nvml_device, int, unsigned int *);
    int (*power_usage)(nvml_device, unsigned int *);
    int (*power_limit)(nvml_device, unsigned int *);
    int (*enforced_power_limit)(nvml_device, unsigned int *);
    int (*throttle_reasons)(nvml_device, unsigned long long *);
    int (*ecc_mode)(nvml_device, int *, int *);
    int (*persistence_mode)(nvml_device, int *);
    int (*pstate)(nvml_device, int *);
    /* compute, graphics: _v3 or _v2 (struct nvml_process_v2), else v1 */
    int (*procs_v2[2])(nvml_device, unsigned int *, struct nvml_process_v2 *);
    int (*procs_v1[2])(nvml_device, unsigned int *, struct nvml_process_v1 *);
    int (*utilization)(nvml_device, struct nvml_utilization *);
    int (*ecc_total)(nvml_device, int, int, unsigned long long *);
    int (*pcie_replay)(nvml_device, unsigned int *);
    /* PCIe link (current and max generation, width) and NVLink */
    int (*pcie_link[4])(nvml_device, unsigned int *);
    int (*nvlink_state)(nvml_device, unsigned int, int *);
    int (*nvlink_version)(nvml_device, unsigned int, unsigned int *);
    int (*nvlink_remote)(nvml_device, unsigned int, struct nvml_pci_info *);
    int (*p2p_status)(nvml_device, nvml_device, int, int *);
    /* the watch's health counters (gb_nvml_read_health) */
    int (*remapped_rows)(nvml_device, unsigned int *, unsigned int *, unsigned int *,
                         unsigned int *);
    int (*retired_pages)(nvml_device, int, unsigned int *, unsigned long long *);
    int (*retired_pending)(nvml_device, int *);
    int (*nvlink_errors)(nvml_device, unsigned int, int, unsigned long long *);
    int (*event_set_create)(nvml_event_set *);
    int (*event_set_free)(nvml_event_set);
    int (*register_events)(nvml_device, unsigned long long, nvml_event_set);
    int (*event_wait)(nvml_event_set, struct nvml_event_data *, unsigned int);
    nvml_event_set xids; /* registered for xid_device, or NULL */
    nvml_device xid_device;
};

static void load(void *lib, const char *name, void *fn_slot);

/* The process getters, newest first (nvml.h's own fallbacks). */
static void load_process_getters(struct gb_nvml *n)
{
    static const char *const kinds[2] = {"Compute", "Graphics"};
    char name[80];

    for (int k = 0; k < 2; k++) {
        snprintf(name, sizeof(name), "nvmlDeviceGet%sRunningProcesses_v3", kinds[k]);
        load(n->lib, name, &n->procs_v2[k]);
        if (n->procs_v2[k] == NULL) {
            snprintf(name, sizeof(name), "nvmlDeviceGet%sRunningProcesses_v2", kinds[k]);
            load(n->lib, name, &n->procs_v2[k]);
        }
        if (n->procs_v2[k] == NULL) {
            snprintf(name, sizeof(name), "nvmlDeviceGet%sRunningProcesses", kinds[k]);
            load(n->lib, name, &n->procs_v1[k]);
        }
    }
}

/* POSIX's blessed way to turn dlsym's object pointer into a function
 * pointer without a cast ISO C frowns on. */
static void load(void *lib, const char *name, void *fn_slot)
{
    void *sym = dlsym(lib, name);
    memcpy(fn_slot, &sym, sizeof(sym));
}

struct gb_nvml *gb_nvml_open(char *reason, size_t reason_cap)
{
    struct gb_nvml *n = calloc(1, sizeof(*n));
    const char *path;
    int rc;

    if (n == NULL) {
        snprintf(reason, reason_cap, "out of memory");
        return NULL;
    }
    /* GPUBENCH_NVML_LIBRARY: another NVML (the tests' stand-in,
     * tests/fake_nvml.c, or a driver's copy off the loader's path). */
    path = getenv("GPUBENCH_NVML_LIBRARY");
    if (path == NULL || *path == '\0')
        path = "libnvidia-ml.so.1";
    n->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (n->lib == NULL) {
        const char *why = dlerror();
        snprintf(reason, reason_cap, "NVML not loaded: %s", why ? why : "library not found");
        goto fail;
    }
    load(n->lib, "nvmlInit_v2", &n->init);
    load(n->lib, "nvmlShutdown", &n->shutdown);
    load(n->lib, "nvmlErrorString", &n->error_string);
    load(n->lib, "nvmlSystemGetDriverVersion", &n->driver_version);
    load(n->lib, "nvmlDeviceGetHandleByPciBusId_v2", &n->handle_by_pci);
    load(n->lib, "nvmlDeviceGetClockInfo", &n->clock);
    load(n->lib, "nvmlDeviceGetCurrPcieLinkGeneration", &n->pcie_link[0]);
    load(n->lib, "nvmlDeviceGetCurrPcieLinkWidth", &n->pcie_link[1]);
    load(n->lib, "nvmlDeviceGetMaxPcieLinkGeneration", &n->pcie_link[2]);
    load(n->lib, "nvmlDeviceGetMaxPcieLinkWidth", &n->pcie_link[3]);
    load(n->lib, "nvmlDeviceGetNvLinkState", &n->nvlink_state);
    load(n->lib, "nvmlDeviceGetNvLinkVersion", &n->nvlink_version);
    load(n->lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2", &n->nvlink_remote);
    load(n->lib, "nvmlDeviceGetP2PStatus", &n->p2p_status);
    load(n->lib, "nvmlDeviceGetMaxClockInfo", &n->max_clock);
    load(n->lib, "nvmlDeviceGetTemperature", &n->temperature);
    load(n->lib, "nvmlDeviceGetTemperatureThreshold", &n->temperature_threshold);
    load(n->lib, "nvmlDeviceGetPowerUsage", &n->power_usage);
    load(n->lib, "nvmlDeviceGetPowerManagementLimit", &n->power_limit);
    load(n->lib, "nvmlDeviceGetEnforcedPowerLimit", &n->enforced_power_limit);
    /* Renamed in newer drivers; the old name stays as an alias. */
    load(n->lib, "nvmlDeviceGetCurrentClocksEventReasons", &n->throttle_reasons);
    if (n->throttle_reasons == NULL)
        load(n->lib, "nvmlDeviceGetCurrentClocksThrottleReasons",
             &n->throttle_reasons);
    load(n->lib, "nvmlDeviceGetEccMode", &n->ecc_mode);
    load(n->lib, "nvmlDeviceGetPersistenceMode", &n->persistence_mode);
    load(n->lib, "nvmlDeviceGetPerformanceState", &n->pstate);
    load(n->lib, "nvmlDeviceGetUtilizationRates", &n->utilization);
    load(n->lib, "nvmlDeviceGetTotalEccErrors", &n->ecc_total);
    load(n->lib, "nvmlDeviceGetPcieReplayCounter", &n->pcie_replay);
    load(n->lib, "nvmlDeviceGetRemappedRows", &n->remapped_rows);
    load(n->lib, "nvmlDeviceGetRetiredPages", &n->retired_pages);
    load(n->lib, "nvmlDeviceGetRetiredPagesPendingStatus", &n->retired_pending);
    load(n->lib, "nvmlDeviceGetNvLinkErrorCounter", &n->nvlink_errors);
    load(n->lib, "nvmlEventSetCreate", &n->event_set_create);
    load(n->lib, "nvmlEventSetFree", &n->event_set_free);
    load(n->lib, "nvmlDeviceRegisterEvents", &n->register_events);
    load(n->lib, "nvmlEventSetWait_v2", &n->event_wait);
    load_process_getters(n);
    if (n->init == NULL || n->shutdown == NULL || n->error_string == NULL) {
        snprintf(reason, reason_cap, "NVML library lacks nvmlInit_v2");
        goto fail;
    }
    rc = n->init();
    if (rc != NVML_SUCCESS) {
        snprintf(reason, reason_cap, "nvmlInit_v2 failed: %s (%d)",
                 n->error_string(rc), rc);
        goto fail;
    }
    return n;

fail:
    if (n->lib)
        dlclose(n->lib);
    free(n);
    return NULL;
}

void gb_nvml_close(struct gb_nvml *nvml)
{
    if (nvml == NULL)
        return;
    if (nvml->xids != NULL)
        nvml->event_set_free(nvml->xids);
    nvml->shutdown();
    dlclose(nvml->lib);
    free(nvml);
}

int gb_nvml_driver_version(struct gb_nvml *nvml, char *out, size_t cap,
                           char *reason, size_t reason_cap)
{
    char buf[96];
    int rc;

    if (nvml->driver_version == NULL) {
        snprintf(reason, reason_cap, "NVML lacks nvmlSystemGetDriverVersion");
        return -1;
    }
    rc = nvml->driver_version(buf, sizeof(buf));
    if (rc != NVML_SUCCESS) {
        snprintf(reason, reason_cap, "nvmlSystemGetDriverVersion: %s",
                 nvml->error_string(rc));
        return -1;
    }
    snprintf(out, cap, "%s", buf);
    return 0;
}

/* Adds name: value when the getter exists and succeeded, else null. */
static void add_uint(cJSON *obj, const char *name, int ok, double value)
{
    if (ok)
        cJSON_AddNumberToObject(obj, name, value);
    else
        cJSON_AddNullToObject(obj, name);
}

static void add_throttle(cJSON *obj, struct gb_nvml *n, nvml_device dev)
{
    unsigned long long mask = 0;
    const char *names[16];
    char hex[32];
    int count;
    cJSON *list;

    if (n->throttle_reasons == NULL ||
        n->throttle_reasons(dev, &mask) != NVML_SUCCESS) {
        cJSON_AddNullToObject(obj, "throttle_reasons");
        cJSON_AddNullToObject(obj, "throttle_mask");
        return;
    }
    list = cJSON_AddArrayToObject(obj, "throttle_reasons");
    count = gb_throttle_decode(mask, names, 16);
    for (int i = 0; list && i < count && i < 16; i++)
        cJSON_AddItemToArray(list, cJSON_CreateString(names[i]));
    snprintf(hex, sizeof(hex), "0x%llx", mask);
    cJSON_AddStringToObject(obj, "throttle_mask", hex);
    cJSON_AddBoolToObject(obj, "slowdown", gb_throttle_is_slowdown(mask));
}

static void add_enable_state(cJSON *obj, const char *name, int ok, int state)
{
    if (ok)
        cJSON_AddStringToObject(obj, name, state ? "enabled" : "disabled");
    else
        cJSON_AddNullToObject(obj, name);
}

cJSON *gb_nvml_card_state(struct gb_nvml *n, const char *pci_bus_id,
                          const char *when, const char *unavailable_reason)
{
    cJSON *obj = cJSON_CreateObject();
    nvml_device dev = NULL;
    unsigned int v = 0;
    int ok, current = 0, pending = 0, rc;
    char reason[160];

    if (obj == NULL)
        return NULL;
    cJSON_AddStringToObject(obj, "when", when);
    if (n == NULL || n->handle_by_pci == NULL) {
        cJSON_AddBoolToObject(obj, "available", 0);
        cJSON_AddStringToObject(obj, "reason",
                                unavailable_reason ? unavailable_reason : "NVML not available");
        return obj;
    }
    rc = n->handle_by_pci(pci_bus_id, &dev);
    if (rc != NVML_SUCCESS) {
        snprintf(reason, sizeof(reason), "nvmlDeviceGetHandleByPciBusId_v2(%s): %s",
                 pci_bus_id, n->error_string(rc));
        cJSON_AddBoolToObject(obj, "available", 0);
        cJSON_AddStringToObject(obj, "reason", reason);
        return obj;
    }
    cJSON_AddBoolToObject(obj, "available", 1);
    ok = n->clock && n->clock(dev, NVML_CLOCK_SM, &v) == NVML_SUCCESS;
    add_uint(obj, "sm_clock_mhz", ok, v);
    ok = n->clock && n->clock(dev, NVML_CLOCK_MEM, &v) == NVML_SUCCESS;
    add_uint(obj, "mem_clock_mhz", ok, v);
    ok = n->max_clock && n->max_clock(dev, NVML_CLOCK_SM, &v) == NVML_SUCCESS;
    add_uint(obj, "max_sm_clock_mhz", ok, v);
    ok = n->temperature &&
         n->temperature(dev, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS;
    add_uint(obj, "temperature_c", ok, v);
    ok = n->power_usage && n->power_usage(dev, &v) == NVML_SUCCESS;
    add_uint(obj, "power_draw_w", ok, v / 1000.0);
    ok = n->power_limit && n->power_limit(dev, &v) == NVML_SUCCESS;
    add_uint(obj, "power_limit_w", ok, v / 1000.0);
    ok = n->enforced_power_limit &&
         n->enforced_power_limit(dev, &v) == NVML_SUCCESS;
    add_uint(obj, "enforced_power_limit_w", ok, v / 1000.0);
    add_throttle(obj, n, dev);
    ok = n->ecc_mode && n->ecc_mode(dev, &current, &pending) == NVML_SUCCESS;
    add_enable_state(obj, "ecc_mode", ok, current);
    ok = n->persistence_mode &&
         n->persistence_mode(dev, &current) == NVML_SUCCESS;
    add_enable_state(obj, "persistence_mode", ok, current);
    ok = n->pstate && n->pstate(dev, &current) == NVML_SUCCESS;
    add_uint(obj, "pstate", ok, current);
    return obj;
}

/* The process's name from /proc/PID/comm, or "" where it cannot be read
 * (another user's process under hidepid, another pid namespace). */
static void process_name(unsigned pid, char *out, size_t cap)
{
    char path[64];
    FILE *f;
    size_t len;

    out[0] = '\0';
    snprintf(path, sizeof(path), "/proc/%u/comm", pid);
    f = fopen(path, "r");
    if (f == NULL)
        return;
    if (fgets(out, (int)cap, f) == NULL)
        out[0] = '\0';
    fclose(f);
    len = strlen(out);
    if (len > 0 && out[len - 1] == '\n')
        out[len - 1] = '\0';
}

/* Adds pid to r's list unless it is this process or already there. */
static void add_process(struct gb_nvml_reading *r, unsigned pid)
{
    if (pid == (unsigned)getpid())
        return;
    for (int i = 0; i < r->proc_count && i < GB_NVML_MAX_PROCS; i++)
        if (r->procs[i].pid == pid)
            return;
    if (r->proc_count < GB_NVML_MAX_PROCS) {
        r->procs[r->proc_count].pid = pid;
        process_name(pid, r->procs[r->proc_count].name, sizeof(r->procs[0].name));
    }
    r->proc_count++;
}

/* One kind of process list (k: 0 compute, 1 graphics); 0 when read. */
#define PROCESS_ROOM 64
static int read_processes(struct gb_nvml *n, nvml_device dev, int k,
                          struct gb_nvml_reading *r)
{
    unsigned int count = PROCESS_ROOM;
    int rc;

    if (n->procs_v2[k] != NULL) {
        struct nvml_process_v2 list[PROCESS_ROOM];
        rc = n->procs_v2[k](dev, &count, list);
        if (rc != NVML_SUCCESS)
            return -1;
        for (unsigned i = 0; i < count && i < PROCESS_ROOM; i++)
            add_process(r, list[i].pid);
        return 0;
    }
    if (n->procs_v1[k] != NULL) {
        struct nvml_process_v1 list[PROCESS_ROOM];
        rc = n->procs_v1[k](dev, &count, list);
        if (rc != NVML_SUCCESS)
            return -1;
        for (unsigned i = 0; i < count && i < PROCESS_ROOM; i++)
            add_process(r, list[i].pid);
        return 0;
    }
    return -1;
}

static int find_device(struct gb_nvml *n, const char *pci_bus_id, nvml_device *dev,
                       char *reason, size_t reason_cap)
{
    int rc;

    if (n == NULL || n->handle_by_pci == NULL) {
        snprintf(reason, reason_cap, "NVML not available");
        return -1;
    }
    rc = n->handle_by_pci(pci_bus_id, dev);
    if (rc != NVML_SUCCESS) {
        snprintf(reason, reason_cap, "nvmlDeviceGetHandleByPciBusId_v2(%s): %s",
                 pci_bus_id, n->error_string(rc));
        return -1;
    }
    return 0;
}

int gb_nvml_read(struct gb_nvml *n, const char *pci_bus_id, struct gb_nvml_reading *r,
                 char *reason, size_t reason_cap)
{
    nvml_device dev = NULL;
    struct nvml_utilization util;
    unsigned int v = 0;

    memset(r, 0, sizeof(*r));
    r->util_percent = -1;
    r->power_w = -1;
    r->temperature_c = -1;
    if (find_device(n, pci_bus_id, &dev, reason, reason_cap) != 0)
        return -1;
    /* A list the driver refuses (too many processes: INSUFFICIENT_SIZE)
     * leaves procs_read 0 rather than a count that is too small. */
    r->procs_read = read_processes(n, dev, 0, r) == 0 && read_processes(n, dev, 1, r) == 0;
    if (n->utilization && n->utilization(dev, &util) == NVML_SUCCESS)
        r->util_percent = (int)util.gpu;
    if (n->clock && n->clock(dev, NVML_CLOCK_MEM, &v) == NVML_SUCCESS)
        r->mem_clock_mhz = v;
    r->throttle_read = n->throttle_reasons &&
                       n->throttle_reasons(dev, &r->throttle_mask) == NVML_SUCCESS;
    if (n->power_usage && n->power_usage(dev, &v) == NVML_SUCCESS)
        r->power_w = v / 1000.0;
    if (n->temperature && n->temperature(dev, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS)
        r->temperature_c = (int)v;
    return 0;
}

void gb_nvml_read_errors(struct gb_nvml *n, const char *pci_bus_id, struct gb_nvml_errors *e)
{
    nvml_device dev = NULL;
    char reason[160];
    unsigned int replay = 0;

    memset(e, 0, sizeof(*e));
    if (find_device(n, pci_bus_id, &dev, reason, sizeof(reason)) != 0)
        return;
    /* NOT_SUPPORTED where ECC is off or absent: ecc_read stays 0. */
    e->ecc_read = n->ecc_total &&
                  n->ecc_total(dev, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC,
                               &e->ecc_corrected) == NVML_SUCCESS &&
                  n->ecc_total(dev, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC,
                               &e->ecc_uncorrected) == NVML_SUCCESS;
    e->replay_read = n->pcie_replay && n->pcie_replay(dev, &replay) == NVML_SUCCESS;
    e->replay = replay;
}

int gb_nvml_pcie_link(struct gb_nvml *n, const char *pci_bus_id, int out[4], char *reason,
                      size_t reason_cap)
{
    nvml_device dev = NULL;

    if (find_device(n, pci_bus_id, &dev, reason, reason_cap) != 0)
        return -1;
    for (int i = 0; i < 4; i++) {
        unsigned v = 0;
        int rc = n->pcie_link[i] ? n->pcie_link[i](dev, &v) : -1;
        if (rc != NVML_SUCCESS) {
            snprintf(reason, reason_cap, "NVML PCIe link query %d: %s", i,
                     rc < 0 ? "not in this NVML" : n->error_string(rc));
            return -1;
        }
        out[i] = (int)v;
    }
    return 0;
}

int gb_nvml_sm_clock(struct gb_nvml *n, const char *pci_bus_id, double *mhz, char *reason,
                     size_t reason_cap)
{
    nvml_device dev = NULL;
    unsigned int v = 0;
    int rc;

    if (find_device(n, pci_bus_id, &dev, reason, reason_cap) != 0)
        return -1;
    rc = n->clock ? n->clock(dev, NVML_CLOCK_SM, &v) : -1;
    if (rc != NVML_SUCCESS) {
        snprintf(reason, reason_cap, "nvmlDeviceGetClockInfo(NVML_CLOCK_SM): %s",
                 rc < 0 ? "not in this NVML" : n->error_string(rc));
        return -1;
    }
    *mhz = v;
    return 0;
}

int gb_nvml_slowdown_temperature(struct gb_nvml *n, const char *pci_bus_id, double *celsius,
                                 char *reason, size_t reason_cap)
{
    nvml_device dev = NULL;
    unsigned int v = 0;
    int rc;

    if (find_device(n, pci_bus_id, &dev, reason, reason_cap) != 0)
        return -1;
    rc = n->temperature_threshold
             ? n->temperature_threshold(dev, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &v)
             : -1;
    if (rc != NVML_SUCCESS) {
        snprintf(reason, reason_cap, "nvmlDeviceGetTemperatureThreshold(SLOWDOWN): %s",
                 rc < 0 ? "not in this NVML" : n->error_string(rc));
        return -1;
    }
    *celsius = v;
    return 0;
}

int gb_nvml_enforced_power_limit(struct gb_nvml *n, const char *pci_bus_id, double *watts,
                                 char *reason, size_t reason_cap)
{
    nvml_device dev = NULL;
    unsigned int mw = 0;
    int rc;

    if (find_device(n, pci_bus_id, &dev, reason, reason_cap) != 0)
        return -1;
    rc = n->enforced_power_limit ? n->enforced_power_limit(dev, &mw) : -1;
    if (rc != NVML_SUCCESS) {
        snprintf(reason, reason_cap, "nvmlDeviceGetEnforcedPowerLimit: %s",
                 rc < 0 ? "not in this NVML" : n->error_string(rc));
        return -1;
    }
    *watts = mw / 1000.0;
    return 0;
}

/* NVLink between a and b: the active links of a, the version of the
 * first, how many of them end at b itself (direct; 0 with NVLink P2P OK
 * means through NVSwitches). */
int gb_nvml_link_between(struct gb_nvml *n, const char *pci_a, const char *pci_b,
                         struct gb_nvml_link *out, char *reason, size_t reason_cap)
{
    nvml_device a = NULL, b = NULL;
    int status = -1;

    memset(out, 0, sizeof(*out));
    if (find_device(n, pci_a, &a, reason, reason_cap) != 0 ||
        find_device(n, pci_b, &b, reason, reason_cap) != 0)
        return -1;
    if (n->p2p_status)
        out->p2p_read = n->p2p_status(a, b, NVML_P2P_CAPS_INDEX_NVLINK, &status) == NVML_SUCCESS;
    out->nvlink_p2p = out->p2p_read && status == 0;
    for (unsigned l = 0; n->nvlink_state && l < NVML_NVLINK_MAX_LINKS; l++) {
        int active = 0;
        unsigned version = 0;
        struct nvml_pci_info remote;
        if (n->nvlink_state(a, l, &active) != NVML_SUCCESS || !active)
            continue;
        out->active_links++;
        if (out->version == 0 && n->nvlink_version &&
            n->nvlink_version(a, l, &version) == NVML_SUCCESS)
            out->version = (int)version;
        memset(&remote, 0, sizeof(remote));
        if (n->nvlink_remote && n->nvlink_remote(a, l, &remote) == NVML_SUCCESS &&
            strncasecmp(remote.bus_id, pci_b, sizeof(remote.bus_id)) == 0)
            out->direct_links++;
    }
    return 0;
}

/* The XIDs since the last call: an event set registered for the device
 * at the first call (NVML keeps XIDs only for a set that existed when
 * they happened), drained without waiting. */
static void read_xids(struct gb_nvml *n, nvml_device dev, struct gb_nvml_health *h)
{
    struct nvml_event_data ev;

    if (n->event_set_create == NULL || n->event_set_free == NULL || n->register_events == NULL ||
        n->event_wait == NULL)
        return;
    if (n->xids == NULL) {
        if (n->event_set_create(&n->xids) != NVML_SUCCESS) {
            n->xids = NULL;
            return;
        }
        if (n->register_events(dev, NVML_EVENT_TYPE_XID_CRITICAL_ERROR, n->xids) !=
            NVML_SUCCESS) {
            n->event_set_free(n->xids);
            n->xids = NULL;
            return;
        }
        n->xid_device = dev;
    }
    if (n->xid_device != dev)
        return;
    h->xid_read = 1;
    for (int i = 0; i < 1024; i++) {
        memset(&ev, 0, sizeof(ev));
        if (n->event_wait(n->xids, &ev, 0) != NVML_SUCCESS)
            break;
        if (!(ev.event_type & NVML_EVENT_TYPE_XID_CRITICAL_ERROR))
            continue;
        if (h->xid_count < GB_NVML_MAX_XIDS)
            h->xids[h->xid_count] = ev.event_data;
        h->xid_count++;
    }
}

/* A count of retired pages of one cause (the list itself is not kept). */
static int retired_count(struct gb_nvml *n, nvml_device dev, int cause, unsigned *count)
{
    int rc;

    *count = 0;
    rc = n->retired_pages(dev, cause, count, NULL);
    return rc == NVML_SUCCESS || rc == NVML_ERROR_INSUFFICIENT_SIZE;
}

int gb_nvml_read_health(struct gb_nvml *n, const char *pci_bus_id, struct gb_nvml_health *h,
                        char *reason, size_t reason_cap)
{
    nvml_device dev = NULL;
    int pending = 0;

    memset(h, 0, sizeof(*h));
    if (find_device(n, pci_bus_id, &dev, reason, reason_cap) != 0)
        return -1;
    read_xids(n, dev, h);
    h->remap_read = n->remapped_rows &&
                    n->remapped_rows(dev, &h->remap[0], &h->remap[1], &h->remap[2],
                                     &h->remap[3]) == NVML_SUCCESS;
    for (int kind = 0; kind < 2; kind++) /* volatile, aggregate */
        h->ecc_read[kind] =
            n->ecc_total &&
            n->ecc_total(dev, NVML_MEMORY_ERROR_TYPE_CORRECTED, kind, &h->ecc[kind][0]) ==
                NVML_SUCCESS &&
            n->ecc_total(dev, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, kind, &h->ecc[kind][1]) ==
                NVML_SUCCESS;
    h->retired_read =
        n->retired_pages && n->retired_pending &&
        retired_count(n, dev, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS,
                      &h->retired_sbe) &&
        retired_count(n, dev, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, &h->retired_dbe) &&
        n->retired_pending(dev, &pending) == NVML_SUCCESS;
    h->retired_pending = pending;
    for (unsigned l = 0; n->nvlink_state && l < NVML_NVLINK_MAX_LINKS; l++) {
        struct gb_nvml_nvlink *link = &h->links[h->link_count];
        int active = 0;
        /* NOT_SUPPORTED past the card's last link: the list ends there. */
        if (n->nvlink_state(dev, l, &active) != NVML_SUCCESS)
            continue;
        link->link = (int)l;
        link->up = active != 0;
        for (int c = 0; c < NVML_NVLINK_ERROR_COUNTERS; c++)
            link->errors_read[c] = n->nvlink_errors &&
                                   n->nvlink_errors(dev, l, c, &link->errors[c]) == NVML_SUCCESS;
        h->link_count++;
    }
    for (int i = 0; i < 4; i++)
        h->pcie_read[i] = n->pcie_link[i] && n->pcie_link[i](dev, &h->pcie[i]) == NVML_SUCCESS;
    h->replay_read = n->pcie_replay && n->pcie_replay(dev, &h->replay) == NVML_SUCCESS;
    return 0;
}
