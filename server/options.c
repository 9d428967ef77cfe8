/*
 * options.c - see options.h.  The defaults that depend on where the binary
 * lies (the worker beside it, web/ installed under ../share/gpubench or in
 * the source tree it was built from) are found from /proc/self/exe.
 */
#include "options.h"
#include "version.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage[] =
    "usage: gpubenchd [options]\n"
    "\n"
    "Runs CUDA micro-benchmarks on this node's GPUs on request over HTTP and\n"
    "keeps every run, with the card's metadata, in SQLite.\n"
    "\n"
    "  --listen ADDR:PORT     where to listen (default 127.0.0.1:8080)\n"
    "  --db PATH              the SQLite database (default ./gpubench.db)\n"
    "  --web DIR              the web page's files (default: the installed web/)\n"
    "  --worker PATH          the worker program (default: gpubench-worker\n"
    "                         beside this binary)\n"
    "  --chartjs PATH         Chart.js for the page's charts (default\n"
    "                         /usr/share/javascript/chart.js/chart.min.js,\n"
    "                         from Debian's libjs-chart.js)\n"
    "  --token-file PATH      bearer tokens, one a line (or its SHA-256 in hex);\n"
    "                         then POST and DELETE need 'Authorization: Bearer'\n"
    "  --auth-reads           reads need a token too\n"
    "  --allow-unauthenticated  listen beyond loopback without tokens\n"
    "  --rate-limit N         runs a client may post a minute (default 120;\n"
    "                         0: no limit), in bursts of --rate-burst (default 30)\n"
    "  --max-connections N    at once (default 256), and per client address\n"
    "  --max-connections-per-ip N  (default 64)\n"
    "  --peer URL             a peer gpubenchd to pull finished runs from\n"
    "                         (repeatable, e.g. http://node7:8080)\n"
    "  --peer-interval SECONDS  between pulls from each peer (default 30)\n"
    "  --peer-token-file PATH a bearer token (its first line) sent to peers\n"
    "                         that close their reads (--auth-reads)\n"
    "  --max-queue N          queued runs the node holds at most (default 100)\n"
    "  --run-timeout SECONDS  the longest a run may take (default 300)\n"
    "  --shutdown-grace SECONDS  on SIGTERM, how long the running run may\n"
    "                         finish before it is put back in the queue\n"
    "                         (default 10)\n"
    "  --http-threads N       HTTP threads (default 4)\n"
    "  --verbose              log every request\n"
    "  --check-db             check the database (--db) with SQLite's\n"
    "                         integrity check, read-only (a running daemon\n"
    "                         may keep it open), say what to do if it is\n"
    "                         damaged, and exit: 0 intact, 1 damaged, 2 could\n"
    "                         not check\n"
    "  --test-benchmarks      offer test_fault (an illegal address) and\n"
    "                         test_hang (a kernel that never ends), to show\n"
    "                         the daemon surviving both\n"
    "  --help, --version\n";

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

static int parse_int(const char *name, const char *text, int min, int max,
                     int *out, FILE *err)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < min || v > max) {
        fprintf(err, "gpubenchd: %s %s: expected a whole number from %d to %d\n",
                name, text, min, max);
        return -1;
    }
    *out = (int)v;
    return 0;
}

enum options_result options_parse(struct options *opt, int argc, char **argv,
                                  FILE *out, FILE *err)
{
    memset(opt, 0, sizeof(*opt));
    opt->listen = "127.0.0.1:8080";
    opt->db = "./gpubench.db";
    opt->chartjs = "/usr/share/javascript/chart.js/chart.min.js";
    opt->max_queue = 100;
    opt->run_timeout_s = 300;
    opt->shutdown_grace_s = 10;
    opt->http_threads = 4;
    opt->peer_interval_s = 30;
    opt->rate_per_minute = 120;
    opt->rate_burst = 30;
    opt->max_connections = 256;
    opt->max_connections_per_ip = 64;
    default_paths(opt);

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes_value = 1;

        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, out);
            return OPTIONS_EXIT_OK;
        }
        if (strcmp(a, "--version") == 0) {
            fprintf(out, "gpubenchd %s (commit %s)\n", GPUBENCH_VERSION,
                    GPUBENCH_GIT_COMMIT);
            return OPTIONS_EXIT_OK;
        }
        if (strcmp(a, "--verbose") == 0) {
            opt->verbose = 1;
            continue;
        }
        if (strcmp(a, "--auth-reads") == 0) {
            opt->auth_reads = 1;
            continue;
        }
        if (strcmp(a, "--allow-unauthenticated") == 0) {
            opt->allow_unauthenticated = 1;
            continue;
        }
        if (strcmp(a, "--check-db") == 0) {
            opt->check_db = 1;
            continue;
        }
        if (strcmp(a, "--test-benchmarks") == 0) {
            opt->test_benchmarks = 1;
            continue;
        }
        if (v == NULL) {
            fprintf(err, "gpubenchd: %s needs a value (see --help)\n", a);
            return OPTIONS_EXIT_USAGE;
        }
        if (strcmp(a, "--listen") == 0) {
            opt->listen = v;
        } else if (strcmp(a, "--db") == 0) {
            opt->db = v;
        } else if (strcmp(a, "--web") == 0) {
            snprintf(opt->web, sizeof(opt->web), "%s", v);
        } else if (strcmp(a, "--worker") == 0) {
            snprintf(opt->worker, sizeof(opt->worker), "%s", v);
        } else if (strcmp(a, "--chartjs") == 0) {
            opt->chartjs = v;
        } else if (strcmp(a, "--token-file") == 0) {
            opt->token_file = v;
        } else if (strcmp(a, "--rate-limit") == 0) {
            if (parse_int(a, v, 0, 1000000, &opt->rate_per_minute, err))
                return OPTIONS_EXIT_USAGE;
        } else if (strcmp(a, "--rate-burst") == 0) {
            if (parse_int(a, v, 1, 1000000, &opt->rate_burst, err))
                return OPTIONS_EXIT_USAGE;
        } else if (strcmp(a, "--max-connections") == 0) {
            if (parse_int(a, v, 1, 100000, &opt->max_connections, err))
                return OPTIONS_EXIT_USAGE;
        } else if (strcmp(a, "--max-connections-per-ip") == 0) {
            if (parse_int(a, v, 1, 100000, &opt->max_connections_per_ip, err))
                return OPTIONS_EXIT_USAGE;
        } else if (strcmp(a, "--peer") == 0) {
            if (strncmp(v, "http://", 7) != 0 && strncmp(v, "https://", 8) != 0) {
                fprintf(err, "gpubenchd: --peer %s: expected an http:// or https:// URL\n", v);
                return OPTIONS_EXIT_USAGE;
            }
            if (opt->peer_count == OPTIONS_MAX_PEERS) {
                fprintf(err, "gpubenchd: at most %d peers\n", OPTIONS_MAX_PEERS);
                return OPTIONS_EXIT_USAGE;
            }
            opt->peers[opt->peer_count++] = v;
        } else if (strcmp(a, "--peer-token-file") == 0) {
            opt->peer_token_file = v;
        } else if (strcmp(a, "--peer-interval") == 0) {
            if (parse_int(a, v, 1, 86400, &opt->peer_interval_s, err))
                return OPTIONS_EXIT_USAGE;
        } else if (strcmp(a, "--max-queue") == 0) {
            if (parse_int(a, v, 1, 1000000, &opt->max_queue, err))
                return OPTIONS_EXIT_USAGE;
        } else if (strcmp(a, "--run-timeout") == 0) {
            if (parse_int(a, v, 1, 86400, &opt->run_timeout_s, err))
                return OPTIONS_EXIT_USAGE;
        } else if (strcmp(a, "--shutdown-grace") == 0) {
            if (parse_int(a, v, 0, 3600, &opt->shutdown_grace_s, err))
                return OPTIONS_EXIT_USAGE;
        } else if (strcmp(a, "--http-threads") == 0) {
            if (parse_int(a, v, 1, 64, &opt->http_threads, err))
                return OPTIONS_EXIT_USAGE;
        } else {
            takes_value = 0;
        }
        if (!takes_value) {
            fprintf(err, "gpubenchd: unknown option %s (see --help)\n", a);
            return OPTIONS_EXIT_USAGE;
        }
        i++;
    }
    return OPTIONS_RUN;
}
