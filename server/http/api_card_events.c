/*
 * api_card_events.c - GET /cards/UUID/events (README "Watching
 * cards"): what the watch found on one card between runs, newest first,
 * a page at a time (?limit=, ?cursor= from the previous page's "next").
 * Parses the query, asks the runs layer (card_watch.c), prints.
 */
#include "app.h"
#include "card_watch.h"
#include "gpu_pool.h"
#include "handlers.h"
#include "json_build.h"
#include "store.h"

#include <stdint.h>
#include <stdio.h>

#define EVENTS_LIMIT_DEFAULT 50
#define EVENTS_LIMIT_MAX 500

void api_card_events_get(struct http_request *req, struct http_reply *rep)
{
    static const char *const query[] = {"limit", "cursor", NULL};
    struct json_build jb = {0};
    cJSON *own, *events = NULL, *out;
    long long cursor = 0, next = 0;
    int limit = EVENTS_LIMIT_DEFAULT, rc;
    char url[256];

    if (query_check(req, rep, query) != 0 ||
        query_int(req, rep, "limit", 1, EVENTS_LIMIT_MAX, "a whole number from 1 to 500",
                  &limit) != 0 ||
        query_long(req, rep, "cursor", 1, INT64_MAX,
                   "the \"next\" URL of the previous page gives it", &cursor) != 0)
        return;
    own = gpu_pool_describe(req->app->gpus);
    rc = card_watch_events(req->app->store, own, req->arg, cursor, limit, &events, &next);
    cJSON_Delete(own);
    if (rc != STORE_OK) {
        reply_card_error(rep, rc, req->arg, "the card's events could not be read");
        return;
    }
    out = jb_new_object(&jb);
    jb_string(&jb, out, "uuid", req->arg);
    jb_item(&jb, out, "events", events); /* out's now, or deleted */
    /* the uuid is a path segment the router matched: no '&' or '?' in it */
    if (next > 0 && snprintf(url, sizeof(url), "/cards/%s/events?limit=%d&cursor=%lld", req->arg,
                             limit, next) < (int)sizeof(url))
        jb_string(&jb, out, "next", url);
    else
        jb_null(&jb, out, "next");
    reply_built(rep, 200, &jb, out, "listing the card's events");
}
