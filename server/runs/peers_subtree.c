/*
 * peers_subtree.c - whose runs a peer may hand on (README "A
 * fleet").  A pulled run's origin is this daemon's decision: a run that
 * names none was measured by the peer and gets the peer's URL; a run that
 * names one was relayed by the peer, a hub, and keeps it only when the
 * origin lies in the peer's published subtree: the "subtree" of its GET
 * /peers (its peers' URLs and what each of them publishes), or, from a
 * gpubench before that field, its peers' URLs.  The puller reads a peer's
 * GET /peers before its first pull, every PEER_SUBTREE_REFRESH_MS after,
 * and again when a page names an origin it does not know (a node added to
 * the hub since): the page is cut before that run and goes on once the
 * answer is in.  An origin still unknown then is skipped and counted; one
 * met while GET /peers cannot be read fails the pull (retried with the
 * back-off) rather than skipping a run that may be good.  A 404 reads as
 * a peer that relays nothing.  Runs on the puller thread; the subtree is
 * replaced under peers->lock, which GET /peers reads it under.
 */
#include "peers_internal.h"
#include "curl_tls.h"
#include "dynbuf.h"
#include "log.h"
#include "run_request.h"
#include "timeutil.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A peer's subtree is read again this often, besides when a page names an
 * origin not in it. */
#define PEER_SUBTREE_REFRESH_MS (5 * 60 * 1000)

static int by_text(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorts list (n strings) and drops repeats; the count kept. */
static int sort_unique(const char **list, int n)
{
    int kept = 0;

    qsort(list, (size_t)n, sizeof(*list), by_text);
    for (int i = 0; i < n; i++)
        if (kept == 0 || strcmp(list[kept - 1], list[i]) != 0)
            list[kept++] = list[i];
    return kept;
}

void peer_subtree_free(struct peer *peer)
{
    for (int i = 0; i < peer->subtree_count; i++)
        free(peer->subtree[i]);
    free(peer->subtree);
    peer->subtree = NULL;
    peer->subtree_count = 0;
}

int peer_relays(const struct peer *peer, const char *origin)
{
    return strcmp(origin, peer->url) == 0 ||
           (peer->subtree_count > 0 && bsearch(&origin, peer->subtree,
                                               (size_t)peer->subtree_count,
                                               sizeof(*peer->subtree), by_text) != NULL);
}

/* The strings of a GET /peers answer's subtree (its "subtree", else its
 * peers' "url"s) into a NEW sorted array of copies (*out, *count).  0, or
 * -1 with err set. */
static int read_subtree(const char *body, size_t len, char ***out, int *count, char *err,
                        size_t cap)
{
    size_t at;
    int trailing, n = 0, rc = -1;
    cJSON *answer = json_parse_whole(body, len, &at, &trailing);
    const cJSON *subtree = cJSON_GetObjectItem(answer, "subtree");
    const cJSON *peers = cJSON_GetObjectItem(answer, "peers"), *e;
    const cJSON *list = cJSON_IsArray(subtree) ? subtree : peers;
    const char **names = NULL;
    int total = cJSON_IsArray(subtree) ? cJSON_GetArraySize(subtree)
                                       : cJSON_GetArraySize(peers);

    *out = NULL;
    *count = 0;
    if (!cJSON_IsArray(subtree) && !cJSON_IsArray(peers)) {
        snprintf(err, cap, "the answer is not GET /peers' (no \"subtree\" or \"peers\" list)");
        goto done;
    }
    if ((names = calloc((size_t)total + 1, sizeof(*names))) == NULL)
        goto oom;
    cJSON_ArrayForEach(e, list) {
        const char *url = cJSON_IsArray(subtree)
                              ? cJSON_GetStringValue(e)
                              : cJSON_GetStringValue(cJSON_GetObjectItem(e, "url"));

        if (url == NULL || url[0] == '\0' || strlen(url) >= PEER_URL_CAP) {
            snprintf(err, cap, "entry %d of its subtree is not a URL of at most %d bytes", n,
                     PEER_URL_CAP - 1);
            goto done;
        }
        names[n++] = url;
    }
    n = sort_unique(names, n);
    if (n > 0 && (*out = calloc((size_t)n, sizeof(**out))) == NULL)
        goto oom;
    for (*count = 0; *count < n; (*count)++)
        if (((*out)[*count] = strdup(names[*count])) == NULL)
            goto oom;
    rc = 0;
    goto done;

oom:
    snprintf(err, cap, "out of memory");

done:
    if (rc != 0 && *out) {
        for (int i = 0; i < *count; i++)
            free((*out)[i]);
        free(*out);
        *out = NULL;
        *count = 0;
    }
    free(names);
    cJSON_Delete(answer);
    return rc;
}

/* The read is over (err: why it failed, or ""): the peer's next pull may
 * start at once and trusts what was read. */
static void subtree_read(struct peers *all, struct peer *peer, char **list, int count,
                         int known, const char *err)
{
    char **old = NULL;
    int old_count = 0;

    if (err[0])
        log_warn("peer %s: GET /peers: %s; the runs it relays wait until it can be read",
                 peer->url, err);
    pthread_mutex_lock(&all->lock);
    if (known) {
        old = peer->subtree;
        old_count = peer->subtree_count;
        peer->subtree = list;
        peer->subtree_count = count;
        peer->subtree_known = 1;
        cJSON_Delete(all->published);
        all->published = NULL;
    }
    snprintf(peer->subtree_error, sizeof(peer->subtree_error), "%s", err);
    peer->next_pull_unix_ms = time_now_unix_ms(); /* its pull, at once */
    pthread_mutex_unlock(&all->lock);
    for (int i = 0; i < old_count; i++)
        free(old[i]);
    free(old);
    peer->subtree_wanted = 0;
    peer->subtree_fresh = 1;
    peer->subtree_due_ms = time_mono_ms() + PEER_SUBTREE_REFRESH_MS;
    peer->due_ms = time_mono_ms();
}

void peers_subtree_done(struct transfer *t, CURLcode rc)
{
    char err[300] = "", **list = NULL;
    long status = 0;
    int count = 0, known = 0;

    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    if (status == 404) {
        known = 1; /* no such route: a peer that relays nothing */
    } else if (t->over_cap || rc == CURLE_FILESIZE_EXCEEDED) {
        snprintf(err, sizeof(err), "the answer was over the %zu MiB cap",
                 (size_t)PEER_FAULTS_CAP / (1024 * 1024));
    } else if (status != 200 && status != 0) {
        snprintf(err, sizeof(err), "HTTP %ld", status);
    } else if (rc != CURLE_OK && t->err[0]) {
        snprintf(err, sizeof(err), "%.290s", t->err);
    } else if (rc != CURLE_OK) {
        curl_failure_reason(rc, t->curl_err, err, sizeof(err));
    } else if (read_subtree(t->line.data ? t->line.data : "", t->line.len, &list, &count, err,
                            sizeof(err)) == 0) {
        known = 1;
    }
    subtree_read(t->all, t->peer, list, count, known, err);
}

int peers_subtree_start(struct peers *all, struct peer *peer)
{
    char err[300];
    struct transfer *t = peers_get_whole(all, peer, "/peers", err, sizeof(err));

    if (t) {
        t->subtree = 1;
        pthread_mutex_lock(&all->lock);
        peer->next_pull_unix_ms = 0; /* pulling: this read is its first step */
        pthread_mutex_unlock(&all->lock);
        return 0;
    }
    subtree_read(all, peer, NULL, 0, 0, err);
    return -1;
}

/* The subtree made anew from p's list. */
static cJSON *publish(const struct peers *p)
{
    const char **names;
    cJSON *list = cJSON_CreateArray();
    int n = 0, total = 0;

    for (int i = 0; p && i < p->count; i++)
        total += 1 + p->list[i]->subtree_count;
    if (list == NULL || (names = calloc((size_t)total + 1, sizeof(*names))) == NULL) {
        cJSON_Delete(list);
        return NULL;
    }
    for (int i = 0; p && i < p->count; i++) {
        names[n++] = p->list[i]->url;
        for (int j = 0; j < p->list[i]->subtree_count; j++)
            names[n++] = p->list[i]->subtree[j];
    }
    n = sort_unique(names, n);
    for (int i = 0; i < n; i++) {
        if (!cJSON_AddItemToArray(list, cJSON_CreateString(names[i]))) {
            cJSON_Delete(list);
            list = NULL;
            break;
        }
    }
    free(names);
    return list;
}

cJSON *peers_subtree_publish(struct peers *p)
{
    if (p == NULL)
        return cJSON_CreateArray();
    if (p->published == NULL)
        p->published = publish(p);
    return p->published ? cJSON_Duplicate(p->published, 1) : NULL;
}
