/*
 * alerts.c - see alerts.h.  The life cycle is decided here, each move is
 * one statement of store_alerts.c; the webhook is a queue of JSON texts
 * and one thread that posts them with libcurl.  Each confirmed alert's post
 * ends recorded (delivered, failed, or none without a webhook); one a stop
 * or a crash caught still queued or between tries stays unrecorded, and
 * alerts_recover queues it again at the next start.  An https:// receiver
 * is verified as a peer is (curl_tls.c, the same CA and client
 * certificate); one that does not verify is a failed try, logged with the
 * reason.
 */
#include "alerts.h"

#include "cards.h"
#include "curl_tls.h"
#include "log.h"
#include "store.h"
#include "store_alerts.h"
#include "store_card_events.h"
#include "store_runs.h"
#include "uuid7.h"

#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FIRST_RETRY_S 1 /* doubles each try */

struct post {
    char *body;   /* the alert as JSON, owned */
    long long id; /* the alert's */
};

struct alerts {
    const char *url;     /* NULL: no webhook */
    struct curl_tls tls; /* the peers' CA and client certificate */
    struct store *store; /* alerts, their runs, each post's outcome */
    int confirm_runs;    /* --confirm-runs */
    int max_queue;       /* --max-queue: confirming runs respect it too */
    pthread_t thread;
    int thread_started;
    pthread_mutex_t lock;
    pthread_cond_t cond; /* signalled on a new alert and on stop */
    struct post queue[ALERTS_WEBHOOK_QUEUE];
    int head, count; /* under lock */
    int stopping;    /* under lock */
    atomic_long delivered, failed;
};

static size_t discard_body(char *p, size_t size, size_t n, void *ctx)
{
    (void)p;
    (void)ctx;
    return size * n;
}

/* One POST of body; 0 when the receiver answered 2xx. */
static int post_once(const char *url, const struct curl_tls *tls, const char *body, char *err,
                     size_t cap)
{
    CURL *c = curl_easy_init();
    struct curl_slist *headers = NULL;
    char curl_err[CURL_ERROR_SIZE];
    long status = 0;
    CURLcode rc;

    if (c == NULL) {
        snprintf(err, cap, "curl_easy_init failed");
        return -1;
    }
    if ((rc = curl_tls_setup(c, tls, curl_err)) != CURLE_OK) {
        snprintf(err, cap, "TLS could not be set up: %s", curl_easy_strerror(rc));
        curl_easy_cleanup(c);
        return -1;
    }
    headers = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard_body);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 15L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_USERAGENT, "gpubenchd-alert");
    rc = curl_easy_perform(c);
    if (rc == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK)
        curl_failure_reason(rc, curl_err, err, cap);
    else if (status < 200 || status > 299)
        snprintf(err, cap, "the receiver answered %ld", status);
    curl_easy_cleanup(c);
    curl_slist_free_all(headers);
    return rc == CURLE_OK && status >= 200 && status <= 299 ? 0 : -1;
}

/* Waits s seconds or until stop; 1 when stopping.  Holds a->lock. */
static int wait_or_stop(struct alerts *a, int s)
{
    struct timespec until;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += s;
    while (!a->stopping)
        if (pthread_cond_timedwait(&a->cond, &a->lock, &until) == ETIMEDOUT)
            break;
    return a->stopping;
}

static void *webhook_main(void *arg)
{
    struct alerts *a = arg;

    pthread_mutex_lock(&a->lock);
    for (;;) {
        struct post p;
        char err[256] = "";
        int sent = 0, stopped = 0, wait_s = FIRST_RETRY_S;
        while (a->count == 0 && !a->stopping)
            pthread_cond_wait(&a->cond, &a->lock);
        if (a->stopping)
            break;
        p = a->queue[a->head];
        a->head = (a->head + 1) % ALERTS_WEBHOOK_QUEUE;
        a->count--;
        for (int i = 0; i < ALERTS_WEBHOOK_TRIES && !sent; i++, wait_s *= 2) {
            if (i > 0 && (stopped = wait_or_stop(a, wait_s)) != 0)
                break;
            pthread_mutex_unlock(&a->lock); /* never post under the lock */
            sent = post_once(a->url, &a->tls, p.body, err, sizeof(err)) == 0;
            pthread_mutex_lock(&a->lock);
            if (!sent)
                log_warn("alert webhook %s: %s%s", a->url, err,
                         i + 1 < ALERTS_WEBHOOK_TRIES ? "; trying again" : "; giving up");
        }
        if (sent)
            atomic_fetch_add(&a->delivered, 1);
        else if (!stopped)
            atomic_fetch_add(&a->failed, 1);
        /* Stopped between tries: left unrecorded, posted after the restart. */
        if ((sent || !stopped) &&
            store_alert_webhook_done(a->store, p.id, sent ? "delivered" : "failed") != STORE_OK)
            log_warn("alert %lld: its webhook post could not be recorded", p.id);
        free(p.body);
    }
    pthread_mutex_unlock(&a->lock);
    return NULL;
}

struct alerts *alerts_start(const struct alerts_config *cfg)
{
    struct alerts *a = calloc(1, sizeof(*a));
    const char *url = cfg->webhook;

    if (a == NULL) {
        log_error("out of memory starting the alerts");
        return NULL;
    }
    a->url = url;
    a->tls = cfg->tls;
    a->store = cfg->store;
    a->confirm_runs = cfg->confirm_runs;
    a->max_queue = cfg->max_queue;
    pthread_mutex_init(&a->lock, NULL);
    pthread_cond_init(&a->cond, NULL);
    if (url) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        if (pthread_create(&a->thread, NULL, webhook_main, a) == 0)
            a->thread_started = 1;
        else
            log_error("cannot start the alert webhook thread: confirmed alerts are not posted");
    }
    return a;
}

void alerts_stop(struct alerts *a)
{
    if (a == NULL)
        return;
    pthread_mutex_lock(&a->lock);
    a->stopping = 1;
    pthread_cond_broadcast(&a->cond);
    pthread_mutex_unlock(&a->lock);
    if (a->thread_started)
        pthread_join(a->thread, NULL);
    if (a->count)
        log_warn("stopping with %d confirmed alert(s) not posted to the webhook: they are "
                 "posted at the next start",
                 a->count);
    for (; a->count > 0; a->count--, a->head = (a->head + 1) % ALERTS_WEBHOOK_QUEUE)
        free(a->queue[a->head].body);
    if (a->url)
        curl_global_cleanup();
    pthread_cond_destroy(&a->cond);
    pthread_mutex_destroy(&a->lock);
    free(a);
}

void alerts_webhook_counts(struct alerts *a, long *delivered, long *failed)
{
    *delivered = a ? atomic_load(&a->delivered) : 0;
    *failed = a ? atomic_load(&a->failed) : 0;
}

/* Queues each alert of list (confirmed) for the webhook; without one,
 * records that none was told. */
static void post_alerts(struct alerts *a, const cJSON *list)
{
    const cJSON *alert;

    cJSON_ArrayForEach(alert, list) {
        long long id = (long long)cJSON_GetNumberValue(cJSON_GetObjectItem(alert, "id"));
        const char *outcome = NULL;
        char *body;
        if (a == NULL)
            continue;
        if (a->url == NULL) {
            outcome = "none";
        } else if ((body = cJSON_PrintUnformatted(alert)) != NULL) {
            pthread_mutex_lock(&a->lock);
            if (a->count < ALERTS_WEBHOOK_QUEUE && !a->stopping) {
                a->queue[(a->head + a->count) % ALERTS_WEBHOOK_QUEUE] =
                    (struct post){.body = body, .id = id};
                a->count++;
                body = NULL;
                pthread_cond_signal(&a->cond);
            }
            pthread_mutex_unlock(&a->lock);
            if (body) {
                log_warn("alert webhook queue full: alert %lld is not posted (GET /alerts has "
                         "it)",
                         id);
                atomic_fetch_add(&a->failed, 1);
                outcome = "failed";
                free(body);
            }
        } /* out of memory: left unrecorded, tried again at the next start */
        if (outcome && store_alert_webhook_done(a->store, id, outcome) != STORE_OK)
            log_warn("alert %lld: its webhook post could not be recorded", id);
    }
}

/* Logs each alert of list as confirmed and hands it to the webhook. */
static void announce(struct alerts *a, const cJSON *list)
{
    const cJSON *alert;

    cJSON_ArrayForEach(alert, list) {
        /* a card event's has no benchmark: its reason says what it is */
        const char *what = cJSON_GetStringValue(cJSON_GetObjectItem(alert, "benchmark"));
        if (what == NULL)
            what = cJSON_GetStringValue(cJSON_GetObjectItem(alert, "reason"));
        log_warn("alert %.0f confirmed: %s on %s, %s",
                 cJSON_GetNumberValue(cJSON_GetObjectItem(alert, "id")),
                 cJSON_GetStringValue(cJSON_GetObjectItem(alert, "verdict")),
                 cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(alert, "card"),
                                                          "device_uuid")),
                 what ? what : "");
    }
    post_alerts(a, list);
}

void alerts_on_card_event(struct alerts *a, const struct alert_card_event *e)
{
    cJSON *alert = NULL, *list = NULL;
    long long id = 0;
    int rc = store_alert_card_event(a->store, e, &id);

    if (rc == STORE_CONFLICT)
        return; /* its alert is open: the event is stored, the alert told once */
    if (rc != STORE_OK) {
        log_warn("card %s: %s: no alert could be stored", e->uuid, e->message);
        return;
    }
    if (store_alert_get(a->store, id, &alert) != STORE_OK) {
        log_warn("card %s: alert %lld is confirmed but could not be read: the webhook is told "
                 "at the next start",
                 e->uuid, id);
        return;
    }
    if ((list = cJSON_CreateArray()) != NULL && cJSON_AddItemToArray(list, alert))
        announce(a, list);
    else
        cJSON_Delete(alert);
    cJSON_Delete(list);
}

/* What one row of a run's verdicts found. */
struct finding {
    const char *kind; /* "history", "fleet", "floor" */
    char *row_key;    /* JSON text, owned */
    int found;        /* slower / an outlier */
    int as_before;    /* same / within the fleet: clears */
    int exact;        /* an exact check's (expect_deep.h): confirmed at once */
    double shift, z;
};

#define MAX_FINDINGS 512

static double num_or_nan(const cJSON *obj, const char *name)
{
    const cJSON *v = cJSON_GetObjectItem(obj, name);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The findings of run's checks against its card model's floors (common/
 * expect.h) into f: a missed floor is found (shift: value / floor - 1), a
 * met one clears; a check without a floor does neither. */
static int collect_floors(const cJSON *run, struct finding *f, int cap)
{
    const cJSON *c;
    int n = 0;

    cJSON_ArrayForEach(c, cJSON_GetObjectItem(run, "checks")) {
        const cJSON *pass = cJSON_GetObjectItem(c, "pass");
        double floor = num_or_nan(c, "floor");
        if (n == cap)
            break;
        if (!cJSON_IsBool(pass))
            continue;
        f[n] = (struct finding){"floor",
                                cJSON_PrintUnformatted(cJSON_GetObjectItem(c, "row")),
                                cJSON_IsFalse(pass),
                                cJSON_IsTrue(pass),
                                cJSON_IsTrue(cJSON_GetObjectItem(c, "exact")),
                                floor > 0 ? num_or_nan(c, "value") / floor - 1 : NAN,
                                NAN};
        if (f[n].row_key)
            n++;
    }
    return n;
}

/* The findings of verdicts, and of run's checks, into f; their number. */
static int collect(const cJSON *run, const cJSON *verdicts, struct finding *f, int cap)
{
    const cJSON *row;
    int n = 0;

    cJSON_ArrayForEach(row, cJSON_GetObjectItem(cJSON_GetObjectItem(verdicts, "history"), "rows")) {
        const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(row, "verdict"));
        if (n == cap || v == NULL)
            break;
        /* too_few_runs neither raises nor clears: a short history cannot
         * tell a slow card from its ordinary swing (common/shift.h); a run
         * within that swing is as before */
        f[n] = (struct finding){"history", cJSON_PrintUnformatted(cJSON_GetObjectItem(row, "key")),
                                strcmp(v, "slower") == 0,
                                strcmp(v, "same") == 0 || strcmp(v, "within_spread") == 0, 0,
                                num_or_nan(row, "shift"), NAN};
        if (f[n].row_key)
            n++;
    }
    cJSON_ArrayForEach(row, cJSON_GetObjectItem(cJSON_GetObjectItem(verdicts, "fleet"), "rows")) {
        int outlier = cJSON_IsTrue(cJSON_GetObjectItem(row, "outlier"));
        double value = num_or_nan(row, "value_ms"), med = num_or_nan(row, "median_ms");
        if (n == cap)
            break;
        if (!outlier && !isfinite(num_or_nan(row, "z")))
            continue; /* not judged: too few cards */
        f[n] = (struct finding){"fleet", cJSON_PrintUnformatted(cJSON_GetObjectItem(row, "key")),
                                outlier, !outlier, 0,
                                isfinite(med) && med > 0 ? value / med - 1 : NAN,
                                num_or_nan(row, "z")};
        if (f[n].row_key)
            n++;
    }
    return n + collect_floors(run, f + n, cap - n);
}

/* The verdict an alert of finding f records: an exact check's is
 * wrong_result (store_alerts.h: cleared only by a passing run and a
 * person's acknowledgement). */
static const char *verdict_of(const struct finding *f)
{
    if (strcmp(f->kind, "fleet") == 0)
        return "outlier";
    if (f->exact)
        return ALERT_WRONG_RESULT;
    return strcmp(f->kind, "floor") == 0 ? "below_floor" : "slower";
}

/* Queues n confirming runs of run, each naming it. */
static void queue_confirmations(struct alerts *a, const cJSON *run, int n)
{
    const cJSON *device = cJSON_GetObjectItem(run, "device");
    const cJSON *index = cJSON_GetObjectItem(device, "index");
    const cJSON *params = cJSON_GetObjectItem(run, "params");
    struct run_new r[8];
    int rc;

    if (n > 8)
        n = 8;
    if (!cJSON_IsNumber(index) || params == NULL)
        return;
    for (int i = 0; i < n; i++) {
        memset(&r[i], 0, sizeof(r[i]));
        if (uuid7_new(r[i].id) != 0) {
            log_error("no random bytes for a confirming run's id");
            return;
        }
        r[i].benchmark = cJSON_GetStringValue(cJSON_GetObjectItem(run, "benchmark"));
        r[i].params_json = params->valuestring; /* raw: its stored text */
        r[i].label = cJSON_GetStringValue(cJSON_GetObjectItem(run, "label"));
        r[i].host = cJSON_GetStringValue(cJSON_GetObjectItem(run, "host"));
        r[i].device_index = index->valueint;
        r[i].device_uuid = cJSON_GetStringValue(cJSON_GetObjectItem(device, "uuid"));
        r[i].device_name = cJSON_GetStringValue(cJSON_GetObjectItem(device, "name"));
        r[i].timeout_s = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(run, "timeout_s"));
        r[i].confirms = cJSON_GetStringValue(cJSON_GetObjectItem(run, "id"));
    }
    rc = store_insert_runs(a->store, r, n, a->max_queue);
    if (rc != STORE_OK) {
        const char *why = rc == STORE_FULL ? "the queue is full" : store_rc_words(rc);
        char reason[160];
        int changed = 0;
        log_warn("run %s: its confirming run(s) could not be queued (%s)", r[0].confirms, why);
        snprintf(reason, sizeof(reason), "no confirming run could be queued (%s)", why);
        if (store_alerts_unconfirmed(a->store, r[0].confirms, 1, reason, &changed) != STORE_OK)
            log_warn("run %s: its alerts stay detected", r[0].confirms);
    } else
        log_info("run %s: %d confirming run(s) queued, first %s", r[0].confirms, n, r[0].id);
}

/* A confirming run settles the alerts the run it confirms found. */
static void settle(struct alerts *a, const char *id, const char *confirms,
                   const struct finding *f, int n)
{
    cJSON *pending = NULL;
    const cJSON *alert;

    if (store_alerts_pending(a->store, confirms, &pending) != STORE_OK)
        return;
    cJSON_ArrayForEach(alert, pending) {
        char *row = cJSON_PrintUnformatted(cJSON_GetObjectItem(alert, "row"));
        const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(alert, "kind"));
        cJSON *confirmed = NULL;
        long long aid;
        int repeated = 0;
        for (int i = 0; i < n && row && kind; i++)
            repeated |= f[i].found && strcmp(f[i].kind, kind) == 0 &&
                        strcmp(f[i].row_key, row) == 0;
        aid = (long long)cJSON_GetNumberValue(cJSON_GetObjectItem(alert, "id"));
        if (row && store_alert_settle(a->store, aid, repeated, id, &confirmed) == STORE_OK)
            announce(a, confirmed);
        cJSON_Delete(confirmed);
        free(row);
    }
    cJSON_Delete(pending);
}

void alerts_on_unjudged(struct alerts *a, const char *run_id, const char *what)
{
    char reason[160];
    int changed = 0;

    snprintf(reason, sizeof(reason), "its confirming run %s %s", run_id, what);
    if (store_alerts_unconfirmed(a->store, run_id, 0, reason, &changed) != STORE_OK)
        log_warn("run %s ended (%s): the alerts it was to confirm are not settled", run_id, what);
    else if (changed > 0)
        log_info("run %s ended (%s): %d alert(s) it was to confirm settled", run_id, what,
                 changed);
}

/* Settles the alerts of a run whose confirmation was interrupted a second
 * time: each of the awaited ones counts as not repeated. */
static void settle_interrupted(struct alerts *a, const char *finder, const char *last, int n)
{
    char reason[200];
    int changed = 0, total = 0;

    snprintf(reason, sizeof(reason),
             "its confirming run %s was interrupted by a daemon restart, as one before it "
             "was: not queued again",
             last);
    for (int i = 0; i < n; i++) {
        if (store_alerts_unconfirmed(a->store, last, 0, reason, &changed) != STORE_OK) {
            log_warn("run %s: the alerts it found stay detected", finder);
            return;
        }
        total += changed;
    }
    log_warn("run %s: its confirming runs were interrupted twice; %d alert(s) settled", finder,
             total);
}

void alerts_recover(struct alerts *a)
{
    cJSON *waiting = NULL, *unposted = NULL;
    const cJSON *w;

    /* Confirmed alerts a stop or a crash kept from the webhook. */
    if (store_alerts_unposted(a->store, ALERTS_WEBHOOK_QUEUE, &unposted) != STORE_OK) {
        log_warn("the alerts not yet posted to the webhook could not be read");
    } else if (cJSON_GetArraySize(unposted) > 0) {
        log_info("%d confirmed alert(s) not posted before the restart: %s",
                 cJSON_GetArraySize(unposted),
                 a->url ? "posting them now" : "no webhook now, not posted");
        post_alerts(a, unposted);
    }
    cJSON_Delete(unposted);

    if (store_alerts_waiting(a->store, &waiting) != STORE_OK) {
        log_warn("the alerts that wait for confirming runs could not be read: a confirmation a "
                 "restart lost leaves its alert detected");
        return;
    }
    cJSON_ArrayForEach(w, waiting) {
        const char *finder = cJSON_GetStringValue(cJSON_GetObjectItem(w, "run_id"));
        const char *last = cJSON_GetStringValue(cJSON_GetObjectItem(w, "last_interrupted"));
        int missing = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(w, "awaited")) -
                      (int)cJSON_GetNumberValue(cJSON_GetObjectItem(w, "pending"));
        int interrupted = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(w, "interrupted"));
        cJSON *run = NULL;
        if (finder == NULL || missing <= 0)
            continue; /* its confirmations are still queued */
        if (interrupted >= 2 && last) {
            settle_interrupted(a, finder, last, missing);
            continue;
        }
        if (a->confirm_runs == 0) { /* turned off since: settle, queue nothing */
            int changed = 0;
            if (store_alerts_unconfirmed(a->store, finder, 1,
                                         "its confirming run was lost to a daemon restart and "
                                         "confirming runs are now off (--confirm-runs 0)",
                                         &changed) != STORE_OK)
                log_warn("run %s: the alerts it found stay detected", finder);
            else
                log_warn("run %s: confirmations are off; %d alert(s) settled", finder, changed);
            continue;
        }
        /* interrupted once, or lost between its alert and its queueing */
        if (store_get_run(a->store, finder, &run) == STORE_OK) {
            log_warn("run %s: %d confirming run(s) %s; queued again", finder, missing,
                     last ? "interrupted by a daemon restart" : "lost by a daemon restart");
            queue_confirmations(a, run, missing);
        } else
            log_warn("run %s cannot be read: the alerts it found stay detected", finder);
        cJSON_Delete(run);
    }
    cJSON_Delete(waiting);
}

/* Clears the alerts of run's card's one-off events that run completed the
 * end of (store_card_events.h: the card's floored health benchmarks ran and
 * met them after it); the store judges which, so that the card's state and
 * its alerts follow one rule. */
static void clear_one_offs(struct alerts *a, const cJSON *run, const char *id)
{
    const cJSON *device = cJSON_GetObjectItem(run, "device");
    const char *uuid = cJSON_GetStringValue(cJSON_GetObjectItem(device, "uuid"));
    char *closing, reason[200];
    int floored, cleared = 0;

    if (uuid == NULL)
        return;
    closing = cards_one_off_closing(cJSON_GetStringValue(cJSON_GetObjectItem(device, "name")),
                                    &floored);
    if (closing == NULL) {
        log_error("run %s: out of memory: its card's one-off event alerts are not cleared", id);
        return;
    }
    snprintf(reason, sizeof(reason), "%s after it (run %s)",
             floored ? "its health benchmarks with floors ran and met them"
                     : "every health benchmark of one card ran validly",
             id);
    if (store_card_one_offs_clear(a->store, uuid, closing, id, reason, &cleared) != STORE_OK)
        log_warn("run %s: the alerts of its card's one-off events could not be cleared", id);
    else if (cleared)
        log_info("run %s: %d card event alert(s) of %s cleared", id, cleared, uuid);
    free(closing);
}

/* Opens the alert of finding f of run id, confirmed at once when
 * confirmed (--confirm-runs 0, or an exact check's), and tells the webhook
 * of it then.  1 when one was opened. */
static int open_alert(struct alerts *a, const char *id, const struct finding *f, int confirm_runs,
                      int confirmed)
{
    struct alert_new found = {f->kind, id, f->row_key, verdict_of(f),
                              f->shift, f->z, confirmed ? 0 : confirm_runs,
                              confirmed};
    long long aid = 0;
    cJSON *alert = NULL, *list;

    if (store_alert_detect(a->store, &found, &aid) != STORE_OK)
        return 0;
    if (!found.confirmed)
        return 1;
    /* confirmed at once: this alert, by its id */
    if (store_alert_get(a->store, aid, &alert) != STORE_OK) {
        log_warn("run %s: alert %lld is confirmed but could not be read: the webhook "
                 "is told at the next start",
                 id, aid);
        return 1;
    }
    if ((list = cJSON_CreateArray()) != NULL && cJSON_AddItemToArray(list, alert))
        announce(a, list);
    else
        cJSON_Delete(alert);
    cJSON_Delete(list);
    return 1;
}

/* The wrong results of run's exact checks (a known_answer mismatch, a
 * memtest error): a fact about the card whatever else spoiled the run, so
 * judged even where its verdicts were not (another process on the card
 * cannot make an FMA wrong); confirmed at once, never rerun. */
static void open_exact(struct alerts *a, const char *id, const struct finding *f, int n)
{
    for (int i = 0; i < n; i++)
        if (f[i].exact && f[i].found && open_alert(a, id, &f[i], 0, 1))
            log_warn("run %s: %s %s is a wrong result: alert confirmed at once", id, f[i].kind,
                     f[i].row_key);
}

void alerts_on_run(struct alerts *a, const cJSON *run, const cJSON *verdicts)
{
    const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(run, "id"));
    const char *confirms = cJSON_GetStringValue(cJSON_GetObjectItem(run, "confirms"));
    int confirm_runs = a->confirm_runs, opened = 0, n = 0;
    struct finding *f;

    if (id == NULL)
        return;
    clear_one_offs(a, run, id);
    /* This run's own findings: runners of several GPUs end runs at once,
     * each with its own, and nothing is held across the store's writes
     * (the writer's lock orders them there). */
    f = calloc(MAX_FINDINGS, sizeof(*f));
    if (f == NULL) {
        log_error("run %s: out of memory: its verdicts raise no alert", id);
        return;
    }
    if (!cJSON_IsTrue(cJSON_GetObjectItem(verdicts, "judged"))) {
        if (confirms)
            alerts_on_unjudged(a, id, "was not valid");
        n = collect_floors(run, f, MAX_FINDINGS);
        open_exact(a, id, f, n);
        goto done;
    }
    n = collect(run, verdicts, f, MAX_FINDINGS);
    for (int i = 0; i < n; i++) {
        int cleared = 0;
        if (f[i].as_before)
            store_alerts_clear(a->store, id, f[i].kind, f[i].row_key, &cleared);
        if (cleared)
            log_info("run %s: %d %s alert(s) of row %s cleared", id, cleared, f[i].kind,
                     f[i].row_key);
    }
    open_exact(a, id, f, n);
    if (confirms) {
        settle(a, id, confirms, f, n); /* and never a confirmation of its own */
    } else {
        for (int i = 0; i < n; i++)
            if (f[i].found && !f[i].exact)
                opened += open_alert(a, id, &f[i], confirm_runs, confirm_runs == 0);
        if (opened && confirm_runs > 0)
            queue_confirmations(a, run, confirm_runs);
    }

done:
    for (int i = 0; i < n; i++)
        free(f[i].row_key);
    free(f);
}
