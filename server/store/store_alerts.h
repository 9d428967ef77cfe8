/*
 * store_alerts.h - the alerts table (migrations/0007_run_verdicts.sql,
 * store_alerts.c; alerts.h says when they move).  An alert is shown as
 * {"id", "kind", "state", "card": {...}, "benchmark", "row", "verdict",
 * "shift", "z", "runs": {"detected", "confirmed", "cleared"}, "reason",
 * "detected_at", ...}.  See store.h for the store itself.
 */
#ifndef GPUBENCH_STORE_STORE_ALERTS_H
#define GPUBENCH_STORE_STORE_ALERTS_H

#include <cjson/cJSON.h>

#include "store.h"

/* The verdict of an exact check's alert (a known_answer mismatch, a
 * memtest error: common/expect_deep.h): confirmed when found, and cleared
 * only when a later valid run of its card and benchmark passes the row AND
 * a person has acknowledged it, in either order (store_alerts_clear,
 * store_alert_ack). */
#define ALERT_WRONG_RESULT "wrong_result"

struct alert_new {
    const char *kind;    /* "history", "fleet" or "floor" */
    const char *run_id;  /* the run that found it (card and key are its) */
    const char *row_key; /* the row's key value as JSON text */
    const char *verdict; /* "slower", "outlier", "below_floor", ALERT_WRONG_RESULT */
    double shift, z;     /* NAN: none */
    int confirms_left;   /* confirming runs queued to judge it */
    int confirmed;       /* 1: confirmed at once (no confirming runs) */
};
/* Stores a new alert; STORE_CONFLICT (nothing stored) when one of the same
 * card, key, kind and row is open (not cleared). */
int store_alert_detect(struct store *s, const struct alert_new *a, long long *id);
/* A critical card event (server/runs/card_watch.c): a fact, not a
 * measurement, so its alert (kind "card_event", verdict "critical", row
 * its subject, reason its message, no run or benchmark) is confirmed when
 * found.  Strings borrowed; name may be NULL. */
struct alert_card_event {
    const char *host, *uuid, *name;
    const char *subject; /* card_event_subject: one open alert per card and subject */
    const char *message;
};
/* Stores e's alert; STORE_CONFLICT (nothing stored) when one of the same
 * card and subject is open (not cleared). */
int store_alert_card_event(struct store *s, const struct alert_card_event *e, long long *id);
/* Clears the confirmed or acknowledged alerts of run_id's card and key of
 * kind and row (a later run found the row as it was); a wrong result's
 * only when acknowledged, and by card and benchmark; *cleared: how many. */
int store_alerts_clear(struct store *s, const char *run_id, const char *kind,
                       const char *row_key, int *cleared);
/* The alerts run_id found that wait for a confirming run (NEW array). */
int store_alerts_pending(struct store *s, const char *run_id, cJSON **alerts);
/* A confirming run (run_id) judged detected alert id: repeated, it is
 * confirmed and *confirmed gets it as a NEW array of one (else NULL); not
 * repeated, one fewer confirmation is awaited, and at none it is cleared. */
int store_alert_settle(struct store *s, long long id, int repeated, const char *run_id,
                       cJSON **confirmed);
/* Alerts no confirming run will settle.  Not found_by: run_id is a
 * confirming run that ended without a verdict (failed, cancelled, not
 * valid): each detected alert of the run it confirms awaits one fewer
 * confirmation, and at none it is cleared with reason.  found_by: run_id
 * found them and none of its confirming runs could be queued: its
 * detected alerts are cleared with reason at once.  *changed: how many
 * alerts it touched. */
int store_alerts_unconfirmed(struct store *s, const char *run_id, int found_by,
                             const char *reason, int *changed);
/* Each run whose detected alerts wait for confirmations (at start, to find
 * those a restart lost): a NEW array of {"run_id", "awaited" (the most
 * confirmations one of its alerts awaits), "pending" (its confirming runs
 * queued or running), "interrupted" (those a restart failed),
 * "last_interrupted" (the newest of them, or null)}. */
int store_alerts_waiting(struct store *s, cJSON **waiting);
/* The open confirmed and acknowledged alerts counted by kind, state,
 * benchmark, row and card (for /metrics): a NEW array of {"kind",
 * "state", "benchmark", "row", "host", "device_uuid", "count"}. */
int store_alerts_open_counts(struct store *s, cJSON **counts);
/* Alert id as GET /alerts shows it (NEW); STORE_NOT_FOUND when none. */
int store_alert_get(struct store *s, long long id, cJSON **alert);
/* Open alerts only, or open ones then the most recent others; NEW array. */
int store_alerts_list(struct store *s, int open_only, int limit, cJSON **alerts);
/* What became of alert id's webhook post: "delivered", "failed" or "none"
 * (migrations/0008_alert_webhook.sql). */
int store_alert_webhook_done(struct store *s, long long id, const char *outcome);
/* The confirmed alerts the webhook has not been told of yet (a stop or a
 * crash came first), oldest first, at most limit: a NEW array. */
int store_alerts_unposted(struct store *s, int limit, cJSON **alerts);
/* detected or confirmed -> acknowledged with reason (a wrong result that a
 * later valid run passed: -> cleared by that run); *alert gets the alert
 * as it is now (NEW) unless STORE_NOT_FOUND; STORE_CONFLICT when it was
 * acknowledged or cleared already (nothing changed). */
int store_alert_ack(struct store *s, long long id, const char *reason, cJSON **alert);

#endif
