/*
 * main.c - gpubench, the command-line client of gpubenchd: parses the
 * command line (cli_options.c), finds the daemon and the token, and hands
 * over to the subcommand.  See cli.h for the exit statuses.
 *
 * Where the daemon is: --url, else $GPUBENCH_URL, else the daemon's own
 * default address.  The token: --token-file (its first line), else
 * $GPUBENCH_TOKEN; none is sent when neither is set.  TLS to an https://
 * daemon: --cacert, --cert and --key, else $GPUBENCH_CACERT,
 * $GPUBENCH_CERT and $GPUBENCH_KEY, as curl names them; the daemon's
 * certificate is always verified.  Colour and the
 * progress bar only when stdout is a terminal, and no colour with
 * $NO_COLOR set (https://no-color.org).
 */
#include "cli.h"
#include "cli_options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_URL "http://127.0.0.1:8080"
#define TOKEN_CAP 512

/* The option's value, else the environment's when set and not empty. */
static const char *or_env(const char *given, const char *name)
{
    const char *v = given ? given : getenv(name);

    return v && v[0] ? v : NULL;
}

/* The token's first line of path into out[TOKEN_CAP]; 0, or -1 said. */
static int read_token_file(const char *path, char *out)
{
    FILE *f = fopen(path, "r");
    int rc = -1;

    if (f == NULL) {
        fprintf(stderr, "gpubench: --token-file %s: cannot read it: %s\n", path, strerror(errno));
        return -1;
    }
    if (fgets(out, TOKEN_CAP, f) == NULL) {
        fprintf(stderr, "gpubench: --token-file %s: the file is empty\n", path);
        goto done;
    }
    out[strcspn(out, "\r\n")] = '\0';
    if (out[0] == '\0') {
        fprintf(stderr, "gpubench: --token-file %s: the first line is empty\n", path);
        goto done;
    }
    rc = 0;
done:
    fclose(f);
    return rc;
}

/* A file of --cacert, --cert or --key (or the variable that named it)
 * that cannot be opened, said before curl says "error setting certificate
 * file"; 0 when it reads or was not given. */
static int check_tls_file(const char *given, const char *option, const char *variable)
{
    const char *path = given ? given : getenv(variable);
    FILE *f;

    if (path == NULL || path[0] == '\0')
        return 0;
    if ((f = fopen(path, "r")) == NULL) {
        fprintf(stderr, "gpubench: %s %s: cannot read it: %s\n", given ? option : variable, path,
                strerror(errno));
        return -1;
    }
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    static struct cli c; /* zeroed */
    const struct cli_subcommand *sub;
    const char *token = getenv("GPUBENCH_TOKEN");
    const char *no_colour = getenv("NO_COLOR");
    char token_buf[TOKEN_CAP], err[512];
    int rc;

    sub = cli_parse(argc, argv, &c, &rc);
    if (sub == NULL)
        return rc;
    if (c.opt.url == NULL)
        c.opt.url = getenv("GPUBENCH_URL");
    if (c.opt.url == NULL || c.opt.url[0] == '\0')
        c.opt.url = DEFAULT_URL;
    if (strncmp(c.opt.url, "http://", 7) != 0 && strncmp(c.opt.url, "https://", 8) != 0) {
        fprintf(stderr, "gpubench: --url %s: expected an http:// or https:// URL\n", c.opt.url);
        return CLI_ERROR;
    }
    if (c.opt.token_file != NULL) {
        if (read_token_file(c.opt.token_file, token_buf) != 0)
            return CLI_ERROR;
        token = token_buf;
    }
    if (token != NULL && token[0] == '\0')
        token = NULL;
    c.token_from = token == NULL              ? NULL
                   : c.opt.token_file != NULL ? c.opt.token_file
                                              : "GPUBENCH_TOKEN";
    if (check_tls_file(c.opt.tls.ca_file, "--cacert", "GPUBENCH_CACERT") != 0 ||
        check_tls_file(c.opt.tls.cert_file, "--cert", "GPUBENCH_CERT") != 0 ||
        check_tls_file(c.opt.tls.key_file, "--key", "GPUBENCH_KEY") != 0)
        return CLI_ERROR;
    c.opt.tls.ca_file = or_env(c.opt.tls.ca_file, "GPUBENCH_CACERT");
    c.opt.tls.cert_file = or_env(c.opt.tls.cert_file, "GPUBENCH_CERT");
    c.opt.tls.key_file = or_env(c.opt.tls.key_file, "GPUBENCH_KEY");
    c.tty = isatty(STDOUT_FILENO) && !c.opt.json;
    c.colour = c.tty && (no_colour == NULL || no_colour[0] == '\0');
    if ((c.http = gb_http_open(c.opt.url, token, &c.opt.tls, err, sizeof(err))) == NULL) {
        fprintf(stderr, "gpubench: %s\n", err);
        return CLI_ERROR;
    }
    rc = sub->run(&c);
    gb_http_close(c.http);
    if (fflush(stdout) != 0) {
        perror("gpubench: stdout");
        rc = CLI_ERROR;
    }
    return rc;
}
