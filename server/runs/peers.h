/*
 * peers.h - the fleet: one thread per --peer URL pulls that daemon's
 * finished runs, in the order they became final there (GET
 * /runs.ndjson?after_seq=N), checks each line (import_check.c) and stores
 * them with their origin.  Run ids are global, so a run is never stored
 * twice, whoever it came through.
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
 * counts live in the store, so a restart goes on where it was.
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

struct peers;
struct store;

/* What the pullers work with; every pointer outlives them. */
struct peers_config {
    struct store *store;     /* where pulled runs and each peer's cursor go */
    const char *const *urls; /* --peer, count of them */
    int count;
    int interval_s;         /* --peer-interval */
    const char *token_file; /* --peer-token-file, or NULL */
    struct curl_tls tls;    /* --peer-ca-file, --peer-cert-file, --peer-key-file */
    int test_benchmarks;    /* --test-benchmarks: the test-only runs are known here */
};

/* Starts a puller for each of cfg's peers.  NULL when there are none or
 * memory ran out (then nothing is pulled; the log says which). */
struct peers *peers_start(const struct peers_config *cfg);
void peers_stop(struct peers *p);

/* {"peers": [{url, cursor, runs_pulled, skipped: {count, last_reason},
 * last_success_at, last_error, last_error_at, failures_in_row}]}.
 * Caller owns it.  p may be NULL. */
cJSON *peers_describe(struct peers *p);

/* Prometheus lines for the peers, appended to b.  p may be NULL. */
void peers_metrics(struct peers *p, struct dynbuf *b);

#endif
