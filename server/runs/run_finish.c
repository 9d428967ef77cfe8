/*
 * run_finish.c - see run_finish.h.
 */
#include "run_finish.h"

#include "alerts.h"
#include "json_build.h"
#include "json_span.h"
#include "log.h"
#include "run_judge.h"
#include "run_verdicts.h"
#include "store_peers.h"
#include "store_runs.h"

#include <stdlib.h>
#include <string.h>

/* Copies run's string field name into *field: 0, or -1 out of memory. */
static int take_string(char **field, const cJSON *obj, const char *name)
{
    return run_record_set(field, cJSON_GetStringValue(cJSON_GetObjectItem(obj, name)));
}

/* The envelope fields every record takes from a run object: those of a
 * measured run's row and of a foreign run alike.  0, or -1. */
static int take_envelope(struct run_record *r, const cJSON *run)
{
    const cJSON *device = cJSON_GetObjectItem(run, "device");
    const cJSON *index = cJSON_GetObjectItem(device, "index");
    const cJSON *method = cJSON_GetObjectItem(run, "method");
    const cJSON *params = cJSON_GetObjectItem(run, "params");

    r->has_device_index = cJSON_IsNumber(index);
    r->device_index = r->has_device_index ? index->valueint : 0;
    r->method = cJSON_IsNumber(method) && method->valuedouble >= 1
                    ? (long long)method->valuedouble
                    : 0;
    free(r->params);
    /* Params read from this store are kept raw (their stored text). */
    r->params = cJSON_IsRaw(params) ? strdup(params->valuestring)
                                    : cJSON_PrintUnformatted(params ? params : NULL);
    if (r->params == NULL && params != NULL)
        return -1;
    return take_string(&r->benchmark, run, "benchmark") != 0 ||
                   take_string(&r->host, run, "host") != 0 ||
                   take_string(&r->device_uuid, device, "uuid") != 0 ||
                   take_string(&r->device_name, device, "name") != 0
               ? -1
               : 0;
}

/* A copy of span's bytes of line, or NULL where it was not found
 * (json_span.h) or memory ran out: the value is printed then. */
static char *raw_member(const char *line, const struct json_span *span)
{
    return span->found ? strndup(line + span->start, span->len) : NULL;
}

int run_finish_from_json(struct run_record *r, cJSON *run, const char *line, size_t len,
                         const char *origin)
{
    const cJSON *error = cJSON_GetObjectItem(run, "error");
    const cJSON *timeout = cJSON_GetObjectItem(run, "timeout_s");
    cJSON *results = NULL, *meta = NULL;
    char *results_text = NULL, *meta_text = NULL;
    struct json_span spans[2] = {{.name = "results"}, {.name = "meta"}};

    if (take_envelope(r, run) != 0 || take_string(&r->id, run, "id") != 0 ||
        take_string(&r->label, run, "label") != 0 || take_string(&r->batch, run, "batch") != 0 ||
        take_string(&r->status, run, "status") != 0 ||
        take_string(&r->created_at, run, "created_at") != 0 ||
        take_string(&r->started_at, run, "started_at") != 0 ||
        take_string(&r->finished_at, run, "finished_at") != 0 ||
        take_string(&r->error_code, error, "code") != 0 ||
        take_string(&r->error_message, error, "message") != 0 ||
        run_record_set(&r->origin, origin) != 0)
        return -1;
    r->timeout_s = cJSON_IsNumber(timeout) ? timeout->valueint : 0;
    /* Damaged where it was stored (import_check_run let it through): kept
     * as damaged, with the node's list of what it lacks. */
    if (cJSON_IsTrue(cJSON_GetObjectItem(run, "damaged")) &&
        (r->damaged_at_origin =
             cJSON_PrintUnformatted(cJSON_GetObjectItem(run, "damaged_columns"))) == NULL)
        return -1;
    /* Only a run that carries its results has any: its meta with them. */
    if (cJSON_IsObject(cJSON_GetObjectItem(run, "results"))) {
        results = cJSON_DetachItemFromObjectCaseSensitive(run, "results");
        meta = cJSON_DetachItemFromObjectCaseSensitive(run, "meta");
        if (meta && !cJSON_IsObject(meta)) {
            cJSON_Delete(meta);
            meta = NULL;
        }
        if (line && json_member_spans(line, len, spans, 2) == 0) {
            results_text = raw_member(line, &spans[0]);
            meta_text = meta ? raw_member(line, &spans[1]) : NULL;
        }
    }
    return run_record_take_trees_as(r, results, results_text, meta, meta_text);
}

/* The rest of a measured run's envelope, from its row (still running). */
static int read_envelope(struct store *store, struct run_record *r, cJSON **row)
{
    int rc = store_get_run(store, r->id, row);

    if (rc != STORE_OK)
        return rc;
    return take_envelope(r, *row) == 0 ? STORE_OK : -1;
}

/* The run as it is stored, for the verdicts and the alerts: its row
 * (taken: the same object is returned, or deleted) with the record's end,
 * results and meta (borrowed: references to the record's trees), validity
 * and checks.  NULL when memory ran out. */
static cJSON *judged_run(cJSON *row, const struct run_record *r)
{
    static const char *const replaced[] = {"status", "results", "meta", "validity", "checks"};
    struct json_build b = {0};
    const struct run_judged *j = &r->judged;

    for (size_t i = 0; i < sizeof(replaced) / sizeof(replaced[0]); i++)
        cJSON_DeleteItemFromObjectCaseSensitive(row, replaced[i]);
    jb_string(&b, row, "status", r->status);
    jb_item(&b, row, "results",
            r->results ? cJSON_CreateObjectReference(r->results->child) : cJSON_CreateNull());
    jb_item(&b, row, "meta",
            r->meta ? cJSON_CreateObjectReference(r->meta->child) : cJSON_CreateNull());
    jb_item(&b, row, "validity", j->validity ? cJSON_Parse(j->validity) : cJSON_CreateNull());
    jb_item(&b, row, "checks", j->checks ? cJSON_Parse(j->checks) : cJSON_CreateNull());
    if (jb_failed(&b)) {
        cJSON_Delete(row);
        return NULL;
    }
    return row;
}

int run_finish_judge(const struct run_finish_ctx *ctx, struct run_record *r, int measured,
                     cJSON **judged_out, cJSON **verdicts_out)
{
    cJSON *row = NULL, *run = NULL, *verdicts = NULL;
    int rc = -1;

    if (judged_out)
        *judged_out = NULL;
    if (verdicts_out)
        *verdicts_out = NULL;
    if (measured && r->results == NULL) {
        rc = 0; /* failed: nothing to judge, its row has the rest */
        goto done;
    }
    if (measured && (rc = read_envelope(ctx->store, r, &row)) != STORE_OK)
        goto done;
    rc = -1;
    if (judge_run_record(r) != 0)
        goto done;
    if (measured) {
        run = judged_run(row, r);
        row = NULL; /* run's now, or deleted */
        if (run == NULL)
            goto done;
        /* Verdicts that cannot be made are logged there; the run is
         * stored without them. */
        verdicts = run_verdicts_judge(ctx->store, ctx->history_runs, run, r->judged.digest);
        free(r->judged.verdicts);
        r->judged.verdicts = verdicts ? cJSON_PrintUnformatted(verdicts) : NULL;
        if (verdicts && r->judged.verdicts == NULL)
            log_warn("run %s: its verdicts could not be printed; it is stored without them",
                     r->id);
    }
    rc = 0;

done:
    cJSON_Delete(row);
    if (rc == 0 && judged_out && run) {
        *judged_out = run;
        run = NULL;
    }
    if (rc == 0 && verdicts_out && r->judged.verdicts) {
        *verdicts_out = verdicts;
        verdicts = NULL;
    }
    cJSON_Delete(run);
    cJSON_Delete(verdicts);
    return rc;
}

int run_batch_add(struct run_batch *b, cJSON *run, const char *line, size_t len,
                  const char *origin)
{
    const struct run_finish_ctx ctx = {0}; /* a foreign run reads nothing */
    struct run_record *r;

    if (b->n == b->cap) {
        int cap = b->cap ? 2 * b->cap : 16;
        struct run_record *grown = realloc(b->recs, (size_t)cap * sizeof(*grown));
        if (grown == NULL)
            return -1;
        b->recs = grown;
        b->cap = cap;
    }
    r = &b->recs[b->n];
    memset(r, 0, sizeof(*r));
    if (run_finish_from_json(r, run, line, len, origin) != 0 ||
        run_finish_judge(&ctx, r, 0, NULL, NULL) != 0) {
        run_record_clear(r); /* out of memory: nothing is stored unjudged */
        return -1;
    }
    /* Judged: the store writes its texts, so its trees go now (a pulled
     * run's were parsed in its line's arena, rewound after the line:
     * peers_batch.c). */
    run_record_drop_trees(r);
    b->n++;
    return 0;
}

/* The stored batch's runs that joined a change-point series, as a JSON
 * array handed to alerts_on_stored: their steps and drifts told to the
 * webhook.  Memory running out only loses the posts (logged). */
static void post_changes(struct run_batch *b)
{
    cJSON *ids;
    char *text = NULL;

    if (b->alerts == NULL)
        return;
    if ((ids = cJSON_CreateArray()) != NULL) {
        for (int i = 0; i < b->n; i++)
            if (b->recs[i].judged.n_points > 0 &&
                !cJSON_AddItemToArray(ids, cJSON_CreateString(b->recs[i].id)))
                break;
        if (cJSON_GetArraySize(ids) > 0)
            text = cJSON_PrintUnformatted(ids);
    }
    if (text)
        alerts_on_stored(b->alerts, text);
    else if (cJSON_GetArraySize(ids) > 0 || ids == NULL)
        log_warn("out of memory: the change alerts of %d stored run(s) are posted at the next "
                 "start",
                 b->n);
    free(text);
    cJSON_Delete(ids);
}

/* Clears every record, keeping the array for the next batch. */
static void batch_empty(struct run_batch *b)
{
    while (b->n > 0)
        run_record_clear(&b->recs[--b->n]);
}

int run_batch_store(struct run_batch *b, struct store *store, struct import_tally *tally)
{
    int rc = store_import_runs(store, b->recs, b->n, tally);

    if (rc == STORE_OK)
        post_changes(b);
    batch_empty(b);
    return rc;
}

int run_batch_store_pull(struct run_batch *b, struct store *store,
                         const struct store_pull *pull, struct import_tally *tally)
{
    int rc = store_pull_runs(store, pull, b->recs, b->n, tally);

    if (rc == STORE_OK)
        post_changes(b);
    batch_empty(b);
    return rc;
}

void run_batch_clear(struct run_batch *b)
{
    batch_empty(b);
    free(b->recs);
    memset(b, 0, sizeof(*b));
}

int run_finish_import(struct store *store, struct alerts *alerts, cJSON *runs,
                      const char *origin, struct import_tally *tally)
{
    struct run_batch b = {.alerts = alerts};
    cJSON *run;
    int rc = STORE_ERROR;

    memset(tally, 0, sizeof(*tally));
    cJSON_ArrayForEach(run, runs)
        if (run_batch_add(&b, run, NULL, 0, origin) != 0)
            goto done;
    rc = run_batch_store(&b, store, tally);

done:
    run_batch_clear(&b);
    return rc;
}
