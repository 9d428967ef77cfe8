/*
 * peers_transfer.c - the puller's thread: one libcurl multi handle, at
 * most --peer-concurrency transfers on it, the peer due longest ago
 * first (peers.h).  A transfer is set up here whatever it fetches (a page
 * of runs, or GET /card_faults: peers_faults.c), with the TLS, token and
 * limits every request to a peer gets; what its body means is for
 * peers_batch.c or peers_faults.c.  A pull's outcome sets when the peer
 * is due again (the back-off) and is recorded here.  Runs on the puller
 * thread only; see peers_internal.h for the locking.
 */
#include "peers_internal.h"
#include "curl_tls.h"
#include "dynbuf.h"
#include "log.h"
#include "timeutil.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define PEER_MAX_BACKOFF_MS (300 * 1000)
#define PEERS_FILE_CHECK_MS 1000
/* The longest line kept: the largest run, printed back (see PEER_BODY_CAP). */
#define PEER_LINE_CAP (4 * (size_t)IMPORT_LINE_MAX)

void peers_transfer_free(struct transfer *t)
{
    if (t == NULL)
        return;
    if (t->easy)
        curl_easy_cleanup(t->easy);
    curl_slist_free_all(t->headers);
    dynbuf_free(&t->line);
    run_batch_clear(&t->batch);
    free(t);
}

/* Sets when peer pulls next from how the pull went (got: runs moved,
 * PULL_SMALLER or PULL_FAILED; err: the failure, or "") and records it. */
void peers_pull_ended(struct peers *all, struct peer *peer, int got, const char *err)
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
    if (got != PULL_SMALLER && got != PULL_AGAIN)
        peer->failures_in_row = got == PULL_FAILED ? peer->failures_in_row + 1 : 0;
    if (got > 0 || got == PULL_SMALLER || got == PULL_AGAIN) {
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

size_t peers_on_whole_body(char *data, size_t size, size_t n, void *cls)
{
    struct transfer *t = cls;
    long status = 0;

    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200)
        return 0; /* the transfer's end judges the status */
    if (dynbuf_add(&t->line, data, size * n) != 0) {
        t->over_cap = 1;
        return 0;
    }
    return size * n;
}

/* libcurl's progress callback (cls the transfer): ends a transfer that,
 * past PEER_GRACE_S, has not averaged PEER_MIN_RATE bytes a second since
 * the grace ended (peers.h), with the reason in t->err. */
static int on_progress(void *cls, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    struct transfer *t = cls;
    int64_t past = time_mono_ms() - t->started_ms - (int64_t)PEER_GRACE_S * 1000;

    (void)dltotal, (void)ultotal, (void)ulnow;
    if (past <= 0 || (double)dlnow >= (double)PEER_MIN_RATE * (double)past / 1000.0)
        return 0;
    snprintf(t->err, sizeof(t->err),
             "too slow: %lld bytes in %lld s, under the %d KiB/s a peer must average after "
             "its first %d s; the slot is given to others",
             (long long)dlnow, (long long)((past / 1000) + PEER_GRACE_S), PEER_MIN_RATE / 1024,
             PEER_GRACE_S);
    return 1;
}

/* Makes t->easy a GET of url with what every request to a peer gets (TLS,
 * the token, the time and speed limits, at most cap bytes of body, which
 * on_data is given) and starts it on the multi handle as peer's transfer.
 * 0, or -1 with err set (t stays the caller's to free). */
int peers_transfer_open(struct peers *all, struct peer *peer, struct transfer *t,
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
    /* the slot's deadline: the grace, then the cap at the least rate */
    t->started_ms = time_mono_ms();
    curl_easy_setopt(t->easy, CURLOPT_TIMEOUT, (long)(PEER_GRACE_S + cap / PEER_MIN_RATE));
    curl_easy_setopt(t->easy, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(t->easy, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(t->easy, CURLOPT_XFERINFODATA, t);
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

struct transfer *peers_get_whole(struct peers *all, struct peer *peer, const char *path,
                                 char *err, size_t err_cap)
{
    struct transfer *t = calloc(1, sizeof(*t));
    char url[PEER_URL_CAP + 40];

    if (t == NULL || (t->easy = curl_easy_init()) == NULL) {
        snprintf(err, err_cap, "out of memory");
        peers_transfer_free(t);
        return NULL;
    }
    t->all = all;
    t->peer = peer;
    dynbuf_init(&t->line, PEER_FAULTS_CAP);
    snprintf(url, sizeof(url), "%s%s", peer->url, path);
    if (peers_transfer_open(all, peer, t, url, peers_on_whole_body, PEER_FAULTS_CAP, err,
                            err_cap) != 0) {
        peers_transfer_free(t);
        return NULL;
    }
    return t;
}

/* Starts a pull of peer on the multi handle, or first its GET /peers
 * when that is wanted or due (peers_subtree.c).  On failure the pull is
 * recorded as failed. */
static void transfer_start(struct peers *all, struct peer *peer)
{
    struct transfer *t;
    char url[PEER_URL_CAP + 80], err[300];

    if ((peer->subtree_wanted || time_mono_ms() >= peer->subtree_due_ms) &&
        peers_subtree_start(all, peer) == 0)
        return;
    if ((t = calloc(1, sizeof(*t))) == NULL || (t->easy = curl_easy_init()) == NULL) {
        snprintf(err, sizeof(err), "out of memory starting a pull");
        goto failed;
    }
    t->all = all;
    t->peer = peer;
    t->cursor = peer->row.cursor;
    t->subtree_fresh = peer->subtree_fresh;
    peer->subtree_fresh = 0;
    dynbuf_init(&t->line, PEER_LINE_CAP);
    snprintf(url, sizeof(url), "%s/runs.ndjson?after_seq=%lld&limit=%d", peer->url, t->cursor,
             peer->page_limit);
    if (peers_transfer_open(all, peer, t, url, peers_on_body, PEER_BODY_CAP, err, sizeof(err)) != 0)
        goto failed;
    pthread_mutex_lock(&all->lock);
    peer->next_pull_unix_ms = 0; /* pulling */
    pthread_mutex_unlock(&all->lock);
    return;

failed:
    peers_transfer_free(t);
    peers_pull_ended(all, peer, PULL_FAILED, err);
}

/* Ends peer's transfer unrecorded (the peer is going away). */
void peers_transfer_drop(struct peers *all, struct peer *peer)
{
    if (peer->xfer == NULL)
        return;
    curl_multi_remove_handle(all->multi, peer->xfer->easy);
    peers_transfer_free(peer->xfer);
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
            peers_faults_done(t, msg->data.result);
        else if (t->subtree)
            peers_subtree_done(t, msg->data.result);
        else
            pulled = peers_transfer_done(t, msg->data.result);
        peer->xfer = NULL;
        all->active--;
        peers_transfer_free(t);
        /* after a good pull, once an interval, in the slot it freed: what
         * the peer's watch found */
        if (pulled && time_mono_ms() >= peer->faults_due_ms)
            peers_faults_start(all, peer);
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

void *peers_puller_main(void *arg)
{
    struct peers *all = arg;

    while (!atomic_load(&all->stopping)) {
        int running;

        if (all->file_path) {
            int forced = atomic_exchange(&all->reload, 0);

            if (forced || time_mono_ms() - all->file_checked_ms >= PEERS_FILE_CHECK_MS)
                peers_check_file(all, forced);
        }
        start_due(all);
        curl_multi_perform(all->multi, &running);
        reap(all);
        peers_flush_stale(all);
        start_due(all); /* the slots reap freed */
        curl_multi_poll(all->multi, NULL, 0, (int)sleep_ms(all), NULL);
    }
    return NULL;
}
