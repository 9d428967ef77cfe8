/*
 * api_peers.c - GET /peers: the daemons this one pulls runs from and how
 * each pull went (peers_describe.c), filtered by ?state= and ?label=NAME:VALUE
 * (repeatable: all must match).
 */
#include "handlers.h"
#include "peers.h"

#include <string.h>

static const char *const peers_query[] = {"state", "label", NULL};

/* The most ?label= arguments read. */
#define PEERS_LABELS_MAX 16

void api_peers_get(struct http_request *req, struct http_reply *rep)
{
    const char *labels[PEERS_LABELS_MAX];
    struct peers_filter f = {.state = query_get(req, "state"), .labels = labels};

    if (query_check(req, rep, peers_query) != 0)
        return;
    if (f.state && !peers_state_known(f.state)) {
        reply_error(rep, 400, "out_of_bounds", "state",
                    "state=%.40s: expected new, ok, failing or pulling", f.state);
        return;
    }
    f.label_count = query_all(req, "label", labels, PEERS_LABELS_MAX);
    if (f.label_count > PEERS_LABELS_MAX) {
        reply_error(rep, 400, "out_of_bounds", "label", "at most %d label filters",
                    PEERS_LABELS_MAX);
        return;
    }
    for (int i = 0; i < f.label_count; i++) {
        if (strchr(labels[i], ':') == NULL) {
            reply_error(rep, 400, "out_of_bounds", "label",
                        "label=%.60s: expected NAME:VALUE", labels[i]);
            return;
        }
    }
    reply_json(rep, 200, peers_describe(req->app->peers, &f));
}
