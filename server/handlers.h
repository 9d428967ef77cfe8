/*
 * handlers.h - the HTTP handlers the route table (router.c) points at,
 * one file a resource: runs_api.c, info_api.c, static_files.c.
 */
#ifndef GPUBENCH_HANDLERS_H
#define GPUBENCH_HANDLERS_H

#include "http.h"

void runs_post(struct http_request *req, struct http_reply *rep);
/* Run id's URL ("/runs/ID") into buf: what a run's "url" field and
 * Location say.  The store is handed it (store_set_run_url). */
void run_url(const char *id, char *buf, size_t cap);
void runs_list(struct http_request *req, struct http_reply *rep);
void runs_get(struct http_request *req, struct http_reply *rep);
void runs_delete(struct http_request *req, struct http_reply *rep);

void runs_ndjson(struct http_request *req, struct http_reply *rep);
void runs_csv(struct http_request *req, struct http_reply *rep);
void runs_import(struct http_request *req, struct http_reply *rep);
/* GET /runs/ID.csv: the route's "*" (req->arg) is the id. */
void run_csv(struct http_request *req, struct http_reply *rep);
void compare_get(struct http_request *req, struct http_reply *rep);

/* report_api.c: GET /runs/ID.md (the route's "*", req->arg, is the id) and
 * GET /compare.md, as markdown. */
void run_md(struct http_request *req, struct http_reply *rep);
void compare_md_get(struct http_request *req, struct http_reply *rep);

/* verdict_api.c: GET /compare with baseline= and candidate= (compare_get
 * hands over), and the pinned baselines. */
void compare_verdicts(struct http_request *req, struct http_reply *rep);
void baselines_post(struct http_request *req, struct http_reply *rep);
void baselines_list(struct http_request *req, struct http_reply *rep);
void baselines_get(struct http_request *req, struct http_reply *rep);
void baselines_delete(struct http_request *req, struct http_reply *rep);

/* alerts_api.c: alerts (issue 14) and the fleet view. */
void alerts_get(struct http_request *req, struct http_reply *rep);
void alerts_ack(struct http_request *req, struct http_reply *rep);
void fleet_get(struct http_request *req, struct http_reply *rep);

void benchmarks_get(struct http_request *req, struct http_reply *rep);
void predict_post(struct http_request *req, struct http_reply *rep);
void devices_get(struct http_request *req, struct http_reply *rep);
void healthz_get(struct http_request *req, struct http_reply *rep);
void peers_get(struct http_request *req, struct http_reply *rep);
void metrics_get(struct http_request *req, struct http_reply *rep);
/* openapi_api.c: api/openapi.json, embedded at build time. */
void openapi_get(struct http_request *req, struct http_reply *rep);

/* Answers a failed store call (rc one of store.h's STORE_* failures):
 * 507 storage_full with Retry-After, 500 database_corrupt, 404, or 500
 * internal; what says what could not be done ("the run could not be
 * stored").  See store_reply.c. */
void reply_store_error(struct http_reply *rep, int rc, const char *what);

void static_index(struct http_request *req, struct http_reply *rep);
void static_file(struct http_request *req, struct http_reply *rep);
void static_chartjs(struct http_request *req, struct http_reply *rep);

#endif
