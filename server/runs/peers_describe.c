/*
 * peers_describe.c - GET /peers' answer (peers_describe) and a peer's
 * state, which /metrics counts too; with the subtree this daemon may
 * relay (peers_subtree.c) and each peer's conflicts.  Read under peers->lock from what the
 * puller keeps in memory, so answering for a thousand peers costs no
 * query; nothing but copying is done under the lock.
 */
#include "peers_internal.h"
#include "timeutil.h"

#include <pthread.h>
#include <string.h>

const char *const peers_state_names[PEER_STATES] = {"new", "ok", "failing", "pulling"};

/* A peer that failed stays failing while it is tried again (a down or
 * hung peer would otherwise read pulling for a connect timeout on every
 * retry, and flip back): pulling is a healthy peer's pull in flight. */
enum peer_state peer_state(const struct peer *peer)
{
    if (peer->failures_in_row > 0)
        return PEER_FAILING;
    if (peer->next_pull_unix_ms == 0)
        return PEER_PULLING;
    if (peer->row.last_success_at[0])
        return PEER_OK;
    return peer->row.last_error_at[0] ? PEER_FAILING : PEER_NEW;
}

int peers_state_known(const char *state)
{
    for (int i = 0; i < PEER_STATES; i++)
        if (strcmp(state, peers_state_names[i]) == 0)
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
    if (f->state && strcmp(f->state, peers_state_names[peer_state(peer)]) != 0)
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
    cJSON_AddStringToObject(o, "state", peers_state_names[state]);
    cJSON_AddNumberToObject(o, "cursor", (double)peer->row.cursor);
    cJSON_AddNumberToObject(o, "runs_pulled", (double)peer->row.runs_pulled);
    if ((s = cJSON_AddObjectToObject(o, "skipped")) != NULL) {
        cJSON_AddNumberToObject(s, "count", (double)peer->row.skipped);
        add_text_or_null(s, "last_reason", peer->row.skipped_reason);
    }
    if ((s = cJSON_AddObjectToObject(o, "conflicts")) != NULL) {
        cJSON_AddNumberToObject(s, "count", (double)peer->row.conflicts);
        add_text_or_null(s, "last_reason", peer->conflict_reason);
    }
    add_text_or_null(o, "last_success_at", peer->row.last_success_at);
    add_text_or_null(o, "last_error", peer->row.last_error);
    add_text_or_null(o, "last_error_at", peer->row.last_error_at);
    cJSON_AddNumberToObject(o, "failures_in_row", peer->failures_in_row);
    at[0] = '\0';
    if (peer->next_pull_unix_ms != 0) /* 0: a pull in flight */
        time_format_rfc3339(peer->next_pull_unix_ms, at, sizeof(at));
    add_text_or_null(o, "next_pull_at", at);
    /* the newest run held from it, as the store keeps it (so after a
     * restart or a peers-file edit too) */
    if (peer->row.newest_run_id[0] &&
        (newest = cJSON_AddObjectToObject(o, "newest_run")) != NULL) {
        cJSON_AddStringToObject(newest, "id", peer->row.newest_run_id);
        add_text_or_null(newest, "finished_at", peer->row.newest_finished_at);
    } else if (!peer->row.newest_run_id[0]) {
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
    /* whose runs this daemon may relay, for its own pullers */
    cJSON_AddItemToObject(root, "subtree", peers_subtree_publish(p));
    if (p)
        pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < PEER_STATES; i++)
        cJSON_AddNumberToObject(counts, peers_state_names[i], by_state[i]);
    cJSON_AddNumberToObject(root, "total", total);
    return root;
}
