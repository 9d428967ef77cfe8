/*
 * watch.c - the card seen through NVML around and between samples; see
 * watch.h.
 */
#include "watch.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rounds.h"
#include "throttle.h"

void gb_watch_init(struct gb_watch *w, struct gb_nvml *nvml, const char *nvml_reason,
                   const char *pci_bus_id)
{
    const char *trace = getenv("GPUBENCH_WATCH_TRACE");

    memset(w, 0, sizeof(*w));
    w->nvml = nvml;
    w->pci_bus_id = pci_bus_id;
    w->available = nvml != NULL;
    w->mode = GB_QUIET_OFF;
    w->util_max = -1;
    w->power_max = -1;
    w->temp_max = -1;
    snprintf(w->reason, sizeof(w->reason), "%s",
             nvml_reason && nvml_reason[0] ? nvml_reason : "NVML not loaded");
    if (trace != NULL && trace[0] != '\0')
        w->trace = fopen(trace, "a");
}

void gb_watch_close(struct gb_watch *w)
{
    if (w->trace != NULL)
        fclose(w->trace);
    w->trace = NULL;
}

/* Adds the processes of r to list (deduplicated by pid, at most
 * GB_WATCH_MAX_PROCS kept). */
static void merge_procs(struct gb_nvml_proc *list, int *count, const struct gb_nvml_reading *r)
{
    for (int i = 0; i < r->proc_count && i < GB_NVML_MAX_PROCS; i++) {
        int known = 0;
        for (int j = 0; j < *count; j++)
            known |= list[j].pid == r->procs[i].pid;
        if (!known && *count < GB_WATCH_MAX_PROCS)
            list[(*count)++] = r->procs[i];
    }
}

void gb_watch_add_reading(struct gb_watch *w, const struct gb_nvml_reading *r,
                          struct gb_row_watch *row)
{
    merge_procs(w->seen, &w->seen_count, r);
    if (r->throttle_read) {
        w->throttle_read = 1;
        w->throttle_mask |= r->throttle_mask;
    }
    if (r->power_w >= 0) {
        if (w->power_max < 0 || r->power_w < w->power_min)
            w->power_min = r->power_w;
        if (r->power_w > w->power_max)
            w->power_max = r->power_w;
    }
    if (r->temperature_c >= 0) {
        if (w->temp_max < 0 || r->temperature_c < w->temp_min)
            w->temp_min = r->temperature_c;
        if (r->temperature_c > w->temp_max)
            w->temp_max = r->temperature_c;
    }
    if (row == NULL) {
        if (r->throttle_read)
            w->outside_mask |= r->throttle_mask;
        return;
    }
    row->polls++;
    if (r->throttle_read) {
        row->throttle_read = 1;
        row->throttle_mask |= r->throttle_mask;
    }
    if (r->mem_clock_mhz > 0 && (row->mem_clock_mhz <= 0 || r->mem_clock_mhz < row->mem_clock_mhz))
        row->mem_clock_mhz = r->mem_clock_mhz;
}

void gb_watch_waiting_text(const struct gb_nvml_reading *r, char *out, size_t cap)
{
    size_t used = (size_t)snprintf(out, cap, "waiting for a quiet card:");

    for (int i = 0; i < r->proc_count && i < GB_NVML_MAX_PROCS && used < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "%s pid %u %s", i ? "," : "",
                                 r->procs[i].pid,
                                 r->procs[i].name[0] ? r->procs[i].name : "(name unknown)");
    if (r->proc_count > GB_NVML_MAX_PROCS && used < cap)
        used += (size_t)snprintf(out + used, cap - used, " and %d more",
                                 r->proc_count - GB_NVML_MAX_PROCS);
    if (r->util_percent >= GB_QUIET_UTIL_PERCENT && used < cap)
        snprintf(out + used, cap - used, "%s utilisation %d%%", r->proc_count ? ";" : "",
                 r->util_percent);
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};

    while (nanosleep(&ts, &ts) != 0)
        ;
}

void gb_watch_start(struct gb_watch *w, enum gb_quiet_mode mode, double wait_s,
                    gb_watch_note_fn note, void *note_arg)
{
    struct gb_quiet_state st;
    struct gb_nvml_reading r;
    char reason[160], text[512], last[512] = "";
    double t0 = gb_monotonic_s(), last_note = -1;

    w->mode = mode;
    if (!w->available)
        return;
    gb_nvml_read_errors(w->nvml, w->pci_bus_id, &w->before);
    if (mode == GB_QUIET_OFF)
        return;
    w->quiet_done = 1;
    gb_quiet_begin(&st);
    for (;;) {
        struct gb_quiet_reading q;
        enum gb_quiet_decision d;
        double now = gb_monotonic_s() - t0;

        if (gb_nvml_read(w->nvml, w->pci_bus_id, &r, reason, sizeof(reason)) != 0) {
            w->available = 0;
            snprintf(w->reason, sizeof(w->reason), "%s", reason);
            return;
        }
        merge_procs(w->found, &w->found_count, &r);
        q.t_s = now;
        q.procs = r.procs_read ? r.proc_count : -1;
        q.util_percent = r.util_percent;
        if (w->trace != NULL)
            fprintf(w->trace, "%.3f %d %d\n", q.t_s, q.procs, q.util_percent);
        d = gb_quiet_step(&st, &q, mode, wait_s);
        w->util_max = st.util_max;
        w->waited_s = now;
        if (d != GB_QUIET_WAITING) {
            /* The card as timing begins joins the run: what a wait
             * outlasted does not (it never shared a sample), what check
             * found or a timed-out wait still sees does. */
            gb_watch_add_reading(w, &r, NULL);
            w->timed_out = d == GB_QUIET_TIMED_OUT;
            return;
        }
        if (!gb_quiet_reading_is_quiet(&q) && note != NULL) {
            gb_watch_waiting_text(&r, text, sizeof(text));
            if (strcmp(text, last) != 0 || now - last_note >= 1.0) {
                note(note_arg, text);
                snprintf(last, sizeof(last), "%s", text);
                last_note = now;
            }
        }
        sleep_s(GB_QUIET_POLL_S);
    }
}

void gb_watch_poll(struct gb_watch *w, struct gb_row_watch *row)
{
    struct gb_nvml_reading r;
    char reason[160];

    if (!w->available || gb_nvml_read(w->nvml, w->pci_bus_id, &r, reason, sizeof(reason)) != 0)
        return;
    gb_watch_add_reading(w, &r, row);
}

void gb_watch_finish(struct gb_watch *w)
{
    if (!w->available)
        return;
    gb_nvml_read_errors(w->nvml, w->pci_bus_id, &w->after);
    w->errors_read = 1;
}

static cJSON *procs_json(const struct gb_nvml_proc *list, int count)
{
    cJSON *a = cJSON_CreateArray();

    for (int i = 0; a != NULL && i < count; i++) {
        cJSON *p = cJSON_CreateObject();
        if (p == NULL || !cJSON_AddItemToArray(a, p)) {
            cJSON_Delete(p);
            cJSON_Delete(a);
            return NULL;
        }
        cJSON_AddNumberToObject(p, "pid", list[i].pid);
        if (list[i].name[0])
            cJSON_AddStringToObject(p, "name", list[i].name);
        else
            cJSON_AddNullToObject(p, "name");
    }
    return a;
}

/* name: the throttle reasons of mask, decoded (kernels/throttle.c). */
static void add_reasons(cJSON *o, const char *name, unsigned long long mask)
{
    cJSON *names = cJSON_AddArrayToObject(o, name);
    const char *list[16];
    int count = gb_throttle_decode(mask, list, 16);

    for (int i = 0; names != NULL && i < count && i < 16; i++)
        cJSON_AddItemToArray(names, cJSON_CreateString(list[i]));
}

static cJSON *range_json(double min, double max)
{
    cJSON *o = cJSON_CreateObject();

    if (o != NULL) {
        cJSON_AddNumberToObject(o, "min", min);
        cJSON_AddNumberToObject(o, "max", max);
    }
    return o;
}

static cJSON *ecc_pair(unsigned long long corrected, unsigned long long uncorrected)
{
    cJSON *o = cJSON_CreateObject();

    if (o != NULL) {
        cJSON_AddNumberToObject(o, "corrected", (double)corrected);
        cJSON_AddNumberToObject(o, "uncorrected", (double)uncorrected);
    }
    return o;
}

static void add_errors(cJSON *o, const struct gb_watch *w)
{
    const struct gb_nvml_errors *b = &w->before, *a = &w->after;
    cJSON *ecc, *replay;

    if (w->errors_read && b->ecc_read && a->ecc_read &&
        (ecc = cJSON_AddObjectToObject(o, "ecc_volatile")) != NULL) {
        cJSON_AddItemToObject(ecc, "before", ecc_pair(b->ecc_corrected, b->ecc_uncorrected));
        cJSON_AddItemToObject(ecc, "after", ecc_pair(a->ecc_corrected, a->ecc_uncorrected));
    } else {
        cJSON_AddNullToObject(o, "ecc_volatile");
    }
    if (w->errors_read && b->replay_read && a->replay_read &&
        (replay = cJSON_AddObjectToObject(o, "pcie_replay")) != NULL) {
        cJSON_AddNumberToObject(replay, "before", b->replay);
        cJSON_AddNumberToObject(replay, "after", a->replay);
    } else {
        cJSON_AddNullToObject(o, "pcie_replay");
    }
}

cJSON *gb_watch_json(const struct gb_watch *w)
{
    cJSON *o = cJSON_CreateObject(), *quiet;

    if (o == NULL)
        return NULL;
    cJSON_AddBoolToObject(o, "available", w->available);
    if (!w->available) {
        cJSON_AddStringToObject(o, "reason", w->reason);
        return o;
    }
    quiet = cJSON_AddObjectToObject(o, "quiet");
    if (quiet != NULL) {
        cJSON_AddStringToObject(quiet, "mode", gb_quiet_mode_name(w->mode));
        if (w->quiet_done) {
            cJSON_AddNumberToObject(quiet, "waited_s", w->waited_s);
            cJSON_AddBoolToObject(quiet, "timed_out", w->timed_out);
            cJSON_AddItemToObject(quiet, "found", procs_json(w->found, w->found_count));
            if (w->util_max >= 0)
                cJSON_AddNumberToObject(quiet, "utilization_max_percent", w->util_max);
            else
                cJSON_AddNullToObject(quiet, "utilization_max_percent");
        }
    }
    cJSON_AddItemToObject(o, "processes_seen", procs_json(w->seen, w->seen_count));
    if (w->throttle_read) {
        /* The union, and what of it was seen outside every row (the
         * card as timing began), for common/validity.c. */
        add_reasons(o, "throttle_reasons", w->throttle_mask);
        add_reasons(o, "throttle_reasons_outside_rows", w->outside_mask);
    }
    if (w->power_max >= 0)
        cJSON_AddItemToObject(o, "power_w", range_json(w->power_min, w->power_max));
    if (w->temp_max >= 0)
        cJSON_AddItemToObject(o, "temperature_c", range_json(w->temp_min, w->temp_max));
    add_errors(o, w);
    return o;
}
