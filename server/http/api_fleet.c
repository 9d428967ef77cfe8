/*
 * api_fleet.c - GET /fleet?benchmark=NAME: every card's latest result of
 * one benchmark beside its own history (store_fleet.c reads, fleet.c
 * judges).
 */
#include "fleet.h"
#include "handlers.h"
#include "shift.h"
#include "store_verdicts.h"

void api_fleet_get(struct http_request *req, struct http_reply *rep)
{
    static const char *const query[] = {"benchmark", NULL};
    const char *benchmark;
    cJSON *cards = NULL, *out;
    int rc;

    if (query_check(req, rep, query) != 0 || query_benchmark(req, rep) != 0)
        return;
    benchmark = query_get(req, "benchmark");
    if (benchmark == NULL || benchmark[0] == '\0') {
        reply_error(rep, 400, "missing_field", "benchmark", "benchmark= names the benchmark");
        return;
    }
    rc = store_fleet_cards(req->app->store, benchmark, &cards);
    if (rc != STORE_OK) {
        reply_store_error(rep, rc, "the fleet could not be read");
        return;
    }
    out = fleet_build(cards, GB_SHIFT_MARGIN_DEFAULT);
    cJSON_Delete(cards);
    if (out == NULL) {
        reply_error(rep, 500, "internal", "", "out of memory");
        return;
    }
    if (!cJSON_AddStringToObject(out, "benchmark", benchmark)) {
        cJSON_Delete(out);
        reply_error(rep, 500, "internal", "", "out of memory");
        return;
    }
    reply_json(rep, 200, out);
}
