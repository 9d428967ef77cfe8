/*
 * peers.c - see peers.h.  HTTP through libcurl; one easy handle per pull,
 * its TLS set by curl_tls.c (so an https:// peer is verified, with
 * --peer-ca-file and the client certificate when given).
 */
#include "peers.h"
#include "curl_tls.h"
#include "import_check.h"
#include "log.h"
#include "run_request.h"
#include "store_peers.h"
#include "store_runs.h"
#include "timeutil.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PEER_MAX_BACKOFF_MS (300 * 1000)
#define PULL_FAILED (-1)
#define PULL_SMALLER (-2) /* over the cap: asking again for a smaller page */

struct peer {
    struct peers *all;
    char url[512];
    pthread_t thread;
    int started;
    int page_limit; /* runs asked for a page; the thread's own */
    /* guarded by all->lock */
    struct peer_row row;
    int failures_in_row;
};

struct peers {
    struct store *store;
    int interval_s;
    int test_benchmarks;
    struct curl_tls tls;     /* --peer-ca-file, --peer-cert-file, --peer-key-file */
    char authorization[600]; /* "Authorization: Bearer ..." or "" */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stopping;
    int count;
    struct peer *list;
};

struct body {
    struct dynbuf buf;
    int over_cap;
};

static size_t on_body(char *data, size_t size, size_t n, void *cls)
{
    struct body *b = cls;

    if (dynbuf_add(&b->buf, data, size * n) != 0) {
        b->over_cap = 1;
        return 0; /* makes curl stop with CURLE_WRITE_ERROR */
    }
    return size * n;
}

/* GETs url into body, with the Authorization header when one is given
 * and TLS as tls says.  0, or -1 with the reason in err: a certificate
 * that does not verify is one, in libcurl's words. */
static int http_get(const char *url, const char *authorization, const struct curl_tls *tls,
                    struct body *body, char *err, size_t cap)
{
    CURL *c = curl_easy_init();
    struct curl_slist *headers = NULL;
    char curl_err[CURL_ERROR_SIZE];
    long status = 0;
    CURLcode rc;
    int ret = -1;

    if (c == NULL) {
        snprintf(err, cap, "curl_easy_init failed");
        return -1;
    }
    if ((rc = curl_tls_setup(c, tls, curl_err)) != CURLE_OK) {
        snprintf(err, cap, "TLS could not be set up: %s", curl_easy_strerror(rc));
        goto done;
    }
    if (authorization[0]) {
        headers = curl_slist_append(NULL, authorization);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    /* An answer that says at once it is over the cap is refused unread. */
    curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)body->buf.cap);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "gpubenchd-peer");
    rc = curl_easy_perform(c);
    if (rc == CURLE_FILESIZE_EXCEEDED)
        body->over_cap = 1;
    if (rc != CURLE_OK) {
        if (body->over_cap)
            snprintf(err, cap, "the answer was over the %zu MiB cap",
                     body->buf.cap / (1024 * 1024));
        else
            curl_failure_reason(rc, curl_err, err, cap);
        goto done;
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) {
        snprintf(err, cap, "HTTP %ld", status);
        goto done;
    }
    ret = 0;

done:
    curl_easy_cleanup(c);
    curl_slist_free_all(headers);
    return ret;
}

/* What a page held besides its good runs: those of benchmarks unknown
 * here, passed over, and why the last of them was. */
struct page_skips {
    long long count;
    char reason[256];
};

/* Parses the NDJSON page: good runs into runs (cursor advanced past each),
 * runs of a benchmark unknown here counted in skips (cursor advanced past
 * them too), stopping at the first bad line.  Returns 0, or -1 with err
 * set. */
static int parse_page(const struct dynbuf *b, int test_benchmarks, long long *cursor,
                      cJSON *runs, struct page_skips *skips, char *err, size_t cap)
{
    const char *p = b->data ? b->data : "", *end = p + b->len;
    int line = 0;

    for (; p < end; p += strcspn(p, "\n") + 1) {
        size_t len = strcspn(p, "\n"), at;
        cJSON *run;
        const cJSON *seq;
        struct gb_error why;
        int trailing;

        line++;
        if (len == 0)
            continue;
        run = json_parse_whole(p, len, &at, &trailing);
        seq = cJSON_GetObjectItem(run, "seq");
        if (run == NULL) {
            snprintf(err, cap, "line %d of the answer is not one JSON value", line);
            return -1;
        }
        if (!cJSON_IsNumber(seq) || seq->valuedouble <= (double)*cursor) {
            cJSON_Delete(run);
            snprintf(err, cap, "line %d has no seq after %lld", line, *cursor);
            return -1;
        }
        if (import_check_run(run, test_benchmarks, &why) != 0) {
            if (strcmp(why.code, "unknown_benchmark") != 0) {
                cJSON_Delete(run);
                snprintf(err, cap, "line %d: %s", line, why.message);
                return -1;
            }
            snprintf(skips->reason, sizeof(skips->reason), "run %.36s: %.200s",
                     cJSON_GetStringValue(cJSON_GetObjectItem(run, "id")), why.message);
            skips->count++;
            *cursor = (long long)seq->valuedouble;
            cJSON_Delete(run);
            continue;
        }
        *cursor = (long long)seq->valuedouble;
        cJSON_AddItemToArray(runs, run);
    }
    return 0;
}

/* One pull of up to peer->page_limit runs.  Returns the runs read (any
 * means there may be more: a page may end early, cut by bytes),
 * PULL_SMALLER after an answer over the cap when a smaller page can still
 * be asked for, or PULL_FAILED after recording the error. */
static int pull_once(struct peer *peer)
{
    struct store *store = peer->all->store;
    struct body body = {.over_cap = 0};
    char url[700], err[300];
    long long cursor;
    cJSON *runs = cJSON_CreateArray();
    struct page_skips skips = {.count = 0};
    int inserted = 0, existing = 0, got = PULL_FAILED, bad, moved;

    pthread_mutex_lock(&peer->all->lock);
    cursor = peer->row.cursor;
    pthread_mutex_unlock(&peer->all->lock);
    dynbuf_init(&body.buf, PEER_BODY_CAP);
    snprintf(url, sizeof(url), "%s/runs.ndjson?after_seq=%lld&limit=%d",
             peer->url, cursor, peer->page_limit);
    err[0] = '\0';
    if (http_get(url, peer->all->authorization, &peer->all->tls, &body, err, sizeof(err)) !=
        0) {
        if (body.over_cap && peer->page_limit > 1) {
            peer->page_limit /= 2;
            log_info("peer %s: %s; asking for %d run(s) a page", peer->url, err,
                     peer->page_limit);
            err[0] = '\0';
            got = PULL_SMALLER;
        } else if (body.over_cap) {
            snprintf(err + strlen(err), sizeof(err) - strlen(err), " even for one run");
        }
        goto record;
    }
    bad = parse_page(&body.buf, peer->all->test_benchmarks, &cursor, runs, &skips, err,
                     sizeof(err));
    moved = cJSON_GetArraySize(runs) + (int)skips.count;
    /* Runs before a bad line are kept: they were checked one by one. */
    if (cJSON_GetArraySize(runs) > 0 &&
        store_import_runs(store, runs, peer->url, &inserted, &existing) != STORE_OK) {
        snprintf(err, sizeof(err), "the runs could not be stored here");
        goto record;
    }
    if ((moved > 0 || !bad) &&
        store_peer_record(store, peer->url, cursor, inserted, skips.count,
                          skips.count ? skips.reason : NULL, NULL) != STORE_OK) {
        /* The runs are stored; the next pull asks for them again and
         * finds them here. */
        snprintf(err, sizeof(err), "the cursor could not be stored here");
        goto record;
    }
    if (skips.count)
        log_warn("peer %s: skipped %lld run(s) of a benchmark not known here; the last: %s",
                 peer->url, skips.count, skips.reason);
    if (!bad)
        got = moved; /* skipped runs are progress too: ask again at once */
    if (got == 0)
        peer->page_limit = PEER_PAGE; /* caught up: full pages again */

record:
    if (err[0]) {
        if (store_peer_record(store, peer->url, cursor, 0, 0, NULL, err) != STORE_OK)
            log_warn("peer %s: the error below could not be stored", peer->url);
        log_warn("peer %s: %s", peer->url, err);
    } else if (inserted) {
        log_info("peer %s: stored %d run(s) (%d already here)", peer->url,
                 inserted, existing);
    }
    pthread_mutex_lock(&peer->all->lock);
    store_peer_load(store, peer->url, &peer->row);
    if (got != PULL_SMALLER)
        peer->failures_in_row = got == PULL_FAILED ? peer->failures_in_row + 1 : 0;
    pthread_mutex_unlock(&peer->all->lock);
    cJSON_Delete(runs);
    dynbuf_free(&body.buf);
    return got;
}

static void *peer_main(void *arg)
{
    struct peer *peer = arg;
    struct peers *all = peer->all;
    int64_t interval = (int64_t)all->interval_s * 1000;

    for (;;) {
        int got = pull_once(peer);
        int64_t wait = interval, until;
        struct timespec ts;

        if (got > 0 || got == PULL_SMALLER) {
            wait = 0; /* there may be more right now */
        } else if (got == PULL_FAILED) {
            for (int i = 1; i < peer->failures_in_row && wait < PEER_MAX_BACKOFF_MS; i++)
                wait *= 2;
            if (wait > PEER_MAX_BACKOFF_MS)
                wait = PEER_MAX_BACKOFF_MS;
        }
        until = time_mono_ms() + wait;
        ts.tv_sec = (time_t)(until / 1000);
        ts.tv_nsec = (long)(until % 1000) * 1000000L;
        pthread_mutex_lock(&all->lock);
        while (!all->stopping && time_mono_ms() < until)
            pthread_cond_timedwait(&all->cond, &all->lock, &ts);
        if (all->stopping) {
            pthread_mutex_unlock(&all->lock);
            return NULL;
        }
        pthread_mutex_unlock(&all->lock);
    }
}

/* The first line of path that is not blank or a comment, as the header
 * line "Authorization: Bearer TOKEN".  0, or -1. */
static int read_token(const char *path, char *header, size_t cap)
{
    FILE *f = fopen(path, "r");
    char line[512];
    int rc = -1;

    header[0] = '\0';
    while (f && rc != 0 && fgets(line, sizeof(line), f)) {
        char *t = line, *end;
        while (*t == ' ' || *t == '\t')
            t++;
        end = t + strcspn(t, "\r\n");
        *end = '\0';
        if (*t == '\0' || *t == '#')
            continue;
        snprintf(header, cap, "Authorization: Bearer %.480s", t);
        rc = 0;
    }
    if (f)
        fclose(f);
    memset(line, 0, sizeof(line));
    return rc;
}

struct peers *peers_start(const struct peers_config *cfg)
{
    struct peers *p;
    pthread_condattr_t attr;

    if (cfg->count == 0)
        return NULL;
    p = calloc(1, sizeof(*p));
    if (p == NULL || (p->list = calloc((size_t)cfg->count, sizeof(*p->list))) == NULL) {
        free(p);
        log_error("out of memory starting the peer pullers");
        return NULL;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    p->store = cfg->store;
    p->interval_s = cfg->interval_s;
    p->test_benchmarks = cfg->test_benchmarks;
    p->tls = cfg->tls;
    if (cfg->token_file && read_token(cfg->token_file, p->authorization,
                                      sizeof(p->authorization)) != 0)
        log_error("--peer-token-file %s: no token could be read; pulling without one",
                  cfg->token_file);
    pthread_mutex_init(&p->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cond, &attr);
    pthread_condattr_destroy(&attr);
    p->count = cfg->count;
    for (int i = 0; i < p->count; i++) {
        struct peer *peer = &p->list[i];
        size_t n;

        peer->all = p;
        peer->page_limit = PEER_PAGE;
        snprintf(peer->url, sizeof(peer->url), "%s", cfg->urls[i]);
        n = strlen(peer->url);
        while (n > 0 && peer->url[n - 1] == '/')
            peer->url[--n] = '\0';
        store_peer_load(p->store, peer->url, &peer->row);
        /* Said before the thread starts: from then on it owns peer->row
         * (under all->lock). */
        log_info("peer %s: pulling finished runs after seq %lld", peer->url,
                 peer->row.cursor);
        if (pthread_create(&peer->thread, NULL, peer_main, peer) == 0)
            peer->started = 1;
    }
    return p;
}

void peers_stop(struct peers *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->lock);
    p->stopping = 1;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->count; i++)
        if (p->list[i].started)
            pthread_join(p->list[i].thread, NULL);
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
    free(p->list);
    free(p);
    curl_global_cleanup();
}

static void add_text_or_null(cJSON *obj, const char *name, const char *v)
{
    if (v && v[0])
        cJSON_AddStringToObject(obj, name, v);
    else
        cJSON_AddNullToObject(obj, name);
}

/* "skipped": {"count", "last_reason"}: the runs passed over, and why. */
static void add_skipped(cJSON *obj, const struct peer_row *row)
{
    cJSON *s = cJSON_AddObjectToObject(obj, "skipped");

    if (s == NULL)
        return;
    cJSON_AddNumberToObject(s, "count", (double)row->skipped);
    add_text_or_null(s, "last_reason", row->skipped_reason);
}

cJSON *peers_describe(struct peers *p)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *list = cJSON_AddArrayToObject(root, "peers");

    for (int i = 0; p && i < p->count; i++) {
        struct peer *peer = &p->list[i];
        cJSON *o = cJSON_CreateObject();

        pthread_mutex_lock(&p->lock);
        cJSON_AddStringToObject(o, "url", peer->url);
        cJSON_AddNumberToObject(o, "cursor", (double)peer->row.cursor);
        cJSON_AddNumberToObject(o, "runs_pulled", (double)peer->row.runs_pulled);
        add_skipped(o, &peer->row);
        add_text_or_null(o, "last_success_at", peer->row.last_success_at);
        add_text_or_null(o, "last_error", peer->row.last_error);
        add_text_or_null(o, "last_error_at", peer->row.last_error_at);
        cJSON_AddNumberToObject(o, "failures_in_row", peer->failures_in_row);
        pthread_mutex_unlock(&p->lock);
        cJSON_AddItemToArray(list, o);
    }
    return root;
}

void peers_metrics(struct peers *p, struct dynbuf *b)
{
    if (p == NULL)
        return;
    dynbuf_printf(b, "# HELP gpubench_peer_runs_pulled_total Runs stored from a peer.\n"
                     "# TYPE gpubench_peer_runs_pulled_total counter\n");
    for (int i = 0; i < p->count; i++) {
        pthread_mutex_lock(&p->lock);
        dynbuf_printf(b, "gpubench_peer_runs_pulled_total{peer=\"%s\"} %lld\n",
                      p->list[i].url, p->list[i].row.runs_pulled);
        pthread_mutex_unlock(&p->lock);
    }
    dynbuf_printf(b, "# HELP gpubench_peer_failures_in_row Failed pulls since the last good one.\n"
                     "# TYPE gpubench_peer_failures_in_row gauge\n");
    for (int i = 0; i < p->count; i++) {
        pthread_mutex_lock(&p->lock);
        dynbuf_printf(b, "gpubench_peer_failures_in_row{peer=\"%s\"} %d\n",
                      p->list[i].url, p->list[i].failures_in_row);
        pthread_mutex_unlock(&p->lock);
    }
}
