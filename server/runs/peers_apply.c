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

/* Past this many peers added or removed at once, one line says how many
 * rather than one line each. */
#define PEERS_LOGGED_ONE_BY_ONE 32

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

/* A new peer for url, its labels a copy of labels (NULL: {}), not yet in
 * the list nor loaded.  NULL when memory ran out. */
static struct peer *peer_new(const char *url, const cJSON *labels, int from_flag)
{
    struct peer *peer = calloc(1, sizeof(*peer));

    if (peer == NULL ||
        (peer->labels = labels ? cJSON_Duplicate(labels, 1) : cJSON_CreateObject()) == NULL) {
        free(peer);
        log_error("peer %s: out of memory adding it", url);
        return NULL;
    }
    snprintf(peer->url, sizeof(peer->url), "%s", url);
    peer->from_flag = from_flag;
    peer->kept = 1;
    peer->page_limit = PEER_PAGE;
    peer->subtree_wanted = 1; /* its GET /peers before its first pull */
    peer->due_ms = time_mono_ms();
    peer->next_pull_unix_ms = time_now_unix_ms();
    return peer;
}

void peer_free(struct peer *peer)
{
    peer_subtree_free(peer);
    cJSON_Delete(peer->labels);
    free(peer);
}

/* The peers a list is made of, old and new: grown as they come. */
struct peer_set {
    struct peer **list;
    int count;
    int alloc;
};

static int set_add(struct peer_set *set, struct peer *peer)
{
    if (set->count == set->alloc) {
        int alloc = set->alloc ? set->alloc * 2 : 64;
        struct peer **list = realloc(set->list, (size_t)alloc * sizeof(*list));

        if (list == NULL)
            return -1;
        set->list = list;
        set->alloc = alloc;
    }
    set->list[set->count++] = peer;
    return 0;
}

static int by_peer_url(const void *a, const void *b)
{
    return strcmp((*(struct peer *const *)a)->url, (*(struct peer *const *)b)->url);
}

/* url (with labels, NULL for a --peer) into the list: an existing peer is
 * marked kept (and relabelled), a new one goes into fresh.  0, or -1 when
 * memory ran out. */
static int want(struct peers *all, struct peer_set *fresh, const char *url,
                const cJSON *labels, int from_flag)
{
    int at = find_peer(all, url);
    struct peer *peer;
    cJSON *copy;

    if (at < 0) {
        if ((peer = peer_new(url, labels, from_flag)) == NULL)
            return -1;
        if (set_add(fresh, peer) != 0) {
            peer_free(peer);
            return -1;
        }
        return 0;
    }
    peer = all->list[at];
    copy = labels ? cJSON_Duplicate(labels, 1) : NULL;
    if (labels && copy == NULL)
        return -1;
    /* under the lock: GET /peers reads from_flag and the labels */
    pthread_mutex_lock(&all->lock);
    peer->kept = 1;
    peer->from_flag |= from_flag;
    if (copy) {
        cJSON_Delete(peer->labels);
        peer->labels = copy;
    }
    pthread_mutex_unlock(&all->lock);
    return 0;
}

/* Sorts fresh by URL, keeps one peer a URL (a --peer named in the file
 * too: the file's labels, still from the flag) and loads their stored
 * state in one transaction.  0, or -1 (fresh then holds none). */
static int fresh_ready(struct peers *all, struct peer_set *fresh)
{
    const char **urls = NULL;
    struct peer_row *rows = NULL;
    int kept = 0, rc = -1;

    if (fresh->count > 1) /* an empty list may be NULL, which qsort must not see */
        qsort(fresh->list, (size_t)fresh->count, sizeof(*fresh->list), by_peer_url);
    for (int i = 0; i < fresh->count; i++) {
        struct peer *p = fresh->list[i];

        if (kept > 0 && strcmp(fresh->list[kept - 1]->url, p->url) == 0) {
            struct peer *first = fresh->list[kept - 1];

            first->from_flag |= p->from_flag;
            if (!p->from_flag) { /* the file's labels */
                cJSON *l = first->labels;

                first->labels = p->labels;
                p->labels = l;
            }
            peer_free(p);
            continue;
        }
        fresh->list[kept++] = p;
    }
    fresh->count = kept;
    if (kept == 0)
        return 0;
    urls = calloc((size_t)kept, sizeof(*urls));
    rows = calloc((size_t)kept, sizeof(*rows));
    if (urls == NULL || rows == NULL) {
        log_error("out of memory adding %d peer(s)", kept);
        goto done;
    }
    for (int i = 0; i < kept; i++)
        urls[i] = fresh->list[i]->url;
    if (store_peer_load_many(all->store, urls, kept, rows) != STORE_OK) {
        log_warn("the pull state of %d new peer(s) could not be read; they start from the "
                 "first run",
                 kept);
        memset(rows, 0, (size_t)kept * sizeof(*rows));
    }
    for (int i = 0; i < kept; i++)
        fresh->list[i]->row = rows[i];
    if (kept <= PEERS_LOGGED_ONE_BY_ONE)
        for (int i = 0; i < kept; i++)
            log_info("peer %s: pulling finished runs after seq %lld", fresh->list[i]->url,
                     fresh->list[i]->row.cursor);
    else
        log_info("%d new peer(s): each pulls its finished runs after its stored cursor", kept);
    rc = 0;

done:
    free(urls);
    free(rows);
    return rc;
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

/* The list made of the kept peers of all's list and fresh's (both sorted
 * by URL), merged; the others go into gone.  0, or -1 when memory ran
 * out (nothing changed then). */
static int merge(struct peers *all, struct peer_set *fresh, struct peer_set *gone)
{
    int n = all->count + fresh->count, i = 0, j = 0, k = 0;
    struct peer **list = calloc((size_t)n + 1, sizeof(*list));

    gone->list = calloc((size_t)all->count + 1, sizeof(*gone->list));
    if (list == NULL || gone->list == NULL) {
        free(list);
        free(gone->list);
        gone->list = NULL;
        return -1;
    }
    while (i < all->count || j < fresh->count) {
        struct peer *old = i < all->count ? all->list[i] : NULL;

        if (old && !old->kept) {
            gone->list[gone->count++] = old;
            i++;
        } else if (old && (j == fresh->count || strcmp(old->url, fresh->list[j]->url) < 0)) {
            list[k++] = old;
            i++;
        } else {
            list[k++] = fresh->list[j++];
        }
    }
    pthread_mutex_lock(&all->lock);
    free(all->list);
    all->list = list;
    all->count = k;
    all->alloc = n + 1;
    cJSON_Delete(all->published); /* GET /peers' subtree made again */
    all->published = NULL;
    pthread_mutex_unlock(&all->lock);
    return 0;
}

/* Makes the list --peer's URLs and targets' (NULL: the file's part as it
 * was), dropping the peers in neither.  The new ones are found by binary
 * search, their stored state read in one transaction and merged in one
 * pass, so 10,000 targets apply in well under a second
 * (bench/peers/apply.py). */
void peers_apply_targets(struct peers *all, const struct peer_targets *targets)
{
    struct peer_set fresh = {0}, gone = {0};
    const char *where = all->file_path ? all->file_path : "the peers";
    int ok = 1;

    for (int i = 0; i < all->count; i++)
        all->list[i]->kept = targets == NULL && !all->list[i]->from_flag;
    for (int i = 0; ok && i < all->flag_count; i++) {
        char url[PEER_URL_CAP], why[200];

        if (peer_url_normalize(all->flag_urls[i], url, sizeof(url), why, sizeof(why)) != 0) {
            log_error("--peer %s", why);
            continue;
        }
        ok = want(all, &fresh, url, NULL, 1) == 0;
    }
    for (int i = 0; ok && targets && i < targets->count; i++)
        ok = want(all, &fresh, targets->list[i].url, targets->list[i].labels, 0) == 0;
    if (!ok || fresh_ready(all, &fresh) != 0 || merge(all, &fresh, &gone) != 0) {
        log_error("out of memory applying the peers; the list stays as it was");
        for (int i = 0; i < fresh.count; i++)
            peer_free(fresh.list[i]);
        free(fresh.list);
        return;
    }
    free(fresh.list);
    /* The removed ones left the list under the lock, in one step, and are
     * ended now: only this thread can still reach them. */
    for (int i = 0; i < gone.count; i++) {
        if (gone.count <= PEERS_LOGGED_ONE_BY_ONE)
            log_info("peer %s: no longer in %s; its runs stay, its cards' faults go",
                     gone.list[i]->url, where);
        peers_transfer_drop(all, gone.list[i]);
        peer_free(gone.list[i]);
    }
    if (gone.count > PEERS_LOGGED_ONE_BY_ONE)
        log_info("%d peer(s) no longer in %s; their runs stay, their cards' faults go",
                 gone.count, where);
    free(gone.list);
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
    int64_t started = time_mono_ms();

    all->file_checked_ms = started;
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
    log_info("--peers-file %s: %d target(s); %d peer(s) in all (applied in %lld ms)",
             all->file_path, targets.count, all->count,
             (long long)(time_mono_ms() - started));
    peer_targets_free(&targets);
}
