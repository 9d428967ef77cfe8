/*
 * peers_batch.c - a pull's answer as it streams in (peers.h): the body is
 * cut into lines, each complete line checked (import_check.c) as it
 * arrives, and the checked runs stored in small transactions
 * (PEER_BATCH_RUNS, _BYTES, _MS) with the cursor moving past them, so a
 * transfer holds one line and one batch whatever the page's size.  A bad
 * line stops the page; the runs before it are kept.  Runs on the puller
 * thread only; a peer's shown state is written under peers->lock
 * (peers_internal.h).
 */
#include "peers_internal.h"
#include "curl_tls.h"
#include "dynbuf.h"
#include "import_check.h"
#include "json_arena.h"
#include "log.h"
#include "run_request.h"
#include "store_peers.h"
#include "timeutil.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Stores the runs checked so far and moves the cursor past them and past
 * the skipped ones; with always, records the pull even when it brought
 * nothing (a good empty page is a success).  0, or -1 with t->err set. */
static int flush(struct transfer *t, int always)
{
    struct peer *peer = t->peer;
    struct peers *all = t->all;
    struct store_pull pull;
    struct import_tally tally;
    char now[32];

    if (!always && t->batch_runs == 0 && t->skipped == 0)
        return 0;
    /* The runs and the cursor past them (and past the skipped ones) in
     * one transaction: the cursor never passes a run not stored. */
    pull.url = peer->url;
    pull.cursor = t->cursor;
    pull.skipped = t->skipped;
    pull.skip_reason = t->skipped ? t->skip_reason : NULL;
    t->batch.alerts = all->alerts;
    if (run_batch_store_pull(&t->batch, all->store, &pull, &tally) != STORE_OK) {
        snprintf(t->err, sizeof(t->err), "the runs could not be stored here");
        t->stopped = 1;
        return -1;
    }
    if (t->skipped)
        log_warn("peer %s: skipped %lld run(s) (of a benchmark not known here, damaged on the "
                 "peer, dated ahead of this clock or relayed from outside its subtree); the "
                 "last: %s",
                 peer->url, t->skipped, t->skip_reason);
    if (tally.inserted)
        log_info("peer %s: stored %d run(s) (%d already here)", peer->url, tally.inserted,
                 tally.existing);
    if (tally.conflicts && !peer->conflict_logged)
        log_warn("peer %s: run %s is held here from %s; the peer's copy is refused (a conflict, "
                 "never a replacement), as are any more, counted in GET /peers' conflicts",
                 peer->url, tally.conflict_id,
                 tally.conflict_held[0] ? tally.conflict_held : "this node (measured here)");
    if (tally.card_conflicts && !peer->card_conflict_logged)
        log_warn("peer %s: run %s names card %s, which %s speaks for here; refused (a "
                 "conflict: one origin speaks for a card), as are any more, counted in GET "
                 "/peers' conflicts",
                 peer->url, tally.card_run_id, tally.card_uuid,
                 tally.card_owner[0] ? tally.card_owner : "this node (measured here)");
    time_now_rfc3339(now, sizeof(now));
    pthread_mutex_lock(&all->lock);
    peer->row.cursor = t->cursor;
    peer->row.runs_pulled += tally.inserted;
    peer->row.conflicts += tally.conflicts + tally.card_conflicts;
    if (tally.conflicts) {
        peer->conflict_logged = 1;
        snprintf(peer->conflict_reason, sizeof(peer->conflict_reason),
                 "run %s is held here from %.200s", tally.conflict_id,
                 tally.conflict_held[0] ? tally.conflict_held : "this node (measured here)");
    }
    if (tally.card_conflicts) {
        peer->card_conflict_logged = 1;
        snprintf(peer->conflict_reason, sizeof(peer->conflict_reason),
                 "run %s names card %.80s, spoken for here by %.140s", tally.card_run_id,
                 tally.card_uuid,
                 tally.card_owner[0] ? tally.card_owner : "this node (measured here)");
    }
    peer->row.skipped += t->skipped;
    if (t->skipped)
        snprintf(peer->row.skipped_reason, sizeof(peer->row.skipped_reason), "%s",
                 t->skip_reason);
    snprintf(peer->row.last_success_at, sizeof(peer->row.last_success_at), "%s", now);
    /* the newest run held from it: the batch's, when it finished later
     * than the one held (as store_pull_runs keeps it) */
    if (t->newest_id[0] &&
        (strcmp(t->newest_finished_at, peer->row.newest_finished_at) > 0 ||
         (strcmp(t->newest_finished_at, peer->row.newest_finished_at) == 0 &&
          strcmp(t->newest_id, peer->row.newest_run_id) > 0))) {
        snprintf(peer->row.newest_run_id, sizeof(peer->row.newest_run_id), "%s", t->newest_id);
        snprintf(peer->row.newest_finished_at, sizeof(peer->row.newest_finished_at), "%s",
                 t->newest_finished_at);
    }
    pthread_mutex_unlock(&all->lock);
    t->batch_runs = 0;
    t->batch_bytes = 0;
    t->skipped = 0;
    t->newest_id[0] = '\0';
    t->newest_finished_at[0] = '\0';
    return 0;
}

/* Passes over run (line seq), its reason in t->skip_reason: counted, the
 * cursor moved past it, so a pull never sticks on it.  0. */
static int skip(struct transfer *t, cJSON *run, const cJSON *seq)
{
    t->skipped++;
    t->cursor = (long long)seq->valuedouble;
    t->moved++;
    cJSON_Delete(run);
    return 0;
}

enum origin_verdict { ORIGIN_TAKEN,
                      ORIGIN_SKIP,
                      ORIGIN_CUT,
                      ORIGIN_BAD };

/* The origin run is stored with (README "A fleet"; peers_subtree.c): one
 * that names none was measured by the peer and gets its URL; one that
 * names an origin keeps it only when the peer may relay it, or when it is
 * "import" (imported there, and so here).  An origin
 * not known cuts the page before the run, for the peer's GET /peers to be
 * read first, unless it was read just before this pull: then the run is
 * skipped (t->skip_reason says why), or, where GET /peers could not be
 * read, the pull fails (t->err) to come back to the run later. */
static enum origin_verdict decide_origin(struct transfer *t, const cJSON *run,
                                         const char **origin)
{
    struct peer *peer = t->peer;
    const char *named = cJSON_GetStringValue(cJSON_GetObjectItem(run, "origin"));
    const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(run, "id"));

    *origin = peer->url;
    if (named == NULL)
        return ORIGIN_TAKEN;
    /* imported where the peer holds it: no node vouches for it, here no
     * more than there */
    if (peer_relays(peer, named) || strcmp(named, RUN_ORIGIN_IMPORT) == 0) {
        *origin = named;
        return ORIGIN_TAKEN;
    }
    if (!t->subtree_fresh) {
        peer->subtree_wanted = 1;
        t->recheck = 1;
        return ORIGIN_CUT;
    }
    if (!peer->subtree_known) {
        peer->subtree_wanted = 1;
        snprintf(t->err, sizeof(t->err),
                 "line %d: run %.36s was relayed from %.100s, and the peer's GET /peers, "
                 "which says whose runs it may relay, could not be read: %.80s",
                 t->lines, id, named, peer->subtree_error);
        return ORIGIN_BAD;
    }
    snprintf(t->skip_reason, sizeof(t->skip_reason),
             "run %.36s: its origin %.120s is not in the peer's published subtree (its GET "
             "/peers): a peer relays only its own peers' runs",
             id, named);
    return ORIGIN_SKIP;
}

/* take_line's work (see it), on the line still in t->line. */
static int take_run(struct transfer *t)
{
    size_t at, len = t->line.len;
    cJSON *run;
    const cJSON *seq;
    const char *origin = NULL;
    struct import_rules rules;
    struct gb_error why;
    int trailing;

    t->lines++;
    if (len == 0)
        return 0;
    run = json_parse_whole(t->line.data, len, &at, &trailing);
    json_arena_stop(); /* the tree is the arena's; nothing else is */
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
    rules.test_benchmarks = t->all->test_benchmarks;
    rules.now_ms = time_now_unix_ms();
    rules.max_skew_ms = t->all->max_clock_skew_ms;
    if (import_check_line(run, t->line.data, len, &rules, &why) != 0) {
        /* A run unknown here, damaged where it was stored or dated ahead of
         * this clock is skipped and counted (the cursor moves past it: a
         * pull never sticks on it); anything else stops the page. */
        if (strcmp(why.code, "unknown_benchmark") != 0 && strcmp(why.code, "damaged_run") != 0 &&
            strcmp(why.code, "clock_skew") != 0) {
            snprintf(t->err, sizeof(t->err), "line %d: %s", t->lines, why.message);
            goto bad;
        }
        snprintf(t->skip_reason, sizeof(t->skip_reason), "run %.36s: %.200s",
                 cJSON_GetStringValue(cJSON_GetObjectItem(run, "id")), why.message);
        return skip(t, run, seq);
    }
    switch (decide_origin(t, run, &origin)) {
    case ORIGIN_CUT:
        cJSON_Delete(run);
        t->stopped = 1;
        return -1;
    case ORIGIN_BAD:
        goto bad;
    case ORIGIN_SKIP:
        return skip(t, run, seq);
    default:
        break;
    }
    t->cursor = (long long)seq->valuedouble;
    t->moved++;
    /* the batch's run that finished last (not the last pulled: a page is
     * in the order runs became final, not the order they finished) */
    {
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(run, "id"));
        const char *at = cJSON_GetStringValue(cJSON_GetObjectItem(run, "finished_at"));
        if (id && at &&
            (strcmp(at, t->newest_finished_at) > 0 ||
             (strcmp(at, t->newest_finished_at) == 0 && strcmp(id, t->newest_id) > 0))) {
            snprintf(t->newest_id, sizeof(t->newest_id), "%s", id);
            snprintf(t->newest_finished_at, sizeof(t->newest_finished_at), "%s", at);
        }
    }
    if (t->batch_runs == 0)
        t->batch_started_ms = time_mono_ms();
    if (run_batch_add(&t->batch, run, t->line.data, len, origin) != 0) {
        snprintf(t->err, sizeof(t->err), "out of memory");
        goto bad;
    }
    cJSON_Delete(run);
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

/* Checks the complete line in t->line: a good run goes into the batch (a
 * record judged once, whose results and meta keep the line's own bytes:
 * run_finish.h), a run of a benchmark unknown here or one the peer marked
 * damaged is skipped, anything else stops the page.  0, or -1 with t->err
 * set.  The line is emptied. */
static int take_line(struct transfer *t)
{
    int rc;

    /* The line's tree is parsed in the puller's arena and deleted before
     * take_run returns (json_arena.h): its ~700 nodes cost no malloc and
     * no free one by one. */
    json_arena_begin(&t->all->arena);
    rc = take_run(t);
    json_arena_end();

    dynbuf_reset(&t->line);
    return rc;
}

size_t peers_on_body(char *data, size_t size, size_t n, void *cls)
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

/* A transfer curl has ended with rc: the rest of the page is stored, the
 * outcome recorded.  1 when the peer answered a good page, else 0. */
int peers_transfer_done(struct transfer *t, CURLcode rc)
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
    if (t->recheck && t->err[0] == '\0') {
        /* cut before a run relayed from an origin not known yet: the
         * peer's GET /peers, then the rest (peers_subtree.c) */
        peers_pull_ended(t->all, peer, PULL_AGAIN, "");
        return 0;
    }
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
    peers_pull_ended(t->all, peer, got, t->err);
    return got >= 0;
}

/* Stores the batches of slow pages that have waited PEER_BATCH_MS, so a
 * trickling page's runs are not held back. */
void peers_flush_stale(struct peers *all)
{
    int64_t now = time_mono_ms();

    for (int i = 0; i < all->count; i++) {
        struct transfer *t = all->list[i]->xfer;

        if (t && !t->stopped && t->batch_runs > 0 && now - t->batch_started_ms >= PEER_BATCH_MS)
            flush(t, 0);
    }
}
