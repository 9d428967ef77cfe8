/*
 * cli_options.h - the client's command line: the subcommands (one table,
 * cli_options.c) and every option (one table beside it, which getopt_long's
 * table and each subcommand's --help are made from).
 */
#ifndef GPUBENCH_CLIENT_CLI_OPTIONS_H
#define GPUBENCH_CLIENT_CLI_OPTIONS_H

#include "cli.h"

#include <stdio.h>

struct cli_subcommand {
    const char *name;
    const char *usage;   /* what follows "gpubench NAME" in --help */
    const char *summary; /* one line */
    cli_command run;
    unsigned bit; /* the options that apply carry this bit in their mask */
};

/* Parses argv into c (opt, args, nargs) and finds the subcommand.
 * Returns the subcommand, or NULL with *exit_code set: 0 after printing
 * --help, CLI_ERROR after saying on stderr what was wrong. */
const struct cli_subcommand *cli_parse(int argc, char **argv, struct cli *c, int *exit_code);

/* --help of sub (or of gpubench as a whole when sub is NULL) on out. */
void cli_help(FILE *out, const struct cli_subcommand *sub);

#endif
