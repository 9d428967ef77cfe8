/*
 * options.c - see options.h.  Every option is one line of option_table
 * below: getopt_long's table, the defaults and --help are all made from it,
 * so adding an option is adding a line (and a field in struct options).
 *
 * A default is applied by the option's own parser, from the same text that
 * --help shows.  The defaults that depend on where the binary lies (the
 * worker beside it, web/ installed under ../share/gpubench or in the source
 * tree it was built from) are found from /proc/self/exe instead, and --help
 * describes them in words.
 */
#include "options.h"
#include "duration.h"
#include "peers_file.h"
#include "card_events.h"
#include "shift.h"
#include "app.h"
#include "http.h"
#include "version.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct option_spec;

/* Stores text (an argument, or the default) into opt; on a bad value says
 * why on err and returns -1. */
typedef int (*option_setter)(struct options *opt, const struct option_spec *spec,
                             const char *text, FILE *err);

struct option_spec {
    const char *name;  /* without the leading "--" */
    const char *arg;   /* the value's placeholder in --help; NULL: a flag */
    const char *init;  /* the default, given to set before argv; NULL: none */
    const char *shown; /* the default as --help shows it, when not init */
    const char *help;
    option_setter set;
    size_t field; /* offsetof the member of struct options */
    int min, max; /* for set_int */
};

static int set_flag(struct options *opt, const struct option_spec *spec, const char *text,
                    FILE *err)
{
    (void)text;
    (void)err;
    *(int *)((char *)opt + spec->field) = 1;
    return 0;
}

static int set_string(struct options *opt, const struct option_spec *spec,
                      const char *text, FILE *err)
{
    (void)err;
    *(const char **)((char *)opt + spec->field) = text;
    return 0;
}

/* Into one of the struct's own char[OPTIONS_PATH_CAP] buffers. */
static int set_path(struct options *opt, const struct option_spec *spec, const char *text,
                    FILE *err)
{
    char *dst = (char *)opt + spec->field;

    if (strlen(text) >= OPTIONS_PATH_CAP) {
        fprintf(err, "gpubenchd: --%s: the path is over %d bytes\n", spec->name,
                OPTIONS_PATH_CAP - 1);
        return -1;
    }
    memcpy(dst, text, strlen(text) + 1);
    return 0;
}

/* A file read later (by libcurl, at each connection): refused now when it
 * cannot be read, rather than at the first pull. */
static int set_readable(struct options *opt, const struct option_spec *spec,
                        const char *text, FILE *err)
{
    FILE *f = fopen(text, "r");

    if (f == NULL) {
        fprintf(err, "gpubenchd: --%s %s: %s\n", spec->name, text, strerror(errno));
        return -1;
    }
    fclose(f);
    return set_string(opt, spec, text, err);
}

static int set_int(struct options *opt, const struct option_spec *spec, const char *text,
                   FILE *err)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < spec->min || v > spec->max) {
        fprintf(err, "gpubenchd: --%s %s: expected a whole number from %d to %d\n",
                spec->name, text, spec->min, spec->max);
        return -1;
    }
    *(int *)((char *)opt + spec->field) = (int)v;
    return 0;
}

_Static_assert(sizeof(((struct options *)0)->critical_xids) ==
                   CARD_CRITICAL_XIDS_MAX * sizeof(int),
               "options.h's critical_xids holds CARD_CRITICAL_XIDS_MAX");

/* --critical-xids: the XIDs that are critical card events (card_events.h). */
static int set_xids(struct options *opt, const struct option_spec *spec, const char *text,
                    FILE *err)
{
    int n = card_critical_xids_parse(text, opt->critical_xids, CARD_CRITICAL_XIDS_MAX);

    if (n < 0) {
        fprintf(err, "gpubenchd: --%s %s: expected XID numbers separated by commas (at most %d)\n",
                spec->name, text, CARD_CRITICAL_XIDS_MAX);
        return -1;
    }
    opt->n_critical_xids = n;
    return 0;
}

static int set_listen(struct options *opt, const struct option_spec *spec,
                      const char *text, FILE *err)
{
    const char *why = http_addr_problem(text);

    if (why != NULL) {
        fprintf(err, "gpubenchd: --%s %s: %s\n", spec->name, text, why);
        return -1;
    }
    return set_string(opt, spec, text, err);
}

static int set_peer(struct options *opt, const struct option_spec *spec, const char *text,
                    FILE *err)
{
    char url[PEER_URL_CAP], why[300];

    if (strncmp(text, "http://", 7) != 0 && strncmp(text, "https://", 8) != 0) {
        fprintf(err, "gpubenchd: --%s %s: expected an http:// or https:// URL\n", spec->name,
                text);
        return -1;
    }
    /* held to what the peers file's targets are: no credentials, a host,
     * a port in range */
    if (peer_url_normalize(text, url, sizeof(url), why, sizeof(why)) != 0) {
        fprintf(err, "gpubenchd: --%s: %s\n", spec->name, why);
        return -1;
    }
    opt->peers[opt->peer_count++] = text;
    return 0;
}

/* --canary BENCHMARK@PERIOD, repeatable: each checked alone and against
 * those before it (canary_rule.h). */
static int set_canary(struct options *opt, const struct option_spec *spec, const char *text,
                      FILE *err)
{
    struct canary_spec c;
    char why[256];

    if (opt->canary_count >= CANARY_MAX) {
        fprintf(err, "gpubenchd: --%s %s: at most %d canaries\n", spec->name, text, CANARY_MAX);
        return -1;
    }
    if (canary_spec_parse(text, &c, why, sizeof(why)) != 0 ||
        canary_spec_fits(opt->canaries, opt->canary_count, &c, why, sizeof(why)) != 0) {
        fprintf(err, "gpubenchd: --%s %s: %s\n", spec->name, text, why);
        return -1;
    }
    opt->canaries[opt->canary_count++] = c;
    return 0;
}

/* A length of time ("10m", "24h", "90s", or seconds) into an int64_t of
 * seconds. */
static int set_duration(struct options *opt, const struct option_spec *spec, const char *text,
                        FILE *err)
{
    if (gb_duration_s(text, (int64_t *)((char *)opt + spec->field)) != 0) {
        fprintf(err,
                "gpubenchd: --%s %s: expected a whole number then s, m, h or d (e.g. 10m), "
                "from 1s to 366d\n",
                spec->name, text);
        return -1;
    }
    return 0;
}

/* --web-allowed-origins: each one scheme://host[:port], as a browser's
 * Origin header says it (no path, no trailing "/"). */
static int set_origins(struct options *opt, const struct option_spec *spec, const char *text,
                       FILE *err)
{
    for (const char *o = text; *o;) {
        char one[256];
        const char *host;
        size_t n;

        o += strspn(o, " ");
        n = strcspn(o, ",");
        if (n >= sizeof(one))
            n = sizeof(one) - 1;
        memcpy(one, o, n);
        one[n] = '\0';
        host = strstr(one, "://");
        if ((strncmp(one, "http://", 7) != 0 && strncmp(one, "https://", 8) != 0) ||
            host[3] == '\0' || strchr(host + 3, '/') != NULL) {
            fprintf(err,
                    "gpubenchd: --%s %s: expected origins like https://grafana.example:3000, "
                    "separated by commas (scheme, host and port: no path)\n",
                    spec->name, text);
            return -1;
        }
        o += strcspn(o, ",");
        o += *o == ',';
    }
    return set_string(opt, spec, text, err);
}

#define FIELD(member) offsetof(struct options, member)

/* The README's Configuration table lists the same names and defaults;
 * tests/unit/readme_options.py fails when the two differ. */
static const struct option_spec option_table[] = {
    {"listen", "ADDR:PORT", "127.0.0.1:8080", NULL,
     "where to listen: [::1]:8080 for IPv6, :8080 for every address (only with "
     "tokens, verified client certificates, or --allow-unauthenticated); port 0: the "
     "kernel picks one, and the "
     "\"listening on\" line names it",
     set_listen, FIELD(listen), 0, 0},
    {"db", "PATH", "./gpubench.db", NULL, "the SQLite database", set_string, FIELD(db), 0, 0},
    {"web", "DIR", NULL, "the installed share/gpubench/web, else the source tree's web/",
     "the web page's files", set_path, FIELD(web), 0, 0},
    {"chartjs", "PATH", "/usr/share/javascript/chart.js/chart.min.js", NULL,
     "Chart.js for the page's charts (Debian's libjs-chart.js)", set_string, FIELD(chartjs), 0,
     0},
    {"worker", "PATH", NULL, "gpubench-worker beside gpubenchd", "the worker program", set_path,
     FIELD(worker), 0, 0},
    {"token-file", "PATH", NULL, "none",
     "bearer tokens, one a line (or its SHA-256 in hex); then POST and DELETE need "
     "'Authorization: Bearer'",
     set_string, FIELD(token_file), 0, 0},
    {"web-config", "FILE", NULL, "none: plain HTTP",
     "serve HTTPS as this Prometheus exporter-toolkit web config says (tls_server_config: "
     "cert_file, key_file, client_auth_type, client_ca_file, min_version, max_version); a "
     "renewed certificate is taken at the next handshake, and on SIGHUP",
     set_string, FIELD(web_config), 0, 0},
    {"auth-reads", NULL, NULL, "off", "reads need a token too", set_flag, FIELD(auth_reads), 0,
     0},
    {"allow-unauthenticated", NULL, NULL, "off",
     "listen beyond loopback without tokens or client certificates",
     set_flag, FIELD(allow_unauthenticated), 0, 0},
    {"metrics-peer-results", NULL, NULL, "off",
     "/metrics also exports per-row result gauges and robust z for cards held from peers and "
     "imports (by default only this daemon's own cards have them; README, Prometheus)",
     set_flag, FIELD(metrics_peer_results), 0, 0},
    {"peer", "URL", NULL, "none",
     "a peer gpubenchd to pull finished runs from (repeatable, e.g. http://node7:8080)",
     set_peer, FIELD(peers), 0, 0},
    {"peers-file", "PATH", NULL, "none",
     "more peers, in Prometheus's file_sd format (a JSON list of {\"targets\": [\"host:port\" "
     "or a URL, ...], \"labels\": {...}}); read again when it changes and on SIGHUP, a broken "
     "one reported and the last good list kept",
     set_readable, FIELD(peers_file), 0, 0},
    {"peer-concurrency", "N", "16", NULL, "pulls from peers at once", set_int,
     FIELD(peer_concurrency), 1, 1024},
    {"peer-interval", "SECONDS", "30", NULL, "between pulls from each peer", set_int,
     FIELD(peer_interval_s), 1, 86400},
    {"peer-token-file", "PATH", NULL, "none",
     "a bearer token (its first line) sent to peers that close their reads (--auth-reads)",
     set_string, FIELD(peer_token_file), 0, 0},
    {"peer-ca-file", "PATH", NULL, "the system's CAs",
     "the CA certificates (PEM) an https:// peer's or webhook's certificate must chain to; "
     "one that does not verify is never pulled or posted to",
     set_readable, FIELD(peer_tls.ca_file), 0, 0},
    {"peer-cert-file", "PATH", NULL, "none",
     "a client certificate (PEM) for https:// peers and the webhook that ask for one "
     "(mutual TLS)",
     set_readable, FIELD(peer_tls.cert_file), 0, 0},
    {"peer-key-file", "PATH", NULL, "in --peer-cert-file",
     "the private key (PEM) of --peer-cert-file", set_readable, FIELD(peer_tls.key_file), 0, 0},
    {"max-clock-skew", "DURATION", "5m", NULL,
     "a run imported or pulled whose times lie further ahead of this daemon's clock than "
     "this is refused (a pull skips and counts it): a run dated in the future would keep "
     "its card checked and its canary not due",
     set_duration, FIELD(max_clock_skew_s), 0, 0},
    {"max-queue", "N", "100", NULL, "queued runs the node holds at most", set_int,
     FIELD(max_queue), 1, 1000000},
    {"history-runs", "N", "10", NULL,
     "a finished run is judged against its card's last N valid runs of the same benchmark, "
     "params and card model (at least 8: fewer cannot tell a slow card from its own "
     "run-to-run swing)",
     set_int, FIELD(history_runs), GB_HISTORY_MIN_RUNS, 1000},
    {"confirm-runs", "N", "1", NULL,
     "confirming runs queued when a run is slower than its history or a fleet outlier; only "
     "a repeated change raises an alert (0: alert at once)",
     set_int, FIELD(confirm_runs), 0, 8},
    {"alert-webhook", "URL", NULL, "none",
     "POST each confirmed alert here as JSON (retried with back-off); an https:// one is "
     "verified by --peer-ca-file",
     set_string, FIELD(alert_webhook), 0, 0},
    {"watch-interval", "SECONDS", "60", NULL,
     "between watch probes of an idle card: its worker reads NVML (processes, utilisation, "
     "XIDs, ECC, row remaps, links) and the daemon stores what changed as card events (0: "
     "no watch)",
     set_int, FIELD(watch_interval_s), 0, 86400},
    {"critical-xids", "LIST", CARD_CRITICAL_XIDS_DEFAULT, NULL,
     "the XIDs (comma-separated) that are critical card events: an alert, and the card "
     "degraded; \"\" for none",
     set_xids, FIELD(critical_xids), 0, 0},
    {"run-timeout", "SECONDS", "300", NULL, "the longest a run may take", set_int,
     FIELD(run_timeout_s), 1, 86400},
    {"shutdown-grace", "SECONDS", "10", NULL,
     "on SIGTERM, how long the running run may finish before it is put back in the queue",
     set_int, FIELD(shutdown_grace_s), 0, 3600},
    {"rate-limit", "N", "120", NULL,
     "runs and imports a client may post a minute (0: no limit)", set_int,
     FIELD(rate_per_minute), 0, 1000000},
    {"rate-burst", "N", "30", NULL, "runs and imports a client may post at once", set_int,
     FIELD(rate_burst), 1, 1000000},
    {"max-connections", "N", "256", NULL, "connections at once, the whole daemon's", set_int,
     FIELD(max_connections), 1, 100000},
    {"max-connections-per-ip", "N", "64", NULL, "connections at once from one client address",
     set_int, FIELD(max_connections_per_ip), 1, 100000},
    {"max-body-memory", "MIB", "256", NULL,
     "request bodies buffered at once, all requests together; an upload past it is answered "
     "503 with Retry-After (a body is read only once its headers passed the token, origin "
     "and rate checks)",
     set_int, FIELD(max_body_mib), 1, 1024 * 1024},
    {"web-host", "NAMES", NULL, "none",
     "more names (comma-separated) this daemon is reached by, e.g. a DNS alias, on loopback "
     "or without tokens: there a Host header that is not an IP address, localhost, the "
     "node's own name or one of these is answered 421 (DNS rebinding)",
     set_string, FIELD(web_hosts), 0, 0},
    {"web-allowed-origins", "LIST", NULL, "none",
     "web pages of other origins (comma-separated, e.g. https://grafana.example:3000) that "
     "may call the API; any other page's request, by its Origin header, is answered 403",
     set_origins, FIELD(web_allowed_origins), 0, 0},
    {"http-threads", "N", "4", NULL, "HTTP threads", set_int, FIELD(http_threads), 1, 64},
    {"test-benchmarks", NULL, NULL, "off",
     "offer test_fault (an illegal address) and test_hang (a kernel that never ends), to "
     "show the daemon surviving both",
     set_flag, FIELD(test_benchmarks), 0, 0},
    {"check-db", NULL, NULL, NULL,
     "check the database (--db) with SQLite's integrity check, read-only (a running daemon "
     "may keep it open), say what to do if it is damaged, and exit: 0 intact, 1 damaged, 2 "
     "could not check",
     set_flag, FIELD(check_db), 0, 0},
    {"backup", "DEST", NULL, NULL,
     "copy the database (--db) to the new file DEST, consistently, beside a running daemon "
     "(SQLite's backup API, read-only), check the copy, say how many runs it holds, and exit: "
     "0 done, 1 not (DEST is then not written; an existing DEST is never replaced)",
     set_string, FIELD(backup), 0, 0},
    {"recover", "DAMAGED", NULL, NULL,
     "read what can still be read of the damaged database DAMAGED into the new file --db, "
     "migrate and check it, say how many runs it recovered and how many it could not read, "
     "and exit: 0 written, 1 not",
     set_string, FIELD(recover), 0, 0},
    {"db-check-delay", "SECONDS", "10", NULL,
     "a running daemon checks its database (PRAGMA quick_check, table by table, on a "
     "read-only connection of its own) this long after it starts; damage then shows in "
     "/healthz and /metrics",
     set_int, FIELD(db_check_delay_s), 0, 86400},
    {"db-check-interval", "SECONDS", "86400", NULL,
     "and again this often (0: only once)", set_int, FIELD(db_check_interval_s), 0,
     31 * 86400},
    {"canary", "BENCHMARK@PERIOD", NULL, "none",
     "check each card of the node with this benchmark or suite at most once a PERIOD (s, m, "
     "h or d: health@24h), on a card that has been quiet for --canary-idle with nothing "
     "queued, after any run a person posts; labelled canary, shown by GET /canaries "
     "(repeatable)",
     set_canary, FIELD(canaries), 0, 0},
    {"canary-idle", "DURATION", "10m", NULL,
     "how long a card must have been quiet (no other process, under 5% busy) before a "
     "canary starts on it",
     set_duration, FIELD(canary_idle_s), 0, 0},
    {"verbose", NULL, NULL, NULL, "log every request", set_flag, FIELD(verbose), 0, 0},
    {"help", NULL, NULL, NULL, "print this and exit (also -h)", NULL, 0, 0, 0},
    {"version", NULL, NULL, NULL, "print the version and exit", NULL, 0, 0, 0},
};

#define OPTION_COUNT (sizeof(option_table) / sizeof(option_table[0]))
/* getopt_long returns OPTION_BASE + the entry's index, above any char. */
#define OPTION_BASE 256

/* Words of text, wrapped to end before column 80, the first line starting
 * at column col and the rest at column indent. */
static void print_wrapped(FILE *out, const char *text, int col, int indent)
{
    while (*text) {
        size_t word = strcspn(text, " ");

        if (col > indent && col + 1 + (int)word > 79) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', out);
            col++;
        }
        fprintf(out, "%.*s", (int)word, text);
        col += (int)word;
        text += word;
        text += strspn(text, " ");
    }
    fputc('\n', out);
}

static void print_help(FILE *out)
{
    enum { HELP_COLUMN = 32 };

    fputs("usage: gpubenchd [options]\n"
          "\n"
          "Runs CUDA micro-benchmarks on this node's GPUs on request over HTTP and\n"
          "keeps every run, with the card's metadata, in SQLite.  --name VALUE or\n"
          "--name=VALUE.\n"
          "\n",
          out);
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        const struct option_spec *s = &option_table[i];
        const char *def = s->init ? s->init : s->shown;
        char text[512];
        int col;

        col = fprintf(out, "  --%s%s%s", s->name, s->arg ? " " : "", s->arg ? s->arg : "");
        if (col >= HELP_COLUMN - 1) {
            fprintf(out, "\n%*s", HELP_COLUMN, "");
        } else {
            fprintf(out, "%*s", HELP_COLUMN - col, "");
        }
        if (def)
            snprintf(text, sizeof(text), "%s (default: %s)", s->help, def);
        else
            snprintf(text, sizeof(text), "%s", s->help);
        print_wrapped(out, text, HELP_COLUMN, HELP_COLUMN);
    }
}

static void exe_dir(char *buf, size_t cap)
{
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

    if (n <= 0) {
        snprintf(buf, cap, ".");
        return;
    }
    path[n] = '\0';
    snprintf(buf, cap, "%s", dirname(path));
}

static int is_dir(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void default_paths(struct options *opt)
{
    char dir[2048];

    exe_dir(dir, sizeof(dir));
    snprintf(opt->worker, sizeof(opt->worker), "%s/gpubench-worker", dir);
    snprintf(opt->web, sizeof(opt->web), "%s/../share/gpubench/web", dir);
    if (!is_dir(opt->web))
        snprintf(opt->web, sizeof(opt->web), "%s", GPUBENCH_SOURCE_DIR "/web");
}

/* The name of the option argv[optind - 1] was, as typed, up to any '='. */
static void print_unknown(FILE *err, const char *arg)
{
    fprintf(err, "gpubenchd: unknown option '%.*s' (see --help)\n",
            (int)strcspn(arg, "="), arg);
}

/* options_parse without its cleanup: it may return with opt->peers held. */
static enum options_result parse_all(struct options *opt, int argc, char **argv, FILE *out,
                                     FILE *err)
{
    struct option longopts[OPTION_COUNT + 1];
    int c;

    memset(opt, 0, sizeof(*opt));
    /* Each --peer takes a word of argv: room for all of them, no cap. */
    opt->peers = calloc((size_t)argc + 1, sizeof(*opt->peers));
    if (opt->peers == NULL) {
        fprintf(err, "gpubenchd: out of memory\n");
        return OPTIONS_EXIT_USAGE;
    }
    default_paths(opt);
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        const struct option_spec *s = &option_table[i];

        if (s->init && s->set(opt, s, s->init, err) != 0)
            return OPTIONS_EXIT_USAGE; /* a bad line in option_table */
        longopts[i] = (struct option){s->name, s->arg ? required_argument : no_argument, NULL,
                                      OPTION_BASE + (int)i};
    }
    longopts[OPTION_COUNT] = (struct option){NULL, 0, NULL, 0};

    /* Errors are ours to word; 0 restarts getopt's scan for each call. */
    opterr = 0;
    optind = 0;
    /* "+": stop at the first word that is not an option; ":": a missing
     * value comes back as ':' rather than '?'. */
    while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
        const struct option_spec *s;

        if (c == 'h') {
            print_help(out);
            return OPTIONS_EXIT_OK;
        }
        if (c == ':') {
            fprintf(err, "gpubenchd: %s needs a value (see --help)\n", argv[optind - 1]);
            return OPTIONS_EXIT_USAGE;
        }
        if (c == '?') {
            if (optopt >= OPTION_BASE) {
                fprintf(err, "gpubenchd: --%s takes no value\n",
                        option_table[optopt - OPTION_BASE].name);
            } else if (optopt) {
                fprintf(err, "gpubenchd: unknown option '-%c' (see --help)\n", optopt);
            } else {
                print_unknown(err, argv[optind - 1]);
            }
            return OPTIONS_EXIT_USAGE;
        }
        s = &option_table[c - OPTION_BASE];
        if (strcmp(s->name, "help") == 0) {
            print_help(out);
            return OPTIONS_EXIT_OK;
        }
        if (strcmp(s->name, "version") == 0) {
            fprintf(out, "gpubenchd %s (commit %s)\n", GPUBENCH_VERSION, GPUBENCH_GIT_COMMIT);
            return OPTIONS_EXIT_OK;
        }
        if (s->set(opt, s, optarg, err) != 0)
            return OPTIONS_EXIT_USAGE;
    }
    if (optind < argc) {
        fprintf(err, "gpubenchd: unexpected argument '%s' (options start with --; see --help)\n",
                argv[optind]);
        return OPTIONS_EXIT_USAGE;
    }
    if (opt->peer_tls.key_file && !opt->peer_tls.cert_file) {
        fprintf(err, "gpubenchd: --peer-key-file needs --peer-cert-file, the certificate it is "
                     "the key of\n");
        return OPTIONS_EXIT_USAGE;
    }
    return OPTIONS_RUN;
}

enum options_result options_parse(struct options *opt, int argc, char **argv,
                                  FILE *out, FILE *err)
{
    enum options_result r = parse_all(opt, argc, argv, out, err);

    /* Only a daemon that runs keeps what it parsed. */
    if (r != OPTIONS_RUN)
        options_free(opt);
    return r;
}

void options_free(struct options *opt)
{
    free(opt->peers);
    opt->peers = NULL;
    opt->peer_count = 0;
}

void options_http(const struct options *opt, struct http_options *http)
{
    memset(http, 0, sizeof(*http));
    http->listen = opt->listen;
    http->web = opt->web;
    http->chartjs = opt->chartjs;
    http->run_timeout_s = opt->run_timeout_s;
    http->test_benchmarks = opt->test_benchmarks;
    http->max_clock_skew_s = opt->max_clock_skew_s;
    http->auth_reads = opt->auth_reads;
    http->metrics_peer_results = opt->metrics_peer_results;
    http->http_threads = opt->http_threads;
    http->max_connections = opt->max_connections;
    http->max_connections_per_ip = opt->max_connections_per_ip;
    http->web_hosts = opt->web_hosts;
    http->web_allowed_origins = opt->web_allowed_origins;
    http->max_body_bytes = (size_t)opt->max_body_mib * 1024 * 1024;
}
