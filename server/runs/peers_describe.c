/*
 * peers_describe.c - GET /peers' answer (peers_describe) and a peer's
 * state, which /metrics counts too; with the subtree this daemon may
 * relay (peers_subtree.c) and each peer's conflicts.  Read under peers->lock from what the
 * puller keeps in memory, so answering for a thousand peers costs no
 * query; nothing but copying is done under the lock.
 */
#include "json_build.h"
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

static void add_text_or_null(struct json_build *jb, cJSON *obj, const char *name, const char *v)
{
    jb_string(jb, obj, name, v && v[0] ? v : NULL);
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

/* One peer's entry (under the lock); a failure sticks in jb (the entry
 * is then partial, for jb_push to drop). */
static cJSON *describe_peer(struct json_build *jb, const struct peer *peer)
{
    cJSON *o = jb_new_object(jb), *s, *newest, *f;
    enum peer_state state = peer_state(peer);
    char at[32];

    jb_string(jb, o, "url", peer->url);
    jb_string(jb, o, "source", peer->from_flag ? "flag" : "file");
    jb_item(jb, o, "labels", cJSON_Duplicate(peer->labels, 1));
    jb_string(jb, o, "state", peers_state_names[state]);
    jb_number(jb, o, "cursor", (double)peer->row.cursor);
    jb_number(jb, o, "runs_pulled", (double)peer->row.runs_pulled);
    if ((s = jb_object(jb, o, "skipped")) != NULL) {
        jb_number(jb, s, "count", (double)peer->row.skipped);
        add_text_or_null(jb, s, "last_reason", peer->row.skipped_reason);
    }
    if ((s = jb_object(jb, o, "conflicts")) != NULL) {
        jb_number(jb, s, "count", (double)peer->row.conflicts);
        add_text_or_null(jb, s, "last_reason", peer->conflict_reason);
    }
    add_text_or_null(jb, o, "last_success_at", peer->row.last_success_at);
    add_text_or_null(jb, o, "last_error", peer->row.last_error);
    add_text_or_null(jb, o, "last_error_at", peer->row.last_error_at);
    jb_number(jb, o, "failures_in_row", peer->failures_in_row);
    at[0] = '\0';
    if (peer->next_pull_unix_ms != 0) /* 0: a pull in flight */
        time_format_rfc3339(peer->next_pull_unix_ms, at, sizeof(at));
    add_text_or_null(jb, o, "next_pull_at", at);
    /* the newest run held from it, as the store keeps it (so after a
     * restart or a peers-file edit too) */
    if (peer->row.newest_run_id[0] &&
        (newest = jb_object(jb, o, "newest_run")) != NULL) {
        jb_string(jb, newest, "id", peer->row.newest_run_id);
        add_text_or_null(jb, newest, "finished_at", peer->row.newest_finished_at);
    } else if (!peer->row.newest_run_id[0]) {
        jb_null(jb, o, "newest_run");
    }
    if ((f = jb_object(jb, o, "card_faults")) != NULL) {
        jb_bool(jb, f, "route", !peer->faults_missing);
        add_text_or_null(jb, f, "fetched_at", peer->faults_at);
        add_text_or_null(jb, f, "error", peer->faults_error);
    }
    return o;
}

static void add_peers_file(struct json_build *jb, cJSON *root, const struct peers *p)
{
    cJSON *f;

    if (p == NULL || p->file_path == NULL) {
        jb_null(jb, root, "peers_file");
        return;
    }
    if ((f = jb_object(jb, root, "peers_file")) == NULL)
        return;
    jb_string(jb, f, "path", p->file_path);
    add_text_or_null(jb, f, "loaded_at", p->file_loaded_at);
    jb_number(jb, f, "targets", p->file_targets);
    add_text_or_null(jb, f, "error", p->file_error);
}

cJSON *peers_describe(struct peers *p, const struct peers_filter *f)
{
    struct json_build b = {0}, *jb = &b;
    cJSON *root = jb_new_object(jb);
    cJSON *list = jb_array(jb, root, "peers");
    cJSON *counts = jb_object(jb, root, "counts");
    int by_state[PEER_STATES] = {0}, total = 0;

    if (p)
        pthread_mutex_lock(&p->lock);
    for (int i = 0; p && i < p->count; i++) {
        const struct peer *peer = p->list[i];

        by_state[peer_state(peer)]++;
        total++;
        if (peer_matches(peer, f))
            jb_push(jb, list, describe_peer(jb, peer));
    }
    add_peers_file(jb, root, p);
    /* whose runs this daemon may relay, for its own pullers */
    jb_item(jb, root, "subtree", peers_subtree_publish(p));
    if (p)
        pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < PEER_STATES; i++)
        jb_number(jb, counts, peers_state_names[i], by_state[i]);
    jb_number(jb, root, "total", total);
    if (jb_failed(jb)) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}
