/*
 * api_alerts.c - GET /alerts and POST /alerts/ID/ack (GET /fleet:
 * api_fleet.c): parse the request, ask the store (store_alerts.c,
 * store_verdicts.c), print the answer.  When alerts move is alerts.c's.
 */
#include "app.h"
#include "handlers.h"
#include "store_alerts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ALERTS_LISTED 200  /* open ones, then the most recent others */
#define ACK_REASON_MAX 500 /* characters */

void api_alerts_get(struct http_request *req, struct http_reply *rep)
{
    static const char *const query[] = {"open", NULL};
    cJSON *list = NULL, *out;
    int open_only = -1, rc;

    if (query_check(req, rep, query) != 0)
        return;
    if (query_get(req, "open") && query_bool(req, rep, "open", &open_only) != 0)
        return;
    rc = store_alerts_list(req->app->store, open_only == 1, ALERTS_LISTED, &list);
    if (rc != STORE_OK) {
        reply_store_error(rep, rc, "the alerts could not be read");
        return;
    }
    out = cJSON_CreateObject();
    if (out == NULL || !cJSON_AddItemToObject(out, "alerts", list)) {
        cJSON_Delete(out);
        cJSON_Delete(list);
        reply_error(rep, 500, "internal", "", "out of memory listing the alerts");
        return;
    }
    reply_json(rep, 200, out);
}

void api_alerts_ack(struct http_request *req, struct http_reply *rep)
{
    cJSON *body = NULL, *alert = NULL;
    const cJSON *reason;
    char *end;
    long long id;
    int rc;

    errno = 0;
    id = strtoll(req->arg, &end, 10);
    if (errno || *end || id <= 0) {
        reply_error(rep, 404, "not_found", "", "no alert %.40s (alert ids are numbers)", req->arg);
        return;
    }
    if ((body = body_json(req, rep)) == NULL)
        return;
    reason = cJSON_GetObjectItem(body, "reason");
    if (!cJSON_IsObject(body)) {
        reply_error(rep, 400, "wrong_type", "", "the body must be a JSON object");
        goto done;
    }
    if (!cJSON_IsString(reason) || reason->valuestring[0] == '\0' ||
        strlen(reason->valuestring) > ACK_REASON_MAX) {
        reply_error(rep, 400, reason ? "out_of_bounds" : "missing_field", "reason",
                    "reason: why the alert is acknowledged, 1 to %d characters",
                    ACK_REASON_MAX);
        goto done;
    }
    rc = store_alert_ack(req->app->store, id, reason->valuestring, &alert);
    if (rc == STORE_CONFLICT) {
        reply_error(rep, 409, "conflict", "", "alert %lld is %s already", id,
                    cJSON_GetStringValue(cJSON_GetObjectItem(alert, "state")));
        goto done;
    }
    if (rc == STORE_NOT_FOUND) {
        reply_error(rep, 404, "not_found", "", "no alert %lld", id);
        goto done;
    }
    if (rc != STORE_OK) {
        reply_store_error(rep, rc, "the alert could not be acknowledged");
        goto done;
    }
    reply_json(rep, 200, alert);
    alert = NULL;

done:
    cJSON_Delete(alert);
    cJSON_Delete(body);
}
