/*
 * api_changes.c - GET /cards/UUID/changes and GET /changes:
 * the change points and drifts found in each card x key x row series
 * (judge/changepoint.h says how; store_changes.h what a change holds),
 * newest first (GET /changes.md, the same as markdown, is api_reports.c's).
 * Parses the query, asks the store, prints.
 */
#include "app.h"
#include "handlers.h"
#include "json_build.h"
#include "store_changes.h"

#define CHANGES_LIMIT_DEFAULT 100
#define CHANGES_LIMIT_MAX 1000

/* Lists the changes sel picks as {"changes"}, with uuid named when there
 * is one. */
static void reply_changes(struct http_request *req, struct http_reply *rep,
                          struct change_select *sel)
{
    struct json_build b = {0};
    cJSON *list = NULL, *out;
    int rc;

    rc = store_changes_list(req->app->store, sel, &list);
    if (rc != STORE_OK) {
        reply_store_error(rep, rc, "the changes could not be read");
        return;
    }
    out = jb_new_object(&b);
    if (sel->uuid)
        jb_string(&b, out, "uuid", sel->uuid);
    jb_item(&b, out, "changes", list); /* out's now, or deleted */
    if (jb_failed(&b)) {
        cJSON_Delete(out);
        reply_error(rep, 500, "internal", "", "out of memory listing the changes");
        return;
    }
    reply_json(rep, 200, out);
}

void api_card_changes_get(struct http_request *req, struct http_reply *rep)
{
    static const char *const query[] = {"limit", NULL};
    struct change_select sel = {.uuid = req->arg, .limit = CHANGES_LIMIT_DEFAULT};

    if (query_check(req, rep, query) != 0 ||
        query_int(req, rep, "limit", 1, CHANGES_LIMIT_MAX, "a whole number from 1 to 1000",
                  &sel.limit) != 0)
        return;
    reply_changes(req, rep, &sel);
}

int changes_query(struct http_request *req, struct http_reply *rep, struct change_select *sel,
                  char since[32])
{
    static const char *const query[] = {"since", "host", "model", "limit", NULL};
    char until[32];

    sel->host = query_get(req, "host");
    sel->model = query_get(req, "model");
    sel->since = since;
    sel->limit = CHANGES_LIMIT_DEFAULT;
    return query_check(req, rep, query) != 0 ||
                   read_dates(rep, query_get(req, "since"), NULL, since, until) != 0 ||
                   query_int(req, rep, "limit", 1, CHANGES_LIMIT_MAX,
                             "a whole number from 1 to 1000", &sel->limit) != 0
               ? -1
               : 0;
}

void api_changes_get(struct http_request *req, struct http_reply *rep)
{
    struct change_select sel = {0};
    char since[32];

    if (changes_query(req, rep, &sel, since) == 0)
        reply_changes(req, rep, &sel);
}
