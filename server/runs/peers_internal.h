/*
 * peers_internal.h - the puller's own structs and the calls between its
 * files (peers.h says what the puller does).  It is split by job, each
 * file on the structs below:
 *   peers.c           start, reload, stop; the token
 *   peers_transfer.c  the thread: one libcurl multi handle, its transfers
 *                     started, reaped and scheduled (the back-off)
 *   peers_batch.c     a pull's answer as it streams in: lines checked,
 *                     runs stored in batches, the page's end
 *   peers_faults.c    a peer's GET /card_faults after a good pull, kept to
 *                     the cards its runs came from
 *   peers_subtree.c   a peer's GET /peers: the origins it may relay
 *   peers_apply.c     the list of peers from --peer and --peers-file
 *   peers_describe.c  GET /peers (peers_describe) and the peers' states
 *   peers_metrics.c   the peers' /metrics lines
 * A function one file hands another is named peers_ and what it was
 * called when they were one file (transfer_done, peers_transfer_done).
 *
 * Locking: only the puller thread changes the list and the peers in it;
 * it does so under peers->lock, which GET /peers and /metrics take to read
 * (briefly: no SQL and no I/O is done under it).  What only the puller
 * reads (a peer's due time, its transfer, the file's signature) is not
 * locked.  SIGHUP and peers_stop reach the thread through atomics and
 * curl_multi_wakeup.
 */
#ifndef GPUBENCH_RUNS_PEERS_INTERNAL_H
#define GPUBENCH_RUNS_PEERS_INTERNAL_H

#include "peers.h"
#include "run_finish.h"
#include "file_stamp.h"
#include "json_arena.h"
#include "peers_file.h"
#include "store_peers.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

/* What a pull brought, besides a count of runs moved (peers_pull_ended). */
#define PULL_FAILED (-1)
#define PULL_SMALLER (-2) /* over the cap: asking again for a smaller page */
#define PULL_AGAIN (-3)   /* cut to read the peer's GET /peers first: again at once */

enum peer_state {
    PEER_NEW,
    PEER_OK,
    PEER_FAILING,
    PEER_PULLING,
    PEER_STATES,
};

struct transfer;

struct peer {
    char url[PEER_URL_CAP];
    int from_flag;         /* given with --peer: stays whatever the file says */
    int page_limit;        /* runs asked for a page */
    int64_t due_ms;        /* monotonic: the next pull may start then */
    int64_t faults_due_ms; /* monotonic: the next GET /card_faults may start then */
    struct transfer *xfer; /* the pull or GET /card_faults in flight, or NULL */
    int kept;              /* a reload's mark */
    /* written by the puller under peers->lock */
    cJSON *labels;       /* the file's group labels; {} for --peer alone */
    struct peer_row row; /* as stored */
    int failures_in_row;
    int64_t next_pull_unix_ms; /* 0 while pulling */
    /* its GET /card_faults (GET /peers' card_faults) */
    int faults_missing;     /* answered 404 (logged once) */
    char faults_at[40];     /* the last good answer stored, or "" */
    char faults_error[300]; /* why the last one was not stored, or "" */
    int faults_ignored;     /* faults of cards it does not speak for, last answer */
    /* its GET /peers (peers_subtree.c): the origins it may relay, sorted;
     * the array replaced under peers->lock */
    char **subtree;
    int subtree_count;
    int subtree_known;         /* read at least once (a 404 reads as none) */
    int subtree_wanted;        /* read it before the next pull */
    int subtree_fresh;         /* read since the last pull started */
    int64_t subtree_due_ms;    /* monotonic: read again then */
    char subtree_error[300];   /* why the last read failed, or "" */
    char conflict_reason[300]; /* the last run refused as a conflict, or "" */
    int conflict_logged;       /* the first conflict is logged, the rest counted */
    int card_conflict_logged;  /* the same for a run naming another origin's card */
};

/* One pull in flight: the page is checked line by line as it comes and
 * stored batch by batch.  Or, with faults set, one GET /card_faults: its
 * body is kept whole in line (up to PEER_FAULTS_CAP) and read at its end. */
struct transfer {
    struct peers *all;
    struct peer *peer;
    int faults;  /* GET /card_faults */
    int subtree; /* GET /peers */
    CURL *easy;
    struct curl_slist *headers;
    char curl_err[CURL_ERROR_SIZE];
    int64_t started_ms; /* monotonic: its slot's deadline runs from then */
    struct dynbuf line; /* the line being received */
    size_t body_bytes;
    int status_checked;
    struct run_batch batch; /* checked runs, judged, not yet stored */
    int batch_runs;
    size_t batch_bytes;
    int64_t batch_started_ms;
    long long cursor;  /* past the last line checked */
    long long skipped; /* runs skipped since the last record */
    char skip_reason[400];
    char newest_id[64]; /* the batch's last run */
    char newest_finished_at[40];
    int moved; /* runs and skips the page brought */
    int lines;
    int over_cap;
    int subtree_fresh; /* the peer's GET /peers was read just before it */
    int recheck;       /* cut at a run relayed from an origin not known: GET /peers first */
    int stopped;       /* a bad line, an HTTP status or a store failure: err says */
    char err[400];
};

struct peers {
    struct store *store;
    struct alerts *alerts; /* pulled runs' change alerts (alerts_on_stored) */
    int interval_s;
    int concurrency;
    int test_benchmarks;
    int64_t max_clock_skew_ms;
    struct curl_tls tls;     /* --peer-ca-file, --peer-cert-file, --peer-key-file */
    char authorization[600]; /* "Authorization: Bearer ..." or "" */
    const char *const *flag_urls;
    int flag_count;
    const char *file_path; /* or NULL */
    CURLM *multi;
    pthread_t thread;
    atomic_int stopping;
    atomic_int reload; /* SIGHUP: read the file now */
    /* the puller's own */
    int active;
    struct json_arena arena; /* a pulled line's tree (peers_batch.c) */
    struct file_stamp file_seen;
    int64_t file_checked_ms;
    pthread_mutex_t lock;
    /* guarded by lock; written by the puller only */
    struct peer **list; /* sorted by url */
    int count;
    int alloc;
    char file_loaded_at[32]; /* the last good read, or "" */
    int file_targets;
    char file_error[300]; /* why the last read was refused, or "" */
    /* GET /peers' subtree as last made (peers_subtree_publish), or NULL:
     * made again only once the list or a peer's subtree changed */
    cJSON *published;
};

/* peers_transfer.c: the thread (pthread_create's start routine, arg the
 * struct peers), a transfer's set-up and end, and how a pull went. */
void *peers_puller_main(void *arg);
void peers_transfer_free(struct transfer *t);
void peers_pull_ended(struct peers *all, struct peer *peer, int got, const char *err);
int peers_transfer_open(struct peers *all, struct peer *peer, struct transfer *t,
                        const char *url, curl_write_callback on_data, size_t cap, char *err,
                        size_t err_cap);
void peers_transfer_drop(struct peers *all, struct peer *peer);
/* libcurl's write callback that keeps the whole body in t->line (its cap
 * the transfer's), for answers read at their end. */
size_t peers_on_whole_body(char *data, size_t size, size_t n, void *cls);
/* Starts a GET of peer's path (a "/..." after its URL) whose answer is
 * kept whole, up to PEER_FAULTS_CAP, and read at its end: the transfer,
 * started (the caller marks what it is), or NULL with err set. */
struct transfer *peers_get_whole(struct peers *all, struct peer *peer, const char *path,
                                 char *err, size_t err_cap);

/* peers_batch.c: a pull's body (libcurl's write callback, cls the
 * transfer), its end, and the batches that waited PEER_BATCH_MS. */
size_t peers_on_body(char *data, size_t size, size_t n, void *cls);
int peers_transfer_done(struct transfer *t, CURLcode rc);
void peers_flush_stale(struct peers *all);

/* peers_faults.c: a peer's GET /card_faults, started and ended. */
void peers_faults_start(struct peers *all, struct peer *peer);
void peers_faults_done(struct transfer *t, CURLcode rc);

/* peers_subtree.c: a peer's GET /peers started (0; -1 when it could not
 * start, which is recorded) and ended; whether the peer may relay runs
 * of origin (its own URL, or one in its subtree); its subtree freed; and
 * this daemon's own, published in GET /peers (under the lock: a NEW
 * copy of what is kept in p->published, which whoever changes the list
 * or a subtree drops under the lock). */
int peers_subtree_start(struct peers *all, struct peer *peer);
void peers_subtree_done(struct transfer *t, CURLcode rc);
int peer_relays(const struct peer *peer, const char *origin);
void peer_subtree_free(struct peer *peer);
cJSON *peers_subtree_publish(struct peers *p);

/* peers_apply.c: the list made from --peer and targets (NULL: the file's
 * part as it was), the peers file read again when it changed (or forced),
 * and a peer freed once out of the list. */
void peers_apply_targets(struct peers *all, const struct peer_targets *targets);
void peers_check_file(struct peers *all, int forced);
void peer_free(struct peer *peer);

/* peers_describe.c: a peer's state (under the lock) and the states' names. */
extern const char *const peers_state_names[PEER_STATES];
enum peer_state peer_state(const struct peer *peer);

#endif
