/*
 * api_metrics.c - GET /metrics in the Prometheus text format (0.0.4), so a
 * lab's Prometheus can scrape every node: queue depth and worker state per
 * GPU, runs by status, and the latest result of each benchmark row on each
 * card as gauges (median time, ratio, GB/s, share of the copy ceiling),
 * labelled with that run's verdict (valid="true", "false" or "unknown").
 *
 * Label values are escaped as the format asks (backslash, quote, newline).
 * The text is made whole or not at all: a store error, or a buffer that
 * refused a line, answers 500 rather than a scrape with series missing.
 */
#include "alerts.h"
#include "app.h"
#include "canaries.h"
#include "compare.h"
#include "dynbuf.h"
#include "expect.h"
#include "fleet.h"
#include "shift.h"
#include "gpu_pool.h"
#include "handlers.h"
#include "peers.h"
#include "result_fields.h"
#include "store_alerts.h"
#include "store_card_events.h"
#include "store_queue.h"
#include "store_runs.h"
#include "store_verdicts.h"
#include "timeutil.h"
#include "tls.h"
#include "work_units.h"
#include "version.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define METRICS_CAP (32 * 1024 * 1024)
#define METRICS_MAX_GPUS 64

/* A literal's bytes, counted by strlen rather than by hand. */
static void add_text(struct dynbuf *b, const char *text)
{
    (void)!dynbuf_add(b, text, strlen(text));
}

static void label_value(struct dynbuf *b, const char *v)
{
    for (; v && *v; v++) {
        if (*v == '\\' || *v == '"')
            (void)!dynbuf_printf(b, "\\%c", *v);
        else if (*v == '\n')
            add_text(b, "\\n");
        else
            (void)!dynbuf_add(b, v, 1);
    }
}

static void help(struct dynbuf *b, const char *name, const char *type, const char *text)
{
    (void)!dynbuf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

static void gpu_labels(struct dynbuf *b, const struct gpu_stat *g)
{
    (void)!dynbuf_printf(b, "{gpu=\"%d\",uuid=\"", g->index);
    label_value(b, g->uuid);
    add_text(b, "\",name=\"");
    label_value(b, g->name);
    add_text(b, "\"}");
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
        add_text(b, "gpubench_queue_depth");
        gpu_labels(b, &stats[i]);
        (void)!dynbuf_printf(b, " %ld\n", depth);
    }
    help(b, "gpubench_worker_restarts_total", "counter",
         "Worker processes replaced after a failure.");
    for (int i = 0; i < n; i++) {
        add_text(b, "gpubench_worker_restarts_total");
        gpu_labels(b, &stats[i]);
        (void)!dynbuf_printf(b, " %ld\n", stats[i].restarts);
    }
    help(b, "gpubench_worker_healthy", "gauge", "1 while the GPU takes runs.");
    for (int i = 0; i < n; i++) {
        add_text(b, "gpubench_worker_healthy");
        gpu_labels(b, &stats[i]);
        (void)!dynbuf_printf(b, " %d\n", stats[i].healthy);
    }
    help(b, "gpubench_gpu_runs_done_total", "counter",
         "Runs this daemon finished on a GPU since it started.");
    for (int i = 0; i < n; i++) {
        add_text(b, "gpubench_gpu_runs_done_total");
        gpu_labels(b, &stats[i]);
        (void)!dynbuf_printf(b, " %ld\n", stats[i].runs_done);
    }
    return 0;
}

/* The certificate served, when the daemon serves HTTPS (tls.h). */
static void tls_metrics(struct http_tls *tls, struct dynbuf *b)
{
    struct http_tls_status st;

    if (tls == NULL)
        return;
    http_tls_status(tls, &st);
    help(b, "gpubench_tls_certificate_expiry_seconds", "gauge",
         "When the certificate served ends, in seconds since 1970.");
    (void)!dynbuf_printf(b, "gpubench_tls_certificate_expiry_seconds %lld\n",
                         (long long)st.not_after);
    help(b, "gpubench_tls_certificate_reload_ok", "gauge",
         "0 while the newest certificate files could not be taken (the old certificate is "
         "served; /healthz says why), else 1.");
    (void)!dynbuf_printf(b, "gpubench_tls_certificate_reload_ok %d\n", st.error[0] == '\0');
    help(b, "gpubench_tls_certificate_reload_failures_total", "counter",
         "Renewed certificate files that could not be taken.");
    (void)!dynbuf_printf(b, "gpubench_tls_certificate_reload_failures_total %ld\n",
                         st.reload_failures);
    help(b, "gpubench_tls_certificate_loads_total", "counter",
         "Changed certificate files read and parsed (taken or not).");
    (void)!dynbuf_printf(b, "gpubench_tls_certificate_loads_total %ld\n", st.loads);
    help(b, "gpubench_tls_certificate_unchanged_total", "counter",
         "Looks at the certificate files (SIGHUP) that found the pair served: not loaded.");
    (void)!dynbuf_printf(b, "gpubench_tls_certificate_unchanged_total %ld\n", st.unchanged);
}

/* 0, or -1 on a store error. */
static int run_metrics(struct http_request *req, struct dynbuf *b)
{
    long counts[RUN_STATUS_COUNT];
    struct store_health h;

    /* Only once a check has ended: before, there is nothing to say. */
    store_health_get(req->app->store, &h);
    if (h.check == STORE_CHECK_OK || h.check == STORE_CHECK_DAMAGED) {
        help(b, "gpubench_database_check_ok", "gauge",
             "1 when the daemon's last check of its database found no damage, 0 when a check "
             "found damage (see /healthz).");
        (void)!dynbuf_printf(b, "gpubench_database_check_ok %d\n", h.check == STORE_CHECK_OK);
    }

    if (store_count_by_status(req->app->store, counts) != STORE_OK)
        return -1;
    help(b, "gpubench_runs", "gauge", "Stored runs by status.");
    for (int i = 0; i < RUN_STATUS_COUNT; i++)
        (void)!dynbuf_printf(b, "gpubench_runs{status=\"%s\"} %ld\n", run_status_names[i],
                             counts[i]);
    return 0;
}

/* A row key as a label value: its text, or its number. */
static void row_label(struct dynbuf *b, const cJSON *key)
{
    if (cJSON_IsString(key))
        label_value(b, key->valuestring);
    else if (cJSON_IsNumber(key))
        (void)!dynbuf_printf(b, "%g", key->valuedouble);
}

/* The method of a run or a fleet group (compare_method_of) as a label
 * value: its number, the unknown one's text, or "unknown".  A series per
 * method: numbers of two methods are different measurements. */
static void method_label(struct dynbuf *b, const cJSON *method)
{
    add_text(b, ",method=\"");
    if (cJSON_IsNumber(method))
        (void)!dynbuf_printf(b, "%.0f", method->valuedouble);
    else
        label_value(b, cJSON_IsString(method) ? method->valuestring : "unknown");
    add_text(b, "\"");
}

/* A card's labels on the result gauges: constant for the card and its
 * method, never the run's id or verdict, so a new run overwrites a series
 * rather than making one (a label taking a new value per run grows
 * Prometheus without bound); a new method is a new series. */
static void result_card_labels(struct dynbuf *b, const cJSON *run)
{
    const cJSON *dev = cJSON_GetObjectItem(run, "device");

    add_text(b, "benchmark=\"");
    label_value(b, cJSON_GetStringValue(cJSON_GetObjectItem(run, "benchmark")));
    add_text(b, "\",host=\"");
    label_value(b, cJSON_GetStringValue(cJSON_GetObjectItem(run, "host")));
    add_text(b, "\",uuid=\"");
    label_value(b, cJSON_GetStringValue(cJSON_GetObjectItem(dev, "uuid")));
    add_text(b, "\",name=\"");
    label_value(b, cJSON_GetStringValue(cJSON_GetObjectItem(dev, "name")));
    add_text(b, "\"");
    method_label(b, cJSON_GetObjectItem(run, "method"));
}

/* One gauge line for a row's field times scale (to base units), labelled
 * with its card and row key; a time per unit of work (common/work_units.h),
 * so that a card's series does not jump when a run's calibration lands on
 * other work. */
static void result_line(struct dynbuf *b, const char *metric, const cJSON *run,
                        const char *key_field, const cJSON *row, const char *field,
                        double scale)
{
    const cJSON *v = cJSON_GetObjectItem(row, field);
    const cJSON *key = cJSON_GetObjectItem(row, key_field);

    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || key == NULL)
        return;
    if (gb_field_is_time(field))
        scale /= gb_work_units(cJSON_GetStringValue(cJSON_GetObjectItem(run, "benchmark")),
                               NULL, row);
    (void)!dynbuf_printf(b, "%s{", metric);
    result_card_labels(b, run);
    (void)!dynbuf_printf(b, ",%s=\"", key_field);
    row_label(b, key);
    (void)!dynbuf_printf(b, "\"} %.9g\n", v->valuedouble * scale);
}

/* The latest run's verdict as a value: 1 valid (or not judged, which the
 * README counts as valid), 0 invalid. */
static void valid_line(struct dynbuf *b, const cJSON *run)
{
    const cJSON *valid = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "validity"), "valid");

    add_text(b, "gpubench_result_valid{");
    result_card_labels(b, run);
    (void)!dynbuf_printf(b, "} %d\n", cJSON_IsFalse(valid) ? 0 : 1);
}

/* One gauge a field the table (common/result_fields.c) marks so, in
 * Prometheus base units, and each card's latest verdict.  0, or -1 on a
 * store error or a field whose gauge name does not fit. */
static int result_metrics(struct http_request *req, struct dynbuf *b)
{
    cJSON *runs = NULL;
    const cJSON *run;

    if (store_latest_per_card(req->app->store, &runs) != STORE_OK)
        return -1;
    for (size_t g = 0; g < gb_result_field_count(); g++) {
        const struct gb_result_field *f = gb_result_field_at(g);
        char metric[96], text[320];
        double scale;
        if (!(f->uses & GB_USE_GAUGE))
            continue;
        if (gb_result_field_gauge(f, metric, sizeof(metric), &scale) != 0) {
            cJSON_Delete(runs);
            return -1;
        }
        snprintf(text, sizeof(text), "Each card's latest run, per row: %s%s%s.", f->help,
                 gb_field_is_time(f->name) ? ", per unit of work (GET /benchmarks work_unit)"
                                           : "",
                 scale != 1 ? " (in base units)" : "");
        help(b, metric, "gauge", text);
        cJSON_ArrayForEach(run, runs) {
            const cJSON *rows = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "results"), "rows");
            const char *key_field = compare_row_key(cJSON_GetArrayItem(rows, 0));
            const cJSON *row;
            if (key_field == NULL)
                continue;
            cJSON_ArrayForEach(row, rows)
                result_line(b, metric, run, key_field, row, f->name, scale);
        }
    }
    help(b, "gpubench_result_valid", "gauge",
         "The verdict on the latest run of the benchmark on the card: 1 valid or not judged, "
         "0 invalid (GET /runs/ID validity).");
    cJSON_ArrayForEach(run, runs)
        valid_line(b, run);
    cJSON_Delete(runs);
    return 0;
}

static void card_labels(struct dynbuf *b, const char *benchmark, const cJSON *row,
                        const char *host, const char *uuid)
{
    add_text(b, "benchmark=\"");
    label_value(b, benchmark);
    add_text(b, "\",row=\"");
    row_label(b, row);
    add_text(b, "\",host=\"");
    label_value(b, host);
    add_text(b, "\",uuid=\"");
    label_value(b, uuid);
    add_text(b, "\"");
}

/* Series gathered before they are printed, so that two sources of one label
 * set make one line: keyed by the line's name and labels, valued by the sum
 * (add) or the first value (keep_first).  -1 when memory ran out. */
static int series_put(cJSON *set, struct dynbuf *line, double v, int add)
{
    cJSON *have;

    if (dynbuf_failed(line) || line->data == NULL)
        return -1;
    have = cJSON_GetObjectItemCaseSensitive(set, line->data);
    if (have != NULL) {
        if (add)
            cJSON_SetNumberValue(have, have->valuedouble + v);
        return 0;
    }
    return cJSON_AddNumberToObject(set, line->data, v) ? 0 : -1;
}

static void series_print(struct dynbuf *b, const cJSON *set)
{
    const cJSON *s;

    cJSON_ArrayForEach(s, set)
        (void)!dynbuf_printf(b, "%s %.6g\n", s->string, s->valuedouble);
}

/* gpubench_card_events_total, what the watch found on each card
 * between runs (GET /cards/UUID/events), counted by kind and whether it
 * was critical.  0, or -1 on a store error. */
static int card_event_metrics(struct http_request *req, struct dynbuf *b)
{
    cJSON *counts = NULL;
    const cJSON *c;

    if (store_card_event_counts(req->app->store, &counts) != STORE_OK)
        return -1;
    help(b, "gpubench_card_events_total", "counter",
         "Card events the watch found between runs (GET /cards/UUID/events), by card, kind "
         "and whether critical.");
    cJSON_ArrayForEach(c, counts) {
        add_text(b, "gpubench_card_events_total{host=\"");
        label_value(b, cJSON_GetStringValue(cJSON_GetObjectItem(c, "host")));
        add_text(b, "\",uuid=\"");
        label_value(b, cJSON_GetStringValue(cJSON_GetObjectItem(c, "uuid")));
        add_text(b, "\",kind=\"");
        label_value(b, cJSON_GetStringValue(cJSON_GetObjectItem(c, "kind")));
        (void)!dynbuf_printf(
            b, "\",critical=\"%s\"} %.0f\n",
            cJSON_GetNumberValue(cJSON_GetObjectItem(c, "critical")) ? "true" : "false",
            cJSON_GetNumberValue(cJSON_GetObjectItem(c, "count")));
    }
    cJSON_Delete(counts);
    return 0;
}

/* gpubench_alert_open: open confirmed (or acknowledged) alerts counted by
 * kind, state, card and row (store_alerts_open_counts counts them in SQL);
 * never an alert's id, which is new per alert.  0, or -1 when memory ran
 * out. */
static int alert_open_series(const cJSON *counts, cJSON *set)
{
    struct dynbuf line;
    const cJSON *a;
    int rc = 0;

    dynbuf_init(&line, 4096);
    cJSON_ArrayForEach(a, counts) {
        dynbuf_reset(&line);
        add_text(&line, "gpubench_alert_open{kind=\"");
        label_value(&line, cJSON_GetStringValue(cJSON_GetObjectItem(a, "kind")));
        add_text(&line, "\",state=\"");
        label_value(&line, cJSON_GetStringValue(cJSON_GetObjectItem(a, "state")));
        add_text(&line, "\",");
        card_labels(&line, cJSON_GetStringValue(cJSON_GetObjectItem(a, "benchmark")),
                    cJSON_GetObjectItem(a, "row"),
                    cJSON_GetStringValue(cJSON_GetObjectItem(a, "host")),
                    cJSON_GetStringValue(cJSON_GetObjectItem(a, "device_uuid")));
        add_text(&line, "}");
        rc = series_put(set, &line,
                        cJSON_GetNumberValue(cJSON_GetObjectItem(a, "count")), 1);
        if (rc != 0)
            break;
    }
    dynbuf_free(&line);
    return rc;
}

/* gpubench_fleet_robust_z per card and row.  A card in two comparability
 * groups of one benchmark (two parameter sets) would repeat a label set;
 * the first group's (the fleet's order) is kept.  0, or -1 when memory ran
 * out. */
static int fleet_z_series(const cJSON *fleet, cJSON *set)
{
    struct dynbuf line;
    const cJSON *g, *card, *cell;
    int rc = 0;

    dynbuf_init(&line, 4096);
    cJSON_ArrayForEach(g, cJSON_GetObjectItem(fleet, "groups")) {
        const cJSON *key = cJSON_GetObjectItem(g, "key");
        const char *bench = cJSON_GetStringValue(cJSON_GetObjectItem(key, "benchmark"));
        cJSON_ArrayForEach(card, cJSON_GetObjectItem(g, "cards"))
            cJSON_ArrayForEach(cell, cJSON_GetObjectItem(card, "rows")) {
                const cJSON *z = cJSON_GetObjectItem(cell, "z");
                if (!cJSON_IsNumber(z) || rc != 0)
                    continue;
                dynbuf_reset(&line);
                add_text(&line, "gpubench_fleet_robust_z{");
                card_labels(&line, bench, cJSON_GetObjectItem(cell, "key"),
                            cJSON_GetStringValue(cJSON_GetObjectItem(card, "host")),
                            cJSON_GetStringValue(cJSON_GetObjectItem(card, "device_uuid")));
                method_label(&line, cJSON_GetObjectItem(key, "method"));
                add_text(&line, "}");
                rc = series_put(set, &line, z->valuedouble, 0);
            }
    }
    dynbuf_free(&line);
    return rc;
}

/* Open alerts, each card's fleet z per row, and the webhook's
 * posts.  0, or -1 on a store error or when memory ran out. */
static int alert_metrics(struct http_request *req, struct dynbuf *b)
{
    cJSON *alerts = NULL, *cards = NULL, *fleet = NULL;
    cJSON *open = cJSON_CreateObject(), *zs = cJSON_CreateObject();
    long delivered, failed;
    int rc = -1;

    if (open == NULL || zs == NULL ||
        store_alerts_open_counts(req->app->store, &alerts) != STORE_OK ||
        store_fleet_cards(req->app->store, NULL, &cards) != STORE_OK ||
        (fleet = fleet_build(cards, GB_SHIFT_MARGIN_DEFAULT)) == NULL ||
        alert_open_series(alerts, open) != 0 || fleet_z_series(fleet, zs) != 0)
        goto done;
    help(b, "gpubench_alert_open", "gauge",
         "Open confirmed or acknowledged alerts (GET /alerts) by kind, state, card and row.");
    series_print(b, open);
    help(b, "gpubench_fleet_robust_z", "gauge",
         "Robust z of the card's latest valid median among the cards of its model and "
         "comparability key, per row (GET /fleet).");
    series_print(b, zs);
    alerts_webhook_counts(req->app->alerts, &delivered, &failed);
    help(b, "gpubench_alert_webhook_posts_total", "counter",
         "Confirmed alerts posted to --alert-webhook, by result.");
    (void)!dynbuf_printf(b, "gpubench_alert_webhook_posts_total{result=\"delivered\"} %ld\n",
                         delivered);
    (void)!dynbuf_printf(b, "gpubench_alert_webhook_posts_total{result=\"failed\"} %ld\n", failed);
    rc = 0;

done:
    cJSON_Delete(alerts);
    cJSON_Delete(cards);
    cJSON_Delete(fleet);
    cJSON_Delete(open);
    cJSON_Delete(zs);
    return rc;
}

/* {host="...",uuid="...",gpu="N" of a card of GET /coverage, open for
 * more labels (gpu="" for a card whose index is not known). */
static void coverage_card_labels(struct dynbuf *b, const cJSON *card)
{
    const cJSON *index = cJSON_GetObjectItem(card, "index");

    add_text(b, "{host=\"");
    label_value(b, cJSON_GetStringValue(cJSON_GetObjectItem(card, "host")));
    add_text(b, "\",uuid=\"");
    label_value(b, cJSON_GetStringValue(cJSON_GetObjectItem(card, "uuid")));
    if (cJSON_IsNumber(index))
        (void)!dynbuf_printf(b, "\",gpu=\"%d\"", index->valueint);
    else
        add_text(b, "\",gpu=\"\"");
}

/* GET /coverage's answer (its default window) as gauges: the age
 * of each card's newest valid run per health benchmark (none for a cell
 * never checked: an age made up would read as a check), each card's state
 * as one series per state, and the cells per state.  0, or -1 on a store
 * error. */
static int coverage_metrics(struct http_request *req, struct dynbuf *b)
{
    int rc;
    cJSON *cov = coverage_read(req->app, NULL, COVERAGE_MAX_AGE_DEFAULT_S, &rc);
    const cJSON *card, *cell;

    if (cov == NULL)
        return -1;
    help(b, "gpubench_coverage_age_seconds", "gauge",
         "Age of each card's newest valid run of each health benchmark.");
    cJSON_ArrayForEach(card, cJSON_GetObjectItem(cov, "cards"))
        cJSON_ArrayForEach(cell, cJSON_GetObjectItem(card, "cells")) {
            const cJSON *age = cJSON_GetObjectItem(cell, "age_s");
            if (!cJSON_IsNumber(age))
                continue;
            add_text(b, "gpubench_coverage_age_seconds");
            coverage_card_labels(b, card);
            add_text(b, ",benchmark=\"");
            label_value(b, cJSON_GetStringValue(cJSON_GetObjectItem(cell, "benchmark")));
            (void)!dynbuf_printf(b, "\"} %.0f\n", age->valuedouble);
        }
    help(b, "gpubench_card_state", "gauge",
         "1 for each card's state (healthy, degraded, unknown), 0 for the others.");
    cJSON_ArrayForEach(card, cJSON_GetObjectItem(cov, "cards")) {
        const char *state = cJSON_GetStringValue(cJSON_GetObjectItem(card, "state"));
        for (int i = 0; i < GB_CARD_STATES; i++) {
            add_text(b, "gpubench_card_state");
            coverage_card_labels(b, card);
            (void)!dynbuf_printf(b, ",state=\"%s\"} %d\n", gb_card_state_names[i],
                                 state && strcmp(state, gb_card_state_names[i]) == 0);
        }
    }
    help(b, "gpubench_coverage_cells", "gauge",
         "Cells of the coverage matrix (cards by health benchmarks) per state.");
    cJSON_ArrayForEach(cell, cJSON_GetObjectItem(cov, "totals"))
        (void)!dynbuf_printf(b, "gpubench_coverage_cells{state=\"%s\"} %.0f\n", cell->string,
                             cell->valuedouble);
    cJSON_Delete(cov);
    return 0;
}

void api_metrics_get(struct http_request *req, struct http_reply *rep)
{
    static const char *const no_query[] = {NULL};
    struct dynbuf b;
    char *body;
    size_t n;

    if (query_check(req, rep, no_query) != 0)
        return;
    dynbuf_init(&b, METRICS_CAP);
    help(&b, "gpubench_up", "gauge", "1: the daemon answers.");
    (void)!dynbuf_printf(&b, "gpubench_up{version=\"%s\",commit=\"%s\"} 1\n",
                         GPUBENCH_VERSION, GPUBENCH_GIT_COMMIT);
    help(&b, "gpubench_uptime_seconds", "gauge", "Seconds since the daemon started.");
    (void)!dynbuf_printf(&b, "gpubench_uptime_seconds %.3f\n",
                         (double)(time_mono_ms() - req->app->started_mono_ms) / 1000.0);
    if (gpu_metrics(req, &b) != 0 || run_metrics(req, &b) != 0 ||
        result_metrics(req, &b) != 0 || alert_metrics(req, &b) != 0 ||
        coverage_metrics(req, &b) != 0 || card_event_metrics(req, &b) != 0 ||
        canaries_metrics(req->app->canaries, &b) != STORE_OK) {
        dynbuf_free(&b);
        reply_error(rep, 500, "internal", "", "the metrics could not be read from the database");
        return;
    }
    peers_metrics(req->app->peers, &b);
    tls_metrics(req->app->tls, &b);
    /* The buffer remembers a refused line (dynbuf.h): a scrape with holes
     * would read as series that vanished. */
    body = dynbuf_failed(&b) ? NULL : dynbuf_take(&b, &n);
    dynbuf_free(&b);
    if (body == NULL) {
        reply_error(rep, 500, "internal", "",
                    "the metrics are over their %d MiB cap (or memory ran out); "
                    "nothing was sent rather than a part",
                    METRICS_CAP / (1024 * 1024));
        return;
    }
    reply_body(rep, 200, "text/plain; version=0.0.4; charset=utf-8", body, n);
}
