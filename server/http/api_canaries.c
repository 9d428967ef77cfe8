/*
 * api_canaries.c - GET /canaries: the checks on idle cards (--canary), per
 * card, as the canaries' thread sees them (runs/canaries.h).
 */
#include "handlers.h"
#include "canaries.h"

static const char *const no_query[] = {NULL};

void api_canaries_get(struct http_request *req, struct http_reply *rep)
{
    cJSON *body;
    int store_rc;

    if (query_check(req, rep, no_query) != 0)
        return;
    body = canaries_describe(req->app->canaries, &store_rc);
    if (body == NULL && store_rc != 0) {
        reply_store_error(rep, store_rc, "the canaries' runs could not be read");
        return;
    }
    if (body == NULL) {
        reply_error(rep, 500, "internal", "", "out of memory");
        return;
    }
    reply_json(rep, 200, body);
}
