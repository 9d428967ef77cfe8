/*
 * api_peers.c - GET /peers: the daemons this one pulls runs from and how
 * each pull went (peers.c).
 */
#include "handlers.h"
#include "peers.h"

static const char *const no_query[] = {NULL};

void peers_get(struct http_request *req, struct http_reply *rep)
{
    if (query_check(req, rep, no_query) != 0)
        return;
    reply_json(rep, 200, peers_describe(req->app->peers));
}
