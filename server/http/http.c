/*
 * http.c - see http.h.  One conn_ctx lives for one request: it gathers the
 * body, survives a suspension, and is freed by the completion callback.
 * Everything that can refuse a request without its body (Host, Origin,
 * route, token, type, rate, cap, the body budget) is decided on
 * libmicrohttpd's first call, which has only the headers: a refused upload
 * is answered there and never buffered.
 */
#include "http.h"
#include "auth.h"
#include "dynbuf.h"
#include "hash.h"
#include "json_build.h"
#include "heavy_pool.h"
#include "log.h"
#include "ratelimit.h"
#include "reply_again.h"
#include "request_guard.h"
#include "router.h"
#include "run_request.h"
#include "timeutil.h"
#include "tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct conn_ctx {
    struct http_request req;
    const struct route *route; /* found on the headers */
    struct dynbuf body;
    size_t reserved; /* bytes taken from the body budget (request_guard.h) */
    int refused;     /* answered on its headers: its body is never read */
    int too_large;
    int over_budget;
    int suspended;
    int parked; /* it was suspended once: counted in parked_requests */
    /* A heavy route's: HEAVY_NONE until queued, HEAVY_DONE once the pool
     * has made heavy_rep (written by the pool thread before it resumes
     * the connection, read by libmicrohttpd's after). */
    atomic_int heavy;
    struct http_reply heavy_rep;
};

enum {
    HEAVY_NONE,
    HEAVY_QUEUED,
    HEAVY_DONE,
};

/* The most heavy reads waiting for a pool thread at once; past it one is
 * answered 503 with Retry-After. */
#define HEAVY_QUEUE 256

/* Takes n more bytes of the daemon's body budget for ctx: 1, or 0 when
 * they do not fit now. */
static int body_reserve(struct conn_ctx *ctx, size_t n)
{
    if (!guard_budget_take(n, ctx->req.app->opt->max_body_bytes))
        return 0;
    ctx->reserved += n;
    return 1;
}

/* Requests that were parked (runs_wait) and have not completed since,
 * daemon-wide: http_stop lets the answers of those resumed at shutdown go
 * out before it closes their connections. */
static atomic_int parked_requests;

/* The longest http_stop waits for them. */
#define STOP_ANSWERS_MS 500

/* Lets go of rep's body: freed, or its hold released. */
static void body_drop(struct http_reply *rep)
{
    if (rep->release)
        rep->release(rep->hold);
    else
        free(rep->body);
    rep->body = NULL;
    rep->release = NULL;
    rep->hold = NULL;
}

void reply_body(struct http_reply *rep, int status, const char *content_type,
                char *body, size_t len)
{
    body_drop(rep);
    rep->status = status;
    rep->content_type = content_type;
    rep->body = body;
    rep->len = len;
}

void reply_built(struct http_reply *rep, int status, const struct json_build *jb, cJSON *obj,
                 const char *what)
{
    if (jb_failed(jb)) {
        cJSON_Delete(obj);
        reply_error(rep, 500, "internal", "", "out of memory %s", what);
        return;
    }
    reply_json(rep, status, obj);
}

void reply_json(struct http_reply *rep, int status, cJSON *obj)
{
    char *text = obj ? cJSON_PrintUnformatted(obj) : NULL;
    char *body;
    size_t n;

    cJSON_Delete(obj);
    if (text == NULL) {
        static const char oom[] =
            "{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}\n";
        body = strdup(oom);
        reply_body(rep, 500, "application/json", body, body ? strlen(body) : 0);
        return;
    }
    /* A trailing newline, so that curl output ends its line. */
    n = strlen(text);
    body = realloc(text, n + 2);
    if (body == NULL) {
        reply_body(rep, status, "application/json", text, n);
        return;
    }
    body[n] = '\n';
    body[n + 1] = '\0';
    reply_body(rep, status, "application/json", body, n + 1);
}

void reply_error(struct http_reply *rep, int status, const char *code,
                 const char *field, const char *fmt, ...)
{
    struct json_build jb = {0};
    cJSON *root = jb_new_object(&jb);
    cJSON *err = jb_object(&jb, root, "error");
    char message[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    jb_string(&jb, err, "code", code);
    jb_string(&jb, err, "message", message);
    jb_string(&jb, err, "field", field && field[0] ? field : NULL);
    if (jb_failed(&jb)) { /* reply_json answers 500, out of memory */
        cJSON_Delete(root);
        root = NULL;
    }
    reply_json(rep, status, root);
}

void reply_held(struct http_reply *rep, int status, const char *content_type,
                const char *body, size_t len, void (*release)(void *hold), void *hold)
{
    /* Not written through: the cast only fits the body's field. */
    reply_body(rep, status, content_type, (char *)body, len);
    rep->release = release;
    rep->hold = hold;
}

/* 1 when the If-None-Match list inm names etag: the weak comparison, W/
 * ignored on both sides. */
static int etag_listed(const char *inm, const char *etag)
{
    size_t n;

    if (strncmp(etag, "W/", 2) == 0)
        etag += 2;
    n = strlen(etag);
    while (*inm) {
        const char *end;
        inm += strspn(inm, " \t,");
        if (*inm == '*')
            return 1;
        if (strncmp(inm, "W/", 2) == 0)
            inm += 2;
        if (*inm != '"')
            return 0; /* not a list of entity tags: nothing matches */
        end = strchr(inm + 1, '"');
        if (end == NULL)
            return 0;
        if ((size_t)(end + 1 - inm) == n && strncmp(inm, etag, n) == 0)
            return 1;
        inm = end + 1;
    }
    return 0;
}

int reply_etag(struct http_request *req, struct http_reply *rep, const char *etag)
{
    const char *inm =
        MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
    size_t n = strnlen(etag, sizeof(rep->etag) - 1);

    memcpy(rep->etag, etag, n);
    rep->etag[n] = '\0';
    if (inm == NULL || !etag_listed(inm, etag))
        return 0;
    reply_body(rep, 304, rep->content_type, NULL, 0);
    return 1;
}

/* Adds key=value& to the hash h (FNV-1a, 32 bits, as hash.c). */
static enum MHD_Result hash_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value)
{
    uint32_t *h = cls;
    const char *parts[] = {key, "=", value ? value : "", "&"};

    (void)kind;
    for (int i = 0; i < 4; i++)
        for (const char *c = parts[i]; *c; c++)
            *h = (*h ^ (unsigned char)*c) * 16777619u;
    return MHD_YES;
}

int reply_state_etag(struct http_request *req, struct http_reply *rep, const char *state)
{
    uint32_t h = hash_fnv1a(req->url);
    char etag[sizeof(rep->etag)];

    MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, hash_arg, &h);
    snprintf(etag, sizeof(etag), "W/\"%.40s-%08x\"", state, h);
    return reply_etag(req, rep, etag);
}

const char *query_get(struct http_request *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, name);
}

struct query_values {
    const char *name;
    const char **out;
    int cap;
    int count;
};

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    struct query_values *v = cls;

    (void)kind;
    if (strcmp(key, v->name) != 0)
        return MHD_YES;
    if (v->count < v->cap)
        v->out[v->count] = value ? value : "";
    v->count++;
    return MHD_YES;
}

int query_all(struct http_request *req, const char *name, const char **out, int cap)
{
    struct query_values v = {.name = name, .out = out, .cap = cap, .count = 0};

    MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, collect_arg, &v);
    return v.count;
}

struct query_scan {
    const char *const *allowed;
    const char *unknown;
};

static enum MHD_Result scan_arg(void *cls, enum MHD_ValueKind kind,
                                const char *key, const char *value)
{
    struct query_scan *scan = cls;

    (void)kind;
    (void)value;
    for (const char *const *a = scan->allowed; *a; a++)
        if (strcmp(*a, key) == 0)
            return MHD_YES;
    scan->unknown = key;
    return MHD_NO;
}

int query_check(struct http_request *req, struct http_reply *rep,
                const char *const *allowed)
{
    struct query_scan scan = {.allowed = allowed, .unknown = NULL};
    char known[256];
    size_t used = 0;

    MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, scan_arg, &scan);
    if (scan.unknown == NULL)
        return 0;
    known[0] = '\0';
    for (const char *const *a = allowed; *a && used < sizeof(known); a++)
        used += (size_t)snprintf(known + used, sizeof(known) - used, "%s%s",
                                 a == allowed ? "" : ", ", *a);
    reply_error(rep, 400, "unknown_field", scan.unknown,
                "unknown query argument \"%.60s\" (this path takes: %s)",
                scan.unknown, allowed[0] ? known : "none");
    return -1;
}

int query_bool(struct http_request *req, struct http_reply *rep,
               const char *name, int *out)
{
    const char *v = query_get(req, name);

    *out = -1;
    if (v == NULL)
        return 0;
    if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
        *out = v[0] == 't';
        return 0;
    }
    reply_error(rep, 400, "out_of_bounds", name, "%s=%.20s: expected true or false",
                name, v);
    return -1;
}

/* 0, or -1 with the 400 made. */
static int query_number_refused(struct http_reply *rep, const char *name, const char *text,
                                const char *expected)
{
    reply_error(rep, 400, "out_of_bounds", name, "%s=%.40s: expected %s", name, text,
                expected);
    return -1;
}

int query_long(struct http_request *req, struct http_reply *rep, const char *name,
               long long min, long long max, const char *expected, long long *out)
{
    const char *text = query_get(req, name);
    char *end;
    long long v;

    if (text == NULL)
        return 0;
    errno = 0;
    v = strtoll(text, &end, 10);
    if (end == text || *end != '\0' || errno != 0 || v < min || v > max)
        return query_number_refused(rep, name, text, expected);
    *out = v;
    return 0;
}

int query_int(struct http_request *req, struct http_reply *rep, const char *name,
              int min, int max, const char *expected, int *out)
{
    long long v = *out;

    if (query_long(req, rep, name, min, max, expected, &v) != 0)
        return -1;
    *out = (int)v;
    return 0;
}

int query_benchmark(struct http_request *req, struct http_reply *rep)
{
    const char *name = query_get(req, "benchmark");
    char names[256];

    if (name == NULL || name[0] == '\0' ||
        gb_benchmark_offered(gb_benchmark_find(name), req->app->opt->test_benchmarks))
        return 0;
    gb_benchmark_names(req->app->opt->test_benchmarks, 0, names, sizeof(names));
    reply_error(rep, 400, "unknown_benchmark", "benchmark",
                "there is no benchmark \"%.60s\" (there are: %s)", name, names);
    return -1;
}

int query_double(struct http_request *req, struct http_reply *rep, const char *name,
                 double min, double max, const char *expected, double *out)
{
    const char *text = query_get(req, name);
    char *end;
    double v;

    if (text == NULL)
        return 0;
    v = strtod(text, &end);
    if (end == text || *end != '\0' || !isfinite(v) || !(v >= min) || !(v <= max))
        return query_number_refused(rep, name, text, expected);
    *out = v;
    return 0;
}

cJSON *body_json(struct http_request *req, struct http_reply *rep)
{
    struct gb_error err;
    cJSON *v = request_json_parse(req->body, req->body_len, &err);

    if (v == NULL)
        reply_error(rep, 400, err.code, err.field, "%s", err.message);
    return v;
}

/* A streamed answer.  On a heavy route (pool not NULL) each chunk is made
 * by a pool thread into chunk while the connection is suspended: state
 * says whose turn it is (CHUNK_*), and the resume orders the chunk's
 * writing before its sending. */
#define STREAM_CHUNK (64 * 1024)
struct stream_ctx {
    long (*fn)(void *cls, char *buf, size_t max);
    void *cls;
    void (*free_fn)(void *cls);
    struct heavy_pool *pool;
    struct MHD_Connection *conn;
    atomic_int state;
    long len, sent; /* the chunk's bytes, and those sent of them */
    char *chunk;    /* STREAM_CHUNK bytes; with pool only */
};

enum {
    CHUNK_NONE,    /* none made: the next read asks the pool */
    CHUNK_PENDING, /* the pool is making it, the connection suspended */
    CHUNK_READY,   /* made: sent piece by piece, then NONE */
    CHUNK_END,     /* the stream has ended (len 0) or failed (len < 0) */
};

/* A pool thread's: the next chunk of sc, then the connection resumed. */
static void stream_chunk_job(void *cls, int cancelled)
{
    struct stream_ctx *sc = cls;

    /* At shutdown the answer ends short, as an error, not after the
     * whole export. */
    sc->len = cancelled ? -1 : sc->fn(sc->cls, sc->chunk, STREAM_CHUNK);
    sc->sent = 0;
    atomic_store(&sc->state, sc->len > 0 ? CHUNK_READY : CHUNK_END);
    MHD_resume_connection(sc->conn);
}

/* A heavy stream's read: a chunk made on the pool, sent; or the connection
 * suspended (returning 0, which libmicrohttpd asks again once resumed)
 * while the pool makes the next. */
static ssize_t stream_read_heavy(struct stream_ctx *sc, char *buf, size_t max)
{
    size_t n;

    switch (atomic_load(&sc->state)) {
    case CHUNK_READY:
        n = (size_t)(sc->len - sc->sent) < max ? (size_t)(sc->len - sc->sent) : max;
        memcpy(buf, sc->chunk + sc->sent, n);
        sc->sent += (long)n;
        if (sc->sent == sc->len)
            atomic_store(&sc->state, CHUNK_NONE);
        return (ssize_t)n;
    case CHUNK_END:
        return sc->len == 0 ? MHD_CONTENT_READER_END_OF_STREAM
                            : MHD_CONTENT_READER_END_WITH_ERROR;
    case CHUNK_NONE:
        atomic_store(&sc->state, CHUNK_PENDING);
        MHD_suspend_connection(sc->conn);
        if (heavy_pool_submit(sc->pool, stream_chunk_job, sc) != 0) {
            /* stopping or full: the answer ends short, as an error */
            sc->len = -1;
            atomic_store(&sc->state, CHUNK_END);
            MHD_resume_connection(sc->conn);
        }
        return 0;
    default:
        return 0; /* never: suspended until the chunk is made */
    }
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct stream_ctx *sc = cls;
    long n;

    (void)pos;
    if (sc->pool)
        return stream_read_heavy(sc, buf, max);
    n = sc->fn(sc->cls, buf, max);
    if (n == 0)
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (n < 0)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    return (ssize_t)n;
}

static void stream_done(void *cls)
{
    struct stream_ctx *sc = cls;

    if (sc->free_fn)
        sc->free_fn(sc->cls);
    free(sc->chunk);
    free(sc);
}

/* The response for rep; a stream's chunks made on pool (NULL: on the
 * calling thread), for conn. */
static struct MHD_Response *make_response(struct http_reply *rep, struct heavy_pool *pool,
                                          struct MHD_Connection *conn)
{
    struct MHD_Response *resp;
    struct stream_ctx *sc;

    if (rep->stream == NULL) {
        if (rep->body == NULL) /* a 304's, an empty answer's: nothing to own */
            return MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        if (rep->release) {
            /* A held body goes out as it is, let go when the response is
             * destroyed (after its last byte, or with its connection). */
#if MHD_VERSION >= 0x00097302
            resp = MHD_create_response_from_buffer_with_free_callback_cls(
                rep->len, rep->body, rep->release, rep->hold);
#else
            /* libmicrohttpd before 0.9.73 (CMake asks 0.9.71): no callback
             * with a closure, so a copy, and the hold let go at once. */
            resp = MHD_create_response_from_buffer(rep->len, rep->body,
                                                   MHD_RESPMEM_MUST_COPY);
            if (resp != NULL)
                rep->release(rep->hold);
#endif
            if (resp != NULL) { /* the response lets it go now */
                rep->body = NULL;
                rep->release = NULL;
                rep->hold = NULL;
            }
            return resp;
        }
        resp = MHD_create_response_from_buffer(rep->len, rep->body,
                                               MHD_RESPMEM_MUST_FREE);
        if (resp != NULL)
            rep->body = NULL; /* the response owns it now */
        return resp;
    }
    sc = calloc(1, sizeof(*sc));
    if (sc == NULL)
        return NULL;
    sc->fn = rep->stream;
    sc->cls = rep->stream_cls;
    sc->free_fn = rep->stream_free;
    if (pool && (sc->chunk = malloc(STREAM_CHUNK)) != NULL) {
        sc->pool = pool;
        sc->conn = conn;
    }
    resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_CHUNK, stream_read, sc,
                                             stream_done);
    if (resp == NULL) {
        free(sc->chunk);
        free(sc);
        return NULL;
    }
    rep->stream_cls = NULL; /* the response owns it now */
    rep->stream_free = NULL;
    return resp;
}

/* Frees what a reply still owns (a reply that was never sent). */
static void reply_release(struct http_reply *rep)
{
    body_drop(rep);
    if (rep->stream_free && rep->stream_cls)
        rep->stream_free(rep->stream_cls);
    rep->stream_cls = NULL;
}

static enum MHD_Result send_reply(struct MHD_Connection *conn, struct http_reply *rep,
                                  struct heavy_pool *pool)
{
    struct MHD_Response *resp;
    enum MHD_Result ret;
    char retry[16];
    int keep = reply_again_keepable(rep);
    const void *hold = rep->hold;
    const char *body = rep->body;

    /* the same held answer as this thread's last: its response again */
    if (keep && (resp = reply_again_find(rep)) != NULL)
        return MHD_queue_response(conn, (unsigned int)rep->status, resp);
    resp = make_response(rep, pool, conn);
    if (resp == NULL)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            rep->content_type ? rep->content_type : "application/json");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    if (rep->location[0])
        MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, rep->location);
    if (rep->etag[0])
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, rep->etag);
    if (rep->allow[0])
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, rep->allow);
    if (rep->www_authenticate[0])
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                rep->www_authenticate);
    if (rep->csp)
        MHD_add_response_header(resp, "Content-Security-Policy", rep->csp);
    if (rep->retry_after > 0) {
        snprintf(retry, sizeof(retry), "%d", rep->retry_after);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, retry);
    }
    ret = MHD_queue_response(conn, (unsigned int)rep->status, resp);
    if (!keep || !reply_again_keep(rep, hold, body, resp))
        MHD_destroy_response(resp);
    return ret;
}

static void client_address(struct MHD_Connection *conn, char *buf, size_t cap)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = info ? info->client_addr : NULL;

    snprintf(buf, cap, "unknown");
    if (sa && sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, (socklen_t)cap);
    else if (sa && sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf, (socklen_t)cap);
}

/* A header of the request, or NULL. */
static const char *header(struct MHD_Connection *conn, const char *name)
{
    return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

/* 0 when the request's Host names this daemon and its Origin may speak to
 * it (request_guard.h); else -1 with the 421 or 403 made. */
static int check_origin(struct http_request *req, struct http_reply *rep)
{
    struct app *app = req->app;
    const char *host = header(req->conn, MHD_HTTP_HEADER_HOST);
    const char *origin = header(req->conn, MHD_HTTP_HEADER_ORIGIN);

    if (app->check_host &&
        !guard_host_ok(host, app->host, app->opt->web_hosts)) {
        reply_error(rep, 421, "misdirected_request", "",
                    "Host: %.100s is not a name this daemon answers to on loopback or without "
                    "tokens (a page's DNS rebinding); use its address, localhost, or give "
                    "--web-host NAME",
                    host);
        return -1;
    }
    if (!guard_origin_ok(origin, host, app->opt->web_allowed_origins)) {
        reply_error(rep, 403, "forbidden_origin", "",
                    "a page of %.100s may not call this daemon (it is not the daemon's own "
                    "page); list it with --web-allowed-origins to let it",
                    origin);
        return -1;
    }
    return 0;
}

/* Tokens.  0 to go on, with key the token's or the certificate's name
 * (what the rate limit counts), or "" where none was asked: then the
 * rate limit counts by address (check_headers reads it only for a rate
 * limited route, so that a read costs no inet_ntop); -1 with the 401 made. */
static int check_token(struct http_request *req, struct http_reply *rep,
                       const struct route *route, char *key, size_t cap)
{
    struct app *app = req->app;
    enum route_access access = route->access;
    const char *h;

    /* Either identity opens what either guards: a known bearer token, or
     * a client certificate the web config's CA signed (README, "TLS"). */
    int guarded = app->auth != NULL || http_tls_identifies(app->tls);

    if (!guarded || !(access == ROUTE_WRITE || (access == ROUTE_READ && app->opt->auth_reads)))
        return 0; /* key "": counted by address */
    h = header(req->conn, MHD_HTTP_HEADER_AUTHORIZATION);
    if (auth_check(app->auth, h, key, cap) ||
        http_tls_client_verified(app->tls, req->conn, key, cap))
        return 0;
    snprintf(rep->www_authenticate, sizeof(rep->www_authenticate),
             "Bearer realm=\"gpubench\"%s", h ? ", error=\"invalid_token\"" : "");
    if (app->auth == NULL)
        reply_error(rep, 401, "unauthorized", "",
                    "this needs a client certificate that the daemon's "
                    "client_ca_file signed");
    else
        reply_error(rep, 401, "unauthorized", "",
                    h ? "that bearer token is not one of this daemon's"
                      : "this needs a bearer token: add the header "
                        "'Authorization: Bearer TOKEN'%s",
                    http_tls_identifies(app->tls)
                        ? ", or a client certificate that the daemon's "
                          "client_ca_file signed"
                        : "");
    return -1;
}

/* A write's body is read only as its route's type: one that has a body or
 * names a type must name that one.  One exception: curl -d's own type
 * (form encoding) from a request with no Origin header, which is no
 * browser's (a browser sends Origin with every POST, DELETE or PUT), so
 * that `curl -d '{"benchmark":"smem_stride"}' localhost:8080/runs` works
 * as written while no page's form can write; its body is still read as
 * the route's type.  0, or -1 with the 415 made. */
static int check_type(struct http_request *req, struct http_reply *rep,
                      const struct route *route, int has_body)
{
    const char *type = header(req->conn, MHD_HTTP_HEADER_CONTENT_TYPE);
    const char *want = route->body->types;
    int wlen = (int)strcspn(want, ",");

    if (strcmp(req->method, "GET") == 0 || (type == NULL && !has_body) ||
        guard_type_ok(type, want))
        return 0;
    if (guard_type_ok(type, "application/x-www-form-urlencoded") &&
        header(req->conn, MHD_HTTP_HEADER_ORIGIN) == NULL)
        return 0;
    reply_error(rep, 415, "unsupported_media_type", "",
                "%s %s reads its body as %.*s, and this came as %.80s: send the header "
                "'Content-Type: %.*s' (curl: -H 'Content-Type: %.*s')",
                req->method, req->url, wlen, want, type ? type : "no Content-Type", wlen, want,
                wlen, want);
    return -1;
}

/* Everything decided on the headers, before any of the body is read: the
 * Host and Origin, the route (404, 405), the token, the body's type, the
 * post rate, the body's cap and room in the daemon's body budget.  A
 * refused upload is never read: its answer is queued at once.  0 with
 * ctx->route set, or -1 with the reply made. */
static int check_headers(struct conn_ctx *ctx, struct http_reply *rep)
{
    struct http_request *req = &ctx->req;
    struct app *app = req->app;
    const char *length = header(req->conn, MHD_HTTP_HEADER_CONTENT_LENGTH);
    unsigned long long declared = length ? strtoull(length, NULL, 10) : 0;
    int has_body = declared > 0 || header(req->conn, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    const struct route *route;
    char key[64] = "";
    int status = 404, retry = 1;

    if (check_origin(req, rep) != 0)
        return -1;
    route = router_find(req->method, req->url, req->arg, sizeof(req->arg), rep->allow,
                        sizeof(rep->allow), &status);
    if (route == NULL) {
        if (status == 405)
            reply_error(rep, 405, "method_not_allowed", "",
                        "%s is not allowed on %s (allowed: %s)", req->method, req->url,
                        rep->allow);
        else
            reply_error(rep, 404, "not_found", "", "no such path: %s", req->url);
        return -1;
    }
    if (check_token(req, rep, route, key, sizeof(key)) != 0 ||
        check_type(req, rep, route, has_body) != 0)
        return -1;
    if (route->rate_limited && key[0] == '\0')
        client_address(req->conn, key, sizeof(key));
    if (route->rate_limited && !ratelimit_take(app->post_limit, key, time_mono_ms(), &retry)) {
        rep->retry_after = retry;
        reply_error(rep, 429, "rate_limited", "",
                    "too many runs and imports posted; try again in %d s", retry);
        return -1;
    }
    dynbuf_init(&ctx->body, route->body->cap);
    if (declared > ctx->body.cap) {
        reply_error(rep, 413, "body_too_large", "", "the request body is over the %zu-byte cap",
                    ctx->body.cap);
        return -1;
    }
    if (declared > 0 && !body_reserve(ctx, (size_t)declared)) {
        rep->retry_after = 1;
        reply_error(rep, 503, "busy", "",
                    "the daemon is reading %zu MiB of request bodies at once, its "
                    "--max-body-memory; try again in a moment",
                    app->opt->max_body_bytes / (1024 * 1024));
        return -1;
    }
    ctx->route = route;
    return 0;
}

/* Counts ctx in parked_requests, once: http_stop lets its answer out. */
static void note_parked(struct conn_ctx *ctx)
{
    if (!ctx->parked) {
        ctx->parked = 1;
        atomic_fetch_add(&parked_requests, 1);
    }
}

/* A pool thread's: the heavy route's handler, then the connection
 * resumed to send what it made. */
static void heavy_job(void *cls, int cancelled)
{
    struct conn_ctx *ctx = cls;
    struct http_reply *rep = &ctx->heavy_rep;

    if (cancelled) {
        /* queued when the daemon began to stop: answered, not read */
        rep->retry_after = 1;
        reply_error(rep, 503, "busy", "", "the daemon is stopping; try again in a moment");
    } else {
        ctx->route->handler(&ctx->req, rep);
    }
    if (rep->suspended) {
        /* a heavy route never waits (router.c): no resume would come */
        rep->suspended = 0;
        reply_error(rep, 500, "internal", "", "%s %s tried to wait on the heavy pool",
                    ctx->req.method, ctx->req.url);
    }
    atomic_store(&ctx->heavy, HEAVY_DONE);
    MHD_resume_connection(ctx->req.conn);
}

/* Hands a heavy route's request to the pool, its connection suspended
 * until heavy_job resumes it; when the pool cannot take it, the answer is
 * a 503 sent on the resume just the same. */
static void heavy_start(struct conn_ctx *ctx)
{
    struct app *app = ctx->req.app;

    ctx->heavy_rep = (struct http_reply){.status = 200};
    atomic_store(&ctx->heavy, HEAVY_QUEUED);
    note_parked(ctx);
    MHD_suspend_connection(ctx->req.conn);
    if (heavy_pool_submit(app->heavy, heavy_job, ctx) == 0)
        return;
    ctx->heavy_rep.retry_after = 1;
    reply_error(&ctx->heavy_rep, 503, "busy", "",
                "the daemon is answering %d heavy reads (/coverage, /cards, /fleet, "
                "/metrics, exports) already, or stopping; try again in a moment",
                HEAVY_QUEUE);
    atomic_store(&ctx->heavy, HEAVY_DONE);
    MHD_resume_connection(ctx->req.conn);
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn,
                                 const char *url, const char *method,
                                 const char *version, const char *upload_data,
                                 size_t *upload_data_size, void **con_cls)
{
    struct conn_ctx *ctx = *con_cls;
    struct http_reply rep = {.status = 200};
    enum MHD_Result ret;

    (void)version;
    if (ctx == NULL) {
        ctx = calloc(1, sizeof(*ctx));
        if (ctx == NULL)
            return MHD_NO;
        *con_cls = ctx;
        ctx->req.conn = conn;
        ctx->req.app = cls;
        ctx->req.url = url;
        ctx->req.method = strcmp(method, "HEAD") == 0 ? "GET" : method;
        if (check_headers(ctx, &rep) == 0)
            return MHD_YES;
        /* Refused on its headers: answered now, its body never read. */
        ctx->refused = 1;
        goto send;
    }
    if (ctx->refused) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        if (ctx->too_large || ctx->over_budget) {
            /* dropped: the answer says why */
        } else if (ctx->body.len + *upload_data_size > ctx->body.cap) {
            ctx->too_large = 1;
        } else if (ctx->body.len + *upload_data_size > ctx->reserved &&
                   !body_reserve(ctx, ctx->body.len + *upload_data_size - ctx->reserved)) {
            ctx->over_budget = 1;
        } else if (dynbuf_add(&ctx->body, upload_data, *upload_data_size) != 0) {
            ctx->too_large = 1;
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (ctx->too_large) {
        reply_error(&rep, 413, "body_too_large", "",
                    "the request body is over the %zu-byte cap", ctx->body.cap);
        goto send;
    }
    if (ctx->over_budget) {
        rep.retry_after = 1;
        reply_error(&rep, 503, "busy", "",
                    "the daemon is reading %zu MiB of request bodies at once, its "
                    "--max-body-memory; try again in a moment",
                    ctx->req.app->opt->max_body_bytes / (1024 * 1024));
        goto send;
    }

    ctx->req.resumed = ctx->suspended;
    ctx->suspended = 0;
    ctx->req.body = ctx->body.len ? ctx->body.data : NULL;
    ctx->req.body_len = ctx->body.len;
    if (ctx->route->weight == ROUTE_HEAVY && ctx->req.app->heavy) {
        if (atomic_load(&ctx->heavy) == HEAVY_NONE) {
            heavy_start(ctx);
            return MHD_YES;
        }
        if (atomic_load(&ctx->heavy) != HEAVY_DONE)
            return MHD_YES; /* never: suspended until done */
        rep = ctx->heavy_rep;
        ctx->heavy_rep = (struct http_reply){0};
        ret = send_reply(conn, &rep, ctx->req.app->heavy);
        goto sent;
    }
    ctx->route->handler(&ctx->req, &rep);
    if (rep.suspended) {
        ctx->suspended = 1;
        note_parked(ctx);
        reply_release(&rep);
        return MHD_YES;
    }
send:
    ret = send_reply(conn, &rep, NULL);
sent:
    log_debug("%s %s %d", ctx->req.method, ctx->req.url, rep.status);
    reply_release(&rep);
    return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn,
                         void **con_cls, enum MHD_RequestTerminationCode toe)
{
    struct conn_ctx *ctx = *con_cls;

    (void)cls;
    (void)conn;
    (void)toe;
    if (ctx == NULL)
        return;
    if (ctx->parked)
        atomic_fetch_sub(&parked_requests, 1);
    if (ctx->req.state && ctx->req.free_state)
        ctx->req.free_state(ctx->req.state);
    reply_release(&ctx->heavy_rep);
    dynbuf_free(&ctx->body);
    guard_budget_give(ctx->reserved);
    free(ctx);
    *con_cls = NULL;
}

/* "HOST:PORT", "[V6]:PORT" or ":PORT" (every address).  NULL when addr is
 * one, else what is wrong with it. */
static const char *parse_addr(const char *addr, struct sockaddr_storage *ss, int *is_v6)
{
    char host[128];
    const char *colon = strrchr(addr, ':');
    char *end;
    long port;

    if (colon == NULL)
        return "expected ADDR:PORT, e.g. 127.0.0.1:8080, [::1]:8080 or :8080";
    if ((size_t)(colon - addr) >= sizeof(host))
        return "the address is too long";
    errno = 0;
    port = strtol(colon + 1, &end, 10);
    if (colon[1] == '\0' || *end != '\0' || errno)
        return "the port is not a number";
    if (port < 0 || port > 65535)
        return "port out of range (0 to 65535)";
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    memset(ss, 0, sizeof(*ss));
    if (host[0] == '[') {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
        size_t n = strlen(host);
        if (n < 2 || host[n - 1] != ']')
            return "expected [V6]:PORT, e.g. [::1]:8080";
        host[n - 1] = '\0';
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        *is_v6 = 1;
        return inet_pton(AF_INET6, host + 1, &s6->sin6_addr) == 1 ? NULL
                                                                  : "not an IPv6 address";
    }
    {
        struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)port);
        *is_v6 = 0;
        if (host[0] == '\0') {
            s4->sin_addr.s_addr = htonl(INADDR_ANY);
            return NULL;
        }
        if (strcmp(host, "localhost") == 0)
            return inet_pton(AF_INET, "127.0.0.1", &s4->sin_addr) == 1 ? NULL
                                                                       : "internal: localhost";
        return inet_pton(AF_INET, host, &s4->sin_addr) == 1
                   ? NULL
                   : "not an IPv4 address (or [IPv6], or localhost)";
    }
}

const char *http_addr_problem(const char *addr)
{
    struct sockaddr_storage ss;
    int is_v6 = 0;

    return parse_addr(addr, &ss, &is_v6);
}

int http_addr_is_loopback(const char *addr)
{
    struct sockaddr_storage ss;
    int is_v6 = 0;

    if (parse_addr(addr, &ss, &is_v6) != NULL)
        return 0;
    if (is_v6)
        return IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr);
    return (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
}

unsigned int http_mhd_flags(int tls)
{
    /* TLS listeners poll: in its epoll loop, libmicrohttpd 0.9.75 goes back
     * to a connection's handshake again and again while the client's next
     * flight has not come (gnutls_handshake 5 calls a connection, against
     * 1.5 with poll; 22 reads, 14 of them finding nothing, against 9 and 1),
     * and a handshake cost the daemon 1.1 to 1.5 ms of CPU, 2.5 to 3 with
     * few slow clients, where nginx spends 0.5 and poll 0.43 to 0.46
     * (bench/http/run_tls.sh, tests/api/test_tls_handshake_cost.py).
     * Plain HTTP keeps epoll. */
    return MHD_USE_INTERNAL_POLLING_THREAD | (tls ? MHD_USE_POLL : MHD_USE_EPOLL) |
           MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
}

int http_mhd_options(const struct http_options *opt, struct MHD_OptionItem *items, int cap)
{
    /* libmicrohttpd divides its connection limit among the pool's threads,
     * and connections do not spread evenly: a busy thread would refuse a
     * client while the daemon is far under --max-connections.  So each
     * thread may hold them all, and the daemon-wide count is kept by
     * admit() and note_connection() below.  Its per-address count, too,
     * goes on counting a connection that was answered and closed until
     * the end of its thread's loop, while the client has already opened
     * the next: at --max-connections-per-ip connections, each closed and
     * opened again as it is answered (Connection: close, bench/http's
     * handshake rounds), the new one was refused and reset (391
     * socket errors in run_tls.sh).  So the closed ones may be as many
     * again as the open ones, no more. */
    const struct MHD_OptionItem all[] = {
        {MHD_OPTION_THREAD_POOL_SIZE, opt->http_threads, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, 30, NULL},
        {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)opt->max_connections * opt->http_threads, NULL},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)opt->max_connections_per_ip * 2, NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    int n = (int)(sizeof(all) / sizeof(all[0]));

    if (n > cap)
        return -1;
    memcpy(items, all, sizeof(all));
    return n;
}

void http_park(void *conn)
{
    MHD_suspend_connection(conn);
}

void http_resume(void *conn)
{
    MHD_resume_connection(conn);
}

/* Connections open now, daemon-wide. */
static atomic_int open_connections;

static enum MHD_Result admit(void *cls, const struct sockaddr *addr, socklen_t len)
{
    const struct app *app = cls;

    (void)addr;
    (void)len;
    return atomic_load(&open_connections) < app->opt->max_connections ? MHD_YES : MHD_NO;
}

/* STARTED comes in the thread that will serve the connection, before its
 * TLS handshake: the client-certificate settings go on its session here. */
static void note_connection(void *cls, struct MHD_Connection *conn,
                            void **socket_context, enum MHD_ConnectionNotificationCode what)
{
    const struct app *app = cls;

    if (what == MHD_CONNECTION_NOTIFY_STARTED) {
        atomic_fetch_add(&open_connections, 1);
        if (http_tls_connection_started(app->tls, conn, socket_context) != 0)
            log_error("TLS: out of memory at a connection's start: its handshake fails");
    } else if (what == MHD_CONNECTION_NOTIFY_CLOSED) {
        http_tls_connection_closed(app->tls, socket_context);
        atomic_fetch_sub(&open_connections, 1);
    }
}

/* libmicrohttpd's own messages (MHD_USE_ERROR_LOG), timestamped through
 * log.h instead of its bare lines on stderr. */
static void mhd_says(void *cls, const char *fmt, va_list ap)
{
    char line[512];
    size_t n;

    (void)cls;
    vsnprintf(line, sizeof(line), fmt, ap);
    n = strlen(line);
    while (n > 0 && line[n - 1] == '\n')
        line[--n] = '\0';
    log_warn("libmicrohttpd: %s", line);
}

int http_listen(const char *addr, char *errbuf, size_t cap)
{
    struct sockaddr_storage ss;
    int is_v6 = 0, one = 1, fd;

    const char *why = parse_addr(addr, &ss, &is_v6);

    if (why != NULL) {
        snprintf(errbuf, cap, "--listen %s: %s", addr, why);
        return -1;
    }
    fd = socket(is_v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        snprintf(errbuf, cap, "cannot listen on %s: socket: %s", addr, strerror(errno));
        return -1;
    }
    /* What libmicrohttpd does with a socket of its own: a restart may bind
     * over connections in TIME_WAIT, and [::] means IPv6 only. */
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        (is_v6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) != 0) ||
        bind(fd, (struct sockaddr *)&ss,
             is_v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in)) != 0 ||
        listen(fd, SOMAXCONN) != 0) {
        snprintf(errbuf, cap, "cannot listen on %s: %s%s", addr, strerror(errno),
                 errno == EADDRINUSE ? " (another program, or another gpubenchd, "
                                       "has this port; give another --listen)"
                                     : "");
        close(fd);
        return -1;
    }
    return fd;
}

int http_bound_address(int listen_fd, char *out, size_t cap)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    char host[INET6_ADDRSTRLEN];
    const void *ip;
    int port, n;

    out[0] = '\0';
    if (getsockname(listen_fd, (struct sockaddr *)&ss, &len) != 0)
        return -1;
    if (ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;
        ip = &a->sin6_addr;
        port = ntohs(a->sin6_port);
    } else if (ss.ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;
        ip = &a->sin_addr;
        port = ntohs(a->sin_port);
    } else {
        return -1;
    }
    if (inet_ntop(ss.ss_family, ip, host, sizeof(host)) == NULL)
        return -1;
    n = snprintf(out, cap, ss.ss_family == AF_INET6 ? "[%s]:%d" : "%s:%d", host, port);
    if (n < 0 || (size_t)n >= cap) {
        out[0] = '\0';
        return -1;
    }
    return 0;
}

/* GPUBENCH_TEST_HEAVY_HOLD_MS: how long each heavy job first sleeps, so a
 * test can fill the pool (tests/api/test_heavy_reads.py); read only with
 * --test-benchmarks. */
static int heavy_hold_ms(const struct app *app)
{
    const char *v = app->opt->test_benchmarks ? getenv("GPUBENCH_TEST_HEAVY_HOLD_MS") : NULL;
    long ms = v ? strtol(v, NULL, 10) : 0;

    return ms > 0 && ms < 600000 ? (int)ms : 0;
}

struct MHD_Daemon *http_start(struct app *app, int listen_fd,
                              char *errbuf, size_t cap)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    struct MHD_OptionItem items[HTTP_MHD_OPTIONS_MAX];
    struct MHD_Daemon *d;
    unsigned int flags = http_mhd_flags(app->tls != NULL);
    int n;

    if (getsockname(listen_fd, (struct sockaddr *)&ss, &len) != 0) {
        snprintf(errbuf, cap, "the listening socket: %s", strerror(errno));
        return NULL;
    }
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    /* Where no token guards it, any page could rebind a name to it. */
    app->check_host = http_addr_is_loopback(app->opt->listen) ||
                      (app->auth == NULL && !http_tls_identifies(app->tls));
    n = http_mhd_options(app->opt, items, HTTP_MHD_OPTIONS_MAX);
    if (n > 0 && app->tls) {
        /* The TLS options go before the END that http_mhd_options put last. */
        int t = http_tls_mhd_options(app->tls, items + n - 1, HTTP_MHD_OPTIONS_MAX - n);
        flags |= MHD_USE_TLS;
        n = t < 0 ? -1 : n + t;
        if (n > 0)
            items[n - 1] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    }
    if (n < 0) {
        snprintf(errbuf, cap, "internal: too many libmicrohttpd options");
        return NULL;
    }
    app->heavy = heavy_pool_new(app->opt->heavy_threads, HEAVY_QUEUE, heavy_hold_ms(app));
    if (app->heavy == NULL) {
        snprintf(errbuf, cap, "cannot start the %d threads of the heavy reads (--heavy-threads)",
                 app->opt->heavy_threads);
        return NULL;
    }
    /* The logger first: libmicrohttpd logs options after it only. */
    d = MHD_start_daemon(flags, 0, admit, app, on_access, app,
                         MHD_OPTION_EXTERNAL_LOGGER, mhd_says, NULL,
                         MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_fd,
                         MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
                         MHD_OPTION_NOTIFY_CONNECTION, note_connection, app,
                         MHD_OPTION_ARRAY, items,
                         MHD_OPTION_END);
    if (d == NULL) {
        snprintf(errbuf, cap, "cannot serve HTTP on %s (libmicrohttpd would "
                              "not start; see its message above)",
                 app->opt->listen);
        heavy_pool_free(app->heavy);
        app->heavy = NULL;
    }
    return d;
}

void http_stop(struct MHD_Daemon *d, struct app *app)
{
    const struct timespec tick = {.tv_sec = 0, .tv_nsec = 10 * 1000000L};
    int64_t until;

    if (d == NULL)
        return;
    /* The heavy reads under way end and resume their connections, those
     * still queued are answered 503; the pool takes no more (a stream's
     * next chunk ends it as an error). */
    heavy_pool_stop(app->heavy);
    /* Counted from here: the pool's stop waits for the reads running, and
     * only then answers those queued, whose 503s must still go out (with a
     * deadline taken before it, they were cut off when a read ran long). */
    until = time_mono_ms() + STOP_ANSWERS_MS;
    /* libmicrohttpd closes every connection when it stops, whether its
     * answer went out or not: a resumed wait's answer goes out first. */
    while (atomic_load(&parked_requests) > 0 && time_mono_ms() < until)
        nanosleep(&tick, NULL);
    MHD_stop_daemon(d);
    heavy_pool_free(app->heavy);
    app->heavy = NULL;
}
