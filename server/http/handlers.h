/*
 * handlers.h - the HTTP handlers the route table (router.c) points at.
 * Each lives in server/api_NAME.c, named after its route, so `ls server/api_*`
 * lists the API (like tmux's cmd-*.c); the groups below follow the files.
 */
#ifndef GPUBENCH_HTTP_HANDLERS_H
#define GPUBENCH_HTTP_HANDLERS_H

#include "http.h"

/* api_runs.c: POST /runs, GET /runs, GET /runs/ID, DELETE /runs/ID. */
void runs_post(struct http_request *req, struct http_reply *rep);
void runs_list(struct http_request *req, struct http_reply *rep);
void runs_get(struct http_request *req, struct http_reply *rep);
void runs_delete(struct http_request *req, struct http_reply *rep);

/* api_exports.c: GET /runs.ndjson, GET /runs.csv, GET /runs/ID.csv. */
void runs_ndjson(struct http_request *req, struct http_reply *rep);
void runs_csv(struct http_request *req, struct http_reply *rep);
/* GET /runs/ID.csv: the route's "*" (req->arg) is the id. */
void run_csv(struct http_request *req, struct http_reply *rep);
/* api_import.c: POST /runs/import. */
void runs_import(struct http_request *req, struct http_reply *rep);
/* api_compare.c: GET /compare. */
void compare_get(struct http_request *req, struct http_reply *rep);

/* api_reports.c: GET /runs/ID.md (the route's "*", req->arg, is the id) and
 * GET /compare.md, as markdown. */
void run_md(struct http_request *req, struct http_reply *rep);
void compare_md_get(struct http_request *req, struct http_reply *rep);

/* api_verdicts.c: GET /compare with baseline= and candidate= (compare_get
 * hands over), and the pinned baselines (they share its group readers). */
void compare_verdicts(struct http_request *req, struct http_reply *rep);
void baselines_post(struct http_request *req, struct http_reply *rep);
void baselines_list(struct http_request *req, struct http_reply *rep);
void baselines_get(struct http_request *req, struct http_reply *rep);
void baselines_delete(struct http_request *req, struct http_reply *rep);

/* api_alerts.c: alerts (issue 14); api_fleet.c: the fleet view. */
void alerts_get(struct http_request *req, struct http_reply *rep);
void alerts_ack(struct http_request *req, struct http_reply *rep);
void fleet_get(struct http_request *req, struct http_reply *rep);

/* api_cards.c: GET /cards, GET /cards/UUID (the route's "*", req->arg). */
void cards_get_all(struct http_request *req, struct http_reply *rep);
void cards_get_one(struct http_request *req, struct http_reply *rep);
/* api_card_events.c: GET /cards/UUID/events (the route's "*", req->arg). */
void card_events_get(struct http_request *req, struct http_reply *rep);
/* api_card_faults.c: GET /card_faults, the open critical card events. */
void card_faults_get(struct http_request *req, struct http_reply *rep);

/* api_coverage.c: GET /coverage; coverage_read is its answer, which
 * /metrics prints too: a NEW object (coverage.h), or NULL with *store_rc
 * a store failure (or STORE_OK: out of memory).  host NULL: every host. */
#define COVERAGE_MAX_AGE_DEFAULT_S (24 * 3600LL)
struct app;
void coverage_get(struct http_request *req, struct http_reply *rep);
cJSON *coverage_read(struct app *app, const char *host, long long max_age_s, int *store_rc);

/* api_info.c: GET /benchmarks, POST /predict, GET /healthz; api_devices.c,
 * api_peers.c, api_metrics.c: GET /devices, /peers, /metrics. */
void benchmarks_get(struct http_request *req, struct http_reply *rep);
void predict_post(struct http_request *req, struct http_reply *rep);
void devices_get(struct http_request *req, struct http_reply *rep);
void healthz_get(struct http_request *req, struct http_reply *rep);
void peers_get(struct http_request *req, struct http_reply *rep);
void metrics_get(struct http_request *req, struct http_reply *rep);
/* api_canaries.c: GET /canaries, the checks on idle cards. */
void canaries_get(struct http_request *req, struct http_reply *rep);
/* api_openapi.c: api/openapi.json, embedded at build time. */
void openapi_get(struct http_request *req, struct http_reply *rep);

/* Answers a failed store call (rc one of store.h's STORE_* failures):
 * 507 storage_full with Retry-After, 500 database_corrupt, 404, or 500
 * internal; what says what could not be done ("the run could not be
 * stored").  See store_reply.c. */
void reply_store_error(struct http_reply *rep, int rc, const char *what);

/* api_static.c: GET /, GET /static/NAME, GET /static/lib/NAME,
 * GET /static/views/NAME, GET /vendor/chart.js. */
void static_index(struct http_request *req, struct http_reply *rep);
void static_file(struct http_request *req, struct http_reply *rep);
void static_lib_file(struct http_request *req, struct http_reply *rep);
void static_view_file(struct http_request *req, struct http_reply *rep);
void static_chartjs(struct http_request *req, struct http_reply *rep);

#endif
