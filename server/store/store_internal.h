/*
 * store_internal.h - what the store's files share, and nothing outside
 * server/store/ may include (but the unit test of store_query): the
 * connections (one writer, a few readers, each keeping its prepared
 * statements), the one way a statement is run (struct store_query), the
 * columns every run query selects, and the helpers that turn a row into a
 * run.  See store.h for the store itself, store.c for the connections,
 * store_query.c, store_health.c and store_row.c for the rest.
 */
#ifndef GPUBENCH_STORE_STORE_INTERNAL_H
#define GPUBENCH_STORE_STORE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <sqlite3.h>
#include <cjson/cJSON.h>

#include "run_record.h"
#include "store.h"

/* Reader connections: a query takes whichever is free (store_query_begin),
 * so a long read holds one of them, never a thread's only one. */
#define STORE_READERS 8
/* Prepared statements a connection keeps; past it, the least recently
 * used one not in use is finalized for the new one (store_query.c). */
#define STMT_CACHE 64

struct cached_stmt {
    const char *sql; /* a static string: its address is the key */
    sqlite3_stmt *st;
    unsigned long used; /* the connection's tick at its last prepare */
    int busy;           /* prepared and not yet released: never evicted */
};

/* One thing a write touched (store_touch.h): its write's count, its kind
 * and the host's or card's name. */
#define STORE_TOUCH_NAME 128
#define STORE_TOUCH_PENDING 1024
#define STORE_TOUCH_LOG 8192
struct store_touch {
    unsigned long long seq;
    int kind; /* enum store_touch_kind */
    char name[STORE_TOUCH_NAME];
};

struct conn {
    struct store *owner;
    sqlite3 *db;
    pthread_mutex_t lock;
    struct cached_stmt cache[STMT_CACHE]; /* under lock, as everything here */
    int ncache;
    unsigned long tick;         /* counts prepares: the cache's clock */
    sqlite3_int64 changes_seen; /* sqlite3_total_changes64 at the last
                                 * store_wrote */
};

struct store {
    struct conn writer;
    struct conn readers[STORE_READERS];
    int nreaders;
    unsigned next_reader;        /* under writer.lock */
    pthread_mutex_t health_lock; /* guards health */
    struct store_health health;
    /* writes that changed rows (store_wrote): the touch log's sequence */
    atomic_llong writes;
    /* store_state_tag's: the writes that may have changed what a page of
     * runs or an export shows (all but those whose query said otherwise,
     * store_query_no_run_rows), and what tells this opening of the
     * database from the last one */
    atomic_llong run_writes;
    unsigned opened;
    /* what the writer's query under way said it touched (store_query_touch),
     * under writer.lock; logged at its end (store_touch.c) */
    struct store_touch pending[STORE_TOUCH_PENDING];
    int npending;
    int pending_all;     /* it touched more than pending holds, or a name too long */
    int pending_no_runs; /* it said it changes no run row (store_query_no_run_rows) */
    /* the log of what each counted write touched (store_touch.h): a ring,
     * under touch_lock, as is the count of writes when it is written */
    pthread_mutex_t touch_lock;
    struct store_touch log[STORE_TOUCH_LOG];
    unsigned long long nlogged; /* entries ever written; log[i % STORE_TOUCH_LOG] */
    unsigned long long lost;    /* the newest write whose entry was overwritten */
};

/* The columns every run query selects, in the order run_from_row reads. */
#define RUN_COLUMNS                                                            \
    "r.id, r.benchmark, r.params, r.label, r.batch_id, r.host, "               \
    "r.device_index, r.device_uuid, r.device_name, r.status, r.timeout_s, "    \
    "r.created_at, r.started_at, r.finished_at, r.progress_done, "             \
    "r.progress_total, r.error_code, r.error_message, r.origin, r.final_seq, " \
    "r.validity, r.progress_message, r.confirms, r.method, r.checks, "         \
    "r.damaged_at_origin, "                                                    \
    "json_valid(r.params), json_valid(r.validity), json_valid(r.checks)"

enum {
    C_ID,
    C_BENCHMARK,
    C_PARAMS,
    C_LABEL,
    C_BATCH,
    C_HOST,
    C_DEV_INDEX,
    C_DEV_UUID,
    C_DEV_NAME,
    C_STATUS,
    C_TIMEOUT,
    C_CREATED,
    C_STARTED,
    C_FINISHED,
    C_PROG_DONE,
    C_PROG_TOTAL,
    C_ERR_CODE,
    C_ERR_MSG,
    C_ORIGIN,
    C_SEQ,
    C_VALIDITY,
    C_PROG_MESSAGE,
    C_CONFIRMS,
    C_METHOD,
    C_CHECKS,
    C_DAMAGED_AT_ORIGIN, /* the node's damaged columns (0017) */
    C_PARAMS_OK,         /* json_valid of params, validity, checks (store_row.c) */
    C_VALIDITY_OK,
    C_CHECKS_OK,
    C_COUNT
};

/* The next number in the order runs become final here (see
 * migrations/0002_fleet.sql); evaluated inside the writing transaction.
 * The IS NOT NULL is what lets max() read the end of the partial index
 * runs_by_final_seq instead of scanning every run. */
#define NEXT_SEQ "(SELECT coalesce(max(final_seq), 0) + 1 FROM runs WHERE final_seq IS NOT NULL)"

/* The part of the comparability key that decides a verdict (benchmark,
 * method, card model, measuring params: compare_key_fields with
 * decides_verdict), as one text, of the runs row named by prefix t ("" or
 * "r.").  gb_verdict_key is the judge's (judge/judge_sql.c), registered on
 * every connection through store_functions.h; kept in runs.verdict_key for
 * done runs (as a run's end was judged: store_results.c),
 * and recomputed for every stored run by migrations/0009_method.sql. */
#define STORE_VERDICT_KEY(t) \
    "gb_verdict_key(" t "benchmark, " t "device_name, " t "params, " t "method, " t "build)"

/* What a verdict reads of a run (store_get_verdict_run), in the order
 * store_verdict_run_from_row reads them: the fields of runs r
 * (VERDICT_RUN_FIELDS), then its results' rows, then its summary without
 * samples (the digest's: where the run states the units of work of a
 * sample, common/work_units.h).  The meta is not parsed. */
#define VERDICT_RUN_FIELDS                                                 \
    "r.id, r.benchmark, r.params, r.device_name, r.status, r.created_at, " \
    "r.confirms, r.valid, r.method, r.build"
#define VERDICT_RUN_NFIELDS 10 /* the columns of VERDICT_RUN_FIELDS */
#define VERDICT_RUN_COLUMNS                                         \
    VERDICT_RUN_FIELDS ", (SELECT json_extract(results, '$.rows') " \
                       "FROM run_results WHERE run_id = r.id), "    \
                       "(SELECT summary FROM run_digests WHERE run_id = r.id)"

/* One use of a connection: its lock from store_query_begin to
 * store_query_end, one statement at a time, values bound by their type,
 * and a failure mapped once, by store_fail in store_query_end, before the
 * statement is released and a transaction rolled back.  A function keeps
 * one rc and one cleanup label:
 *
 *     struct store_query q;
 *     int rc = STORE_ERROR;
 *
 *     store_query_begin(&q, store_reader(s), "read a run's status");
 *     if (store_query_prepare(&q, "SELECT status FROM runs WHERE id = ?1") != STORE_OK)
 *         goto done;
 *     store_bind_text(&q, 1, id);
 *     if ((rc = store_query_one(&q)) == STORE_OK)
 *         ... store_col_text(q.st, 0) ...
 * done:
 *     return store_query_end(&q, rc);
 *
 * A helper that runs a statement under a caller's query takes that query
 * and either prepares on it (the caller's statement is then released) or,
 * to keep the caller's statement stepping, nests one (store_query_nest). */
struct store_query {
    struct conn *c;
    sqlite3_stmt *st; /* the statement being run, NULL before the first */
    const char *what; /* what is being done, for the log if it fails (static
                       * text; a step of a longer query may name itself) */
    int nested;       /* 1: under another query's lock (store_query_nest) */
    int in_tx;        /* 1: inside BEGIN IMMEDIATE: store_query_end rolls
                       * it back */
    int bind_failed;  /* a bind was refused: the next step fails */
    int relaxed;      /* 1: its transaction commits without an fsync
                       * (store_query_transaction_relaxed); store_query_end
                       * puts the connection back to synchronous FULL */
};

/* What store_query_step answers besides STORE_ERROR. */
enum {
    STORE_STEP_ROW = 100,
    STORE_STEP_DONE = 101,
};

/* The order a card's queue is taken in, for ORDER BY and row-value
 * comparisons on table or alias t: canaries (STORE_CANARY_LABEL,
 * store_queue.h) after every other run, so that a run a person posts
 * while a canary waits to start goes first, and between the members of a
 * canary suite; otherwise oldest first. */
#define STORE_QUEUE_RANK(t) "(" t ".label IS '" STORE_CANARY_LABEL "'), " t ".rowid"
/* Run a is taken no later than run b (a queue position counts these). */
#define STORE_QUEUE_NOT_AFTER(a, b) "(" STORE_QUEUE_RANK(a) ") <= (" STORE_QUEUE_RANK(b) ")"
/* A stored RFC 3339 time (column or expression c, with its 'Z' and
 * milliseconds) as Unix milliseconds, in SQL: julianday() reads the text;
 * 2440587.5 is the Unix epoch as a Julian day. */
#define STORE_UNIX_MS(c) "CAST(round((julianday(" c ") - 2440587.5) * 86400000.0) AS INTEGER)"

/* Takes c's lock; no statement yet.  Always ended with store_query_end. */
void store_query_begin(struct store_query *q, struct conn *c, const char *what);

/* A query on outer's connection under outer's lock, beside outer's
 * statement: ending it releases only its own statement, and leaves a
 * failure on the connection for outer's store_query_end to map. */
void store_query_nest(struct store_query *q, struct store_query *outer);

/* Releases q's statement, if any, and prepares sql (static storage: the
 * statement caches key on its address).  STORE_OK or STORE_ERROR. */
int store_query_prepare(struct store_query *q, const char *sql);

/* BEGIN IMMEDIATE and COMMIT on q's connection: STORE_OK or STORE_ERROR.
 * A transaction not committed is rolled back by store_query_end. */
int store_query_transaction(struct store_query *q);
int store_query_commit(struct store_query *q);

/* store_query_transaction for writes that may be lost to a power cut
 * (never to a crash of the daemon: SQLite's WAL is written before COMMIT
 * answers) because they can be made again: PRAGMA synchronous = NORMAL for
 * this transaction only, so its COMMIT does not wait for fsync (the WAL is
 * synced at the next checkpoint or the next FULL commit).  A hub's pulled
 * runs are such writes: they and the peer's cursor commit together, so a
 * lost commit moves the cursor back and the runs are pulled again.
 * store_query_end restores FULL. */
int store_query_transaction_relaxed(struct store_query *q);

/* Bind ?i of q's statement by type: text (NULL binds SQL NULL), an
 * integer, a real (NaN or infinity binds SQL NULL), SQL NULL.  A refused
 * bind (no memory, no such parameter) makes the next step fail. */
void store_bind_text(struct store_query *q, int i, const char *v);
void store_bind_int64(struct store_query *q, int i, sqlite3_int64 v);
void store_bind_double(struct store_query *q, int i, double v);
void store_bind_null(struct store_query *q, int i);

/* One step of q's statement: STORE_STEP_ROW with a row to read,
 * STORE_STEP_DONE at its end, or STORE_ERROR. */
int store_query_step(struct store_query *q);

/* The step of a statement that yields at most one row: STORE_OK with the
 * row to read, STORE_NOT_FOUND with none, or STORE_ERROR. */
int store_query_one(struct store_query *q);

/* q's statement stepped to its end, each row made an item of a NEW array
 * *out by make (NULL: memory ran out).  STORE_OK, or STORE_ERROR with
 * *out NULL (q's end maps it). */
int store_query_rows(struct store_query *q, cJSON *(*make)(sqlite3_stmt *), cJSON **out);

/* The step of a statement without rows: STORE_OK (*changes, when not
 * NULL, gets the rows it changed) or STORE_ERROR. */
int store_query_exec(struct store_query *q, int *changes);

/* A value for store_query_run, by type: STORE_TEXT(s) (NULL: SQL NULL),
 * STORE_INT(n). */
struct store_value {
    enum {
        STORE_VALUE_TEXT,
        STORE_VALUE_INT,
    } type;
    const char *text;
    sqlite3_int64 i;
};
#define STORE_TEXT(v)                         \
    {                                         \
        .type = STORE_VALUE_TEXT, .text = (v) \
    }
#define STORE_INT(v)                      \
    {                                     \
        .type = STORE_VALUE_INT, .i = (v) \
    }

/* Prepares sql on q, binds the values as ?1, ?2, ... in order and runs it
 * (a statement without rows): store_query_prepare, the binds, then
 * store_query_exec. */
int store_query_run_values(struct store_query *q, const char *sql, int *changes,
                           const struct store_value *values, int n);
#define store_query_run(q, sql, changes, ...)                                        \
    store_query_run_values((q), (sql), (changes),                                    \
                           (const struct store_value[]){__VA_ARGS__},                \
                           (int)(sizeof((const struct store_value[]){__VA_ARGS__}) / \
                                 sizeof(struct store_value)))

/* Ends q: a failure (rc STORE_ERROR) goes through store_fail with q's
 * what while SQLite still holds it, a success that changed rows through
 * store_wrote; then the statement is released, a transaction still open
 * rolled back and the lock given back.  Returns rc, a failure as
 * store_fail mapped it.  A nested query only releases its statement. */
int store_query_end(struct store_query *q, int rc);

/* The one place a failure of SQLite on c is handled: logs what was being
 * done with SQLite's words, notes a full disk or a damaged file in the
 * store's health, and returns STORE_NO_SPACE, STORE_CORRUPT or
 * STORE_ERROR.  Call it on the failure path BEFORE the statement is
 * released or a ROLLBACK is run: both reset the connection's error
 * (store_query_end does). */
int store_fail(struct conn *c, const char *what);

/* Whether the error on db says the file is damaged: SQLite's own word
 * for it, or a JSON function refusing a value. */
int store_error_is_damage(sqlite3 *db);

/* Says that the writer's query q writes rows of host or card name (kind,
 * store_touch.h; name NULL for STORE_TOUCH_OWN and STORE_TOUCH_NONE), so
 * that a keeper of what is made per host (coverage_cache.h) makes again
 * only those.  A query that changes rows and says nothing is logged as
 * touching everything.  Nothing on a reader's query. */
void store_query_touch(struct store_query *q, int kind, const char *name);

/* Says that the writer's query q changes no row that a page of runs or
 * an export reads (a card's watch reading, a peer's pull record, a
 * webhook's outcome), so that store_state_tag stays the same: the ETag of
 * GET /runs would otherwise change once a minute on a node with nothing
 * new to show.  Said wrongly, a client would keep a stale page. */
void store_query_no_run_rows(struct store_query *q);

/* Says that q writes rows of run id: its host's and its card's, as its
 * row names them (a run's end has no host in its record).  STORE_OK, or
 * STORE_ERROR when the row could not be read. */
int store_touch_run(struct store_query *q, const char *id);

/* The writer's query under way begins: what an earlier one said is
 * dropped (store_query_begin). */
void store_touch_begin(struct conn *c);

/* Counts a write on c that changed rows, and logs what its query said it
 * touched (everything when it said nothing). */
void store_touch_count(struct conn *c);

/* Notes that a write on c succeeded: when it changed rows (so it reached
 * the disk), a full disk noted before is over. */
void store_wrote(struct conn *c);

/* A reader connection for store_query_begin, which takes the first of the
 * readers that is free, starting from this one (the thread's own), and
 * waits on this one only when every reader is busy. */
struct conn *store_reader(struct store *s);

/* Row helpers: a column's text (NULL for NULL), a JSON column parsed (a
 * NEW item, null for SQL NULL; NULL, and the damage noted for store_fail,
 * when it does not parse), a run object from a row selected with
 * RUN_COLUMNS (NEW; caller owns; its params a raw item).  The JSON ones
 * and the run return NULL when a column could not be read (a damaged
 * page, no memory): an error for store_fail, never a null to show.  A run
 * whose JSON columns do not hold JSON is served whole but marked damaged
 * (store_mark_damaged). */
const char *store_col_text(sqlite3_stmt *st, int col);
cJSON *store_json_column(sqlite3_stmt *st, int col);
/* A JSON column as a raw item (printed verbatim, not parsed): only for
 * columns this store wrote as JSON, and only for answers that print them. */
cJSON *store_raw_column(sqlite3_stmt *st, int col);
cJSON *store_run_from_row(sqlite3_stmt *st);

struct json_build;

/* Marks run damaged: "damaged": true and column added to its
 * "damaged_columns"; notes the run for the store's health (the query's
 * store_query_end says it in the log and in /healthz).  run must have its
 * "id" already. */
void store_mark_damaged(struct json_build *b, cJSON *run, const char *column);

/* 1 (and run marked, under name) when column col of st holds text that
 * is not JSON, as column ok_col, json_valid(col) in the same query, says;
 * 0 for SQL NULL or JSON. */
int store_column_damaged(struct json_build *b, cJSON *run, sqlite3_stmt *st, int col, int ok_col,
                         const char *name);

/* Column col as a NEW item, parsed or (raw) printed as stored; null for
 * SQL NULL.  NULL, and b failed, when it could not be read or memory ran
 * out: call it only on a column store_column_damaged passed. */
cJSON *store_column_item(struct json_build *b, sqlite3_stmt *st, int col, int raw);

/* Adds JSON column col under name to run: its value (store_column_item),
 * or null when store_column_damaged. */
void store_add_json(struct json_build *b, cJSON *run, const char *name, sqlite3_stmt *st, int col,
                    int ok_col, int raw);

/* A run as a verdict reads it, from a row selected with
 * VERDICT_RUN_COLUMNS: {"id", "benchmark", "params" (raw), "device":
 * {"name"}, "status", "created_at", "confirms", "validity": {"valid"},
 * "results": {"rows", "summary"}} (no results: null).  NEW, or NULL when a column
 * could not be read. */
cJSON *store_verdict_run_from_row(sqlite3_stmt *st);

/* A run as a verdict reads it from a row of q that selected
 * VERDICT_RUN_FIELDS: its "results" read by its id in a query nested in q.
 * NEW, or NULL (SQLite's error left for q's store_query_end). */
cJSON *store_verdict_run_from_fields(struct store_query *q, sqlite3_stmt *st);

/* For a row helper or a read that finds a value this store wrote as JSON
 * no longer valid: the store_fail that follows on this thread answers
 * STORE_CORRUPT; a query that ends well notes the damage in the store's
 * health.  Reset by store_query_begin: it never outlives its query. */
void store_note_damaged_value(void);

/* The same, naming the run served as damaged and its column (for the log
 * and /healthz; NULL id: unknown). */
void store_note_damaged_run(const char *id, const char *column);

/* store_query_begin's: forgets damage noted by an earlier query. */
void store_damage_reset(void);

/* store_query_end's, for a query that ended well: when it served a damaged
 * run, notes the damage in c's store's health and logs it. */
void store_damage_served(struct conn *c, const char *what);

/* A finished run's results, meta, digests and what its judging decided
 * (r->judged, which must be filled: a run is never stored unjudged),
 * inside the transaction of q on the writer.  row_judged: r's row was
 * inserted with its judged columns bound already (store_bind_judged: an
 * import or a pulled run, written once); else they are updated here (a
 * run measured here, whose row was written when it was queued).
 * STORE_OK or STORE_ERROR (for q's end to map). */
int store_put_results(struct store_query *q, const struct run_record *r, int row_judged);

/* Who speaks for a card (store_owners.c): its owner's origin ("" this
 * node) and the host its first run named; claim: the run asked about is
 * to claim the card once it is stored (store_card_claim). */
struct card_owner {
    char origin[160];
    char host[136];
    int claim;
};

/* Whether run r (its origin decided: a peer's URL or relayed origin,
 * "import"), coming through peer via (NULL: an import here), may name its
 * card (store_owners.c says who may): 1 it may (owner->claim set when the
 * card has no owner and r's origin is to claim it), 0 refused (owner
 * filled), -1 the owner could not be read.  On q, the writer, inside its
 * transaction. */
int store_card_speaks(struct store_query *q, const struct run_record *r, const char *via,
                      struct card_owner *owner);

/* Makes r's origin the owner of r's card (store_card_speaks said claim),
 * on q inside its transaction.  STORE_OK or STORE_ERROR. */
int store_card_claim(struct store_query *q, const struct run_record *r);

/* Makes this node the owner of the card of run_id, measured here, whoever
 * owned it before (the card is in this node's hands: logged when it was
 * another origin's).  On q inside its transaction.  STORE_OK or
 * STORE_ERROR. */
int store_card_claim_here(struct store_query *q, const char *run_id);

/* Binds j's columns to q's prepared statement from parameter first on, in
 * this order: driver_version, cuda_version, build, validity, valid,
 * checks, checks_failed, verdict_key (8 parameters). */
void store_bind_judged(struct store_query *q, int first, const struct run_judged *j);

/* Steps run r's change-point series with its points (r->judged.points;
 * none: nothing) inside q's transaction on the writer, and stores what
 * they found with its alerts (store_changes.c).  row_judged: r's row was
 * written from r in this transaction (store_put_results'), so its host,
 * card, key and creation time are bound from r rather than read back.
 * STORE_OK or STORE_ERROR. */
int store_put_changes(struct store_query *q, const struct run_record *r, int row_judged);

/* The comparability key the row written from r (an import's, a pull's:
 * bind_import, store_bind_judged) holds where the fleet's tables and the
 * change series take the run (done, keyed, not invalid, on a card), else
 * NULL: the WHERE of fleet_latest's and the series' writes, read from r. */
const char *store_series_key(const struct run_record *r);

/* The rows of q's prepared, bound statement as a NEW array *out, one
 * object a row: a column's name is its field's, a column named *_json is
 * parsed (the field loses the suffix).  STORE_OK or STORE_ERROR. */
int store_rows_as_objects(struct store_query *q, cJSON **out);

/* Runs sql (static) with text binds a and b (NULL: none) on a reader, its
 * rows as store_rows_as_objects makes them, NEW into *out; what names it
 * for the log. */
int store_read_objects(struct store *s, const char *what, const char *sql, const char *a,
                       const char *b, cJSON **out);

/* Queued runs of a device (or of the node, -1), on q. */
int store_count_queued(struct store_query *q, int device_index, long *depth);

#endif
