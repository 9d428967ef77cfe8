/*
 * metrics_api.c - GET /metrics in the Prometheus text format (0.0.4), so a
 * lab's Prometheus can scrape every node: queue depth and worker state per
 * GPU, runs by status, and the latest result of each benchmark row on each
 * card as gauges (the fields common/result_fields.c marks GB_USE_GAUGE),
 * labelled with that run's verdict (valid="true", "false" or "unknown").
 *
 * Label values are escaped as the format asks (backslash, quote, newline).
 * The text is made whole or not at all: a store error, or a buffer that
 * refused a line, answers 500 rather than a scrape with series missing.
 */
#include "alerts.h"
#include "app.h"
#include "compare.h"
#include "dynbuf.h"
#include "fleet.h"
#include "shift.h"
#include "gpu_pool.h"
#include "handlers.h"
#include "peers.h"
#include "result_fields.h"
#include "store.h"
#include "timeutil.h"
#include "version.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define METRICS_CAP (32 * 1024 * 1024)
#define METRICS_MAX_GPUS 64

static void label_value(struct dynbuf *b, const char *v)
{
    for (; v && *v; v++) {
        if (*v == '\\' || *v == '"')
            dynbuf_printf(b, "\\%c", *v);
        else if (*v == '\n')
            dynbuf_add(b, "\\n", 2);
        else
            dynbuf_add(b, v, 1);
    }
}

static void help(struct dynbuf *b, const char *name, const char *type, const char *text)
{
    dynbuf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

static void gpu_labels(struct dynbuf *b, const struct gpu_stat *g)
{
    dynbuf_printf(b, "{gpu=\"%d\",uuid=\"", g->index);
    label_value(b, g->uuid);
    dynbuf_add(b, "\",name=\"", 8);
    label_value(b, g->name);
    dynbuf_add(b, "\"}", 2);
}

/* 0, or -1 on a store error. */
static int gpu_metrics(struct http_request *req, struct dynbuf *b)
{
    struct gpu_stat stats[METRICS_MAX_GPUS];
    int n = gpu_pool_stats(req->app->gpus, stats, METRICS_MAX_GPUS);

    help(b, "gpubench_queue_depth", "gauge", "Runs queued for a GPU.");
    for (int i = 0; i < n; i++) {
        long depth = 0;
        if (store_queue_depth(req->app->store, stats[i].index, &depth) != STORE_OK)
            return -1;
        dynbuf_add(b, "gpubench_queue_depth", 20);
        gpu_labels(b, &stats[i]);
        dynbuf_printf(b, " %ld\n", depth);
    }
    help(b, "gpubench_worker_restarts_total", "counter", "Worker processes replaced after a failure.");
    for (int i = 0; i < n; i++) {
        dynbuf_add(b, "gpubench_worker_restarts_total", 30);
        gpu_labels(b, &stats[i]);
        dynbuf_printf(b, " %ld\n", stats[i].restarts);
    }
    help(b, "gpubench_worker_healthy", "gauge", "1 while the GPU takes runs.");
    for (int i = 0; i < n; i++) {
        dynbuf_add(b, "gpubench_worker_healthy", 23);
        gpu_labels(b, &stats[i]);
        dynbuf_printf(b, " %d\n", stats[i].healthy);
    }
    help(b, "gpubench_gpu_runs_done_total", "counter", "Runs this daemon finished on a GPU since it started.");
    for (int i = 0; i < n; i++) {
        dynbuf_add(b, "gpubench_gpu_runs_done_total", 28);
        gpu_labels(b, &stats[i]);
        dynbuf_printf(b, " %ld\n", stats[i].runs_done);
    }
    return 0;
}

/* 0, or -1 on a store error. */
static int run_metrics(struct http_request *req, struct dynbuf *b)
{
    long counts[RUN_STATUS_COUNT];

    if (store_count_by_status(req->app->store, counts) != STORE_OK)
        return -1;
    help(b, "gpubench_runs", "gauge", "Stored runs by status.");
    for (int i = 0; i < RUN_STATUS_COUNT; i++)
        dynbuf_printf(b, "gpubench_runs{status=\"%s\"} %ld\n", run_status_names[i],
                      counts[i]);
    return 0;
}

/* One gauge line for a row's field, labelled with its card and key. */
static void result_line(struct dynbuf *b, const char *metric, const cJSON *run,
                        const char *key_field, const cJSON *row, const char *field)
{
    const cJSON *v = cJSON_GetObjectItem(row, field);
    const cJSON *key = cJSON_GetObjectItem(row, key_field);
    const cJSON *dev = cJSON_GetObjectItem(run, "device");
    const cJSON *valid = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "validity"), "valid");
    char keytext[64];

    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || key == NULL)
        return;
    if (cJSON_IsString(key))
        snprintf(keytext, sizeof(keytext), "%s", key->valuestring);
    else
        snprintf(keytext, sizeof(keytext), "%g", key->valuedouble);
    dynbuf_printf(b, "%s{benchmark=\"", metric);
    label_value(b, cJSON_GetObjectItem(run, "benchmark")->valuestring);
    dynbuf_printf(b, "\",%s=\"", key_field);
    label_value(b, keytext);
    dynbuf_add(b, "\",host=\"", 8);
    label_value(b, cJSON_GetStringValue(cJSON_GetObjectItem(run, "host")));
    dynbuf_add(b, "\",uuid=\"", 8);
    label_value(b, cJSON_GetStringValue(cJSON_GetObjectItem(dev, "uuid")));
    dynbuf_add(b, "\",name=\"", 8);
    label_value(b, cJSON_GetStringValue(cJSON_GetObjectItem(dev, "name")));
    /* The latest run's verdict, so a dashboard can hide or flag it. */
    dynbuf_printf(b, "\",valid=\"%s", cJSON_IsTrue(valid) ? "true" :
                  cJSON_IsFalse(valid) ? "false" : "unknown");
    dynbuf_add(b, "\",run=\"", 7);
    label_value(b, cJSON_GetStringValue(cJSON_GetObjectItem(run, "id")));
    dynbuf_printf(b, "\"} %.9g\n", v->valuedouble);
}

/* 0, or -1 on a store error. */
static int result_metrics(struct http_request *req, struct dynbuf *b)
{
    cJSON *runs = NULL;

    if (store_latest_per_card(req->app->store, &runs) != STORE_OK)
        return -1;
    /* One gauge a field the table (common/result_fields.c) marks so. */
    for (size_t g = 0; g < gb_result_field_count(); g++) {
        const struct gb_result_field *f = gb_result_field_at(g);
        const cJSON *run;
        char metric[96], text[256];
        if (!(f->uses & GB_USE_GAUGE))
            continue;
        snprintf(metric, sizeof(metric), "%s%s", GB_GAUGE_PREFIX, f->name);
        snprintf(text, sizeof(text), "Each card's latest run, per row: %s (unit: %s).",
                 f->help, f->unit[0] ? f->unit : "none");
        help(b, metric, "gauge", text);
        cJSON_ArrayForEach(run, runs) {
            const cJSON *rows = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "results"), "rows");
            const char *key_field = compare_row_key(cJSON_GetArrayItem(rows, 0));
            const cJSON *row;
            if (key_field == NULL)
                continue;
            cJSON_ArrayForEach(row, rows)
                result_line(b, metric, run, key_field, row, f->name);
        }
    }
    cJSON_Delete(runs);
    return 0;
}

/* A row key as a label value: its text, or its number. */
static void row_label(struct dynbuf *b, const cJSON *key)
{
    if (cJSON_IsString(key))
        label_value(b, key->valuestring);
    else if (cJSON_IsNumber(key))
        dynbuf_printf(b, "%g", key->valuedouble);
}

static void card_labels(struct dynbuf *b, const char *benchmark, const cJSON *row,
                        const char *host, const char *uuid)
{
    dynbuf_add(b, "benchmark=\"", 11);
    label_value(b, benchmark);
    dynbuf_add(b, "\",row=\"", 8);
    row_label(b, row);
    dynbuf_add(b, "\",host=\"", 9);
    label_value(b, host);
    dynbuf_add(b, "\",uuid=\"", 9);
    label_value(b, uuid);
    dynbuf_add(b, "\"", 1);
}

/* Issue 14: the open confirmed alerts counted per card, row, kind and
 * state (confirmed or acknowledged), each card's fleet z per row, and the
 * webhook's posts.  No label takes a value per alert or per run (an alert
 * id would make a new series of every alert): a card and row keep one
 * series while alerts come and go.  0, or -1 on a store error. */
static int alert_metrics(struct http_request *req, struct dynbuf *b)
{
    cJSON *counts = NULL, *cards = NULL, *fleet = NULL;
    const cJSON *a, *g, *card, *cell;
    long delivered, failed;
    int rc = -1;

    if (store_alerts_open_counts(req->app->store, &counts) != STORE_OK ||
        store_fleet_cards(req->app->store, NULL, &cards) != STORE_OK ||
        (fleet = fleet_build(cards, GB_SHIFT_MARGIN_DEFAULT)) == NULL)
        goto done;
    help(b, "gpubench_alert_open", "gauge",
         "Open confirmed (or acknowledged) alerts of the card, row and kind (GET /alerts).");
    cJSON_ArrayForEach(a, counts) {
        dynbuf_printf(b, "gpubench_alert_open{kind=\"%s\",state=\"%s\",",
                      cJSON_GetStringValue(cJSON_GetObjectItem(a, "kind")),
                      cJSON_GetStringValue(cJSON_GetObjectItem(a, "state")));
        card_labels(b, cJSON_GetStringValue(cJSON_GetObjectItem(a, "benchmark")),
                    cJSON_GetObjectItem(a, "row"),
                    cJSON_GetStringValue(cJSON_GetObjectItem(a, "host")),
                    cJSON_GetStringValue(cJSON_GetObjectItem(a, "device_uuid")));
        dynbuf_printf(b, "} %.0f\n", cJSON_GetNumberValue(cJSON_GetObjectItem(a, "count")));
    }
    help(b, "gpubench_fleet_robust_z", "gauge",
         "Robust z of the card's latest valid median among the cards of its model and "
         "comparability key, per row (GET /fleet).");
    cJSON_ArrayForEach(g, cJSON_GetObjectItem(fleet, "groups")) {
        const char *bench = cJSON_GetStringValue(
            cJSON_GetObjectItem(cJSON_GetObjectItem(g, "key"), "benchmark"));
        cJSON_ArrayForEach(card, cJSON_GetObjectItem(g, "cards"))
            cJSON_ArrayForEach(cell, cJSON_GetObjectItem(card, "rows")) {
                const cJSON *z = cJSON_GetObjectItem(cell, "z");
                if (!cJSON_IsNumber(z))
                    continue;
                dynbuf_add(b, "gpubench_fleet_robust_z{", 24);
                card_labels(b, bench, cJSON_GetObjectItem(cell, "key"),
                            cJSON_GetStringValue(cJSON_GetObjectItem(card, "host")),
                            cJSON_GetStringValue(cJSON_GetObjectItem(card, "device_uuid")));
                dynbuf_printf(b, "} %.6g\n", z->valuedouble);
            }
    }
    alerts_webhook_counts(req->app->alerts, &delivered, &failed);
    help(b, "gpubench_alert_webhook_posts_total", "counter",
         "Confirmed alerts posted to --alert-webhook, by result.");
    dynbuf_printf(b, "gpubench_alert_webhook_posts_total{result=\"delivered\"} %ld\n", delivered);
    dynbuf_printf(b, "gpubench_alert_webhook_posts_total{result=\"failed\"} %ld\n", failed);
    rc = 0;

done:
    cJSON_Delete(counts);
    cJSON_Delete(cards);
    cJSON_Delete(fleet);
    return rc;
}

void metrics_get(struct http_request *req, struct http_reply *rep)
{
    static const char *const no_query[] = {NULL};
    struct dynbuf b;
    char *body;
    size_t n;

    if (query_check(req, rep, no_query) != 0)
        return;
    dynbuf_init(&b, METRICS_CAP);
    help(&b, "gpubench_up", "gauge", "1: the daemon answers.");
    dynbuf_printf(&b, "gpubench_up{version=\"%s\",commit=\"%s\"} 1\n",
                  GPUBENCH_VERSION, GPUBENCH_GIT_COMMIT);
    help(&b, "gpubench_uptime_seconds", "gauge", "Seconds since the daemon started.");
    dynbuf_printf(&b, "gpubench_uptime_seconds %.3f\n",
                  (double)(time_mono_ms() - req->app->started_mono_ms) / 1000.0);
    if (gpu_metrics(req, &b) != 0 || run_metrics(req, &b) != 0 ||
        result_metrics(req, &b) != 0 || alert_metrics(req, &b) != 0) {
        dynbuf_free(&b);
        reply_error(rep, 500, "internal", "", "the metrics could not be read from the database");
        return;
    }
    peers_metrics(req->app->peers, &b);
    /* The buffer remembers a refused line (dynbuf.h): a scrape with holes
     * would read as series that vanished. */
    body = dynbuf_failed(&b) ? NULL : dynbuf_take(&b, &n);
    dynbuf_free(&b);
    if (body == NULL) {
        reply_error(rep, 500, "internal", "", "the metrics are over their %d MiB cap "
                    "(or memory ran out); nothing was sent rather than a part",
                    METRICS_CAP / (1024 * 1024));
        return;
    }
    reply_body(rep, 200, "text/plain; version=0.0.4; charset=utf-8", body, n);
}
