/*
 * api_card_faults.c - GET /card_faults (README "Watching
 * cards"): the open critical card events of every card this daemon knows,
 * its own watch's and those its peers report, which a hub above it fetches
 * after each pull (server/runs/peers_faults.c).  Asks the runs layer
 * (card_faults.c), prints.
 */
#include "app.h"
#include "card_faults.h"
#include "handlers.h"
#include "store.h"

void api_card_faults_get(struct http_request *req, struct http_reply *rep)
{
    static const char *const query[] = {NULL};
    cJSON *answer = NULL;
    int rc;

    if (query_check(req, rep, query) != 0)
        return;
    if ((rc = card_faults_report(req->app->store, &answer)) != STORE_OK) {
        reply_store_error(rep, rc, "the card faults could not be read");
        return;
    }
    reply_json(rep, 200, answer);
}
