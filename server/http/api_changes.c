/*
 * api_changes.c - GET /cards/UUID/changes and GET /changes (issue 34):
 * the change points and drifts found in each card x key x row series
 * (judge/changepoint.h says how; store_changes.h what a change holds),
 * newest first.  Parses the query, asks the store, prints.
 */
#include "app.h"
#include "handlers.h"
#include "store_changes.h"

#define CHANGES_LIMIT_DEFAULT 100
#define CHANGES_LIMIT_MAX 1000

/* Lists the changes sel picks (its limit from ?limit=) as {"changes"},
 * with uuid named when there is one. */
static void reply_changes(struct http_request *req, struct http_reply *rep,
                          struct change_select *sel)
{
    cJSON *list = NULL, *out;
    int rc;

    if (query_int(req, rep, "limit", 1, CHANGES_LIMIT_MAX, "a whole number from 1 to 1000",
                  &sel->limit) != 0)
        return;
    rc = store_changes_list(req->app->store, sel, &list);
    if (rc != STORE_OK) {
        reply_store_error(rep, rc, "the changes could not be read");
        return;
    }
    out = cJSON_CreateObject();
    if (sel->uuid)
        cJSON_AddStringToObject(out, "uuid", sel->uuid);
    cJSON_AddItemToObject(out, "changes", list);
    reply_json(rep, 200, out);
}

void api_card_changes_get(struct http_request *req, struct http_reply *rep)
{
    static const char *const query[] = {"limit", NULL};
    struct change_select sel = {.uuid = req->arg, .limit = CHANGES_LIMIT_DEFAULT};

    if (query_check(req, rep, query) != 0)
        return;
    reply_changes(req, rep, &sel);
}

void api_changes_get(struct http_request *req, struct http_reply *rep)
{
    static const char *const query[] = {"since", "host", "model", "limit", NULL};
    struct change_select sel = {.host = query_get(req, "host"),
                                .model = query_get(req, "model"),
                                .limit = CHANGES_LIMIT_DEFAULT};
    char since[32], until[32];

    if (query_check(req, rep, query) != 0 ||
        read_dates(rep, query_get(req, "since"), NULL, since, until) != 0)
        return;
    sel.since = since;
    reply_changes(req, rep, &sel);
}
