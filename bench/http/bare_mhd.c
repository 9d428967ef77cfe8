/*
 * bare_mhd.c - the reference for bench/http: libmicrohttpd with exactly
 * the flags and options gpubenchd starts it with (server/http/http.c), answering
 * every request with one constant body (the bytes gpubenchd sends for the
 * URL being compared) and the same headers.  What gpubenchd does beyond
 * this is the cost of our own code.
 *
 *   gpubench-bare-mhd PORT BODY-FILE [gpubenchd options, e.g. --http-threads 4]
 */
#include "http.h"
#include "app.h"
#include "options.h"

#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *body;
static size_t body_len;

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn,
                              const char *url, const char *method,
                              const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    struct MHD_Response *r;
    enum MHD_Result ret;

    (void)cls;
    (void)url;
    (void)method;
    (void)version;
    (void)upload;
    /* Answer on the second call, as gpubenchd does: an answer queued on the
     * first (headers only) makes libmicrohttpd close the connection, since
     * a body might still follow; keep-alive is lost and every request pays
     * for a new connection. */
    if (*con_cls == NULL) {
        static int seen;
        *con_cls = &seen;
        return MHD_YES;
    }
    *upload_size = 0;
    /* The body as it is, no copy: gpubenchd sends a kept run or list page
     * from its cache the same way (a held buffer, MHD's free callback), so
     * the two differ only in what our code does before it. */
    r = MHD_create_response_from_buffer(body_len, body, MHD_RESPMEM_PERSISTENT);
    if (r == NULL)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

static int read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    long n;

    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0) {
        if (f)
            fclose(f);
        return -1;
    }
    body = malloc((size_t)n + 1);
    body_len = body ? fread(body, 1, (size_t)n, f) : 0;
    fclose(f);
    return body && body_len == (size_t)n ? 0 : -1;
}

int main(int argc, char **argv)
{
    struct MHD_OptionItem items[HTTP_MHD_OPTIONS_MAX];
    struct options opt;
    struct http_options http;
    struct MHD_Daemon *d;
    sigset_t set;
    int sig;

    if (argc < 3) {
        fprintf(stderr, "usage: gpubench-bare-mhd PORT BODY-FILE [gpubenchd options]\n");
        return 2;
    }
    if (read_file(argv[2]) != 0) {
        fprintf(stderr, "gpubench-bare-mhd: cannot read %s\n", argv[2]);
        return 1;
    }
    argv[2] = argv[0]; /* options_parse reads argv[1..]: hand it the rest */
    if (options_parse(&opt, argc - 2, argv + 2, stdout, stderr) != OPTIONS_RUN)
        return 2;
    options_http(&opt, &http);
    if (http_mhd_options(&http, items, HTTP_MHD_OPTIONS_MAX) < 0)
        return 2;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    d = MHD_start_daemon(http_mhd_flags(0), (uint16_t)atoi(argv[1]), NULL, NULL,
                         answer, NULL, MHD_OPTION_ARRAY, items, MHD_OPTION_END);
    if (d == NULL) {
        fprintf(stderr, "gpubench-bare-mhd: cannot listen on port %s\n", argv[1]);
        return 1;
    }
    sigwait(&set, &sig);
    MHD_stop_daemon(d);
    free(body);
    return 0;
}
