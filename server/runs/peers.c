/*
 * peers.c - see peers.h: the puller started, told to read its file again,
 * and stopped.  What it does between is in the files peers_internal.h
 * lists; this one only builds the struct peers they share, reads the
 * token once, and owns the thread's start and end.
 */
#include "peers_internal.h"
#include "log.h"
#include "store_peer_faults.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        peers_transfer_drop(p, p->list[i]);
        peer_free(p->list[i]);
    }
    free(p->list);
    cJSON_Delete(p->published);
    json_arena_free(&p->arena);
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
    p->alerts = cfg->alerts;
    p->interval_s = cfg->interval_s;
    p->concurrency = cfg->concurrency > 0 ? cfg->concurrency : 1;
    p->test_benchmarks = cfg->test_benchmarks;
    p->max_clock_skew_ms = cfg->max_clock_skew_ms;
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
    peers_apply_targets(p, NULL);
    if (p->file_path)
        peers_check_file(p, 1);
    if (pthread_create(&p->thread, NULL, peers_puller_main, p) != 0) {
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
