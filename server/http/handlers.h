/*
 * handlers.h - the HTTP handlers the route table (router.c) points at.
 * Each lives in server/http/api_NAME.c, named after its route, so
 * `ls server/http/api_*` lists the API (like tmux's cmd-*.c); the groups
 * below follow the files.  A handler's name starts with api_ too
 * (api_alerts_get): the layers below name their own functions after the
 * same nouns (alerts, fleet, runs), and the prefix keeps the two apart.
 */
#ifndef GPUBENCH_HTTP_HANDLERS_H
#define GPUBENCH_HTTP_HANDLERS_H

#include "http.h"

/* api_runs.c: POST /runs, GET /runs, GET /runs/ID, DELETE /runs/ID. */
void api_runs_post(struct http_request *req, struct http_reply *rep);
void api_runs_list(struct http_request *req, struct http_reply *rep);
void api_runs_get(struct http_request *req, struct http_reply *rep);
void api_runs_delete(struct http_request *req, struct http_reply *rep);

/* api_exports.c: GET /runs.ndjson, GET /runs.csv, GET /runs/ID.csv. */
void api_runs_ndjson(struct http_request *req, struct http_reply *rep);
void api_runs_csv(struct http_request *req, struct http_reply *rep);
/* GET /runs/ID.csv: the route's "*" (req->arg) is the id. */
void api_run_csv(struct http_request *req, struct http_reply *rep);
/* api_import.c: POST /runs/import. */
void api_runs_import(struct http_request *req, struct http_reply *rep);
/* api_compare.c: GET /compare. */
void api_compare_get(struct http_request *req, struct http_reply *rep);

/* api_reports.c: GET /runs/ID.md (the route's "*", req->arg, is the id) and
 * GET /compare.md, as markdown. */
void api_run_md(struct http_request *req, struct http_reply *rep);
void api_compare_md_get(struct http_request *req, struct http_reply *rep);

/* api_verdicts.c: GET /compare with baseline= and candidate= (api_compare_get
 * hands over), and the pinned baselines (they share its group readers). */
void api_compare_verdicts(struct http_request *req, struct http_reply *rep);
void api_baselines_post(struct http_request *req, struct http_reply *rep);
void api_baselines_list(struct http_request *req, struct http_reply *rep);
void api_baselines_get(struct http_request *req, struct http_reply *rep);
void api_baselines_delete(struct http_request *req, struct http_reply *rep);

/* api_alerts.c: alerts; api_fleet.c: the fleet view. */
void api_alerts_get(struct http_request *req, struct http_reply *rep);
/* GET /cards/UUID/changes and GET /changes (api_changes.c). */
void api_card_changes_get(struct http_request *req, struct http_reply *rep);
void api_changes_get(struct http_request *req, struct http_reply *rep);
void api_changes_md_get(struct http_request *req, struct http_reply *rep);
/* GET /changes's query (since, host, model, limit) into sel, its since
 * parsed into since (sel keeps pointers into req and since): 0, or -1
 * answered 400. */
struct change_select;
int changes_query(struct http_request *req, struct http_reply *rep, struct change_select *sel,
                  char since[32]);
/* since/until (either NULL: not given) as a date (2026-01-31: until is its
 * day's end) or a UTC date-time, into RFC 3339 text with milliseconds
 * ("" when not given); 0, or -1 answered 400 (api_verdicts.c). */
int read_dates(struct http_reply *rep, const char *since, const char *until, char since_out[32],
               char until_out[32]);
void api_alerts_ack(struct http_request *req, struct http_reply *rep);
void api_fleet_get(struct http_request *req, struct http_reply *rep);

/* api_cards.c: GET /cards, GET /cards/UUID, DELETE /cards/UUID/owner (the route's "*",
 * req->arg). */
void api_cards_get_all(struct http_request *req, struct http_reply *rep);
void api_cards_get_one(struct http_request *req, struct http_reply *rep);
void api_card_owner_delete(struct http_request *req, struct http_reply *rep);
/* api_card_events.c: GET /cards/UUID/events (the route's "*", req->arg). */
void api_card_events_get(struct http_request *req, struct http_reply *rep);
/* api_card_faults.c: GET /card_faults, the open critical card events. */
void api_card_faults_get(struct http_request *req, struct http_reply *rep);

/* api_coverage.c: GET /coverage; coverage_read is its answer, which
 * /metrics prints too: a NEW object (coverage.h), or NULL with *store_rc
 * a store failure (or STORE_OK: out of memory).  host NULL: every host;
 * deep_max_age_s 0: the deep checks' default window (coverage.h). */
#define COVERAGE_MAX_AGE_DEFAULT_S (24 * 3600LL)
struct app;
void api_coverage_get(struct http_request *req, struct http_reply *rep);
cJSON *coverage_read(struct app *app, const char *host, long long max_age_s,
                     long long deep_max_age_s, int *store_rc);

/* api_info.c: GET /benchmarks, POST /predict, GET /healthz; api_devices.c,
 * api_peers.c, api_metrics.c: GET /devices, /peers, /metrics. */
void api_benchmarks_get(struct http_request *req, struct http_reply *rep);
void api_predict_post(struct http_request *req, struct http_reply *rep);
void api_devices_get(struct http_request *req, struct http_reply *rep);
void api_healthz_get(struct http_request *req, struct http_reply *rep);
void api_peers_get(struct http_request *req, struct http_reply *rep);
void api_metrics_get(struct http_request *req, struct http_reply *rep);
/* /metrics' heavy collectors kept ready for app (metrics_cache.h): started
 * once app's store, pool, peers and canaries are, stopped with
 * metrics_cache_stop after http_stop.  NULL when it could not start. */
struct metrics_cache *api_metrics_start(struct app *app);
/* api_canaries.c: GET /canaries, the checks on idle cards. */
void api_canaries_get(struct http_request *req, struct http_reply *rep);
/* api_openapi.c: api/openapi.json, embedded at build time. */
void api_openapi_get(struct http_request *req, struct http_reply *rep);

/* Answers a failed store call (rc one of store.h's STORE_* failures):
 * 507 storage_full with Retry-After, 500 database_corrupt, 404, or 500
 * internal; what says what could not be done ("the run could not be
 * stored").  See store_reply.c. */
void reply_store_error(struct http_reply *rep, int rc, const char *what);

/* reply_store_error for a read of one card by uuid: STORE_NOT_FOUND is
 * 404 "no card UUID: neither this node's nor in its store". */
void reply_card_error(struct http_reply *rep, int rc, const char *uuid, const char *what);

/* api_static.c: GET /, GET /static/NAME, GET /static/lib/NAME,
 * GET /static/views/NAME, GET /vendor/chart.js. */
void api_static_index(struct http_request *req, struct http_reply *rep);
void api_static_file(struct http_request *req, struct http_reply *rep);
void api_static_lib_file(struct http_request *req, struct http_reply *rep);
void api_static_view_file(struct http_request *req, struct http_reply *rep);
void api_static_chartjs(struct http_request *req, struct http_reply *rep);
/* Whether Chart.js can be read at path: 0, or -1 with why (the path, the
 * system's reason and what to do) in why[cap].  Said at start (main.c) and
 * by GET /vendor/chart.js's 404, which the page shows. */
int http_chartjs_problem(const char *path, char *why, size_t cap);

#endif
