/*
 * main.c - gpubenchd: parse the command line, lock the database, take the
 * port, end the workers a previous daemon left, open the store, recover
 * what a crash left behind, discover the GPUs, serve, and wait for SIGINT
 * or SIGTERM; then stop in the reverse order.
 *
 * Everything that can refuse a start without harm (the lock, the port)
 * comes before anything that changes the database or the card: a second
 * daemon on the same database, or on a port in use, goes away having
 * touched nothing.
 *
 * Signals are blocked in every thread and taken synchronously here with
 * sigwait(), so no handler runs in the middle of another thread's work;
 * SIGHUP reloads the TLS certificate (tls.h) and reads --peers-file again
 * (peers.h).
 */
#include "app.h"
#include "alerts.h"
#include "card_watch.h"
#include "auth.h"
#include "canaries.h"
#include "db_lock.h"
#include "gpu_pool.h"
#include "handlers.h"
#include "http.h"
#include "json_arena.h"
#include "judge_sql.h"
#include "log.h"
#include "metrics_cache.h"
#include "coverage_cache.h"
#include "options.h"
#include "peers.h"
#include "ratelimit.h"
#include "run_cache.h"
#include "change_replay.h"
#include "runs.h"
#include "store.h"
#include "store_check.h"
#include "store_copy.h"
#include "store_functions.h"
#include "timeutil.h"
#include "tls.h"
#include "version.h"
#include "waiters.h"
#include "web_config.h"
#include "worker_strays.h"

#include <malloc.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* gpubenchd --check-db: SQLite's integrity check of --db, read-only, and
 * what to do about what it finds.  Exits 0 intact, 1 damaged, 2 when the
 * check could not be made, 3 when the file is not a gpubench database. */
static int check_db(const char *path)
{
    struct store_file_check res;
    char err[512];

    printf("checking %s (PRAGMA integrity_check, read-only)\n", path);
    if (store_check_file(path, stdout, &res, err, sizeof(err)) != STORE_OK) {
        fprintf(stderr, "gpubenchd: %s\n", err);
        return 2;
    }
    switch (res.state) {
    case STORE_FILE_INTACT:
        printf("%s: ok, no damage found: %ld runs, schema version %d%s\n", path, res.runs,
               res.schema_version,
               res.runs == 0 ? " (an empty history: a restored or recovered copy "
                               "should hold runs)"
                             : "");
        return 0;
    case STORE_FILE_NOT_GPUBENCH:
        printf("%s: NOT A GPUBENCH DATABASE: %s\n", path, res.why);
        return 3;
    case STORE_FILE_DAMAGED:
        break;
    }
    printf("%s: DAMAGED (the findings above)\n"
           "What to do: stop gpubenchd and keep a copy of the file as it is; then\n"
           "  - restore the newest backup of %s (README, \"Backups and restore\"), or\n"
           "  - recover what can still be read into a new file and start on it:\n"
           "      gpubenchd --recover %s --db recovered.db\n"
           "      gpubenchd --check-db --db recovered.db && gpubenchd --db recovered.db ...\n"
           "Runs on damaged pages may be lost; a peer or an export (GET /runs.ndjson,\n"
           "POST /runs/import) can bring copies back.\n",
           path, path, path);
    return 1;
}

/* gpubenchd --backup DEST: an online copy of --db.  Exits 0 or 1. */
static int backup_db(const char *db, const char *dest)
{
    struct store_copy_report report;
    char err[512];

    if (store_backup_file(db, dest, stdout, &report, err, sizeof(err)) != STORE_OK) {
        fprintf(stderr, "gpubenchd: backup: %s\n", err);
        return 1;
    }
    return 0;
}

/* gpubenchd --recover DAMAGED: what can be read of it, into --db (a new
 * file).  Exits 0 when the new file was written (what was lost is said),
 * 1 when not. */
static int recover_db(const char *damaged, const char *db)
{
    struct store_copy_report report;
    char err[512];

    if (store_recover_file(damaged, db, stdout, &report, err, sizeof(err)) != STORE_OK) {
        fprintf(stderr, "gpubenchd: recover: %s\n", err);
        return 1;
    }
    return 0;
}

/* How long past --shutdown-grace a request waiting on a running run is
 * given for the pool to put that run back: a runner notices the grace is
 * over within 250 ms (its reads from the worker are that short), then
 * kills the worker and writes the run back as queued. */
#define SETTLE_MS 500

/* Finished runs' JSON kept ready to send (run_cache.h). */
#define RUN_CACHE_BYTES (8 * 1024 * 1024)
/* Whole list pages, kept while nothing is written (runs_page_kept). */
#define PAGE_CACHE_BYTES (4 * 1024 * 1024)

int main(int argc, char **argv)
{
    struct options opt;
    struct http_options http_opt;
    struct app app;
    struct runs runs;
    struct gpu_pool_config pool = {0};
    struct alerts_config alerts = {0};
    struct card_watch_config watch = {0};
    struct peers_config peers = {0};
    struct canaries_config canaries = {0};
    struct waiters *waiters = NULL;
    struct run_cache *run_cache = NULL, *page_cache = NULL;
    const char *worker_owner = NULL;
    struct MHD_Daemon *http = NULL;
    struct db_lock *db_lock = NULL;
    struct store_checker *checker = NULL;
    struct store_retention retention;
    int listen_fd = -1;
    char bound[80];
    sigset_t stop_signals;
    char err[512];
    int sig = 0, recovered = 0, rc = 1;
    long replayed = 0;
    int64_t stop_ms;
    int left;

    /* cJSON's allocations through json_arena.h (malloc unless a thread
     * parses in an arena: the puller), set before any thread starts. */
    json_arena_install();
    /* The judge lends the store its SQL functions (the key, the method,
     * the checks) before any database is opened, checked or recovered. */
    store_functions_set(judge_sql_functions);
    switch (options_parse(&opt, argc, argv, stdout, stderr)) {
    case OPTIONS_EXIT_OK: /* nothing held: options_parse freed it */
        return 0;
    case OPTIONS_EXIT_USAGE:
        return 2;
    case OPTIONS_RUN:
        break;
    }
    if (opt.check_db || opt.backup || opt.recover) {
        rc = opt.check_db ? check_db(opt.db)
             : opt.backup ? backup_db(opt.db, opt.backup)
                          : recover_db(opt.recover, opt.db);
        options_free(&opt);
        return rc;
    }
    if (opt.verbose)
        log_set_level(LOG_DEBUG);
#ifdef M_ARENA_MAX
    /* glibc gives each thread an arena of its own and keeps what a large
     * answer (an export, a comparison) freed; two arenas keep the resident
     * size near what is in use. */
    mallopt(M_ARENA_MAX, 2);
#endif

    /* Block before any thread starts, so that all of them inherit it. */
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    signal(SIGPIPE, SIG_IGN); /* a dead worker's pipe is an error return */

    memset(&app, 0, sizeof(app));
    memset(&runs, 0, sizeof(runs));
    options_http(&opt, &http_opt);
    app.opt = &http_opt;
    app.started_mono_ms = time_mono_ms();
    time_now_rfc3339(app.started_at, sizeof(app.started_at));
    if (gethostname(app.host, sizeof(app.host) - 1) != 0)
        snprintf(app.host, sizeof(app.host), "unknown");

    log_info("gpubenchd %s (commit %s) starting", GPUBENCH_VERSION, GPUBENCH_GIT_COMMIT);
    if (opt.token_file) {
        app.auth = auth_load(opt.token_file, err, sizeof(err));
        if (app.auth == NULL) {
            log_error("%s", err);
            goto done;
        }
    }
    if (opt.web_config) {
        struct web_config web;

        if (web_config_load(opt.web_config, &web, err, sizeof(err)) != 0) {
            log_error("%s", err);
            goto done;
        }
        app.tls = http_tls_load(&web, err, sizeof(err));
        if (app.tls == NULL) {
            log_error("%s", err);
            goto done;
        }
    }
    /* Anyone who can reach the port can run work on the GPUs: beyond this
     * machine, only with tokens or verified client certificates, or when
     * told so in as many words. */
    if (!http_addr_is_loopback(opt.listen) && app.auth == NULL &&
        !http_tls_identifies(app.tls) && !opt.allow_unauthenticated) {
        log_error("refusing to listen on %s, beyond loopback, without bearer "
                  "tokens or client certificates: give --token-file, or a --web-config "
                  "with client_auth_type RequireAndVerifyClientCert, or "
                  "--allow-unauthenticated on a network you trust",
                  opt.listen);
        goto done;
    }
    if (db_lock_acquire(opt.db, &db_lock, err, sizeof(err)) != DB_LOCK_OK) {
        log_error("%s", err);
        goto done;
    }
    app.db_path = db_lock_db_path(db_lock);
    worker_owner = db_lock_owner_tag(db_lock);
    listen_fd = http_listen(opt.listen, err, sizeof(err));
    if (listen_fd < 0) {
        log_error("%s", err);
        goto done;
    }
    /* The address as bound, so that --listen 127.0.0.1:0 logs its port. */
    if (http_bound_address(listen_fd, bound, sizeof(bound)) != 0)
        snprintf(bound, sizeof(bound), "%s", opt.listen);
    worker_strays_end(worker_owner);
    app.post_limit = ratelimit_new(opt.rate_per_minute, opt.rate_burst);
    run_cache = run_cache_new(RUN_CACHE_BYTES);
    page_cache = run_cache_new(PAGE_CACHE_BYTES);
    if (store_open(opt.db, &app.store, err, sizeof(err)) != STORE_OK) {
        log_error("%s", err);
        goto done;
    }
    if (store_recover(app.store, &recovered) != STORE_OK)
        goto done;
    if (recovered)
        log_warn("%d run(s) were running when the daemon last stopped; marked "
                 "failed (interrupted)",
                 recovered);
    /* Runs stored before the change series replayed into them, before any
     * new run is (change_replay.h); a failure is logged and served past. */
    (void)change_replay(app.store, &replayed);
    retention.keep_samples_s = opt.keep_samples_s;
    retention.keep_newest = opt.history_runs;
    checker = store_checker_start(app.store, app.db_path, opt.db_check_delay_s,
                                  opt.db_check_interval_s, &retention);
    if (checker == NULL)
        goto done;
    waiters = waiters_new(http_park, http_resume);
    if (waiters == NULL) {
        log_error("cannot start the wait timer");
        goto done;
    }
    alerts.webhook = opt.alert_webhook;
    alerts.tls = opt.peer_tls;
    alerts.store = app.store;
    alerts.confirm_runs = opt.confirm_runs;
    alerts.max_queue = opt.max_queue;
    app.alerts = alerts_start(&alerts);
    if (app.alerts == NULL)
        goto done;
    alerts_recover(app.alerts); /* before the runners claim what it queues */
    runs.store = app.store;
    runs.waiters = waiters;
    runs.cache = run_cache;
    runs.pages = page_cache;
    runs.alerts = app.alerts;
    runs.host = app.host;
    runs.max_queue = opt.max_queue;
    runs.history_runs = opt.history_runs;
    watch.store = app.store;
    watch.alerts = app.alerts;
    watch.host = app.host;
    watch.critical_xids = opt.critical_xids;
    watch.n_critical_xids = opt.n_critical_xids;
    runs.watch = card_watch_new(&watch); /* NULL (logged): readings keep no events */
    pool.worker = opt.worker;
    pool.worker_owner = worker_owner;
    pool.host = app.host;
    pool.shutdown_grace_s = opt.shutdown_grace_s;
    pool.watch_interval_s = opt.watch_interval_s;
    pool.store = app.store;
    if (runs_pool_hooks(&runs, &pool.hooks) != 0) {
        log_error("out of memory starting the GPU runners");
        goto done;
    }
    app.gpus = gpu_pool_start(&pool);
    if (app.gpus == NULL) {
        log_error("out of memory starting the GPU runners");
        goto done;
    }
    runs.gpus = app.gpus; /* before the first request: then only read */
    app.runs = &runs;
    peers.store = app.store;
    peers.urls = opt.peers;
    peers.count = opt.peer_count;
    peers.peers_file = opt.peers_file;
    peers.concurrency = opt.peer_concurrency;
    peers.interval_s = opt.peer_interval_s;
    peers.token_file = opt.peer_token_file;
    peers.tls = opt.peer_tls;
    peers.test_benchmarks = opt.test_benchmarks;
    peers.max_clock_skew_ms = opt.max_clock_skew_s * 1000;
    peers.alerts = app.alerts;
    app.peers = peers_start(&peers);
    canaries.runs = &runs;
    canaries.specs = opt.canaries;
    canaries.n_specs = opt.canary_count;
    canaries.idle_s = opt.canary_idle_s;
    canaries.run_timeout_s = opt.run_timeout_s;
    app.canaries = canaries_start(&canaries);
    if (app.canaries == NULL)
        goto done;
    app.metrics = api_metrics_start(&app);
    if (app.metrics == NULL || (app.coverage = coverage_cache_new()) == NULL)
        goto done;
    http = http_start(&app, listen_fd, err, sizeof(err));
    listen_fd = -1; /* libmicrohttpd's now, even on failure (http.h) */
    if (http == NULL) {
        log_error("%s", err);
        goto done;
    }
    log_info("listening on %s://%s (database %s, worker %s, web %s)",
             app.tls ? "https" : "http", bound, app.db_path, opt.worker, opt.web);
    {
        char why[512];
        if (http_chartjs_problem(opt.chartjs, why, sizeof(why)) != 0)
            log_warn("the page's charts are off: %s", why);
    }

    for (;;) {
        if (sigwait(&stop_signals, &sig) != 0)
            continue;
        if (sig != SIGHUP)
            break;
        log_info("SIGHUP: %s%s", app.tls ? "reloading the TLS certificate" : "no --web-config",
                 opt.peers_file ? "; reading --peers-file again" : "");
        http_tls_reload(app.tls, 1);
        peers_reload(app.peers);
    }
    log_info("%s: stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
    rc = 0;

done:
    /* Shutdown.  First no run starts any more, a confirming or
     * canary run queued from here on included: it waits for the next
     * start.  Then every waiting request is answered (202, its runs as
     * they stand), those on a running run once the pool has ended it or
     * put it back, within the grace; libmicrohttpd cannot stop with
     * connections still suspended, and closes them whether answered or
     * not (http_stop lets the answers go out). */
    stop_ms = time_mono_ms();
    gpu_pool_stop_starting(app.gpus);
    runs_close_waits(&runs); /* none yet when the start failed */
    left = waiters_drain(waiters, stop_ms + (int64_t)opt.shutdown_grace_s * 1000 + SETTLE_MS);
    if (left > 0)
        log_warn("%d request(s) waiting on a running run answered with the run still "
                 "running: it was neither ended nor put back %d ms after the grace",
                 left, SETTLE_MS);
    http_stop(http, &app);
    metrics_cache_stop(app.metrics); /* after http_stop: scrapes read it */
    coverage_cache_free(app.coverage);
    peers_stop(app.peers);
    canaries_stop(app.canaries); /* before the pool and the store it reads */
    gpu_pool_stop(app.gpus);
    runs_pool_hooks_free(&runs); /* after the runners: they keep ends there */
    card_watch_free(runs.watch); /* after the runners: they hand it readings */
    alerts_stop(app.alerts);     /* after the runners: they announce alerts */
    waiters_free(waiters);
    store_checker_stop(checker);
    store_close(app.store);
    ratelimit_free(app.post_limit);
    run_cache_free(run_cache);
    run_cache_free(page_cache);
    auth_free(app.auth);
    http_tls_free(app.tls); /* after http_stop: the handshakes use it */
    if (listen_fd >= 0)
        close(listen_fd);
    db_lock_release(db_lock); /* last: the database is closed */
    options_free(&opt);       /* last: app.peers read the --peer URLs */
    if (rc == 0)
        log_info("stopped");
    return rc;
}
