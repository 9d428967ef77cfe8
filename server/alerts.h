/*
 * alerts.h - what a run's verdicts change (issue 14): alerts and confirming
 * runs, and the webhook that tells of confirmed alerts.
 *
 * A change counts once it repeats.  A run that is not a confirmation and
 * finds a row `slower` than the card's history, or an outlier in its
 * fleet, opens an alert `detected` (unless one of that card, key, kind and
 * row is open already) and queues --confirm-runs runs of the same request
 * on the same card, each marked `confirms: ID`.  A confirming run that
 * finds the same again makes it `confirmed` (the webhook is called, the
 * /metrics gauge appears); when none of them does, it is `cleared`.  A
 * confirmation queues nothing, whatever it finds.  With --confirm-runs 0
 * an alert is confirmed when found.  A confirmed or acknowledged alert is
 * cleared by the first later run that finds its row `same` (history) or
 * within the fleet again.
 *
 * A confirming run that ends without a verdict (failed, cancelled, not
 * valid, or not judged) counts as a confirmation that did not repeat it,
 * with its own reason: once the last one is spent the alert is cleared,
 * "its confirming run ID failed" (or "was cancelled", ...), rather than
 * waiting `detected` for good.  Nothing is queued again: a real change is
 * found again by the card's next run, which opens a new alert; a card
 * whose runs keep failing shows that in its runs, not in its alerts.  A
 * run whose confirming runs cannot be queued (the queue is full) has its
 * alerts cleared at once, saying so.  (Not yet: a confirming run that
 * a daemon stopped while it ran is failed at the next start by
 * store_recover, which does not settle its alerts.)
 *
 * The webhook posts each confirmed alert as JSON to --alert-webhook from a
 * thread of its own, retried with back-off (ALERTS_WEBHOOK_TRIES), so a
 * slow or dead receiver never holds up a run; the queue is bounded and an
 * alert past it is logged and dropped (it stays in GET /alerts).
 */
#ifndef GPUBENCH_ALERTS_H
#define GPUBENCH_ALERTS_H

#include <cjson/cJSON.h>

#define ALERTS_WEBHOOK_TRIES 6
#define ALERTS_WEBHOOK_QUEUE 256

struct app;
struct alerts;

/* Starts the webhook thread when url is not NULL.  NULL only when out of
 * memory (logged); without a url the object only counts. */
struct alerts *alerts_start(const char *url);

/* Stops the thread, dropping what it had not sent (logged). */
void alerts_stop(struct alerts *a);

/* Acts on the verdicts run (a run object as GET /runs/ID shows it, done)
 * got at its end: opens, confirms and clears alerts, queues confirming
 * runs.  Failures are logged: the run is stored whatever happens here. */
void alerts_on_run(struct app *app, const cJSON *run, const cJSON *verdicts);

/* A run (run_id) ended with status and no verdicts: if it was a
 * confirming run, the alerts it was to settle count it as not repeated
 * (reason: "its confirming run ID <what>").  Failures are logged. */
void alerts_on_unjudged(struct app *app, const char *run_id, const char *what);

/* Webhook posts delivered and given up on, for /metrics. */
void alerts_webhook_counts(struct alerts *a, long *delivered, long *failed);

#endif
