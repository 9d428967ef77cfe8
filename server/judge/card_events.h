/*
 * card_events.h - what changed on a card between two watch readings, and which
 * changes are critical.  Pure: readings in (the
 * worker's JSON, kernels/nvml_watch.h), events out; the runs layer stores
 * them, counts them and raises alerts for the critical ones.
 *
 * The rules (README "Watching cards"):
 *   xid                an XID the driver reported; critical when its
 *                      number is in the critical list (--critical-xids)
 *   row_remap_pending  rows wait for a reset to be remapped: critical
 *   row_remap_failed   a row could not be remapped: critical
 *   row_remapped       a remap count rose (the mechanism working)
 *   ecc_uncorrected    an uncorrected ECC count rose: critical
 *   ecc_corrected      a corrected ECC count rose
 *   page_retire_pending pages wait for a reset to be retired (the row
 *                      remap of older cards): critical
 *   page_retired       a retired page count rose
 *   nvlink_down        a link that was up is down (or down at the first
 *                      reading): critical
 *   nvlink_errors      a link's replay/recovery/CRC counters rose
 *   pcie_width_down    the link runs narrower than its maximum: critical.
 *                      The generation is not judged: an idle link trains
 *                      down to save power (kernels/nvml_state.h)
 *   pcie_replay        the PCIe replay counter rose
 * The first reading of a card (prev NULL) has no counts to compare: only
 * the states (pending, failed, down, narrow) and its XIDs are events.
 */
#ifndef GPUBENCH_JUDGE_CARD_EVENTS_H
#define GPUBENCH_JUDGE_CARD_EVENTS_H

#include <stddef.h>
#include <cjson/cJSON.h>

#define CARD_EVENTS_MAX 64
#define CARD_CRITICAL_XIDS_MAX 64

/* NVIDIA's XID catalogue, the ones that mean the card needs a reset or
 * service rather than an application bug: 48 (double-bit ECC), 63 and 64
 * (row remapping recorded or failed), 74 (NVLink error), 79 (fallen off
 * the bus), 92 (high single-bit ECC rate), 94 and 95 (contained and
 * uncontained ECC errors), 119 and 120 (GSP timeout and error).  13, 31,
 * 43 and 45 are left out: an application's fault or its end. */
#define CARD_CRITICAL_XIDS_DEFAULT "48,63,64,74,79,92,94,95,119,120"

struct card_event {
    char kind[32];
    int critical;
    char message[256];
    cJSON *detail; /* owned; card_events_free */
};

/* Parses "48,63,79" into xids (room for cap).  Returns how many, or -1
 * when text is not a list of positive numbers. */
int card_critical_xids_parse(const char *text, int *xids, int cap);

/* The events between prev (NULL: the card's first reading) and cur, at
 * most cap into out.  Returns how many; free them with card_events_free.
 * A reading that is not available gives none.  -1 (none kept) when
 * memory ran out: an event must not be stored without its detail. */
int card_events_diff(const cJSON *prev, const cJSON *cur, const int *critical_xids, int n_xids,
                     struct card_event *out, int cap);
void card_events_free(struct card_event *events, int n);

/* 1 when kind is a state that lasts until a later reading no longer shows
 * it (a pending or failed remap, pending retirements, a link down or
 * narrow); 0 for a one-off (an XID, a count that rose). */
int card_event_lasting(const char *kind);

/* Whether the state an event of a lasting kind found (detail as
 * card_events_diff made it) still holds in reading: 1, or 0 when the
 * reading shows it gone.  A reading that is not available, or lacks the
 * field, holds it: only a reading that shows the state gone ends it. */
int card_event_holds(const char *kind, const cJSON *detail, const cJSON *reading);

/* What e is about within its kind, into buf: the kind, and the XID's
 * number or the NVLink's index after it ("xid 79", "nvlink_down 3").  An
 * alert is opened once per card and subject while it is open. */
void card_event_subject(const struct card_event *e, char *buf, size_t cap);

#endif
