/*
 * peers_apply.c - the list of peers (sorted by URL) made from --peer and
 * the peers file: new URLs start with their stored state, removed ones
 * leave the list in one step under peers->lock and are ended after it,
 * their runs kept and their cards' faults dropped.  The file itself is
 * read by peers_file.c; this looks whether it changed and applies it, a
 * file that cannot be used leaving the list as it was.  Runs on the
 * puller thread (and in peers_start before it).
 */
#include "peers_internal.h"
#include "log.h"
#include "store_peer_faults.h"
#include "timeutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void peer_free(struct peer *peer)
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
void peers_apply_targets(struct peers *all, const struct peer_targets *targets)
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
        peers_transfer_drop(all, gone[i]);
        peer_free(gone[i]);
    }
    free(gone);
    /* A peer gone can no longer end its faults here; with a file, the list
     * is whole only once the file has been read. */
    if (targets || all->file_path == NULL)
        drop_gone_faults(all);
}

/* Reads the peers file when it changed since the last look (or when
 * forced) and applies it; a file that cannot be used leaves the list as
 * it is, with the reason kept for GET /peers. */
void peers_check_file(struct peers *all, int forced)
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
    peers_apply_targets(all, &targets);
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
