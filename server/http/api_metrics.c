/*
 * api_metrics.c - GET /metrics in the Prometheus text format (0.0.4), so a
 * lab's Prometheus can scrape every node: queue depth and worker state per
 * GPU, runs by status, the latest result of each benchmark row on each of
 * this daemon's own cards as gauges (median time, ratio, GB/s, share of
 * the copy ceiling), and for every card it holds its state, coverage ages,
 * fleet outliers and events.
 *
 * Collectors, as node_exporter has them: the table `collectors`
 * below, each writing its families through the one label writer of
 * common/prom_text.h, run by prom_collect, which reports
 * gpubench_scrape_collector_success and _duration_seconds for each.  A
 * collector whose read failed (or whose buffer refused a line) leaves its
 * families out and reports success 0; the others are served.
 *
 * The series budget (README, "Prometheus"): per-row result gauges and
 * robust z only for the daemon's own cards (runs measured here, origin
 * NULL), unless --metrics-peer-results; a card held from a peer or an
 * import has its state, its coverage age per health benchmark, its
 * outlier rows, and counts per host and card model.  Every node serves its
 * own cards' rows; Prometheus scrapes the nodes.
 */
#include "counted.h"
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
#include "metrics_cache.h"
#include "peers.h"
#include "prom_text.h"
#include "result_fields.h"
#include "store_alerts.h"
#include "store_changes.h"
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

#define METRICS_CAP (32 * 1024 * 1024) /* the whole text, and each collector's */
#define METRICS_MAX_GPUS 64
#define PROM_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* metric{gpu="N",uuid="...",name="..."}: a GPU's series. */
static void gpu_series(struct dynbuf *b, const char *metric, const struct gpu_stat *g)
{
    prom_open(b, metric);
    prom_label_number(b, "gpu", g->index, 10);
    prom_label(b, "uuid", g->uuid);
    prom_label(b, "name", g->name);
    prom_close(b);
}

/* The collectors' argument: the daemon's state (app.h), borrowed. */
#define APP(ctx) ((struct app *)(ctx))

/* The daemon itself: up (with its version) and its uptime.  0. */
static int daemon_metrics(void *ctx, struct dynbuf *b)
{
    prom_help(b, "gpubench_up", "gauge", "1: the daemon answers.");
    (void)!dynbuf_printf(b, "gpubench_up{version=\"%s\",commit=\"%s\"} 1\n", GPUBENCH_VERSION,
                         GPUBENCH_GIT_COMMIT);
    prom_help(b, "gpubench_uptime_seconds", "gauge", "Seconds since the daemon started.");
    (void)!dynbuf_printf(b, "gpubench_uptime_seconds %.3f\n",
                         (double)(time_mono_ms() - APP(ctx)->started_mono_ms) / 1000.0);
    return 0;
}

/* 0, or -1 on a store error. */
static int gpu_metrics(void *ctx, struct dynbuf *b)
{
    struct app *app = ctx;
    struct gpu_stat stats[METRICS_MAX_GPUS];
    int n = gpu_pool_stats(app->gpus, stats, METRICS_MAX_GPUS);

    prom_help(b, "gpubench_queue_depth", "gauge", "Runs queued for a GPU.");
    for (int i = 0; i < n; i++) {
        long depth = 0;
        if (store_queue_depth(app->store, stats[i].index, &depth) != STORE_OK)
            return -1;
        gpu_series(b, "gpubench_queue_depth", &stats[i]);
        (void)!dynbuf_printf(b, " %ld\n", depth);
    }
    prom_help(b, "gpubench_worker_restarts_total", "counter",
              "Worker processes replaced after a failure.");
    for (int i = 0; i < n; i++) {
        gpu_series(b, "gpubench_worker_restarts_total", &stats[i]);
        (void)!dynbuf_printf(b, " %ld\n", stats[i].restarts);
    }
    prom_help(b, "gpubench_worker_healthy", "gauge", "1 while the GPU takes runs.");
    for (int i = 0; i < n; i++) {
        gpu_series(b, "gpubench_worker_healthy", &stats[i]);
        (void)!dynbuf_printf(b, " %d\n", stats[i].healthy);
    }
    prom_help(b, "gpubench_gpu_runs_done_total", "counter",
              "Runs this daemon finished on a GPU since it started.");
    for (int i = 0; i < n; i++) {
        gpu_series(b, "gpubench_gpu_runs_done_total", &stats[i]);
        (void)!dynbuf_printf(b, " %ld\n", stats[i].runs_done);
    }
    return 0;
}

/* The certificate served, when the daemon serves HTTPS (tls.h).  0. */
static int tls_metrics(void *ctx, struct dynbuf *b)
{
    struct http_tls *tls = APP(ctx)->tls;
    struct http_tls_status st;

    if (tls == NULL)
        return 0;
    http_tls_status(tls, &st);
    prom_help(b, "gpubench_tls_certificate_expiry_seconds", "gauge",
              "When the certificate served ends, in seconds since 1970.");
    (void)!dynbuf_printf(b, "gpubench_tls_certificate_expiry_seconds %lld\n",
                         (long long)st.not_after);
    prom_help(b, "gpubench_tls_certificate_reload_ok", "gauge",
              "0 while the newest certificate files could not be taken (the old certificate is "
              "served; /healthz says why), else 1.");
    (void)!dynbuf_printf(b, "gpubench_tls_certificate_reload_ok %d\n", st.error[0] == '\0');
    prom_help(b, "gpubench_tls_certificate_reload_failures_total", "counter",
              "Renewed certificate files that could not be taken.");
    (void)!dynbuf_printf(b, "gpubench_tls_certificate_reload_failures_total %ld\n",
                         st.reload_failures);
    prom_help(b, "gpubench_tls_certificate_loads_total", "counter",
              "Changed certificate files read and parsed (taken or not).");
    (void)!dynbuf_printf(b, "gpubench_tls_certificate_loads_total %ld\n", st.loads);
    prom_help(b, "gpubench_tls_certificate_unchanged_total", "counter",
              "Looks at the certificate files (SIGHUP) that found the pair served: not loaded.");
    (void)!dynbuf_printf(b, "gpubench_tls_certificate_unchanged_total %ld\n", st.unchanged);
    return 0;
}

/* 0, or -1 on a store error. */
static int run_metrics(void *ctx, struct dynbuf *b)
{
    struct store *store = APP(ctx)->store;
    long counts[RUN_STATUS_COUNT];
    struct store_health h;

    /* Only once a check has ended: before, there is nothing to say. */
    store_health_get(store, &h);
    if (h.check == STORE_CHECK_OK || h.check == STORE_CHECK_DAMAGED) {
        prom_help(b, "gpubench_database_check_ok", "gauge",
                  "1 when the daemon's last check of its database found no damage, 0 when a check "
                  "found damage (see /healthz).");
        (void)!dynbuf_printf(b, "gpubench_database_check_ok %d\n", h.check == STORE_CHECK_OK);
    }

    if (store_count_by_status(store, counts) != STORE_OK)
        return -1;
    prom_help(b, "gpubench_runs", "gauge", "Stored runs by status.");
    for (int i = 0; i < RUN_STATUS_COUNT; i++)
        (void)!dynbuf_printf(b, "gpubench_runs{status=\"%s\"} %ld\n", run_status_names[i],
                             counts[i]);
    return 0;
}

/* name="KEY": a row key as a label, its text or its number. */
static void row_label(struct dynbuf *b, const char *name, const cJSON *key)
{
    if (cJSON_IsNumber(key))
        prom_label_number(b, name, key->valuedouble, 6);
    else
        prom_label(b, name, cJSON_GetStringValue(key));
}

/* The method of a run or a fleet group (compare_method_of) as a label:
 * its number, the unknown one's text, or "unknown".  A series per
 * method: numbers of two methods are different measurements. */
static void method_label(struct dynbuf *b, const cJSON *method)
{
    if (cJSON_IsNumber(method))
        prom_label_number(b, "method", method->valuedouble, 15);
    else
        prom_label(b, "method", cJSON_IsString(method) ? method->valuestring : "unknown");
}

/* A card's labels on the result gauges: constant for the card and its
 * method, never the run's id or verdict, so a new run overwrites a series
 * rather than making one (a label taking a new value per run grows
 * Prometheus without bound); a new method is a new series. */
static void result_card_labels(struct dynbuf *b, const cJSON *run)
{
    const cJSON *dev = cJSON_GetObjectItem(run, "device");

    prom_label(b, "benchmark", cJSON_GetStringValue(cJSON_GetObjectItem(run, "benchmark")));
    prom_label(b, "host", cJSON_GetStringValue(cJSON_GetObjectItem(run, "host")));
    prom_label(b, "uuid", cJSON_GetStringValue(cJSON_GetObjectItem(dev, "uuid")));
    prom_label(b, "name", cJSON_GetStringValue(cJSON_GetObjectItem(dev, "name")));
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
    prom_open(b, metric);
    result_card_labels(b, run);
    row_label(b, key_field, key);
    prom_close(b);
    (void)!dynbuf_printf(b, " %.9g\n", v->valuedouble * scale);
}

/* The latest run's verdict as a value: 1 valid (or not judged, which the
 * README counts as valid), 0 invalid. */
static void valid_line(struct dynbuf *b, const cJSON *run)
{
    const cJSON *valid = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "validity"), "valid");

    prom_open(b, "gpubench_result_valid");
    result_card_labels(b, run);
    prom_close(b);
    prom_sample(b, cJSON_IsFalse(valid) ? 0 : 1);
}

/* One gauge a field the table (common/result_fields.c) marks so, in
 * Prometheus base units, and each card's latest verdict: the daemon's own
 * cards only, unless --metrics-peer-results (the series budget).  0, or
 * -1 on a store error or a field whose gauge name does not fit. */
static int result_metrics(void *ctx, struct dynbuf *b, struct prom_set *aged)
{
    struct app *app = ctx;
    cJSON *runs = NULL;
    const cJSON *run;

    (void)aged;
    if (store_latest_per_card(app->store, app->opt->metrics_peer_results ? NULL : app->host,
                              &runs) != STORE_OK)
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
        prom_help(b, metric, "gauge", text);
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
    prom_help(b, "gpubench_result_valid", "gauge",
              "The verdict on the latest run of the benchmark on the card: 1 valid or not judged, "
              "0 invalid (GET /runs/ID validity).");
    cJSON_ArrayForEach(run, runs)
        valid_line(b, run);
    cJSON_Delete(runs);
    return 0;
}

/* A card's row: benchmark, row, host and uuid labels. */
static void card_labels(struct dynbuf *b, const char *benchmark, const cJSON *row,
                        const char *host, const char *uuid)
{
    prom_label(b, "benchmark", benchmark);
    row_label(b, "row", row);
    prom_label(b, "host", host);
    prom_label(b, "uuid", uuid);
}

/* gpubench_card_events_total, what the watch found on each card
 * between runs (GET /cards/UUID/events), counted by kind and whether it
 * was critical.  0, or -1 on a store error. */
static int card_event_metrics(void *ctx, struct dynbuf *b)
{
    cJSON *counts = NULL;
    const cJSON *c;

    if (store_card_event_counts(APP(ctx)->store, &counts) != STORE_OK)
        return -1;
    prom_help(b, "gpubench_card_events_total", "counter",
              "Card events the watch found between runs (GET /cards/UUID/events), by card, kind "
              "and whether critical.");
    cJSON_ArrayForEach(c, counts) {
        prom_open(b, "gpubench_card_events_total");
        prom_label(b, "host", cJSON_GetStringValue(cJSON_GetObjectItem(c, "host")));
        prom_label(b, "uuid", cJSON_GetStringValue(cJSON_GetObjectItem(c, "uuid")));
        prom_label(b, "kind", cJSON_GetStringValue(cJSON_GetObjectItem(c, "kind")));
        prom_label(b, "critical",
                   cJSON_GetNumberValue(cJSON_GetObjectItem(c, "critical")) ? "true" : "false");
        prom_close(b);
        prom_sample(b, cJSON_GetNumberValue(cJSON_GetObjectItem(c, "count")));
    }
    cJSON_Delete(counts);
    return 0;
}

/* gpubench_changes_recent, each card's change points (kind
 * step) and drifts (kind drift) of the last CHANGES_WINDOW_DAYS days
 * (GET /cards/UUID/changes), by card and kind: a gauge, since old ones
 * leave the window.  Self-contained: one store read, one family.  0, or
 * -1 on a store error. */
#define CHANGES_WINDOW_DAYS 30
static int change_metrics(void *ctx, struct dynbuf *b)
{
    char since[32];
    cJSON *counts = NULL;
    const cJSON *c;

    time_format_rfc3339(time_now_unix_ms() - (int64_t)CHANGES_WINDOW_DAYS * 86400000, since,
                        sizeof(since));
    if (store_changes_counts(APP(ctx)->store, since, &counts) != STORE_OK)
        return -1;
    prom_help(b, "gpubench_changes_recent", "gauge",
              "Change points (kind step) and drifts (kind drift) found in the last 30 days, by "
              "card (GET /cards/UUID/changes).");
    cJSON_ArrayForEach(c, counts) {
        prom_open(b, "gpubench_changes_recent");
        prom_label(b, "host", cJSON_GetStringValue(cJSON_GetObjectItem(c, "host")));
        prom_label(b, "uuid", cJSON_GetStringValue(cJSON_GetObjectItem(c, "device_uuid")));
        prom_label(b, "kind", cJSON_GetStringValue(cJSON_GetObjectItem(c, "kind")));
        prom_close(b);
        prom_sample(b, cJSON_GetNumberValue(cJSON_GetObjectItem(c, "count")));
    }
    cJSON_Delete(counts);
    return 0;
}

/* gpubench_alert_open: open confirmed (or acknowledged) alerts counted by
 * kind, state, card and row (store_alerts_open_counts counts them in SQL);
 * never an alert's id, which is new per alert.  Two sources of one label
 * set are summed. */
static void alert_open_series(const cJSON *counts, struct prom_set *set)
{
    struct dynbuf line;
    const cJSON *a;

    dynbuf_init(&line, 4096);
    cJSON_ArrayForEach(a, counts) {
        dynbuf_reset(&line);
        prom_open(&line, "gpubench_alert_open");
        prom_label(&line, "kind", cJSON_GetStringValue(cJSON_GetObjectItem(a, "kind")));
        prom_label(&line, "state", cJSON_GetStringValue(cJSON_GetObjectItem(a, "state")));
        card_labels(&line, cJSON_GetStringValue(cJSON_GetObjectItem(a, "benchmark")),
                    cJSON_GetObjectItem(a, "row"),
                    cJSON_GetStringValue(cJSON_GetObjectItem(a, "host")),
                    cJSON_GetStringValue(cJSON_GetObjectItem(a, "device_uuid")));
        prom_close(&line);
        if (prom_set_put(set, &line, cJSON_GetNumberValue(cJSON_GetObjectItem(a, "count")),
                         NULL) != 0)
            break;
    }
    dynbuf_free(&line);
    prom_set_merge(set, 1);
}

/* open alerts and the webhook's posts.  0, or -1 on a store
 * error or when memory ran out. */
static int alert_metrics(void *ctx, struct dynbuf *b)
{
    struct app *app = ctx;
    struct prom_set open = {0};
    cJSON *alerts = NULL;
    long delivered, failed;
    int rc = -1;

    if (store_alerts_open_counts(app->store, &alerts) != STORE_OK)
        goto done;
    alert_open_series(alerts, &open);
    if (open.failed)
        goto done;
    prom_help(b, "gpubench_alert_open", "gauge",
              "Open confirmed or acknowledged alerts (GET /alerts) by kind, state, card and row.");
    prom_set_print(b, &open);
    alerts_webhook_counts(app->alerts, &delivered, &failed);
    prom_help(b, "gpubench_alert_webhook_posts_total", "counter",
              "Confirmed alerts posted to --alert-webhook, by result.");
    (void)!dynbuf_printf(b, "gpubench_alert_webhook_posts_total{result=\"delivered\"} %ld\n",
                         delivered);
    (void)!dynbuf_printf(b, "gpubench_alert_webhook_posts_total{result=\"failed\"} %ld\n", failed);
    rc = 0;

done:
    cJSON_Delete(alerts);
    prom_set_free(&open);
    return rc;
}

/* The run ids of the fleet's own cards (measured here), sorted for
 * bsearch: which cards' z the budget exports. */
struct own_runs {
    const char **id;
    size_t n;
};

static int by_text(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* 0, or -1 when memory ran out.  The ids are borrowed from cards. */
static int own_runs_of(const cJSON *cards, struct own_runs *own)
{
    const cJSON *card;
    int n = cJSON_GetArraySize(cards);

    own->n = 0;
    if ((own->id = malloc(sizeof(*own->id) * (size_t)(n > 0 ? n : 1))) == NULL)
        return -1;
    cJSON_ArrayForEach(card, cards) {
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(card, "run_id"));
        if (id && cJSON_IsTrue(cJSON_GetObjectItem(card, "own")))
            own->id[own->n++] = id;
    }
    qsort(own->id, own->n, sizeof(*own->id), by_text);
    return 0;
}

static int is_own(const struct own_runs *own, const char *run_id)
{
    return run_id && bsearch(&run_id, own->id, own->n, sizeof(*own->id), by_text) != NULL;
}

/* What the fleet says of one card, gathered over its groups. */
struct fleet_card_series {
    struct prom_set z;        /* gpubench_fleet_robust_z, first group's kept */
    struct prom_set outliers; /* gpubench_card_outlier_rows, summed */
    struct prom_set per_host; /* gpubench_fleet_cards and _outlier_cards */
};

/* One fleet card's series: its z per row (own cards, or every card with
 * --metrics-peer-results) and its outlier rows in this group. */
static void fleet_card(struct fleet_card_series *s, const cJSON *key, const cJSON *card,
                       int with_z, struct dynbuf *line)
{
    const char *bench = cJSON_GetStringValue(cJSON_GetObjectItem(key, "benchmark"));
    const char *host = cJSON_GetStringValue(cJSON_GetObjectItem(card, "host"));
    const char *uuid = cJSON_GetStringValue(cJSON_GetObjectItem(card, "device_uuid"));
    const cJSON *cell;
    int outliers = 0;

    cJSON_ArrayForEach(cell, cJSON_GetObjectItem(card, "rows")) {
        const cJSON *z = cJSON_GetObjectItem(cell, "z");
        outliers += cJSON_IsTrue(cJSON_GetObjectItem(cell, "outlier"));
        if (!with_z || !cJSON_IsNumber(z))
            continue;
        dynbuf_reset(line);
        prom_open(line, "gpubench_fleet_robust_z");
        card_labels(line, bench, cJSON_GetObjectItem(cell, "key"), host, uuid);
        method_label(line, cJSON_GetObjectItem(key, "method"));
        prom_close(line);
        (void)prom_set_put(&s->z, line, z->valuedouble, NULL);
    }
    dynbuf_reset(line);
    prom_open(line, "gpubench_card_outlier_rows");
    prom_label(line, "host", host);
    prom_label(line, "uuid", uuid);
    prom_label(line, "card_model",
               cJSON_GetStringValue(cJSON_GetObjectItem(key, "card_model")));
    prom_close(line);
    (void)prom_set_put(&s->outliers, line, outliers, NULL);
}

/* Per host and card model: cards, and cards with an outlier row, from the
 * merged per-card outlier set (one entry a card). */
static void per_host_counts(struct fleet_card_series *s, struct dynbuf *line)
{
    for (size_t i = 0; i < s->outliers.n; i++) {
        const struct prom_entry *e = &s->outliers.e[i];
        /* the card's labels are the line's after its name: host, uuid,
         * card_model; the count's are host and card_model.  An escaped
         * value cannot hold `,uuid="` or `",card_model="` (its quotes
         * are \" there), so the first of each is the label's own. */
        const char *labels = strchr(e->line, '{');
        const char *uuid = labels ? strstr(labels, ",uuid=\"") : NULL;
        const char *model = uuid ? strstr(uuid, "\",card_model=\"") : NULL;
        for (int family = 0; family < 2 && labels && uuid && model; family++) {
            dynbuf_reset(line);
            const char *name = family ? "gpubench_fleet_outlier_cards" : "gpubench_fleet_cards";
            (void)!dynbuf_add(line, name, strlen(name));
            (void)!dynbuf_add(line, labels, (size_t)(uuid - labels));
            (void)!dynbuf_add(line, model + 1, strlen(model + 1));
            (void)prom_set_put(&s->per_host, line, family ? e->v > 0 : 1, NULL);
        }
    }
    prom_set_merge(&s->per_host, 1);
}

/* GET /fleet's judgement as gauges: robust z per row of the own cards
 * (the series budget), each card's outlier rows, and per host and card
 * model the cards and the cards with an outlier.  0, or -1 on a store
 * error or when memory ran out. */
static int fleet_metrics(void *ctx, struct dynbuf *b, struct prom_set *aged)
{
    struct app *app = ctx;
    struct fleet_card_series s;
    struct own_runs own = {0};
    struct dynbuf line;
    cJSON *cards = NULL, *fleet = NULL;
    const cJSON *g, *card;
    int rc = -1;

    (void)aged;
    memset(&s, 0, sizeof(s));
    dynbuf_init(&line, 4096);
    if (store_fleet_cards(app->store, NULL, &cards) != STORE_OK ||
        own_runs_of(cards, &own) != 0 ||
        (fleet = fleet_build(cards, GB_SHIFT_MARGIN_DEFAULT)) == NULL)
        goto done;
    cJSON_ArrayForEach(g, cJSON_GetObjectItem(fleet, "groups")) {
        const cJSON *key = cJSON_GetObjectItem(g, "key");
        cJSON_ArrayForEach(card, cJSON_GetObjectItem(g, "cards")) {
            int with_z = app->opt->metrics_peer_results ||
                         is_own(&own, cJSON_GetStringValue(cJSON_GetObjectItem(card, "run_id")));
            fleet_card(&s, key, card, with_z, &line);
        }
    }
    /* a card in two groups of one benchmark (two parameter sets) would
     * repeat a label set: the first group's z (the fleet's order) is kept */
    prom_set_merge(&s.z, 0);
    prom_set_merge(&s.outliers, 1);
    per_host_counts(&s, &line);
    if (s.z.failed || s.outliers.failed || s.per_host.failed)
        goto done;
    prom_help(b, "gpubench_fleet_robust_z", "gauge",
              "Robust z of the card's latest valid median among the cards of its model and "
              "comparability key, per row (GET /fleet); this daemon's own cards only, unless "
              "--metrics-peer-results.");
    prom_set_print(b, &s.z);
    prom_help(b, "gpubench_card_outlier_rows", "gauge",
              "Rows of the card's latest valid runs that are fleet outliers (GET /fleet), over "
              "its benchmarks.");
    prom_set_print(b, &s.outliers);
    prom_help(b, "gpubench_fleet_cards", "gauge",
              "Cards in the fleet (GET /fleet) per host and card model.");
    for (size_t i = 0; i < s.per_host.n; i++)
        if (strncmp(s.per_host.e[i].line, "gpubench_fleet_cards{", 21) == 0)
            (void)!dynbuf_printf(b, "%s %.0f\n", s.per_host.e[i].line, s.per_host.e[i].v);
    prom_help(b, "gpubench_fleet_outlier_cards", "gauge",
              "Cards with a fleet outlier row (GET /fleet) per host and card model.");
    for (size_t i = 0; i < s.per_host.n; i++)
        if (strncmp(s.per_host.e[i].line, "gpubench_fleet_outlier_cards{", 29) == 0)
            (void)!dynbuf_printf(b, "%s %.0f\n", s.per_host.e[i].line, s.per_host.e[i].v);
    rc = 0;

done:
    dynbuf_free(&line);
    free(own.id);
    prom_set_free(&s.z);
    prom_set_free(&s.outliers);
    prom_set_free(&s.per_host);
    cJSON_Delete(cards);
    cJSON_Delete(fleet);
    return rc;
}

#define COVERAGE_AGE "gpubench_coverage_age_seconds"

/* {host="...",uuid="...",gpu="N" of a card of GET /coverage, open for
 * more labels (gpu="" for a card whose index is not known). */
static void coverage_card_labels(struct dynbuf *b, const char *metric, const cJSON *card)
{
    const cJSON *index = cJSON_GetObjectItem(card, "index");

    prom_open(b, metric);
    prom_label(b, "host", cJSON_GetStringValue(cJSON_GetObjectItem(card, "host")));
    prom_label(b, "uuid", cJSON_GetStringValue(cJSON_GetObjectItem(card, "uuid")));
    if (cJSON_IsNumber(index))
        prom_label_number(b, "gpu", index->valueint, 10);
    else
        prom_label(b, "gpu", "");
}

/* GET /coverage's answer (its default window) as gauges: the age
 * of each card's newest valid run per health benchmark (none for a cell
 * never checked: an age made up would read as a check), each card's state
 * as one series per state, and the cells per state: every card, its own
 * or a peer's (the series budget).  The ages go into aged as the time of
 * that run (metrics_cache.h prints now minus it).  0, or -1 on a store
 * error. */
static int coverage_metrics(void *ctx, struct dynbuf *b, struct prom_set *aged)
{
    int rc;
    double now_s = (double)time_now_unix_ms() / 1000.0;
    cJSON *cov = coverage_read(APP(ctx), NULL, COVERAGE_MAX_AGE_DEFAULT_S, 0, &rc);
    const cJSON *card, *cell;
    struct dynbuf line;

    if (cov == NULL)
        return -1;
    dynbuf_init(&line, 4096);
    cJSON_ArrayForEach(card, cJSON_GetObjectItem(cov, "cards"))
        cJSON_ArrayForEach(cell, cJSON_GetObjectItem(card, "cells")) {
            const cJSON *age = cJSON_GetObjectItem(cell, "age_s");
            if (!cJSON_IsNumber(age))
                continue;
            dynbuf_reset(&line);
            coverage_card_labels(&line, COVERAGE_AGE, card);
            prom_label(&line, "benchmark",
                       cJSON_GetStringValue(cJSON_GetObjectItem(cell, "benchmark")));
            prom_close(&line);
            (void)prom_set_put(aged, &line, now_s - age->valuedouble, NULL);
        }
    dynbuf_free(&line);
    prom_help(b, "gpubench_card_state", "gauge",
              "1 for each card's state (healthy, degraded, unknown), 0 for the others.");
    cJSON_ArrayForEach(card, cJSON_GetObjectItem(cov, "cards")) {
        const char *state = cJSON_GetStringValue(cJSON_GetObjectItem(card, "state"));
        for (int i = 0; i < GB_CARD_STATES; i++) {
            coverage_card_labels(b, "gpubench_card_state", card);
            prom_label(b, "state", gb_card_state_names[i]);
            prom_close(b);
            prom_sample(b, state && strcmp(state, gb_card_state_names[i]) == 0);
        }
    }
    prom_help(b, "gpubench_coverage_cells", "gauge",
              "Cells of the coverage matrix (cards by health benchmarks) per state.");
    cJSON_ArrayForEach(cell, cJSON_GetObjectItem(cov, "totals")) {
        prom_open(b, "gpubench_coverage_cells");
        prom_label(b, "state", cell->string);
        prom_close(b);
        prom_sample(b, cell->valuedouble);
    }
    cJSON_Delete(cov);
    return 0;
}

/* Canaries' families (canaries.c): 0, or -1 on a store error. */
static int canary_metrics(void *ctx, struct dynbuf *b)
{
    return canaries_metrics(APP(ctx)->canaries, b) == STORE_OK ? 0 : -1;
}

/* Peers' families (peers_metrics.c): read from memory.  0. */
static int peer_metrics(void *ctx, struct dynbuf *b)
{
    peers_metrics(APP(ctx)->peers, b);
    return 0;
}

/* The heavy collectors, kept ready (metrics_cache.h), by index. */
enum {
    HEAVY_RESULTS,
    HEAVY_FLEET,
    HEAVY_COVERAGE,
    HEAVY_COUNT,
};

static const struct metrics_heavy heavy[HEAVY_COUNT] = {
    [HEAVY_RESULTS] = {NULL, NULL, 0, result_metrics},
    [HEAVY_FLEET] = {NULL, NULL, 0, fleet_metrics},
    [HEAVY_COVERAGE] = {COVERAGE_AGE,
                        "Age of each card's newest valid run of each health benchmark.", 1,
                        coverage_metrics},
};

struct metrics_cache *api_metrics_start(struct app *app)
{
    return metrics_cache_start(heavy, HEAVY_COUNT, app, app->store);
}

static int results_kept(void *ctx, struct dynbuf *b)
{
    return metrics_cache_write(APP(ctx)->metrics, HEAVY_RESULTS, b);
}

static int fleet_kept(void *ctx, struct dynbuf *b)
{
    return metrics_cache_write(APP(ctx)->metrics, HEAVY_FLEET, b);
}

static int coverage_kept(void *ctx, struct dynbuf *b)
{
    return metrics_cache_write(APP(ctx)->metrics, HEAVY_COVERAGE, b);
}

/* The collectors, in the order their families are printed; each name is
 * its collector label. */
static const struct prom_collector collectors[] = {
    {"daemon", daemon_metrics},
    {"gpus", gpu_metrics},
    {"runs", run_metrics},
    {"results", results_kept},
    {"alerts", alert_metrics},
    {"fleet", fleet_kept},
    {"coverage", coverage_kept},
    {"card_events", card_event_metrics},
    {"changes", change_metrics},
    {"canaries", canary_metrics},
    {"peers", peer_metrics},
    {"tls", tls_metrics},
};

void api_metrics_get(struct http_request *req, struct http_reply *rep)
{
    static const char *const no_query[] = {NULL};
    struct metrics_cache *kept = req->app->metrics;
    unsigned long long changes = metrics_cache_changes(kept);
    const char *text;
    struct dynbuf b;
    char *body;
    size_t n;
    void *hold;
    int failed;

    if (query_check(req, rep, no_query) != 0)
        return;
    /* a hub's megabytes made a moment ago, the store unchanged since
     * (metrics_cache.h): sent again as they are */
    if (metrics_cache_body(kept, &text, &n, &hold)) {
        reply_held(rep, 200, PROM_TYPE, text, n, counted_release, hold);
        return;
    }
    dynbuf_init(&b, METRICS_CAP);
    failed = prom_collect(collectors, sizeof(collectors) / sizeof(collectors[0]), req->app,
                          METRICS_CAP, &b);
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
    /* one with a failed collector is not kept: the next scrape tries again */
    if (failed == 0 && metrics_cache_keep_body(kept, body, n, changes, &hold) == 0)
        reply_held(rep, 200, PROM_TYPE, body, n, counted_release, hold);
    else
        reply_body(rep, 200, PROM_TYPE, body, n);
}
