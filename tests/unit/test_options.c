/* The command line: defaults, --name VALUE and --name=VALUE, and errors
 * that name the real problem (an unknown option is not "needs a value", a
 * port past 65535 is not "beyond loopback"). */
#include "options.h"
#include "test.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Parses argv (NULL-terminated, without the program's name); the message
 * written to err lands in msg. */
static enum options_result parse(struct options *opt, char *msg, size_t cap, ...)
{
    char *argv[32] = {"gpubenchd"};
    int argc = 1;
    va_list ap;
    FILE *err = tmpfile();
    FILE *out = tmpfile();
    enum options_result r;
    size_t n;

    va_start(ap, cap);
    for (char *a; argc < 31 && (a = va_arg(ap, char *)) != NULL;)
        argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;
    if (err == NULL || out == NULL)
        abort();
    r = options_parse(opt, argc, argv, out, err);
    rewind(err);
    n = fread(msg, 1, cap - 1, err);
    msg[n] = '\0';
    fclose(err);
    fclose(out);
    return r;
}

static int test_defaults(void)
{
    struct options o;
    char msg[512];

    ASSERT_EQ(parse(&o, msg, sizeof(msg), NULL), OPTIONS_RUN);
    ASSERT_STR_EQ(o.listen, "127.0.0.1:8080");
    ASSERT_STR_EQ(o.db, "./gpubench.db");
    ASSERT_STR_EQ(o.chartjs, "/usr/share/javascript/chart.js/chart.min.js");
    ASSERT(o.token_file == NULL && o.peer_token_file == NULL);
    ASSERT_EQ(o.peer_count, 0);
    ASSERT_EQ(o.max_queue, 100);
    ASSERT_EQ(o.run_timeout_s, 300);
    ASSERT_EQ(o.shutdown_grace_s, 10);
    ASSERT_EQ(o.http_threads, 4);
    ASSERT_EQ(o.peer_interval_s, 30);
    ASSERT_EQ(o.rate_per_minute, 120);
    ASSERT_EQ(o.rate_burst, 30);
    ASSERT_EQ(o.max_connections, 256);
    ASSERT_EQ(o.max_connections_per_ip, 64);
    ASSERT(!o.verbose && !o.auth_reads && !o.allow_unauthenticated && !o.test_benchmarks);
    ASSERT(strstr(o.worker, "/gpubench-worker") != NULL);
    ASSERT_STR_EQ(msg, "");
    options_free(&o);
    return 0;
}

static int test_both_spellings(void)
{
    struct options o;
    char msg[512];

    ASSERT_EQ(parse(&o, msg, sizeof(msg), "--listen=[::1]:9000", "--max-queue", "7",
                    "--web=/srv/web", "--peer", "http://a:1", "--peer=https://b:2",
                    "--verbose", "--rate-limit=0", NULL),
              OPTIONS_RUN);
    ASSERT_STR_EQ(o.listen, "[::1]:9000");
    ASSERT_EQ(o.max_queue, 7);
    ASSERT_STR_EQ(o.web, "/srv/web");
    ASSERT_EQ(o.peer_count, 2);
    ASSERT_STR_EQ(o.peers[1], "https://b:2");
    ASSERT_EQ(o.verbose, 1);
    ASSERT_EQ(o.rate_per_minute, 0);
    options_free(&o);
    /* A second call starts over (getopt keeps state between calls). */
    ASSERT_EQ(parse(&o, msg, sizeof(msg), "--db", "x.db", NULL), OPTIONS_RUN);
    ASSERT_STR_EQ(o.db, "x.db");
    ASSERT_EQ(o.peer_count, 0);
    options_free(&o);
    return 0;
}

/* Port 0 is a port: the kernel picks a free one and the daemon's "listening
 * on" line names it (tests/api/harness.py starts every daemon so). */
static int test_port_zero(void)
{
    static const char *const addrs[] = {"127.0.0.1:0", ":0", "[::1]:0"};

    for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
        struct options o;
        char msg[512];

        ASSERT_EQ(parse(&o, msg, sizeof(msg), "--listen", addrs[i], NULL), OPTIONS_RUN);
        ASSERT_STR_EQ(o.listen, addrs[i]);
        ASSERT_STR_EQ(msg, "");
        options_free(&o);
    }
    return 0;
}

static int test_errors_name_the_problem(void)
{
    static const struct {
        const char *args[3];
        const char *says;
    } cases[] = {
        {{"--bogus"}, "unknown option '--bogus'"},
        {{"--bogus=1"}, "unknown option '--bogus'"},
        {{"-x"}, "unknown option '-x'"},
        {{"--listen", "127.0.0.1:99999"}, "port out of range"},
        {{"--listen=127.0.0.1:99999"}, "port out of range"},
        {{"--listen", "127.0.0.1"}, "expected ADDR:PORT"},
        {{"--listen", "nohost:80"}, "not an IPv4 address"},
        {{"--listen"}, "--listen needs a value"},
        {{"--db"}, "--db needs a value"},
        {{"--max-queue", "0"}, "--max-queue 0: expected a whole number from 1 to 1000000"},
        {{"--run-timeout", "x"}, "--run-timeout x: expected a whole number"},
        {{"--verbose=1"}, "--verbose takes no value"},
        {{"--peer", "ftp://x"}, "expected an http:// or https:// URL"},
        {{"stray"}, "unexpected argument 'stray'"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct options o;
        char msg[512];

        ASSERT_EQ(parse(&o, msg, sizeof(msg), cases[i].args[0], cases[i].args[1],
                        cases[i].args[2]),
                  OPTIONS_EXIT_USAGE);
        if (strstr(msg, cases[i].says) == NULL) {
            fprintf(stderr, "%s: said \"%s\", expected \"%s\"\n", cases[i].args[0], msg,
                    cases[i].says);
            return 1;
        }
        ASSERT(strstr(msg, "beyond loopback") == NULL);
    }
    return 0;
}

/* The TLS files to peers and the webhook are refused at start when they
 * cannot be read, not at the first pull; a key is the key of a certificate. */
static int test_peer_tls_files(void)
{
    struct options o;
    char msg[512];

    ASSERT_EQ(parse(&o, msg, sizeof(msg), "--peer-ca-file", "/dev/null", "--peer-cert-file",
                    "/dev/null", "--peer-key-file", "/dev/zero", NULL),
              OPTIONS_RUN);
    ASSERT_STR_EQ(o.peer_tls.ca_file, "/dev/null");
    ASSERT_STR_EQ(o.peer_tls.cert_file, "/dev/null");
    ASSERT_STR_EQ(o.peer_tls.key_file, "/dev/zero");
    options_free(&o);
    ASSERT_EQ(parse(&o, msg, sizeof(msg), NULL), OPTIONS_RUN);
    ASSERT(o.peer_tls.ca_file == NULL && o.peer_tls.cert_file == NULL &&
           o.peer_tls.key_file == NULL);
    options_free(&o);
    ASSERT_EQ(parse(&o, msg, sizeof(msg), "--peer-ca-file", "/no/such/ca.pem", NULL),
              OPTIONS_EXIT_USAGE);
    ASSERT(strstr(msg, "--peer-ca-file /no/such/ca.pem: No such file") != NULL);
    ASSERT_EQ(parse(&o, msg, sizeof(msg), "--peer-key-file", "/dev/null", NULL),
              OPTIONS_EXIT_USAGE);
    ASSERT(strstr(msg, "--peer-key-file needs --peer-cert-file") != NULL);
    return 0;
}

static int test_help_and_version_exit(void)
{
    struct options o;
    char msg[512];

    ASSERT_EQ(parse(&o, msg, sizeof(msg), "--help", NULL), OPTIONS_EXIT_OK);
    ASSERT_EQ(parse(&o, msg, sizeof(msg), "-h", NULL), OPTIONS_EXIT_OK);
    ASSERT_EQ(parse(&o, msg, sizeof(msg), "--version", NULL), OPTIONS_EXIT_OK);
    return 0;
}

TEST_MAIN({"defaults", test_defaults}, {"--name VALUE and --name=VALUE", test_both_spellings},
          {"port 0", test_port_zero}, {"errors name the problem", test_errors_name_the_problem},
          {"the TLS files to peers", test_peer_tls_files},
          {"--help and --version", test_help_and_version_exit})
