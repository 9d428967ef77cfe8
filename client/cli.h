/*
 * cli.h - what the parts of the gpubench client share: the parsed command
 * line (filled from the one option table of cli_options.c), the
 * subcommands (each in a file of its own, listed in main.c's table) and
 * the exit statuses, which scripts and CI jobs read:
 *
 *   0  success; compare: every row the same (or faster: not a regression)
 *   1  run --wait: the run failed or was cancelled; compare: a row slower
 *   2  compare: inconclusive, or the groups could not be compared
 *   3  an error: the command line, the connection, or the daemon's answer
 * (check reads 1 as a card degraded, 2 as a card unknown or stale: cmd_check.c)
 */
#ifndef GPUBENCH_CLIENT_CLI_H
#define GPUBENCH_CLIENT_CLI_H

#include "curl_tls.h"
#include "dynbuf.h"
#include "http_client.h"

#include <cjson/cJSON.h>
#include <stddef.h>

enum cli_exit {
    CLI_OK = 0,
    CLI_FAILED = 1,
    CLI_INCONCLUSIVE = 2,
    CLI_ERROR = 3,
};

#define CLI_MAX_PARAMS 32
#define CLI_MAX_ARGS 8

/* Every option of every subcommand; a field stays NULL (or 0) when the
 * option was not given.  Strings point into argv or the environment. */
struct cli_options {
    const char *url;
    const char *token_file;
    struct curl_tls tls; /* --cacert, --cert, --key (or $GPUBENCH_CACERT, ...) */
    int json;
    int help;
    int version;
    /* run (and runs, as filters: device, label) */
    const char *strides;
    const char *params[CLI_MAX_PARAMS]; /* "k=v", as given */
    int param_count;
    const char *device;
    const char *label;
    int wait;
    /* runs, compare, fleet */
    const char *benchmark;
    const char *host;
    const char *batch;
    const char *status;
    const char *valid;
    const char *limit;
    const char *after; /* runs: the cursor a page's "more:" line gave */
    int all;           /* runs: every page */
    const char *baseline;
    const char *candidate;
    const char *margin;
    const char *since;
    const char *until;
    /* check */
    const char *max_age;
    const char *textfile;
};

/* One invocation: the options, the positional arguments after the
 * subcommand, the daemon connection, and how to print. */
struct cli {
    struct cli_options opt;
    char *args[CLI_MAX_ARGS];
    int nargs;
    struct gb_http *http;
    int tty;    /* stdout is a terminal: a progress bar may be drawn */
    int colour; /* tty and NO_COLOR unset */
    /* where the token sent came from (the --token-file path or
     * "GPUBENCH_TOKEN"), NULL when none is sent: a 401 says which */
    const char *token_from;
};

/* A subcommand: returns one of enum cli_exit. */
typedef int (*cli_command)(struct cli *c);

int cmd_run(struct cli *c);
int cmd_runs(struct cli *c);
int cmd_show(struct cli *c);
int cmd_compare(struct cli *c);
int cmd_fleet(struct cli *c);
int cmd_import(struct cli *c);
int cmd_check(struct cli *c);
int cmd_changes(struct cli *c);
int cmd_demo(struct cli *c);

/* Runs sent to POST /runs/import in pages under the daemon's body cap
 * (cmd_import.c): init, a line at a time, finish (the last page), say,
 * free.  Each page is stored all or nothing; a refused page is said on
 * stderr with the lines it held.  what names the source in messages. */
struct cli_import {
    struct cli *c;
    const char *what;
    struct dynbuf page; /* owned */
    long line;          /* lines read so far */
    long page_lines;    /* of them, in the page held */
    long imported, already;
    long conflicts; /* of already: held here with another origin */
    int pages;      /* sent and accepted */
};
void cli_import_init(struct cli_import *im, struct cli *c, const char *what);
int cli_import_line(struct cli_import *im, const char *line, size_t len);
int cli_import_finish(struct cli_import *im);
void cli_import_say(const struct cli_import *im);
void cli_import_free(struct cli_import *im);

/* GETs path (with its query) and parses the JSON answer into a NEW *out
 * the caller deletes.  On --json prints the daemon's text as it is.  A
 * transport failure or an error answer is said on stderr (the daemon's
 * error.message and code as they are) and returns CLI_ERROR. */
int cli_get_json(struct cli *c, const char *path, cJSON **out);

/* The same for any method, with an optional JSON body of len bytes; the
 * answer is printed as it is only when echo is set. */
int cli_request_json(struct cli *c, const char *method, const char *path, const char *body,
                     size_t len, int echo, cJSON **out);

/* Says a failed answer on stderr ("gpubench: MESSAGE (CODE, HTTP 404)");
 * with --json also prints the daemon's body on stdout.  CLI_ERROR. */
int cli_report_error(struct cli *c, const struct gb_response *res);

/* A run as a person reads it: what ran where (card, driver, CUDA, date),
 * its status, validity or error, then its rows as a table (cmd_show.c). */
void cli_print_run(struct cli *c, const cJSON *run);

/* The text at a path of nested object fields ("meta", "driver",
 * "nvidia_version", NULL), or NULL. */
const char *cli_json_text(const cJSON *obj, ...);

#endif
