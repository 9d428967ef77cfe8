/*
 * nvml_state.h - the card's state (clocks, temperature, power limit,
 * throttle reasons, ECC) and the driver version, read through NVML.
 *
 * NVML is loaded at run time with dlopen("libnvidia-ml.so.1"), never
 * linked: the worker must start where the library is missing (a build
 * machine, a container without the driver's utilities) and then says why
 * it has no state.  Nothing here writes a setting: the card is measured as
 * it is found.  In kernels/ because the benchmarks read it (PCIe link, SM
 * clock, power limit, NVLink); the worker's metadata and watch read it too.
 */
#ifndef GPUBENCH_KERNELS_NVML_STATE_H
#define GPUBENCH_KERNELS_NVML_STATE_H

#include <stddef.h>
#include <cjson/cJSON.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gb_nvml;

/* Loads and initialises NVML.  Returns a handle the caller frees with
 * gb_nvml_close, or NULL with a sentence in reason. */
struct gb_nvml *gb_nvml_open(char *reason, size_t reason_cap);
void gb_nvml_close(struct gb_nvml *nvml);

/* The driver version ("580.159.03").  Returns 0, or -1 with reason. */
int gb_nvml_driver_version(struct gb_nvml *nvml, char *out, size_t cap,
                           char *reason, size_t reason_cap);

/* A NEW object (caller owns) describing the state of the GPU at
 * pci_bus_id now: {"available": true, "when": when, "sm_clock_mhz", ...};
 * with nvml NULL or the GPU not found, {"available": false, "reason": ...}.
 * Fields NVML refuses are null.  NULL only when out of memory. */
cJSON *gb_nvml_card_state(struct gb_nvml *nvml, const char *pci_bus_id,
                          const char *when, const char *unavailable_reason);

/* One look at the card between samples (the worker's watch.h), every
 * field NVML gave: the other processes on it (compute and graphics, this
 * process left out, names from /proc/PID/comm where readable),
 * utilisation, memory clock, throttle reasons, power and temperature. */
#define GB_NVML_MAX_PROCS 32
struct gb_nvml_proc {
    unsigned pid;
    char name[64]; /* "" where /proc/PID/comm could not be read */
};
struct gb_nvml_reading {
    int procs_read; /* the process lists were read */
    int proc_count; /* other processes (at most GB_NVML_MAX_PROCS kept) */
    struct gb_nvml_proc procs[GB_NVML_MAX_PROCS];
    int util_percent;     /* -1: not read */
    double mem_clock_mhz; /* 0: not read */
    int throttle_read;
    unsigned long long throttle_mask;
    double power_w;    /* < 0: not read */
    int temperature_c; /* < 0: not read */
};

/* Fills r for the GPU at pci_bus_id.  Returns 0, or -1 with reason when
 * nvml is NULL or the GPU is not found (r then says nothing was read). */
int gb_nvml_read(struct gb_nvml *nvml, const char *pci_bus_id, struct gb_nvml_reading *r,
                 char *reason, size_t reason_cap);

/* Error counters, read before and after a run: volatile ECC counts
 * (since the driver loaded) and the PCIe replay counter. */
struct gb_nvml_errors {
    int ecc_read;
    unsigned long long ecc_corrected, ecc_uncorrected;
    int replay_read;
    unsigned replay;
};
void gb_nvml_read_errors(struct gb_nvml *nvml, const char *pci_bus_id,
                         struct gb_nvml_errors *e);

/* What the watch reads of an idle card (kernels/nvml_watch.h): the XIDs
 * since the last call, row remapping, ECC counts, retired pages, each
 * NVLink's state and error counters, the PCIe link and its replays.  Each
 * *_read says the getter answered. */
#define GB_NVML_MAX_XIDS 16
#define GB_NVML_MAX_NVLINKS 18
struct gb_nvml_nvlink {
    int link, up;
    int errors_read[4]; /* replay, recovery, CRC flit, CRC data */
    unsigned long long errors[4];
};
struct gb_nvml_health {
    int xid_read, xid_count; /* count may pass GB_NVML_MAX_XIDS; those kept */
    unsigned long long xids[GB_NVML_MAX_XIDS];
    int remap_read;
    unsigned remap[4];            /* correctable, uncorrectable, pending, failed */
    int ecc_read[2];              /* volatile, aggregate */
    unsigned long long ecc[2][2]; /* [kind][corrected, uncorrected] */
    int retired_read;
    unsigned retired_sbe, retired_dbe;
    int retired_pending;
    int link_count;
    struct gb_nvml_nvlink links[GB_NVML_MAX_NVLINKS];
    int pcie_read[4];
    unsigned pcie[4]; /* gen, width, gen max, width max */
    int replay_read;
    unsigned replay;
};

/* Fills h for the GPU at pci_bus_id.  Returns 0, or -1 with reason when
 * nvml is NULL or the GPU is not found. */
int gb_nvml_read_health(struct gb_nvml *nvml, const char *pci_bus_id, struct gb_nvml_health *h,
                        char *reason, size_t reason_cap);

/* The PCIe link of the GPU at pci_bus_id: out = {current generation,
 * current width, max generation, max width}.  Returns 0, or -1 with
 * reason.  An idle link trains down to save power: read it while a
 * transfer runs. */
int gb_nvml_pcie_link(struct gb_nvml *nvml, const char *pci_bus_id, int out[4], char *reason,
                      size_t reason_cap);

/* The SM clock NVML reports for the GPU at pci_bus_id now
 * (nvmlDeviceGetClockInfo(NVML_CLOCK_SM), MHz): read while a row's
 * launches run, it is the clock they ran at where the kernels record none
 * themselves (cuBLAS's).  Returns 0, or -1 with reason. */
int gb_nvml_sm_clock(struct gb_nvml *nvml, const char *pci_bus_id, double *mhz, char *reason,
                     size_t reason_cap);

/* The power limit the driver enforces on the GPU at pci_bus_id
 * (nvmlDeviceGetEnforcedPowerLimit, in watts): a power-bound rate is a
 * rate under this cap.  Returns 0, or -1 with reason. */
int gb_nvml_enforced_power_limit(struct gb_nvml *nvml, const char *pci_bus_id, double *watts,
                                 char *reason, size_t reason_cap);

/* The temperature at which the driver starts to slow the GPU at
 * pci_bus_id down (nvmlDeviceGetTemperatureThreshold,
 * NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, degrees C).  Returns 0, or -1 with
 * reason. */
int gb_nvml_slowdown_temperature(struct gb_nvml *nvml, const char *pci_bus_id, double *celsius,
                                 char *reason, size_t reason_cap);

/* NVLink from the GPU at pci_a towards the one at pci_b. */
struct gb_nvml_link {
    int p2p_read;     /* nvmlDeviceGetP2PStatus(NVLINK) answered */
    int nvlink_p2p;   /* ... and said OK */
    int active_links; /* active NVLinks of a (nvmlDeviceGetNvLinkState) */
    int direct_links; /* of them, ending at b (remote PCI bus id) */
    int version;      /* nvmlDeviceGetNvLinkVersion of the first; 0: none */
};
int gb_nvml_link_between(struct gb_nvml *nvml, const char *pci_a, const char *pci_b,
                         struct gb_nvml_link *out, char *reason, size_t reason_cap);

#ifdef __cplusplus
}
#endif

#endif
