/*
 * runs.c - the runs layer; see runs.h.  Every failure below comes back as
 * an enum runs_rc with a sentence; api_runs.c alone maps them to HTTP.
 *
 * Accepting is all or nothing: the device and the memory rule are checked
 * and every id minted before the one insert, so a refused request stores
 * nothing.  The accepted runs are read back before the runners are woken,
 * so that the answer shows them as accepted (queued, with their place in
 * the queue) rather than as whatever a runner made of them since; a
 * runner also looks at its queue once a second unwoken (gpu_pool.c), so a
 * run may already show running (test_api.py and test_runs allow both).
 */
#include "runs.h"
#include "alerts.h"
#include "bench_spec.h"
#include "gpu_pool.h"
#include "dynbuf.h"
#include "hash.h"
#include "run_cache.h"
#include "run_status.h"
#include "store.h"
#include "store_runs.h"
#include "uuid7.h"
#include "waiters.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void runs_url(const char *id, char *buf, size_t cap)
{
    snprintf(buf, cap, "/runs/%s", id);
}

int runs_add_url(cJSON *run)
{
    const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(run, "id"));
    cJSON *first = run ? run->child : NULL, *item;
    char url[160];

    if (id == NULL || first == NULL || cJSON_HasObjectItem(run, "url"))
        return id ? 0 : -1;
    runs_url(id, url, sizeof(url));
    item = cJSON_CreateString(url);
    if (item == NULL || (item->string = strdup("url")) == NULL) {
        cJSON_Delete(item);
        return -1;
    }
    /* Second, right after "id", where a run has always shown it.  Linked
     * in by hand: Debian 12's cJSON (1.7.15-1+deb12u4) answers false to
     * cJSON_InsertItemInArray and inserts nothing.  cJSON keeps the first
     * item's prev pointing at the last item. */
    item->prev = first;
    item->next = first->next;
    if (first->next)
        first->next->prev = item;
    else
        first->prev = item;
    first->next = item;
    return 0;
}

/* Fills err; returns rc, so that a caller can `return fail(...)`. */
static enum runs_rc fail(struct runs_error *err, enum runs_rc rc, int store_rc,
                         const char *field, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static enum runs_rc fail(struct runs_error *err, enum runs_rc rc, int store_rc,
                         const char *field, const char *fmt, ...)
{
    va_list ap;

    err->rc = rc;
    err->store_rc = store_rc;
    snprintf(err->field, sizeof(err->field), "%s", field);
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
    return rc;
}

/* The device lookup's failure as the layer's. */
static enum runs_rc device_fail(struct runs_error *err, enum gpu_lookup why, const char *text)
{
    static const enum runs_rc rc[] = {
        [GPU_MALFORMED] = RUNS_BAD_DEVICE,
        [GPU_NOT_FOUND] = RUNS_NO_DEVICE,
        [GPU_UNHEALTHY] = RUNS_DEVICE_UNHEALTHY,
    };

    return fail(err, rc[why], 0, "device", "%s", text);
}

/* Ask no card for more memory than it has (a tenth kept for the context
 * and the driver). */
static enum runs_rc check_memory(const struct run_request *rr, const struct gpu_ref *refs, int n,
                                 struct runs_error *err)
{
    for (int p = 0; p < rr->n_parts; p++) {
        double need = gb_params_device_bytes(rr->parts[p].bench, rr->parts[p].params);
        for (int i = 0; i < n; i++) {
            if (refs[i].memory_bytes > 0 && need > 0.9 * refs[i].memory_bytes)
                return fail(err, RUNS_TOO_LARGE, 0, "params.n",
                            "this %s run needs %.1f GiB of GPU memory; GPU %d (%s) has "
                            "%.1f GiB",
                            rr->parts[p].bench->name, need / 1073741824.0, refs[i].index,
                            refs[i].name, refs[i].memory_bytes / 1073741824.0);
        }
    }
    return RUNS_OK;
}

/* "" when rr can run b on this node of gpus GPUs, else why not, into why. */
static void not_here(const struct run_request *rr, const struct gb_benchmark *b, int gpus,
                     char *why, size_t cap)
{
    why[0] = '\0';
    if (b->min_devices > 1 && gpus < b->min_devices)
        snprintf(why, cap, "needs %d GPUs; this node has %d", b->min_devices, gpus);
    else if (rr->one_card && b->all_devices)
        snprintf(why, cap, "needs every GPU: a node canary runs it when every card is quiet");
}

/* The index in refs of the lowest GPU index. */
static int lowest_ref(const struct gpu_ref *refs, int n)
{
    int low = 0;

    for (int i = 1; i < n; i++)
        if (refs[i].index < refs[low].index)
            low = i;
    return low;
}

static int left_out(const struct run_set *set, const struct gb_benchmark *b)
{
    for (int i = 0; i < set->n_left_out; i++)
        if (strcmp(set->left_out[i].benchmark, b->name) == 0)
            return 1;
    return 0;
}

enum runs_rc runs_accept(struct runs *runs, const struct run_request *rr, struct run_set *set,
                         cJSON **accepted, struct runs_error *err)
{
    struct gpu_ref refs[RUNS_MAX_BATCH];
    struct run_new news[RUNS_MAX_BATCH];
    const cJSON *device = rr->device;
    char *params_text[GB_SUITE_MAX_MEMBERS] = {NULL};
    enum gpu_lookup why = GPU_NOT_FOUND;
    char text[512];
    int n, all, low, all_final, store_rc;
    enum runs_rc rc;

    memset(set, 0, sizeof(*set));
    if (accepted)
        *accepted = NULL;
    n = gpu_pool_resolve(runs->gpus, device, refs, RUNS_MAX_BATCH, &why, text, sizeof(text));
    if (n < 0)
        return device_fail(err, why, text);
    rc = check_memory(rr, refs, n, err);
    if (rc != RUNS_OK)
        return rc;
    /* A benchmark alone is refused; a suite leaves it out and says so. */
    for (int p = 0; p < rr->n_parts; p++) {
        const struct gb_benchmark *b = rr->parts[p].bench;
        not_here(rr, b, gpu_pool_count(runs->gpus), text, sizeof(text));
        if (text[0] && rr->suite == NULL)
            return fail(err, RUNS_TOO_FEW_GPUS, 0, "benchmark", "%s %s", b->name, text);
        if (text[0]) {
            struct run_left_out *l = &set->left_out[set->n_left_out++];
            l->benchmark = b->name;
            snprintf(l->reason, sizeof(l->reason), "%s", text);
        }
    }
    all = cJSON_IsString(device) && strcmp(device->valuestring, "all") == 0;
    /* A suite, like "all", is one batch: GET /runs?batch=ID lists it. */
    if ((all || rr->suite != NULL) && uuid7_new(set->batch) != 0) {
        rc = fail(err, RUNS_INTERNAL, 0, "", "no random bytes for a batch id");
        goto done;
    }
    for (int p = 0; p < rr->n_parts; p++) {
        params_text[p] = cJSON_PrintUnformatted(rr->parts[p].params);
        if (params_text[p] == NULL) {
            rc = fail(err, RUNS_INTERNAL, 0, "", "out of memory");
            goto done;
        }
    }
    /* Device by device, each device's runs in the suite's order, so that
     * they are queued back to back; a run that needs every GPU
     * (all_devices) is made once, on the lowest GPU, when all are named. */
    low = lowest_ref(refs, n);
    for (int i = 0; i < n; i++) {
        for (int p = 0; p < rr->n_parts; p++) {
            struct run_new *r = &news[set->n];
            if (all && rr->parts[p].bench->all_devices && i != low)
                continue;
            if (left_out(set, rr->parts[p].bench))
                continue;
            if (set->n >= RUNS_MAX_BATCH) {
                rc = fail(err, RUNS_TOO_LARGE, 0, "device",
                          "this request makes more than %d runs; name fewer devices",
                          RUNS_MAX_BATCH);
                goto done;
            }
            memset(r, 0, sizeof(*r));
            if (uuid7_new(r->id) != 0) {
                rc = fail(err, RUNS_INTERNAL, 0, "", "no random bytes for a run id");
                goto done;
            }
            r->benchmark = rr->parts[p].bench->name;
            r->params_json = params_text[p];
            r->label = rr->label;
            r->batch_id = set->batch[0] ? set->batch : NULL;
            r->host = runs->host;
            r->device_index = refs[i].index;
            r->device_uuid = refs[i].uuid;
            r->device_name = refs[i].name;
            r->timeout_s = rr->timeout_s;
            snprintf(set->ids[set->n], sizeof(set->ids[set->n]), "%.36s", r->id);
            set->n++;
        }
    }
    store_rc = store_insert_runs(runs->store, news, set->n, runs->max_queue);
    if (store_rc == STORE_FULL) {
        rc = fail(err, RUNS_QUEUE_FULL, store_rc, "",
                  "the queue holds its maximum of %d runs; try again later",
                  runs->max_queue);
        goto done;
    }
    if (store_rc != STORE_OK) {
        rc = fail(err, RUNS_STORE, store_rc, "", "the run could not be stored");
        goto done;
    }
    rc = accepted ? runs_read(runs, set, accepted, &all_final, err) : RUNS_OK;
    for (int i = 0; i < n; i++)
        gpu_pool_wake(runs->gpus, refs[i].index);

done:
    for (int p = 0; p < GB_SUITE_MAX_MEMBERS; p++)
        free(params_text[p]);
    return rc;
}

enum runs_rc runs_cancel(struct runs *runs, const char *id, char status[16],
                         struct runs_error *err)
{
    int rc = store_cancel_run(runs->store, id, status);

    if (rc == STORE_NOT_FOUND)
        return fail(err, RUNS_NOT_FOUND, rc, "", "no run %.60s", id);
    if (rc == STORE_CONFLICT)
        return fail(err, RUNS_NOT_QUEUED, rc, "",
                    "run %.60s is %.15s; only a queued run can be cancelled", id, status);
    if (rc != STORE_OK)
        return fail(err, RUNS_STORE, rc, "", "the run could not be cancelled");
    /* A cancelled confirming run settles the alert it was to confirm. */
    alerts_on_unjudged(runs->alerts, id, "was cancelled");
    waiters_notify(runs->waiters, id);
    return RUNS_OK;
}

int runs_finished(struct runs *runs, const char *id)
{
    char status[16];

    if (store_run_status(runs->store, id, status) != STORE_OK)
        return -1;
    return store_status_final(status) ? 1 : 0;
}

int runs_first_unfinished(struct runs *runs, const struct run_set *set)
{
    int i;

    for (i = 0; i < set->n; i++)
        if (runs_finished(runs, set->ids[i]) != 1)
            break;
    return i;
}

struct wait_check {
    struct runs *runs;
    const char *id;
};

/* Under the waiters' lock: whether the run is still to be waited for (a
 * run that cannot be read is not). */
static int still_waiting(void *arg)
{
    const struct wait_check *w = arg;

    return runs_finished(w->runs, w->id) == 0;
}

enum waiters_rc runs_wait(struct runs *runs, const char *id, void *token, int64_t deadline_ms)
{
    struct wait_check check = {runs, id};

    return waiters_wait(runs->waiters, id, token, deadline_ms, still_waiting, &check);
}

/* Under the waiters' lock, at shutdown: whether run id is running, so
 * that the pool ends it or puts it back within its grace (a run that
 * cannot be read is not: its waiter answers now). */
static int is_running(void *arg, const char *id)
{
    struct runs *runs = arg;
    char status[16];

    return store_run_status(runs->store, id, status) == STORE_OK &&
           run_status_parse(status) == RUN_RUNNING;
}

void runs_close_waits(struct runs *runs)
{
    waiters_close(runs->waiters, is_running, runs);
}

enum runs_rc runs_read(struct runs *runs, const struct run_set *set, cJSON **out,
                       int *all_finished, struct runs_error *err)
{
    cJSON *list = cJSON_CreateArray();

    *out = NULL;
    *all_finished = 1;
    if (list == NULL)
        return fail(err, RUNS_INTERNAL, 0, "", "out of memory");
    for (int i = 0; i < set->n; i++) {
        cJSON *run = NULL;
        int rc = store_get_run_raw(runs->store, set->ids[i], &run);
        if (rc != STORE_OK) {
            cJSON_Delete(list);
            return fail(err, RUNS_STORE, rc, "", "run %s could not be read", set->ids[i]);
        }
        *all_finished &= store_status_final(
            cJSON_GetStringValue(cJSON_GetObjectItem(run, "status")));
        if (runs_add_url(run) != 0 || !cJSON_AddItemToArray(list, run)) {
            cJSON_Delete(run);
            cJSON_Delete(list);
            return fail(err, RUNS_INTERNAL, 0, "", "out of memory");
        }
    }
    *out = list;
    return RUNS_OK;
}

/* runs_get_text's miss: run id read, printed, and kept once it has ended;
 * *text malloc'ed. */
static enum runs_rc get_text_read(struct runs *runs, const char *id, const char **text,
                                  size_t *len, uint64_t *tag, struct runs_error *err)
{
    struct run_set one = {.n = 1};
    cJSON *list = NULL;
    char *printed, *body;
    int finished;
    enum runs_rc rc;

    snprintf(one.ids[0], sizeof(one.ids[0]), "%.36s", id);
    rc = runs_read(runs, &one, &list, &finished, err);
    if (rc != RUNS_OK)
        return rc;
    printed = cJSON_PrintUnformatted(cJSON_GetArrayItem(list, 0));
    cJSON_Delete(list);
    /* A trailing newline, as every JSON answer has. */
    body = printed ? realloc(printed, strlen(printed) + 2) : NULL;
    if (body == NULL) {
        free(printed);
        return fail(err, RUNS_INTERNAL, 0, "", "out of memory");
    }
    *len = strlen(body);
    body[*len] = '\n';
    body[++*len] = '\0';
    *tag = hash_fnv1a64(body, *len);
    if (finished)
        run_cache_put(runs->cache, id, body, *len);
    *text = body;
    return RUNS_OK;
}

enum runs_rc runs_get_text(struct runs *runs, const char *id, const char **text, size_t *len,
                           uint64_t *tag, void **hold, struct runs_error *err)
{
    /* A hit is a lookup and a count: the run set (7 KB to clear) and the
     * read are the miss's alone. */
    *text = run_cache_hold(runs->cache, id, len, tag, hold);
    if (*text)
        return RUNS_OK;
    return get_text_read(runs, id, text, len, tag, err);
}

/* A finished run's list entry as last shown ("l" and its id in the run
 * cache), appended to out: 1, or 0 when not kept. */
static int entry_get(void *ctx, const char *id, struct dynbuf *out)
{
    struct runs *runs = ctx;
    char key[48], *text;
    size_t len;

    snprintf(key, sizeof(key), "l%s", id);
    text = run_cache_get(runs->cache, key, &len, NULL);
    if (text == NULL)
        return 0;
    (void)!dynbuf_add(out, text, len); /* a failure sticks: the page fails */
    free(text);
    return 1;
}

/* A run's list entry as the store built it, with its "url", printed onto
 * the page, and kept for the next page that lists it when final. */
static int entry_put(void *ctx, const char *id, int final, cJSON *entry, struct dynbuf *out)
{
    struct runs *runs = ctx;
    char key[48], *text = NULL;
    int rc = -1;

    if (runs_add_url(entry) == 0 && (text = cJSON_PrintUnformatted(entry)) != NULL &&
        dynbuf_add(out, text, strlen(text)) == 0) {
        if (final) {
            snprintf(key, sizeof(key), "l%s", id);
            run_cache_put(runs->cache, key, text, strlen(text));
        }
        rc = 0;
    }
    free(text);
    cJSON_Delete(entry);
    return rc;
}

const char *runs_page_kept(struct runs *runs, const char *key, size_t *len, void **hold)
{
    return run_cache_hold(runs->pages, key, len, NULL, hold);
}

void runs_page_keep(struct runs *runs, const char *key, const char *text, size_t len)
{
    run_cache_put(runs->pages, key, text, len);
}

enum runs_rc runs_page(struct runs *runs, struct run_filter *f, struct dynbuf *out,
                       char next[40], struct runs_error *err)
{
    const struct store_entries entries = {runs, entry_get, entry_put};
    int rc = store_list_page(runs->store, f, &entries, out, next);

    if (rc == STORE_OK)
        return RUNS_OK;
    if (dynbuf_failed(out))
        return fail(err, RUNS_INTERNAL, 0, "", "the page is over its buffer, or memory ran out");
    return fail(err, RUNS_STORE, rc, "", "the runs could not be read");
}
