/*
 * watch.h - what a run saw of its card through NVML: the quiet
 * check before the first timed sample, readings between samples (never
 * during one), and the error counters before and after.  The worker only
 * REPORTS these (meta.watch and each row's mem_clock_mhz and
 * throttle_reasons); the daemon judges them (common/validity.c).
 *
 * The accumulating half (gb_watch_add_reading, gb_watch_json) is pure and
 * unit-tested with readings recorded on an H200; the other half calls
 * NVML.  Where NVML is missing every call is harmless and the JSON says
 * available: false with the reason.
 */
#ifndef GPUBENCH_WORKER_WATCH_H
#define GPUBENCH_WORKER_WATCH_H

#include <stdio.h>
#include <cjson/cJSON.h>

#include "gb_kernels.h"
#include "nvml_state.h"
#include "quiet.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GB_WATCH_MAX_PROCS 32

struct gb_watch {
    struct gb_nvml *nvml; /* NULL: nothing can be watched */
    const char *pci_bus_id;
    char reason[256]; /* why not available */
    int available;
    /* the quiet check */
    enum gb_quiet_mode mode;
    int quiet_done; /* the check ran (mode not off) */
    double waited_s;
    int timed_out;
    struct gb_nvml_proc found[GB_WATCH_MAX_PROCS];
    int found_count;
    int util_max; /* -1: none read */
    /* the whole run */
    struct gb_nvml_proc seen[GB_WATCH_MAX_PROCS];
    int seen_count;
    int throttle_read;
    unsigned long long throttle_mask;
    unsigned long long outside_mask; /* of readings outside every row (the
                                        start): a power-bound row's cap is
                                        judged apart from these */
    double power_min, power_max;     /* power_max < 0: none read */
    int temp_min, temp_max;          /* temp_max < 0: none read */
    struct gb_nvml_errors before, after;
    int errors_read; /* before and after were taken */
    FILE *trace;     /* GPUBENCH_WATCH_TRACE: each quiet
                        reading as "t_s procs util" */
};

/* Ready to watch the GPU at pci_bus_id through nvml (NULL: unavailable,
 * nvml_reason says why). */
void gb_watch_init(struct gb_watch *w, struct gb_nvml *nvml, const char *nvml_reason,
                   const char *pci_bus_id);
void gb_watch_close(struct gb_watch *w);

/* Folds one reading into the run (and into row, when not NULL; with row
 * NULL its throttle reasons are also the run's outside any row): other
 * processes (deduplicated by pid), throttle reasons, power and
 * temperature ranges, the row's lowest memory clock. */
void gb_watch_add_reading(struct gb_watch *w, const struct gb_nvml_reading *r,
                          struct gb_row_watch *row);

typedef void (*gb_watch_note_fn)(void *arg, const char *message);

/* Before the first timed sample (before warm-up, so this job's own
 * kernels are not in NVML's utilisation window): reads the error counters,
 * then looks at the card every GB_QUIET_POLL_S as quiet.h decides, calling
 * note with why it waits ("waiting for a quiet card: pid 4242 python3")
 * when that changes and at least every second.  Never fails: a timed-out
 * wait is recorded and the run goes on.  quiet.found lists every other
 * process the check saw; only the LAST reading (the card as timing
 * begins) joins the run's processes_seen, ranges and throttle reasons, so
 * a process the wait outlasted does not make the run contended. */
void gb_watch_start(struct gb_watch *w, enum gb_quiet_mode mode, double wait_s,
                    gb_watch_note_fn note, void *note_arg);

/* Between two samples: one reading, folded into the run and row. */
void gb_watch_poll(struct gb_watch *w, struct gb_row_watch *row);

/* After the last sample: the error counters again. */
void gb_watch_finish(struct gb_watch *w);

/* The sentence note receives for a reading that is not quiet. */
void gb_watch_waiting_text(const struct gb_nvml_reading *r, char *out, size_t cap);

/* A NEW meta.watch object (docs/WATCH.md); NULL when out of memory. */
cJSON *gb_watch_json(const struct gb_watch *w);

#ifdef __cplusplus
}
#endif

#endif
