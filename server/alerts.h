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

/* Webhook posts delivered and given up on, for /metrics. */
void alerts_webhook_counts(struct alerts *a, long *delivered, long *failed);

#endif
