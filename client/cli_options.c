/*
 * cli_options.c - see cli_options.h.  Adding a subcommand is a line in
 * subcommands[]; adding an option is a line in option_table[] naming the
 * subcommands it applies to (its mask), and a field in struct
 * cli_options.  getopt_long's table and every --help come from these.
 * An option that means something different to different subcommands
 * (--device: the GPU to run on, or the runs to list) has a line for each,
 * with its own mask and help, and the same field and kind.
 *
 * Options may come before or after the subcommand (getopt_long permutes
 * argv); one given to a subcommand it does not apply to is refused, never
 * ignored.
 */
#include "cli_options.h"
#include "version.h"

#include <getopt.h>
#include <stddef.h>
#include <string.h>

enum {
    SUB_RUN = 1u << 0,
    SUB_RUNS = 1u << 1,
    SUB_SHOW = 1u << 2,
    SUB_COMPARE = 1u << 3,
    SUB_FLEET = 1u << 4,
    SUB_IMPORT = 1u << 5,
    SUB_CHECK = 1u << 6,
    SUB_CHANGES = 1u << 7,
    SUB_DEMO = 1u << 8,
    SUB_ALL = 0xffffu,
};

static const struct cli_subcommand subcommands[] = {
    {"run", "BENCHMARK [options]", "post a run; with --wait, follow it and print its rows",
     cmd_run, SUB_RUN},
    {"runs", "[options]", "list runs, newest first", cmd_runs, SUB_RUNS},
    {"show", "ID", "one run: its card, driver, CUDA and rows", cmd_show, SUB_SHOW},
    {"compare", "--baseline SEL --candidate SEL [options]",
     "judge a candidate against a baseline; the exit status says the verdict", cmd_compare,
     SUB_COMPARE},
    {"fleet", "[options]", "every card against its peers of the same model", cmd_fleet,
     SUB_FLEET},
    {"import", "FILE", "send finished runs (NDJSON, one a line) to the daemon", cmd_import,
     SUB_IMPORT},
    {"check", "[--host NAME] [--max-age 24h] [--textfile DIR]",
     "whether a node's cards may take jobs, for Slurm's HealthCheckProgram; the exit status "
     "answers",
     cmd_check, SUB_CHECK},
    {"changes", "[--host NAME] [--since DATE]",
     "the fleet's change points and drifts, newest first (README: change points and drift)",
     cmd_changes, SUB_CHANGES},
    {"demo", "[DIR]",
     "import the example H200 runs as a small made-up fleet (copies marked in their label)",
     cmd_demo, SUB_DEMO},
};

enum option_kind {
    OPT_STRING,
    OPT_FLAG,
    OPT_PARAM,
};

struct cli_option_spec {
    const char *name; /* without "--" */
    const char *arg;  /* the value's placeholder in --help; NULL: a flag */
    const char *help;
    enum option_kind kind;
    size_t field; /* offsetof in struct cli_options */
    unsigned mask;
};

#define FIELD(member) offsetof(struct cli_options, member)

static const struct cli_option_spec option_table[] = {
    {"url", "URL", "the daemon (default $GPUBENCH_URL, else http://127.0.0.1:8080)", OPT_STRING,
     FIELD(url), SUB_ALL},
    {"token-file", "PATH", "a file whose first line is the bearer token (default $GPUBENCH_TOKEN)",
     OPT_STRING, FIELD(token_file), SUB_ALL},
    {"cacert", "FILE", "the CA (PEM) of an https:// daemon (default $GPUBENCH_CACERT)",
     OPT_STRING, FIELD(tls.ca_file), SUB_ALL},
    {"cert", "FILE", "a client certificate (PEM), for mutual TLS (default $GPUBENCH_CERT)",
     OPT_STRING, FIELD(tls.cert_file), SUB_ALL},
    {"key", "FILE", "the key (PEM) of --cert, if not in its file (default $GPUBENCH_KEY)",
     OPT_STRING, FIELD(tls.key_file), SUB_ALL},
    {"json", NULL, "print the daemon's JSON as it is, for machines", OPT_FLAG, FIELD(json),
     SUB_ALL},
    {"help", NULL, "this help", OPT_FLAG, FIELD(help), SUB_ALL},
    {"version", NULL, "print the client's version and commit, and exit", OPT_FLAG,
     FIELD(version), SUB_ALL},
    {"strides", "N,N,...", "the strides to measure (params.strides)", OPT_STRING,
     FIELD(strides), SUB_RUN},
    {"param", "KEY=VALUE", "a benchmark parameter; VALUE is read as JSON when it parses "
                           "(repeatable)",
     OPT_PARAM, FIELD(params), SUB_RUN},
    {"device", "N|all|UUID", "the GPU: an index, a UUID, or all (one run per GPU)", OPT_STRING,
     FIELD(device), SUB_RUN},
    {"label", "TEXT", "a label kept with the run", OPT_STRING, FIELD(label), SUB_RUN},
    {"device", "N|UUID|NAME", "only runs on this GPU: its index, UUID or model name", OPT_STRING,
     FIELD(device), SUB_RUNS},
    {"host", "NAME", "only runs measured on this host", OPT_STRING, FIELD(host), SUB_RUNS},
    {"label", "TEXT", "only runs with this label", OPT_STRING, FIELD(label), SUB_RUNS},
    {"host", "NAME", "the node to check (default: the daemon's own GPUs)", OPT_STRING,
     FIELD(host), SUB_CHECK},
    {"max-age", "DURATION", "a health benchmark not run within it is stale (24h, 90m, 7d; "
                            "default 24h)",
     OPT_STRING, FIELD(max_age), SUB_CHECK},
    {"textfile", "DIR", "also write DIR/gpubench.prom for node_exporter's textfile collector",
     OPT_STRING, FIELD(textfile), SUB_CHECK},
    {"batch", "ID", "only the runs of one --device all post (its batch id)", OPT_STRING,
     FIELD(batch), SUB_RUNS},
    {"wait", NULL, "follow the run to its end (a progress bar on a terminal), then print it",
     OPT_FLAG, FIELD(wait), SUB_RUN},
    {"benchmark", "NAME", "only this benchmark", OPT_STRING, FIELD(benchmark),
     SUB_RUNS | SUB_COMPARE | SUB_FLEET},
    {"status", "STATUS", "queued, running, done, failed or cancelled", OPT_STRING, FIELD(status),
     SUB_RUNS},
    {"valid", "true|false", "valid runs, or invalid ones", OPT_STRING, FIELD(valid), SUB_RUNS},
    {"limit", "N", "at most N runs a page, 1 to 500 (the daemon's default 50)", OPT_STRING,
     FIELD(limit), SUB_RUNS},
    {"after", "CURSOR", "the page after the one that printed \"--after CURSOR\"", OPT_STRING,
     FIELD(after), SUB_RUNS},
    {"all", NULL, "every page, not only the first (--limit sets the page's size)", OPT_FLAG,
     FIELD(all), SUB_RUNS},
    {"baseline", "SEL", "card:UUID, runs:ID,..., label:TEXT, host:NAME, driver:VERSION or a "
                        "pinned baseline's name",
     OPT_STRING, FIELD(baseline), SUB_COMPARE},
    {"candidate", "SEL", "the same forms as --baseline", OPT_STRING, FIELD(candidate),
     SUB_COMPARE},
    {"margin", "FRACTION", "a shift within it is the same (0.01 is 1%, the default)", OPT_STRING,
     FIELD(margin), SUB_COMPARE},
    {"since", "DATE", "only runs made on or after (2026-01-31 or a UTC date-time)", OPT_STRING,
     FIELD(since), SUB_COMPARE},
    {"until", "DATE", "only runs made on or before", OPT_STRING, FIELD(until), SUB_COMPARE},
    {"host", "NAME", "only this node's cards", OPT_STRING, FIELD(host), SUB_CHANGES},
    {"since", "DATE", "only changes at or after (2026-01-31 or a UTC date-time)", OPT_STRING,
     FIELD(since), SUB_CHANGES},
};

#define OPTION_COUNT (sizeof(option_table) / sizeof(option_table[0]))
#define SUBCOMMAND_COUNT (sizeof(subcommands) / sizeof(subcommands[0]))

void cli_help(FILE *out, const struct cli_subcommand *sub)
{
    if (sub == NULL) {
        fprintf(out, "usage: gpubench COMMAND [options]\n\n"
                     "A client of gpubenchd.  Commands:\n");
        for (size_t i = 0; i < SUBCOMMAND_COUNT; i++)
            fprintf(out, "  %-8s %s\n", subcommands[i].name, subcommands[i].summary);
        fprintf(out, "\n'gpubench COMMAND --help' lists a command's options.  Exit status: 0 "
                     "done, 1 a run failed,\ncompare found a row slower or check a card "
                     "degraded, 2 compare was inconclusive or check\nfound a card unchecked, "
                     "3 an error.\n\nOptions of every command:\n");
    } else {
        fprintf(out, "usage: gpubench %s %s\n\n%s.\n\nOptions:\n", sub->name, sub->usage,
                sub->summary);
    }
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        const struct cli_option_spec *o = &option_table[i];
        char left[40];
        if (sub ? !(o->mask & sub->bit) : o->mask != SUB_ALL)
            continue;
        snprintf(left, sizeof(left), "--%s%s%s", o->name, o->arg ? " " : "",
                 o->arg ? o->arg : "");
        fprintf(out, "  %-24s %s\n", left, o->help);
    }
    if (sub && sub->bit == SUB_CHECK)
        fprintf(out, "\nExit status: 0 every card healthy and checked within --max-age, 1 a "
                     "card degraded,\n2 a card unknown or stale, or no GPU, 3 an error.  The "
                     "first line is the reason.\n");
    if (sub && sub->bit == SUB_COMPARE)
        fprintf(out, "\nExit status: 0 same (or faster), 1 slower, 2 inconclusive or not "
                     "comparable, 3 an error.\n");
}

static int store_option(struct cli_options *opt, const struct cli_option_spec *o,
                        const char *text)
{
    char *base = (char *)opt + o->field;

    switch (o->kind) {
    case OPT_FLAG:
        *(int *)base = 1;
        return 0;
    case OPT_STRING:
        *(const char **)base = text;
        return 0;
    case OPT_PARAM:
        if (opt->param_count == CLI_MAX_PARAMS || strchr(text, '=') == NULL ||
            text[0] == '=') {
            fprintf(stderr, "gpubench: --param %s: expected KEY=VALUE (at most %d)\n", text,
                    CLI_MAX_PARAMS);
            return -1;
        }
        opt->params[opt->param_count++] = text;
        return 0;
    }
    return -1;
}

/* Whether the option of option_table[i], under any of its lines, applies
 * to sub. */
static int applies(size_t i, const struct cli_subcommand *sub)
{
    for (size_t j = 0; j < OPTION_COUNT; j++)
        if (strcmp(option_table[j].name, option_table[i].name) == 0 &&
            (option_table[j].mask & sub->bit))
            return 1;
    return 0;
}

const struct cli_subcommand *cli_parse(int argc, char **argv, struct cli *c, int *exit_code)
{
    struct option longopts[OPTION_COUNT + 1];
    size_t spec_of[OPTION_COUNT]; /* longopts[k] is option_table[spec_of[k]] */
    unsigned char given[OPTION_COUNT] = {0};
    const struct cli_subcommand *sub = NULL;
    size_t nlong = 0;
    int index;

    *exit_code = CLI_ERROR;
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        size_t k = 0;
        while (k < nlong && strcmp(longopts[k].name, option_table[i].name) != 0)
            k++;
        if (k < nlong)
            continue; /* a second line of one option: getopt_long knows it once */
        spec_of[nlong] = i;
        longopts[nlong++] = (struct option){option_table[i].name,
                                            option_table[i].arg ? required_argument : no_argument,
                                            NULL, 0};
    }
    longopts[nlong] = (struct option){NULL, 0, NULL, 0};
    opterr = 0;
    c->nargs = 0;
    for (;;) {
        int ch;
        index = -1;
        ch = getopt_long(argc, argv, "+:h", longopts, &index);
        if (ch == -1) {
            /* "+": stop at each word that is not an option; the first is
             * the subcommand, the rest its arguments, and after "--"
             * everything is an argument. */
            int rest = strcmp(argv[optind - 1], "--") == 0;
            if (optind >= argc)
                break;
            do {
                if (sub == NULL) {
                    for (size_t i = 0; i < SUBCOMMAND_COUNT && sub == NULL; i++)
                        if (strcmp(argv[optind], subcommands[i].name) == 0)
                            sub = &subcommands[i];
                    if (sub == NULL) {
                        fprintf(stderr,
                                "gpubench: %s: no such command (gpubench --help lists them)\n",
                                argv[optind]);
                        return NULL;
                    }
                } else if (c->nargs < CLI_MAX_ARGS) {
                    c->args[c->nargs++] = argv[optind];
                } else {
                    fprintf(stderr, "gpubench: at most %d arguments\n", CLI_MAX_ARGS);
                    return NULL;
                }
                optind++;
            } while (rest && optind < argc);
            continue;
        }
        if (ch == 'h') {
            c->opt.help = 1;
            continue;
        }
        if (ch != 0 || index < 0) {
            fprintf(stderr, "gpubench: %s: %s\n", argv[optind - 1],
                    ch == ':' ? "needs a value" : "unknown option (gpubench --help)");
            return NULL;
        }
        given[spec_of[index]] = 1;
        if (store_option(&c->opt, &option_table[spec_of[index]], optarg) != 0)
            return NULL;
    }
    if (c->opt.help) {
        cli_help(stdout, sub);
        *exit_code = CLI_OK;
        return NULL;
    }
    if (c->opt.version) {
        printf("gpubench %s (commit %s)\n", GPUBENCH_VERSION, GPUBENCH_GIT_COMMIT);
        *exit_code = CLI_OK;
        return NULL;
    }
    if (sub == NULL) {
        cli_help(stderr, NULL);
        return NULL;
    }
    for (size_t i = 0; i < OPTION_COUNT; i++)
        if (given[i] && !applies(i, sub)) {
            fprintf(stderr, "gpubench %s: --%s is not one of its options (gpubench %s --help)\n",
                    sub->name, option_table[i].name, sub->name);
            return NULL;
        }
    return sub;
}
