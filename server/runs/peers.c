/*
 * peers.c - see peers.h.  One thread, one libcurl multi handle, a sorted
 * list of peers.
 *
 * Locking: only the puller thread changes the list and the peers in it;
 * it does so under peers->lock, which GET /peers and /metrics take to read
 * (briefly: no SQL and no I/O is done under it).  What only the puller
 * reads (a peer's due time, its transfer, the file's signature) is not
 * locked.  SIGHUP and peers_stop reach the thread through atomics and
 * curl_multi_wakeup.
 */
#include "peers.h"
#include "card_faults.h"
#include "file_stamp.h"
#include "curl_tls.h"
#include "import_check.h"
#include "log.h"
#include "peers_file.h"
#include "run_request.h"
#include "store_peer_faults.h"
#include "store_peers.h"
#include "store_runs.h"
#include "timeutil.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PEER_MAX_BACKOFF_MS (300 * 1000)
#define PEERS_FILE_CHECK_MS 1000
#define PULL_FAILED (-1)
#define PULL_SMALLER (-2) /* over the cap: asking again for a smaller page */
/* The longest line kept: the largest run, printed back (see PEER_BODY_CAP). */
#define PEER_LINE_CAP (4 * (size_t)IMPORT_LINE_MAX)
/* Group labels a peer's /metrics series carry, at most. */
#define PEER_METRIC_LABELS 16

enum peer_state {
    PEER_NEW,
    PEER_OK,
    PEER_FAILING,
    PEER_PULLING,
    PEER_STATES,
};

static const char *const state_names[PEER_STATES] = {"new", "ok", "failing", "pulling"};

struct transfer;

struct peer {
    char url[PEER_URL_CAP];
    int from_flag;         /* given with --peer: stays whatever the file says */
    int page_limit;        /* runs asked for a page */
    int64_t due_ms;        /* monotonic: the next pull may start then */
    int64_t faults_due_ms; /* monotonic: the next GET /card_faults may start then */
    struct transfer *xfer; /* the pull or GET /card_faults in flight, or NULL */
    int kept;              /* a reload's mark */
    /* written by the puller under peers->lock */
    cJSON *labels;       /* the file's group labels; {} for --peer alone */
    struct peer_row row; /* as stored */
    int failures_in_row;
    int64_t next_pull_unix_ms; /* 0 while pulling */
    char newest_id[64];        /* the newest run pulled since the start, or "" */
    char newest_finished_at[40];
    /* its GET /card_faults (GET /peers' card_faults) */
    int faults_missing;     /* answered 404 (logged once) */
    char faults_at[40];     /* the last good answer stored, or "" */
    char faults_error[300]; /* why the last one was not stored, or "" */
};

/* One pull in flight: the page is checked line by line as it comes and
 * stored batch by batch.  Or, with faults set, one GET /card_faults: its
 * body is kept whole in line (up to PEER_FAULTS_CAP) and read at its end. */
struct transfer {
    struct peers *all;
    struct peer *peer;
    int faults;
    CURL *easy;
    struct curl_slist *headers;
    char curl_err[CURL_ERROR_SIZE];
    struct dynbuf line; /* the line being received */
    size_t body_bytes;
    int status_checked;
    cJSON *batch; /* checked runs not yet stored */
    int batch_runs;
    size_t batch_bytes;
    int64_t batch_started_ms;
    long long cursor;  /* past the last line checked */
    long long skipped; /* runs skipped since the last record */
    char skip_reason[256];
    char newest_id[64]; /* the batch's last run */
    char newest_finished_at[40];
    int moved; /* runs and skips the page brought */
    int lines;
    int over_cap;
    int stopped; /* a bad line, an HTTP status or a store failure: err says */
    char err[300];
};

struct peers {
    struct store *store;
    int interval_s;
    int concurrency;
    int test_benchmarks;
    struct curl_tls tls;     /* --peer-ca-file, --peer-cert-file, --peer-key-file */
    char authorization[600]; /* "Authorization: Bearer ..." or "" */
    const char *const *flag_urls;
    int flag_count;
    const char *file_path; /* or NULL */
    CURLM *multi;
    pthread_t thread;
    atomic_int stopping;
    atomic_int reload; /* SIGHUP: read the file now */
    /* the puller's own */
    int active;
    struct file_stamp file_seen;
    int64_t file_checked_ms;
    pthread_mutex_t lock;
    /* guarded by lock; written by the puller only */
    struct peer **list; /* sorted by url */
    int count;
    int alloc;
    char file_loaded_at[32]; /* the last good read, or "" */
    int file_targets;
    char file_error[300]; /* why the last read was refused, or "" */
};

/* The index of url in p's list, or -(where it would go) - 1. */
static int find_peer(const struct peers *p, const char *url)
{
    int lo = 0, hi = p->count;

    while (lo < hi) {
        int mid = (lo + hi) / 2, c = strcmp(p->list[mid]->url, url);

        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -lo - 1;
}

static enum peer_state peer_state(const struct peer *peer)
{
    if (peer->next_pull_unix_ms == 0)
        return PEER_PULLING;
    if (peer->failures_in_row > 0)
        return PEER_FAILING;
    if (peer->row.last_success_at[0])
        return PEER_OK;
    return peer->row.last_error_at[0] ? PEER_FAILING : PEER_NEW;
}

/* ---- one pull ---- */

/* Stores the runs checked so far and moves the cursor past them and past
 * the skipped ones; with always, records the pull even when it brought
 * nothing (a good empty page is a success).  0, or -1 with t->err set. */
static int flush(struct transfer *t, int always)
{
    struct peer *peer = t->peer;
    struct peers *all = t->all;
    int inserted = 0, existing = 0;
    char now[32];

    if (!always && t->batch_runs == 0 && t->skipped == 0)
        return 0;
    if (t->batch_runs > 0 &&
        store_import_runs(all->store, t->batch, peer->url, &inserted, &existing) != STORE_OK) {
        snprintf(t->err, sizeof(t->err), "the runs could not be stored here");
        t->stopped = 1;
        return -1;
    }
    if (store_peer_record(all->store, peer->url, t->cursor, inserted, t->skipped,
                          t->skipped ? t->skip_reason : NULL, NULL) != STORE_OK) {
        /* The runs are stored; the next pull asks for them again and
         * finds them here. */
        snprintf(t->err, sizeof(t->err), "the cursor could not be stored here");
        t->stopped = 1;
        return -1;
    }
    if (t->skipped)
        log_warn("peer %s: skipped %lld run(s) of a benchmark not known here or damaged on "
                 "the peer; the last: %s",
                 peer->url, t->skipped, t->skip_reason);
    if (inserted)
        log_info("peer %s: stored %d run(s) (%d already here)", peer->url, inserted, existing);
    time_now_rfc3339(now, sizeof(now));
    pthread_mutex_lock(&all->lock);
    peer->row.cursor = t->cursor;
    peer->row.runs_pulled += inserted;
    peer->row.skipped += t->skipped;
    if (t->skipped)
        snprintf(peer->row.skipped_reason, sizeof(peer->row.skipped_reason), "%s",
                 t->skip_reason);
    snprintf(peer->row.last_success_at, sizeof(peer->row.last_success_at), "%s", now);
    if (t->newest_id[0]) {
        memcpy(peer->newest_id, t->newest_id, sizeof(peer->newest_id));
        memcpy(peer->newest_finished_at, t->newest_finished_at,
               sizeof(peer->newest_finished_at));
    }
    pthread_mutex_unlock(&all->lock);
    cJSON_Delete(t->batch);
    t->batch = cJSON_CreateArray();
    t->batch_runs = 0;
    t->batch_bytes = 0;
    t->skipped = 0;
    t->newest_id[0] = '\0';
    if (t->batch == NULL) {
        snprintf(t->err, sizeof(t->err), "out of memory");
        t->stopped = 1;
        return -1;
    }
    return 0;
}

/* Checks the complete line in t->line: a good run goes into the batch, a
 * run of a benchmark unknown here or one the peer marked damaged is
 * skipped, anything else stops the page.  0, or -1 with t->err set. */
static int take_line(struct transfer *t)
{
    size_t at, len = t->line.len;
    cJSON *run;
    const cJSON *seq;
    struct gb_error why;
    int trailing;

    t->lines++;
    if (len == 0)
        return 0;
    run = json_parse_whole(t->line.data, len, &at, &trailing);
    dynbuf_reset(&t->line);
    if (run == NULL) {
        snprintf(t->err, sizeof(t->err), "line %d of the answer is not one JSON value",
                 t->lines);
        goto bad;
    }
    seq = cJSON_GetObjectItem(run, "seq");
    if (!cJSON_IsNumber(seq) || seq->valuedouble <= (double)t->cursor) {
        snprintf(t->err, sizeof(t->err), "line %d has no seq after %lld", t->lines, t->cursor);
        goto bad;
    }
    if (import_check_run(run, t->all->test_benchmarks, &why) != 0) {
        /* A run unknown here, or damaged where it was stored, is skipped
         * and counted (the cursor moves past it: a pull never sticks on it);
         * anything else stops the page. */
        if (strcmp(why.code, "unknown_benchmark") != 0 && strcmp(why.code, "damaged_run") != 0) {
            snprintf(t->err, sizeof(t->err), "line %d: %s", t->lines, why.message);
            goto bad;
        }
        snprintf(t->skip_reason, sizeof(t->skip_reason), "run %.36s: %.200s",
                 cJSON_GetStringValue(cJSON_GetObjectItem(run, "id")), why.message);
        t->skipped++;
        t->cursor = (long long)seq->valuedouble;
        t->moved++;
        cJSON_Delete(run);
        return 0;
    }
    t->cursor = (long long)seq->valuedouble;
    t->moved++;
    snprintf(t->newest_id, sizeof(t->newest_id), "%s",
             cJSON_GetStringValue(cJSON_GetObjectItem(run, "id")));
    snprintf(t->newest_finished_at, sizeof(t->newest_finished_at), "%s",
             cJSON_GetStringValue(cJSON_GetObjectItem(run, "finished_at"))
                 ? cJSON_GetStringValue(cJSON_GetObjectItem(run, "finished_at"))
                 : "");
    if (t->batch_runs == 0)
        t->batch_started_ms = time_mono_ms();
    cJSON_AddItemToArray(t->batch, run);
    t->batch_runs++;
    t->batch_bytes += len;
    if (t->batch_runs >= PEER_BATCH_RUNS || t->batch_bytes >= PEER_BATCH_BYTES ||
        time_mono_ms() - t->batch_started_ms >= PEER_BATCH_MS)
        return flush(t, 0);
    return 0;

bad:
    cJSON_Delete(run);
    t->stopped = 1;
    return -1;
}

static size_t on_body(char *data, size_t size, size_t n, void *cls)
{
    struct transfer *t = cls;
    size_t len = size * n;

    if (!t->status_checked) {
        long status = 0;

        t->status_checked = 1;
        curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
        if (status != 200) {
            snprintf(t->err, sizeof(t->err), "HTTP %ld", status);
            t->stopped = 1;
            return 0; /* makes curl stop with CURLE_WRITE_ERROR */
        }
    }
    t->body_bytes += len;
    if (t->body_bytes > PEER_BODY_CAP) {
        t->over_cap = 1;
        return 0;
    }
    while (len > 0) {
        const char *nl = memchr(data, '\n', len);
        size_t part = nl ? (size_t)(nl - data) : len;

        if (dynbuf_add(&t->line, data, part) != 0) {
            t->over_cap = 1;
            return 0;
        }
        if (nl == NULL)
            break;
        if (take_line(t) != 0)
            return 0;
        data += part + 1;
        len -= part + 1;
    }
    return size * n;
}

static void transfer_free(struct transfer *t)
{
    if (t == NULL)
        return;
    if (t->easy)
        curl_easy_cleanup(t->easy);
    curl_slist_free_all(t->headers);
    dynbuf_free(&t->line);
    cJSON_Delete(t->batch);
    free(t);
}

/* Sets when peer pulls next from how the pull went (got: runs moved,
 * PULL_SMALLER or PULL_FAILED; err: the failure, or "") and records it. */
static void pull_ended(struct peers *all, struct peer *peer, int got, const char *err)
{
    int64_t wait = (int64_t)all->interval_s * 1000;
    char now[32];

    if (err[0]) {
        if (store_peer_record(all->store, peer->url, peer->row.cursor, 0, 0, NULL, err) !=
            STORE_OK)
            log_warn("peer %s: the error below could not be stored", peer->url);
        log_warn("peer %s: %s", peer->url, err);
    }
    time_now_rfc3339(now, sizeof(now));
    pthread_mutex_lock(&all->lock);
    if (got != PULL_SMALLER)
        peer->failures_in_row = got == PULL_FAILED ? peer->failures_in_row + 1 : 0;
    if (got > 0 || got == PULL_SMALLER) {
        wait = 0; /* there may be more right now */
    } else if (got == PULL_FAILED) {
        for (int i = 1; i < peer->failures_in_row && wait < PEER_MAX_BACKOFF_MS; i++)
            wait *= 2;
        if (wait > PEER_MAX_BACKOFF_MS)
            wait = PEER_MAX_BACKOFF_MS;
    }
    if (err[0]) {
        snprintf(peer->row.last_error, sizeof(peer->row.last_error), "%s", err);
        snprintf(peer->row.last_error_at, sizeof(peer->row.last_error_at), "%s", now);
    }
    peer->next_pull_unix_ms = time_now_unix_ms() + wait;
    pthread_mutex_unlock(&all->lock);
    peer->due_ms = time_mono_ms() + wait;
    if (got == 0)
        peer->page_limit = PEER_PAGE; /* caught up: full pages again */
}

/* A transfer curl has ended with rc: the rest of the page is stored, the
 * outcome recorded.  1 when the peer answered a good page, else 0. */
static int transfer_done(struct transfer *t, CURLcode rc)
{
    struct peer *peer = t->peer;
    int got = PULL_FAILED;

    if (rc == CURLE_FILESIZE_EXCEEDED)
        t->over_cap = 1;
    if (!t->stopped && rc == CURLE_OK) {
        long status = 0;

        curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
        if (status != 200) {
            snprintf(t->err, sizeof(t->err), "HTTP %ld", status);
            t->stopped = 1;
        } else if (t->line.len > 0) {
            take_line(t); /* the last line, without its newline */
        }
    }
    /* Runs before a bad line or a cut are kept: they were checked one by
     * one.  A clean page is recorded even when it brought nothing. */
    flush(t, !t->stopped && rc == CURLE_OK);
    if (t->err[0] == '\0' && rc != CURLE_OK) {
        if (t->over_cap)
            snprintf(t->err, sizeof(t->err), "the answer was over the %zu MiB cap",
                     (size_t)PEER_BODY_CAP / (1024 * 1024));
        else
            curl_failure_reason(rc, t->curl_err, t->err, sizeof(t->err));
    }
    if (t->over_cap && peer->page_limit > 1) {
        peer->page_limit /= 2;
        log_info("peer %s: %s; asking for %d run(s) a page", peer->url, t->err,
                 peer->page_limit);
        t->err[0] = '\0';
        got = PULL_SMALLER;
    } else if (t->over_cap) {
        snprintf(t->err + strlen(t->err), sizeof(t->err) - strlen(t->err), " even for one run");
    } else if (t->err[0] == '\0') {
        got = t->moved; /* skipped runs are progress too: ask again at once */
    }
    pull_ended(t->all, peer, got, t->err);
    return got >= 0;
}

/* ---- what the peer's watch found ---- */

static size_t on_faults_body(char *data, size_t size, size_t n, void *cls)
{
    struct transfer *t = cls;
    long status = 0;

    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200)
        return 0; /* faults_done judges the status */
    if (dynbuf_add(&t->line, data, size * n) != 0) {
        t->over_cap = 1;
        return 0;
    }
    return size * n;
}

/* The end of peer's GET /card_faults: a good answer replaces what is
 * stored of the peer's cards; a 404 (a gpubench from before the route) is
 * logged once and changes nothing; any other failure is logged and the
 * last good answer kept, so that a card does not turn healthy here only
 * because its node could not say. */
static void faults_done(struct transfer *t, CURLcode rc)
{
    struct peer *peer = t->peer;
    cJSON *rows = NULL;
    long status = 0;
    char err[300] = "";

    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    if (status == 404) {
        if (!peer->faults_missing)
            log_info("peer %s: it has no GET /card_faults (a gpubench before it): the events "
                     "its watch finds are not seen here",
                     peer->url);
        pthread_mutex_lock(&t->all->lock);
        peer->faults_missing = 1;
        peer->faults_error[0] = '\0';
        pthread_mutex_unlock(&t->all->lock);
        return;
    }
    if (t->over_cap || rc == CURLE_FILESIZE_EXCEEDED)
        snprintf(err, sizeof(err), "the answer was over the %zu MiB cap",
                 (size_t)PEER_FAULTS_CAP / (1024 * 1024));
    else if (status != 200 && status != 0)
        snprintf(err, sizeof(err), "HTTP %ld", status);
    else if (rc != CURLE_OK)
        curl_failure_reason(rc, t->curl_err, err, sizeof(err));
    else if (card_faults_parse(t->line.data ? t->line.data : "", t->line.len, &rows, err,
                               sizeof(err)) == 0 &&
             store_peer_faults_replace(t->all->store, peer->url, rows) != STORE_OK)
        snprintf(err, sizeof(err), "the faults could not be stored here");
    if (err[0])
        log_warn("peer %s: GET /card_faults: %s; its cards' last known faults are kept",
                 peer->url, err);
    pthread_mutex_lock(&t->all->lock);
    peer->faults_missing = 0;
    snprintf(peer->faults_error, sizeof(peer->faults_error), "%s", err);
    if (!err[0])
        time_now_rfc3339(peer->faults_at, sizeof(peer->faults_at));
    pthread_mutex_unlock(&t->all->lock);
    cJSON_Delete(rows);
}

/* Makes t->easy a GET of url with what every request to a peer gets (TLS,
 * the token, the time and speed limits, at most cap bytes of body, which
 * on_data is given) and starts it on the multi handle as peer's transfer.
 * 0, or -1 with err set (t stays the caller's to free). */
static int transfer_open(struct peers *all, struct peer *peer, struct transfer *t,
                         const char *url, curl_write_callback on_data, size_t cap, char *err,
                         size_t err_cap)
{
    CURLcode rc;

    if ((rc = curl_tls_setup(t->easy, &all->tls, t->curl_err)) != CURLE_OK) {
        snprintf(err, err_cap, "TLS could not be set up: %s", curl_easy_strerror(rc));
        return -1;
    }
    if (all->authorization[0]) {
        if ((t->headers = curl_slist_append(NULL, all->authorization)) == NULL) {
            snprintf(err, err_cap, "out of memory starting a transfer");
            return -1;
        }
        curl_easy_setopt(t->easy, CURLOPT_HTTPHEADER, t->headers);
    }
    curl_easy_setopt(t->easy, CURLOPT_URL, url);
    curl_easy_setopt(t->easy, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(t->easy, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(t->easy, CURLOPT_PRIVATE, t);
    curl_easy_setopt(t->easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(t->easy, CURLOPT_CONNECTTIMEOUT, 5L);
    curl_easy_setopt(t->easy, CURLOPT_TIMEOUT, (long)PEER_TRANSFER_S);
    curl_easy_setopt(t->easy, CURLOPT_LOW_SPEED_LIMIT, (long)PEER_LOW_SPEED);
    curl_easy_setopt(t->easy, CURLOPT_LOW_SPEED_TIME, (long)PEER_LOW_SPEED_S);
    curl_easy_setopt(t->easy, CURLOPT_PROTOCOLS_STR, "http,https");
    /* An answer that says at once it is over the cap is refused unread. */
    curl_easy_setopt(t->easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)cap);
    curl_easy_setopt(t->easy, CURLOPT_USERAGENT, "gpubenchd-peer");
    if (curl_multi_add_handle(all->multi, t->easy) != CURLM_OK) {
        snprintf(err, err_cap, "the transfer could not be started");
        return -1;
    }
    peer->xfer = t;
    all->active++;
    return 0;
}

/* Starts a pull of peer on the multi handle.  On failure the pull is
 * recorded as failed. */
static void transfer_start(struct peers *all, struct peer *peer)
{
    struct transfer *t = calloc(1, sizeof(*t));
    char url[PEER_URL_CAP + 80], err[300];

    if (t == NULL || (t->batch = cJSON_CreateArray()) == NULL ||
        (t->easy = curl_easy_init()) == NULL) {
        snprintf(err, sizeof(err), "out of memory starting a pull");
        goto failed;
    }
    t->all = all;
    t->peer = peer;
    t->cursor = peer->row.cursor;
    dynbuf_init(&t->line, PEER_LINE_CAP);
    snprintf(url, sizeof(url), "%s/runs.ndjson?after_seq=%lld&limit=%d", peer->url, t->cursor,
             peer->page_limit);
    if (transfer_open(all, peer, t, url, on_body, PEER_BODY_CAP, err, sizeof(err)) != 0)
        goto failed;
    pthread_mutex_lock(&all->lock);
    peer->next_pull_unix_ms = 0; /* pulling */
    pthread_mutex_unlock(&all->lock);
    return;

failed:
    transfer_free(t);
    pull_ended(all, peer, PULL_FAILED, err);
}

/* Starts peer's GET /card_faults, and makes the next one due an interval
 * from now.  One that cannot start is logged; the faults stored stay. */
static void faults_start(struct peers *all, struct peer *peer)
{
    struct transfer *t = calloc(1, sizeof(*t));
    char url[PEER_URL_CAP + 20], err[300];

    peer->faults_due_ms = time_mono_ms() + (int64_t)all->interval_s * 1000;
    if (t == NULL || (t->easy = curl_easy_init()) == NULL) {
        snprintf(err, sizeof(err), "out of memory");
        goto failed;
    }
    t->all = all;
    t->peer = peer;
    t->faults = 1;
    dynbuf_init(&t->line, PEER_FAULTS_CAP);
    snprintf(url, sizeof(url), "%s/card_faults", peer->url);
    if (transfer_open(all, peer, t, url, on_faults_body, PEER_FAULTS_CAP, err, sizeof(err)) == 0)
        return;

failed:
    log_warn("peer %s: GET /card_faults could not start: %s; its cards' last known faults "
             "are kept",
             peer->url, err);
    transfer_free(t);
}

/* Ends peer's transfer unrecorded (the peer is going away). */
static void transfer_drop(struct peers *all, struct peer *peer)
{
    if (peer->xfer == NULL)
        return;
    curl_multi_remove_handle(all->multi, peer->xfer->easy);
    transfer_free(peer->xfer);
    peer->xfer = NULL;
    all->active--;
}

/* Starts pulls while slots are free, the peer due longest ago first. */
static void start_due(struct peers *all)
{
    int64_t now = time_mono_ms();

    while (all->active < all->concurrency) {
        struct peer *next = NULL;

        for (int i = 0; i < all->count; i++) {
            struct peer *peer = all->list[i];

            if (peer->xfer == NULL && peer->due_ms <= now &&
                (next == NULL || peer->due_ms < next->due_ms))
                next = peer;
        }
        if (next == NULL)
            return;
        transfer_start(all, next);
    }
}

/* Ends the transfers curl has finished. */
static void reap(struct peers *all)
{
    CURLMsg *msg;
    int left;

    while ((msg = curl_multi_info_read(all->multi, &left)) != NULL) {
        struct transfer *t = NULL;
        struct peer *peer;
        int pulled = 0;

        if (msg->msg != CURLMSG_DONE)
            continue;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&t);
        curl_multi_remove_handle(all->multi, t->easy);
        peer = t->peer;
        if (t->faults)
            faults_done(t, msg->data.result);
        else
            pulled = transfer_done(t, msg->data.result);
        peer->xfer = NULL;
        all->active--;
        transfer_free(t);
        /* after a good pull, once an interval, in the slot it freed: what
         * the peer's watch found */
        if (pulled && time_mono_ms() >= peer->faults_due_ms)
            faults_start(all, peer);
    }
}

/* Stores the batches of slow pages that have waited PEER_BATCH_MS, so a
 * trickling page's runs are not held back. */
static void flush_stale(struct peers *all)
{
    int64_t now = time_mono_ms();

    for (int i = 0; i < all->count; i++) {
        struct transfer *t = all->list[i]->xfer;

        if (t && !t->stopped && t->batch_runs > 0 && now - t->batch_started_ms >= PEER_BATCH_MS)
            flush(t, 0);
    }
}

/* How long the loop may sleep: until the next peer is due, a second at
 * most (the file check, stale batches). */
static long sleep_ms(const struct peers *all)
{
    int64_t now = time_mono_ms(), wait = PEERS_FILE_CHECK_MS;

    if (all->active >= all->concurrency)
        return (long)wait;
    for (int i = 0; i < all->count; i++) {
        const struct peer *peer = all->list[i];

        if (peer->xfer == NULL && peer->due_ms - now < wait)
            wait = peer->due_ms - now;
    }
    return wait < 0 ? 0 : (long)wait;
}

/* ---- the list ---- */

/* A new peer for url (its stored state loaded), put in the list.  NULL
 * when memory ran out. */
static struct peer *peer_add(struct peers *all, const char *url, int at)
{
    struct peer *peer = calloc(1, sizeof(*peer));

    if (peer == NULL || (peer->labels = cJSON_CreateObject()) == NULL)
        goto failed;
    snprintf(peer->url, sizeof(peer->url), "%s", url);
    peer->page_limit = PEER_PAGE;
    peer->due_ms = time_mono_ms();
    peer->next_pull_unix_ms = time_now_unix_ms();
    if (store_peer_load(all->store, peer->url, &peer->row) != STORE_OK)
        log_warn("peer %s: its pull state could not be read; starting from the first run",
                 peer->url);
    if (all->count == all->alloc) {
        int alloc = all->alloc ? all->alloc * 2 : 64;
        struct peer **list = realloc(all->list, (size_t)alloc * sizeof(*list));

        if (list == NULL)
            goto failed;
        pthread_mutex_lock(&all->lock);
        all->list = list;
        all->alloc = alloc;
        pthread_mutex_unlock(&all->lock);
    }
    pthread_mutex_lock(&all->lock);
    memmove(&all->list[at + 1], &all->list[at], (size_t)(all->count - at) * sizeof(*all->list));
    all->list[at] = peer;
    all->count++;
    pthread_mutex_unlock(&all->lock);
    log_info("peer %s: pulling finished runs after seq %lld", peer->url, peer->row.cursor);
    return peer;

failed:
    if (peer)
        cJSON_Delete(peer->labels);
    free(peer);
    log_error("peer %s: out of memory adding it", url);
    return NULL;
}

static void peer_free(struct peer *peer)
{
    cJSON_Delete(peer->labels);
    free(peer);
}

/* The peer for url, added when new; marked kept. */
static struct peer *peer_keep(struct peers *all, const char *url)
{
    int at = find_peer(all, url);
    struct peer *peer = at >= 0 ? all->list[at] : peer_add(all, url, -at - 1);

    if (peer)
        peer->kept = 1;
    return peer;
}

/* Drops the stored card faults of every peer not in the list (one just
 * removed, or one of an earlier start's list).  Nothing is dropped when
 * the list cannot be written out. */
static void drop_gone_faults(struct peers *all)
{
    cJSON *urls = cJSON_CreateArray();
    char *text = NULL;
    int ok = urls != NULL, dropped = 0;

    for (int i = 0; ok && i < all->count; i++)
        ok = cJSON_AddItemToArray(urls, cJSON_CreateString(all->list[i]->url));
    if (!ok || (text = cJSON_PrintUnformatted(urls)) == NULL)
        log_error("out of memory dropping the card faults of peers no longer pulled");
    else if (store_peer_faults_keep(all->store, text, &dropped) != STORE_OK)
        log_warn("the card faults of peers no longer pulled could not be dropped");
    else if (dropped)
        log_info("dropped %d card fault(s) of peers no longer pulled", dropped);
    free(text);
    cJSON_Delete(urls);
}

/* Makes the list --peer's URLs and targets' (NULL: the file's part as it
 * was), dropping the peers in neither. */
static void apply_targets(struct peers *all, const struct peer_targets *targets)
{
    struct peer **gone;
    int kept = 0, n_gone = 0;

    for (int i = 0; i < all->count; i++)
        all->list[i]->kept = targets == NULL && !all->list[i]->from_flag;
    for (int i = 0; i < all->flag_count; i++) {
        char url[PEER_URL_CAP], why[200];
        struct peer *peer;

        if (peer_url_normalize(all->flag_urls[i], url, sizeof(url), why, sizeof(why)) != 0) {
            log_error("--peer %s", why);
            continue;
        }
        if ((peer = peer_keep(all, url)) != NULL)
            peer->from_flag = 1;
    }
    for (int i = 0; targets && i < targets->count; i++) {
        struct peer *peer = peer_keep(all, targets->list[i].url);
        cJSON *labels = peer ? cJSON_Duplicate(targets->list[i].labels, 1) : NULL;

        if (labels == NULL)
            continue;
        pthread_mutex_lock(&all->lock);
        cJSON_Delete(peer->labels);
        peer->labels = labels;
        pthread_mutex_unlock(&all->lock);
    }
    /* The removed ones leave the list under the lock, in one step, and
     * are ended after it: only this thread can still reach them. */
    if ((gone = calloc((size_t)all->count + 1, sizeof(*gone))) == NULL) {
        log_error("out of memory applying the peers");
        return;
    }
    pthread_mutex_lock(&all->lock);
    for (int i = 0; i < all->count; i++) {
        if (all->list[i]->kept)
            all->list[kept++] = all->list[i];
        else
            gone[n_gone++] = all->list[i];
    }
    all->count = kept;
    pthread_mutex_unlock(&all->lock);
    for (int i = 0; i < n_gone; i++) {
        log_info("peer %s: no longer in %s; its runs stay, its cards' faults go", gone[i]->url,
                 all->file_path ? all->file_path : "the peers");
        transfer_drop(all, gone[i]);
        peer_free(gone[i]);
    }
    free(gone);
    /* A peer gone can no longer end its faults here; with a file, the list
     * is whole only once the file has been read. */
    if (targets || all->file_path == NULL)
        drop_gone_faults(all);
}

/* ---- the peers file ---- */

/* Reads the peers file when it changed since the last look (or when
 * forced) and applies it; a file that cannot be used leaves the list as
 * it is, with the reason kept for GET /peers. */
static void check_file(struct peers *all, int forced)
{
    struct peer_targets targets;
    struct file_stamp sig;
    char err[300], now[32];

    all->file_checked_ms = time_mono_ms();
    file_stamp_read(all->file_path, &sig);
    if (!forced && file_stamp_same(&sig, &all->file_seen))
        return;
    all->file_seen = sig;
    if (peers_file_read(all->file_path, &targets, err, sizeof(err)) != 0) {
        log_error("--peers-file %s: %s; keeping the last good list of peers", all->file_path,
                  err);
        pthread_mutex_lock(&all->lock);
        snprintf(all->file_error, sizeof(all->file_error), "%s", err);
        pthread_mutex_unlock(&all->lock);
        return;
    }
    apply_targets(all, &targets);
    time_now_rfc3339(now, sizeof(now));
    pthread_mutex_lock(&all->lock);
    all->file_error[0] = '\0';
    all->file_targets = targets.count;
    snprintf(all->file_loaded_at, sizeof(all->file_loaded_at), "%s", now);
    pthread_mutex_unlock(&all->lock);
    log_info("--peers-file %s: %d target(s); %d peer(s) in all", all->file_path,
             targets.count, all->count);
    peer_targets_free(&targets);
}

/* ---- the thread ---- */

static void *puller_main(void *arg)
{
    struct peers *all = arg;

    while (!atomic_load(&all->stopping)) {
        int running;

        if (all->file_path) {
            int forced = atomic_exchange(&all->reload, 0);

            if (forced || time_mono_ms() - all->file_checked_ms >= PEERS_FILE_CHECK_MS)
                check_file(all, forced);
        }
        start_due(all);
        curl_multi_perform(all->multi, &running);
        reap(all);
        flush_stale(all);
        start_due(all); /* the slots reap freed */
        curl_multi_poll(all->multi, NULL, 0, (int)sleep_ms(all), NULL);
    }
    return NULL;
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

static void peers_free(struct peers *p)
{
    for (int i = 0; i < p->count; i++) {
        transfer_drop(p, p->list[i]);
        peer_free(p->list[i]);
    }
    free(p->list);
    if (p->multi)
        curl_multi_cleanup(p->multi);
    pthread_mutex_destroy(&p->lock);
    free(p);
    curl_global_cleanup();
}

struct peers *peers_start(const struct peers_config *cfg)
{
    struct peers *p;

    if (cfg->count == 0 && cfg->peers_file == NULL) {
        /* none now: what earlier peers reported cannot end here */
        if (cfg->store && store_peer_faults_keep(cfg->store, "[]", NULL) != STORE_OK)
            log_warn("the card faults of earlier peers could not be dropped");
        return NULL;
    }
    if ((p = calloc(1, sizeof(*p))) == NULL) {
        log_error("out of memory starting the peer puller");
        return NULL;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    pthread_mutex_init(&p->lock, NULL);
    p->store = cfg->store;
    p->interval_s = cfg->interval_s;
    p->concurrency = cfg->concurrency > 0 ? cfg->concurrency : 1;
    p->test_benchmarks = cfg->test_benchmarks;
    p->tls = cfg->tls;
    p->flag_urls = cfg->urls;
    p->flag_count = cfg->count;
    p->file_path = cfg->peers_file;
    if (cfg->token_file && read_token(cfg->token_file, p->authorization,
                                      sizeof(p->authorization)) != 0)
        log_error("--peer-token-file %s: no token could be read; pulling without one",
                  cfg->token_file);
    if ((p->multi = curl_multi_init()) == NULL) {
        log_error("the peer puller could not start: curl_multi_init failed");
        peers_free(p);
        return NULL;
    }
    /* Idle connections kept for the next pull: one a slot. */
    curl_multi_setopt(p->multi, CURLMOPT_MAXCONNECTS, (long)p->concurrency);
    apply_targets(p, NULL);
    if (p->file_path)
        check_file(p, 1);
    if (pthread_create(&p->thread, NULL, puller_main, p) != 0) {
        log_error("the peer puller could not start: no thread");
        peers_free(p);
        return NULL;
    }
    return p;
}

void peers_reload(struct peers *p)
{
    if (p == NULL || p->file_path == NULL)
        return;
    atomic_store(&p->reload, 1);
    curl_multi_wakeup(p->multi);
}

void peers_stop(struct peers *p)
{
    if (p == NULL)
        return;
    atomic_store(&p->stopping, 1);
    curl_multi_wakeup(p->multi);
    pthread_join(p->thread, NULL);
    peers_free(p);
}

/* ---- what GET /peers and /metrics show ---- */

int peers_state_known(const char *state)
{
    for (int i = 0; i < PEER_STATES; i++)
        if (strcmp(state, state_names[i]) == 0)
            return 1;
    return 0;
}

static void add_text_or_null(cJSON *obj, const char *name, const char *v)
{
    if (v && v[0])
        cJSON_AddStringToObject(obj, name, v);
    else
        cJSON_AddNullToObject(obj, name);
}

/* Whether peer (under the lock) passes f. */
static int peer_matches(const struct peer *peer, const struct peers_filter *f)
{
    if (f == NULL)
        return 1;
    if (f->state && strcmp(f->state, state_names[peer_state(peer)]) != 0)
        return 0;
    for (int i = 0; i < f->label_count; i++) {
        const char *colon = strchr(f->labels[i], ':');
        size_t n = colon ? (size_t)(colon - f->labels[i]) : strlen(f->labels[i]);
        const cJSON *l = NULL;
        int found = 0;

        cJSON_ArrayForEach(l, peer->labels) {
            if (strlen(l->string) == n && strncmp(l->string, f->labels[i], n) == 0 &&
                strcmp(l->valuestring, colon ? colon + 1 : "") == 0)
                found = 1;
        }
        if (!found)
            return 0;
    }
    return 1;
}

/* One peer's entry (under the lock).  NULL when memory ran out. */
static cJSON *describe_peer(const struct peer *peer)
{
    cJSON *o = cJSON_CreateObject(), *s, *newest, *f;
    enum peer_state state = peer_state(peer);
    char at[32];

    if (o == NULL)
        return NULL;
    cJSON_AddStringToObject(o, "url", peer->url);
    cJSON_AddStringToObject(o, "source", peer->from_flag ? "flag" : "file");
    cJSON_AddItemToObject(o, "labels", cJSON_Duplicate(peer->labels, 1));
    cJSON_AddStringToObject(o, "state", state_names[state]);
    cJSON_AddNumberToObject(o, "cursor", (double)peer->row.cursor);
    cJSON_AddNumberToObject(o, "runs_pulled", (double)peer->row.runs_pulled);
    if ((s = cJSON_AddObjectToObject(o, "skipped")) != NULL) {
        cJSON_AddNumberToObject(s, "count", (double)peer->row.skipped);
        add_text_or_null(s, "last_reason", peer->row.skipped_reason);
    }
    add_text_or_null(o, "last_success_at", peer->row.last_success_at);
    add_text_or_null(o, "last_error", peer->row.last_error);
    add_text_or_null(o, "last_error_at", peer->row.last_error_at);
    cJSON_AddNumberToObject(o, "failures_in_row", peer->failures_in_row);
    at[0] = '\0';
    if (state != PEER_PULLING)
        time_format_rfc3339(peer->next_pull_unix_ms, at, sizeof(at));
    add_text_or_null(o, "next_pull_at", at);
    if (peer->newest_id[0] && (newest = cJSON_AddObjectToObject(o, "newest_run")) != NULL) {
        cJSON_AddStringToObject(newest, "id", peer->newest_id);
        add_text_or_null(newest, "finished_at", peer->newest_finished_at);
    } else if (!peer->newest_id[0]) {
        cJSON_AddNullToObject(o, "newest_run");
    }
    if ((f = cJSON_AddObjectToObject(o, "card_faults")) != NULL) {
        cJSON_AddBoolToObject(f, "route", !peer->faults_missing);
        add_text_or_null(f, "fetched_at", peer->faults_at);
        add_text_or_null(f, "error", peer->faults_error);
    }
    return o;
}

static void add_peers_file(cJSON *root, const struct peers *p)
{
    cJSON *f;

    if (p == NULL || p->file_path == NULL) {
        cJSON_AddNullToObject(root, "peers_file");
        return;
    }
    if ((f = cJSON_AddObjectToObject(root, "peers_file")) == NULL)
        return;
    cJSON_AddStringToObject(f, "path", p->file_path);
    add_text_or_null(f, "loaded_at", p->file_loaded_at);
    cJSON_AddNumberToObject(f, "targets", p->file_targets);
    add_text_or_null(f, "error", p->file_error);
}

cJSON *peers_describe(struct peers *p, const struct peers_filter *f)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *list = cJSON_AddArrayToObject(root, "peers");
    cJSON *counts = cJSON_AddObjectToObject(root, "counts");
    int by_state[PEER_STATES] = {0}, total = 0;

    if (p)
        pthread_mutex_lock(&p->lock);
    for (int i = 0; p && i < p->count; i++) {
        const struct peer *peer = p->list[i];

        by_state[peer_state(peer)]++;
        total++;
        if (peer_matches(peer, f))
            cJSON_AddItemToArray(list, describe_peer(peer));
    }
    add_peers_file(root, p);
    if (p)
        pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < PEER_STATES; i++)
        cJSON_AddNumberToObject(counts, state_names[i], by_state[i]);
    cJSON_AddNumberToObject(root, "total", total);
    return root;
}

/* name as a Prometheus label name into out ([a-zA-Z_][a-zA-Z0-9_]*).  0,
 * or -1 when it must not be a label: reserved ("__" names, which file_sd
 * itself drops), or "peer" and "url", which name the series' peer. */
static int label_name(const char *name, char *out, size_t cap)
{
    size_t n = 0;

    for (; name[n] && n + 1 < cap; n++) {
        char c = name[n];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                 (n > 0 && c >= '0' && c <= '9');

        out[n] = ok ? c : '_';
    }
    out[n] = '\0';
    if (n == 0 || strncmp(out, "__", 2) == 0 || strcmp(out, "peer") == 0 ||
        strcmp(out, "url") == 0)
        return -1;
    return 0;
}

/* A label value, escaped as the text format says. */
static void add_label_value(struct dynbuf *b, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\')
            dynbuf_add(b, "\\\\", 2);
        else if (*v == '"')
            dynbuf_add(b, "\\\"", 2);
        else if (*v == '\n')
            dynbuf_add(b, "\\n", 2);
        else
            dynbuf_add(b, v, 1);
    }
}

/* {peer="URL",name="value",...}: the peer and its group labels, each
 * name once. */
static void add_series_labels(struct dynbuf *b, const struct peer *peer)
{
    char names[PEER_METRIC_LABELS][128];
    const cJSON *l;
    int used = 0;

    dynbuf_add(b, "{peer=\"", 7);
    add_label_value(b, peer->url);
    dynbuf_add(b, "\"", 1);
    cJSON_ArrayForEach(l, peer->labels) {
        int dup = 0;

        if (used == PEER_METRIC_LABELS ||
            label_name(l->string, names[used], sizeof(names[used])) != 0)
            continue;
        for (int i = 0; i < used; i++)
            dup |= strcmp(names[i], names[used]) == 0;
        if (dup)
            continue;
        dynbuf_printf(b, ",%s=\"", names[used++]);
        add_label_value(b, l->valuestring);
        dynbuf_add(b, "\"", 1);
    }
    dynbuf_add(b, "}", 1);
}

void peers_metrics(struct peers *p, struct dynbuf *b)
{
    int by_state[PEER_STATES] = {0};

    if (p == NULL)
        return;
    pthread_mutex_lock(&p->lock);
    dynbuf_printf(b, "# HELP gpubench_peer_runs_pulled_total Runs stored from a peer.\n"
                     "# TYPE gpubench_peer_runs_pulled_total counter\n");
    for (int i = 0; i < p->count; i++) {
        dynbuf_printf(b, "gpubench_peer_runs_pulled_total");
        add_series_labels(b, p->list[i]);
        dynbuf_printf(b, " %lld\n", p->list[i]->row.runs_pulled);
    }
    dynbuf_printf(b, "# HELP gpubench_peer_failures_in_row Failed pulls since the last good one.\n"
                     "# TYPE gpubench_peer_failures_in_row gauge\n");
    for (int i = 0; i < p->count; i++) {
        dynbuf_printf(b, "gpubench_peer_failures_in_row");
        add_series_labels(b, p->list[i]);
        dynbuf_printf(b, " %d\n", p->list[i]->failures_in_row);
        by_state[peer_state(p->list[i])]++;
    }
    pthread_mutex_unlock(&p->lock);
    dynbuf_printf(b, "# HELP gpubench_peers Peers pulled, by the state of their pulls.\n"
                     "# TYPE gpubench_peers gauge\n");
    for (int i = 0; i < PEER_STATES; i++)
        dynbuf_printf(b, "gpubench_peers{state=\"%s\"} %d\n", state_names[i], by_state[i]);
}
