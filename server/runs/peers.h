/*
 * peers.h - the fleet: this daemon pulls other daemons' finished runs, in
 * the order they became final there (GET /runs.ndjson?after_seq=N), checks
 * each line (import_check.c) and stores them with the origin it decides
 * (peers_subtree.c): the peer's URL for a run it measured, the origin a
 * relayed run names where that lies in the peer's published subtree, so
 * a hub that pulls hubs (tiers) still names the node a run was measured
 * on.  Run ids are global, so a run is never stored twice, whoever it
 * came through; one held here with another origin is a conflict, refused
 * and counted, as is a new one naming a card that another origin speaks
 * for here (store_owners.c; README "A fleet").
 *
 * One thread drives every transfer through one libcurl multi handle, at
 * most --peer-concurrency at once, the peer that has waited longest
 * first: no thread per peer and no cap on their number.  A page is parsed
 * as it streams in: each complete line is checked and the runs are stored
 * in small transactions (PEER_BATCH_RUNS, _BYTES, _MS), the cursor moving
 * with them, so memory holds one line and one batch per transfer whatever
 * the page's size or the number of peers.  A transfer that falls under
 * PEER_MIN_RATE after PEER_GRACE_S, or outlasts its deadline (scaled to
 * its cap), is ended and counts as a failed pull.
 *
 * Peers come from --peer and from --peers-file (Prometheus file_sd,
 * peers_file.h), which is read again when it changes (checked every
 * second) and on SIGHUP: new peers start, removed ones stop (their runs
 * and their cursor stay, so one put back goes on where it was), and a file
 * that cannot be used is reported and the last good list kept.
 *
 * Pages always move: the serving daemon ends a page after the run that
 * takes it past PEER_PAGE_BYTES (api_exports.c), and a puller that still
 * gets an answer over its cap (a peer of another make or version) asks
 * again at once for half as many runs, down to one; it asks for full pages
 * again once it has caught up.  The cap is above the largest page a daemon
 * makes, so every run a daemon will store can be pulled.
 *
 * A peer that is down, slow, or answers garbage or a body over the cap
 * even for one run costs a logged error and a retry after a back-off that
 * doubles up to five minutes; the runs before a bad line are kept and the
 * cursor stops just before it.  A run of a benchmark this daemon does not
 * know is not bad but new (a peer running a newer gpubench): it is
 * skipped, counted with its reason, and the cursor moves past it, or one
 * upgraded node would stop its whole fleet's pulls.  The cursor and the
 * counts live in the store, keyed by URL, so a restart goes on where it
 * was; what GET /peers shows is kept in memory too, so that answering it
 * for a thousand peers costs no query.
 *
 * After a good pull, once every --peer-interval, the puller also asks
 * the peer's GET /card_faults (card_faults.h) in the same slot and with
 * the same TLS, token and limits, and replaces what it stored of the
 * peer's cards with the answer: a hub sees its peers' cards' critical
 * events within an interval.  A failed fetch keeps the last answer (a
 * node that cannot be reached does not heal its cards at the hub), a 404
 * (a gpubench before the route) is logged once and is not a failed pull,
 * and a peer that leaves the list has its faults dropped, as do all peers
 * of an earlier start that are not in this one's.
 *
 * An https:// peer is pulled only when its certificate verifies against
 * --peer-ca-file (else the system's CAs) and names the host of its URL;
 * one that does not is a failed pull like any other, its reason in
 * libcurl's words in GET /peers ("SSL certificate problem: certificate
 * has expired").  Peers that ask for a client certificate get
 * --peer-cert-file.
 */
#ifndef GPUBENCH_RUNS_PEERS_H
#define GPUBENCH_RUNS_PEERS_H

#include <cjson/cJSON.h>

#include "curl_tls.h"
#include "dynbuf.h"
#include "import_check.h"

/* Runs a puller asks for in one page, at most. */
#define PEER_PAGE 200

/* Where a serving daemon ends a page: after the run that takes it past
 * this many bytes.  The largest run within the API's bounds (smem_stride,
 * 64 strides of 1000 samples, common/bench_spec.c) is about 1.4 MB as
 * NDJSON (tests/api/test_dataflow.py makes such runs and checks that
 * they sync), so a page holds a few of them. */
#define PEER_PAGE_BYTES (8 * 1024 * 1024)

/* The most a puller reads of one answer: a page cut at PEER_PAGE_BYTES
 * plus the last run in it.  The largest run a daemon will store is an
 * IMPORT_LINE_MAX line (as large as a worker may report, import_check.h),
 * and printed back it may be up to four times that (a number sent as
 * "1e14" prints as "100000000000000"), so the cap leaves room for both. */
#define PEER_BODY_CAP (PEER_PAGE_BYTES + 4 * IMPORT_LINE_MAX)

/* The most a puller reads of a peer's GET /card_faults: the answer holds
 * only cards with an open critical event, at most CARD_FAULTS_PER_CARD
 * each (card_faults.h), a few hundred bytes a fault. */
#define PEER_FAULTS_CAP (8 * 1024 * 1024)

/* What a peer's GET /card_faults may fault here, of the cards it speaks
 * for (the cards whose first run came through it): at most
 * PEER_FAULT_CARDS cards of any one origin (a hub relays many nodes'), each
 * with at most CARD_FAULTS_PER_CARD faults, and PEER_FAULT_ROWS faults in
 * all. */
#define PEER_FAULT_CARDS 512
#define PEER_FAULT_ROWS 65536

/* A page is stored in transactions of at most this many runs, or bytes
 * of their lines, or after this long since the batch's first run. */
#define PEER_BATCH_RUNS 50
#define PEER_BATCH_BYTES (2 * 1024 * 1024)
#define PEER_BATCH_MS 1000

/* A transfer holds a pull slot only as long as its bytes justify: past
 * PEER_GRACE_S it must have averaged PEER_MIN_RATE bytes a second since
 * that grace ended (a daemon sends a page far faster), else it is cut as
 * too slow; a peer dripping a few KB a second loses its slot after the
 * grace, not after minutes.  And it ends in any case by its deadline,
 * scaled to what it may bring: PEER_GRACE_S plus its cap (PEER_BODY_CAP
 * for a page, PEER_FAULTS_CAP for GET /card_faults or /peers) at
 * PEER_MIN_RATE, about 5 minutes for a full page. */
#define PEER_GRACE_S 10
#define PEER_MIN_RATE (256 * 1024)

struct peers;
struct store;

/* What the puller works with; every pointer outlives it. */
struct peers_config {
    struct store *store;     /* where pulled runs and each peer's cursor go */
    const char *const *urls; /* --peer, count of them */
    int count;
    const char *peers_file;    /* --peers-file, or NULL */
    int interval_s;            /* --peer-interval */
    int concurrency;           /* --peer-concurrency: transfers at once */
    const char *token_file;    /* --peer-token-file, or NULL */
    struct curl_tls tls;       /* --peer-ca-file, --peer-cert-file, --peer-key-file */
    int test_benchmarks;       /* --test-benchmarks: the test-only runs are known here */
    int64_t max_clock_skew_ms; /* --max-clock-skew: a run no further ahead is taken */
    struct alerts *alerts;     /* the change alerts pulled runs find go to its webhook */
};

/* Starts the puller for cfg's peers.  NULL when there are none (no --peer
 * and no --peers-file) or it could not start (the log says why). */
struct peers *peers_start(const struct peers_config *cfg);

/* Reads the peers file again now (SIGHUP).  p may be NULL. */
void peers_reload(struct peers *p);
void peers_stop(struct peers *p);

/* What GET /peers lists: peers in state (NULL: any) that carry every one
 * of labels[0..label_count), each "name:value". */
struct peers_filter {
    const char *state;
    const char *const *labels;
    int label_count;
};

/* 1 when state is one a peer can be in ("new", "ok", "failing",
 * "pulling"). */
int peers_state_known(const char *state);

/* {"peers": [...], "counts": {state: n}, "total", "peers_file"}, the peers
 * in URL order, as api/openapi.json says.  A NEW object the caller
 * deletes, or NULL when memory ran out.  p may be NULL (no peers); f may be NULL (all of them). */
cJSON *peers_describe(struct peers *p, const struct peers_filter *f);

/* Prometheus lines for the peers, appended to b; a refused line marks b
 * (dynbuf_failed), which the caller asks before sending.  p may be NULL. */
void peers_metrics(struct peers *p, struct dynbuf *b);

#endif
