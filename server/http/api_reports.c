/*
 * api_reports.c - the markdown reports (report_md.c makes the text):
 *   GET /runs/ID.md     one run (api_runs_get hands it over with the id)
 *   GET /compare.md     the same query and the same errors as GET /compare
 *                       (api_compare_get answers it), its JSON then written as
 *                       markdown
 *   GET /changes.md     the same query as GET /changes (api_changes.c), its
 *                       change points and drifts as a table
 * Errors stay JSON like every other error of the API.
 */
#include "handlers.h"
#include "report_md.h"
#include "store_changes.h"
#include "store_runs.h"
#include "uuid7.h"

#include <stdlib.h>

#define REPORT_CAP (4 * 1024 * 1024)
#define MARKDOWN "text/markdown; charset=utf-8"

/* Sends the finished text of out, or a 500 when it was cut at its cap. */
static void reply_markdown(struct http_reply *rep, int rc, struct dynbuf *out)
{
    size_t len;
    char *text;

    if (rc != 0 || (text = dynbuf_take(out, &len)) == NULL) {
        dynbuf_free(out);
        reply_error(rep, 500, "internal", "", "the report is over %d MiB or memory ran out",
                    REPORT_CAP / (1024 * 1024));
        return;
    }
    reply_body(rep, 200, MARKDOWN, text, len);
}

void api_run_md(struct http_request *req, struct http_reply *rep)
{
    static const char *const none[] = {NULL};
    const char *id = req->arg;
    struct dynbuf out;
    cJSON *run = NULL;
    int rc;

    if (query_check(req, rep, none) != 0)
        return;
    if (!uuid_is_valid(id)) {
        reply_error(rep, 404, "not_found", "", "no run %.60s.md (run ids are UUIDs)", id);
        return;
    }
    rc = store_get_run(req->app->store, id, &run);
    if (rc == STORE_NOT_FOUND) {
        reply_error(rep, 404, "not_found", "", "no run %.40s", id);
        return;
    }
    if (rc != STORE_OK) {
        reply_store_error(rep, rc, "the run could not be read");
        return;
    }
    dynbuf_init(&out, REPORT_CAP);
    reply_markdown(rep, report_md_run(run, &out), &out);
    cJSON_Delete(run);
}

/* report_md_compare's run_of: the run from the store, or NULL. */
static cJSON *run_from_store(void *ctx, const char *id)
{
    cJSON *run = NULL;

    return store_get_run(ctx, id, &run) == STORE_OK ? run : NULL;
}

void api_compare_md_get(struct http_request *req, struct http_reply *rep)
{
    struct dynbuf out;
    cJSON *answer;

    api_compare_get(req, rep);
    if (rep->status != 200)
        return;
    if ((answer = cJSON_ParseWithLength(rep->body, rep->len)) == NULL) {
        reply_error(rep, 500, "internal", "", "the comparison could not be read back");
        return;
    }
    dynbuf_init(&out, REPORT_CAP);
    reply_markdown(rep, report_md_compare(answer, run_from_store, req->app->store, &out), &out);
    cJSON_Delete(answer);
}

void api_changes_md_get(struct http_request *req, struct http_reply *rep)
{
    struct change_select sel = {0};
    struct dynbuf out;
    cJSON *list = NULL;
    char since[32];
    int rc;

    if (changes_query(req, rep, &sel, since) != 0)
        return;
    rc = store_changes_list(req->app->store, &sel, &list);
    if (rc != STORE_OK) {
        reply_store_error(rep, rc, "the changes could not be read");
        return;
    }
    dynbuf_init(&out, REPORT_CAP);
    reply_markdown(rep, report_md_changes(list, &out), &out);
    cJSON_Delete(list);
}
