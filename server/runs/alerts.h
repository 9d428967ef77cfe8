/*
 * alerts.h - what a run's verdicts change (issue 14): alerts and confirming
 * runs, and the webhook that tells of confirmed alerts.
 *
 * A change counts once it repeats.  A run that is not a confirmation and
 * finds a row `slower` than the card's history, an outlier in its fleet,
 * or below its card model's floor (its checks, common/expect.h: kind
 * `floor`), opens an alert `detected` (unless one of that card, key, kind and
 * row is open already) and queues --confirm-runs runs of the same request
 * on the same card, each marked `confirms: ID`.  A confirming run that
 * finds the same again makes it `confirmed` (the webhook is called, the
 * /metrics gauge appears); when none of them does, it is `cleared`.  A
 * confirmation queues nothing, whatever it finds.  With --confirm-runs 0
 * an alert is confirmed when found.  A confirmed or acknowledged alert is
 * cleared by the first later run that finds its row `same` (history),
 * within the fleet or over its floor again.
 *
 * A wrong result (a failed exact check: a known_answer mismatch, a
 * memtest error, common/expect_deep.h) is a fact, not a change to
 * confirm: its alert (kind floor, verdict wrong_result) is confirmed when
 * found, queues no confirming run, and is raised even from a run that is
 * not valid for another reason; it is cleared only once a later valid run
 * of the card's benchmark passes the row AND a person acknowledged it
 * (store_alerts.h), whichever comes last.
 *
 * A confirming run that ends without a verdict (failed, cancelled, not
 * valid, or not judged) counts as a confirmation that did not repeat it,
 * with its own reason: once the last one is spent the alert is cleared,
 * "its confirming run ID failed" (or "was cancelled", ...), rather than
 * waiting `detected` for good.  Nothing is queued again: a real change is
 * found again by the card's next run, which opens a new alert; a card
 * whose runs keep failing shows that in its runs, not in its alerts.  A
 * run whose confirming runs cannot be queued (the queue is full) has its
 * alerts cleared at once, saying so.
 *
 * A restart is not the card's doing: a confirming run the daemon was
 * stopped (or killed) in is failed "interrupted" at the next start
 * (store_recover), and then alerts_recover queues it again, once.  A
 * second confirming run of the same alert interrupted the same way counts
 * as one that did not repeat it ("its confirming run ID was interrupted
 * by a daemon restart, as one before it was: not queued again"), so a
 * daemon that keeps crashing cannot keep an alert detected for good.
 * Confirmations that were queued stay queued across a restart; ones lost
 * altogether (the daemon killed between an alert and its queueing, or
 * between a confirmation's end and its judgement) are queued again too.
 *
 * The webhook posts each confirmed alert as JSON to --alert-webhook from a
 * thread of its own, retried with back-off (ALERTS_WEBHOOK_TRIES), so a
 * slow or dead receiver never holds up a run; the queue is bounded and an
 * alert past it is logged and dropped (it stays in GET /alerts).
 */
#ifndef GPUBENCH_RUNS_ALERTS_H
#define GPUBENCH_RUNS_ALERTS_H

#include <cjson/cJSON.h>

#include "curl_tls.h"

#define ALERTS_WEBHOOK_TRIES 6
#define ALERTS_WEBHOOK_QUEUE 256

struct alerts;
struct store;

/* What the alerts work with; the strings and the store outlive them. */
struct alerts_config {
    const char *webhook; /* --alert-webhook, or NULL */
    struct curl_tls tls; /* an https:// webhook's CA and client certificate (the peers') */
    struct store *store;
    int confirm_runs; /* --confirm-runs: 0 confirms an alert when found */
    int max_queue;    /* --max-queue, which confirming runs count against */
};

/* Starts the webhook thread when cfg->webhook is not NULL; each post's
 * outcome is recorded in the store.  NULL only when out of memory
 * (logged); without a webhook the object only counts and records that
 * none was told. */
struct alerts *alerts_start(const struct alerts_config *cfg);

/* Stops the thread; what it had not sent stays unrecorded (logged) and is
 * posted by alerts_recover at the next start. */
void alerts_stop(struct alerts *a);

/* Acts on the verdicts run (a run object as GET /runs/ID shows it, done)
 * got at its end: opens, confirms and clears alerts, queues confirming
 * runs.  Failures are logged: the run is stored whatever happens here. */
void alerts_on_run(struct alerts *a, const cJSON *run, const cJSON *verdicts);

/* At start, after store_recover: the confirmed alerts the webhook was not
 * told of are posted (at most ALERTS_WEBHOOK_QUEUE); the detected alerts
 * whose confirming runs a restart interrupted or lost get them queued
 * again, once; interrupted again, they are settled as not repeated.
 * Failures are logged. */
void alerts_recover(struct alerts *a);

/* A run (run_id) ended with status and no verdicts: if it was a
 * confirming run, the alerts it was to settle count it as not repeated
 * (reason: "its confirming run ID <what>").  Failures are logged. */
void alerts_on_unjudged(struct alerts *a, const char *run_id, const char *what);

/* A critical card event (card_watch.c): opens its alert, confirmed at once,
 * and tells the webhook; nothing when one of its card and subject is open
 * (store_alert_card_event).  Failures are logged. */
struct alert_card_event;
void alerts_on_card_event(struct alerts *a, const struct alert_card_event *e);

/* Webhook posts delivered and given up on, for /metrics. */
void alerts_webhook_counts(struct alerts *a, long *delivered, long *failed);

#endif
