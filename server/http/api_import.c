/*
 * api_import.c - POST /runs/import: NDJSON back in, as GET /runs.ndjson
 * (api_exports.c) gives it.  Checked whole first (import_check.c), then
 * stored in one transaction; a run already here is skipped, so importing
 * twice changes nothing.  Every run imported is stored with origin
 * "import", whatever origin it names (a run's word about where it was
 * measured is not believed: README "A fleet"); one whose id is held here
 * with another origin is left as it is and counted in "conflicts".  A new
 * run naming a card a peer speaks for here refuses the import (409
 * card_conflict, naming the card and its owner: store_owners.c).  The
 * body's cap is the route's (router.c).
 */
#include "handlers.h"
#include "json_build.h"
#include "import_check.h"
#include "run_finish.h"
#include "store_runs.h"
#include "timeutil.h"

#include <string.h>

/* Parses and checks every line first (import_check.c); stores nothing
 * unless all pass, and then all in one transaction. */
void api_runs_import(struct http_request *req, struct http_reply *rep)
{
    static const char *const no_query[] = {NULL};
    struct json_build jb = {0};
    struct import_rules rules;
    struct gb_error gerr;
    cJSON *runs = NULL, *body;
    struct import_tally tally;
    int rc;

    if (query_check(req, rep, no_query) != 0)
        return;
    if (req->body == NULL) {
        reply_error(rep, 400, "malformed_json", "",
                    "send runs as NDJSON, one run a line, as GET /runs.ndjson gives them "
                    "(curl -H 'Content-Type: application/x-ndjson' --data-binary @runs.ndjson)");
        return;
    }
    rules.test_benchmarks = req->app->opt->test_benchmarks;
    rules.now_ms = time_now_unix_ms();
    rules.max_skew_ms = req->app->opt->max_clock_skew_s * 1000;
    runs = import_parse_ndjson(req->body, req->body_len, &rules, &gerr);
    if (runs == NULL) {
        int internal = strcmp(gerr.code, "internal") == 0;
        reply_error(rep, internal ? 500 : 400, gerr.code, gerr.field, "%s", gerr.message);
        return;
    }
    /* The origin is this daemon's word, never the run's (README "A fleet"). */
    rc = run_finish_import(req->app->store, req->app->alerts, runs, RUN_ORIGIN_IMPORT, &tally);
    if (rc == STORE_CONFLICT && tally.card_conflicts > 0) {
        reply_error(rep, 409, "card_conflict", "device.uuid",
                    "run %d of the import (%s) names card %s, which %s speaks for here (host "
                    "%s): a card is spoken for by one origin (README \"A fleet\"); %d run(s) "
                    "refused so; nothing was imported",
                    tally.card_index + 1, tally.card_run_id, tally.card_uuid,
                    tally.card_owner[0] ? tally.card_owner : "this node", tally.card_host,
                    tally.card_conflicts);
        goto done;
    }
    if (rc != STORE_OK) {
        reply_store_error(rep, rc, "the runs could not be stored; nothing was imported");
        goto done;
    }
    body = jb_new_object(&jb);
    jb_number(&jb, body, "imported", tally.inserted);
    jb_number(&jb, body, "already_here", tally.existing + tally.conflicts);
    jb_number(&jb, body, "conflicts", tally.conflicts);
    if (jb_failed(&jb)) {
        cJSON_Delete(body);
        reply_error(rep, 500, "internal", "",
                    "the runs were stored, but memory ran out saying how many");
        goto done;
    }
    reply_json(rep, 200, body);

done:
    cJSON_Delete(runs);
}
