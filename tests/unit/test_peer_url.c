/* A peer's target, from --peer or the peers file (peers_file.c), held to
 * what --listen is (issue 35, point 9): no credentials (they would be
 * shown in /peers, /metrics and the log), a host, a port in range. */
#include "peers_file.h"
#include "test.h"

static int normal(const char *text, const char *want)
{
    char out[PEER_URL_CAP], err[300];

    if (peer_url_normalize(text, out, sizeof(out), err, sizeof(err)) != 0) {
        fprintf(stderr, "%s refused: %s\n", text, err);
        return 0;
    }
    if (strcmp(out, want) != 0) {
        fprintf(stderr, "%s -> %s, not %s\n", text, out, want);
        return 0;
    }
    return 1;
}

/* Refused, with err containing what. */
static int refused(const char *text, const char *what)
{
    char out[PEER_URL_CAP], err[300];

    if (peer_url_normalize(text, out, sizeof(out), err, sizeof(err)) == 0) {
        fprintf(stderr, "%s taken as %s\n", text, out);
        return 0;
    }
    if (strstr(err, what) == NULL) {
        fprintf(stderr, "%s: \"%s\" does not say %s\n", text, err, what);
        return 0;
    }
    return 1;
}

static int test_good_targets(void)
{
    ASSERT(normal("node1:8080", "http://node1:8080"));
    ASSERT(normal("https://node1.lab:8443/", "https://node1.lab:8443"));
    ASSERT(normal("http://[::1]:8080", "http://[::1]:8080"));
    ASSERT(normal("http://node1", "http://node1"));
    ASSERT(normal("10.0.0.7:1", "http://10.0.0.7:1"));
    return 0;
}

static int test_refused_targets(void)
{
    ASSERT(refused("http://admin:pw@node1:8080", "password"));
    ASSERT(refused("admin:pw@node1:8080", "password"));
    ASSERT(refused("https://token@node1:8443", "password"));
    ASSERT(refused("node1:99999", "port out of range"));
    ASSERT(refused("node1:0", "port out of range"));
    ASSERT(refused("node1:http", "port out of range"));
    ASSERT(refused("http://:8080", "no host"));
    ASSERT(refused("http://[::1:8080", "no host"));
    ASSERT(refused("ftp://node1:21", "http://"));
    return 0;
}

TEST_MAIN({"good targets", test_good_targets}, {"refused targets", test_refused_targets})
