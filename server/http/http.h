/*
 * http.h - the HTTP front: libmicrohttpd with its internal thread pool, the
 * route of router.c found on a request's headers, and everything its line
 * and request_guard.h decide (Host, Origin, token, body type, rate, cap,
 * the daemon's body budget) answered there, before any of the body is
 * read; only then is the body read into a capped buffer and the handler
 * called.
 *
 * A handler gets a http_request and fills a http_reply; the reply's body is
 * then owned by this module.  A handler that must wait (POST /runs?wait=)
 * suspends the connection instead and is called again once resumed, with
 * req->state still holding what it kept.
 */
#ifndef GPUBENCH_HTTP_HTTP_H
#define GPUBENCH_HTTP_HTTP_H

#include <stddef.h>
#include <cjson/cJSON.h>

#include "app.h"

/* A request body's cap unless its route (router.c) gives another. */
#define HTTP_BODY_CAP (64 * 1024)

struct MHD_Connection;
struct MHD_Daemon;

struct http_request {
    struct MHD_Connection *conn;
    struct app *app;
    const char *method; /* HEAD is routed as GET */
    const char *url;    /* the path, without the query */
    char arg[128];      /* what a route's '*' segment matched */
    const char *body;   /* NUL-terminated; NULL when there was none */
    size_t body_len;
    void *state; /* a suspended handler's own; freed with free_state */
    void (*free_state)(void *state);
    int resumed; /* 1 when called again after a resume */
};

struct http_reply {
    int status;
    char *body; /* malloc'ed and owned by the reply; or held (release) */
    size_t len;
    /* A body held elsewhere (reply_held): not freed, but let go with
     * release(hold) once libmicrohttpd has sent it, or the reply dropped. */
    void (*release)(void *hold);
    void *hold;
    const char *content_type;
    char location[160];
    char allow[64];
    char www_authenticate[96];
    const char *csp; /* Content-Security-Policy, static text */
    int retry_after; /* seconds; 0 sends no Retry-After */
    char etag[64];   /* the ETag header, quotes and all; "" sends none (reply_etag) */
    /* A body made as it is sent (exports): stream() fills buf with up to
     * max bytes and returns how many, 0 at the end, -1 on error; the
     * reply takes stream_cls and frees it with stream_free. */
    long (*stream)(void *cls, char *buf, size_t max);
    void *stream_cls;
    void (*stream_free)(void *cls);
    int suspended; /* the handler parked the request (runs_wait): send nothing now */
};

typedef void (*http_handler)(struct http_request *req, struct http_reply *rep);

/* Serialises obj into the reply (status and JSON body) and deletes obj. */
void reply_json(struct http_reply *rep, int status, cJSON *obj);

struct json_build;
/* reply_json for a tree made with json_build.h: where an addition failed,
 * obj is deleted and the answer is 500 "out of memory WHAT" instead, never
 * a body with fields missing. */
void reply_built(struct http_reply *rep, int status, const struct json_build *jb, cJSON *obj,
                 const char *what);

/* {"error": {"code", "message", "field"}} with the given status. */
void reply_error(struct http_reply *rep, int status, const char *code,
                 const char *field, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Takes a malloc'ed body of len bytes with its content type. */
void reply_body(struct http_reply *rep, int status, const char *content_type,
                char *body, size_t len);

/* A body of len bytes that another owns (a run cache's entry), sent
 * without a copy: release(hold) is called once, when the answer has gone
 * out or the reply is dropped; the bytes must stay unchanged until then. */
void reply_held(struct http_reply *rep, int status, const char *content_type,
                const char *body, size_t len, void (*release)(void *hold), void *hold);

/* Gives the answer etag (its quotes and any W/ included) and, when the
 * request's If-None-Match names it (weak comparison, RFC 9110 13.1.2;
 * "*" too), turns the reply into a 304 without a body and returns 1: the
 * handler then answers nothing more.  0 otherwise.  A handler that can
 * tag its answer before making it (reply_state_etag) calls this first, so
 * that a 304 costs no read at all. */
int reply_etag(struct http_request *req, struct http_reply *rep, const char *etag);

/* reply_etag with a weak ETag for an answer made from the database alone:
 * the store's state tag (store_state_tag, read before the reads) and the
 * request's path and query, so that it changes with any write and differs
 * between two pages or filters. */
int reply_state_etag(struct http_request *req, struct http_reply *rep, const char *state);

/* The query argument name, or NULL. Borrowed from the connection. */
const char *query_get(struct http_request *req, const char *name);

/* Every value of the repeatable query argument name, the first cap of
 * them into out (borrowed from the connection).  Returns how many there
 * are, which may be more than cap. */
int query_all(struct http_request *req, const char *name, const char **out, int cap);

/* Refuses (400, unknown_field) a query argument not in allowed (NULL
 * terminated).  Returns 0 when every argument is known. */
int query_check(struct http_request *req, struct http_reply *rep,
                const char *const *allowed);

/* ?name=true|false: *out gets 1 or 0, or -1 when the argument is absent.
 * Anything else answers 400 (out_of_bounds, naming the argument) and
 * returns -1. */
int query_bool(struct http_request *req, struct http_reply *rep,
               const char *name, int *out);

/* ?name=N, a whole number from min to max: *out gets it and 0 is
 * returned; *out is left as it was when the argument is absent.  Anything
 * else answers 400 (out_of_bounds, naming the argument: "name=TEXT:
 * expected " and expected) and returns -1. */
int query_long(struct http_request *req, struct http_reply *rep, const char *name,
               long long min, long long max, const char *expected, long long *out);

/* The same into an int (min and max within int's range). */
int query_int(struct http_request *req, struct http_reply *rep, const char *name,
              int min, int max, const char *expected, int *out);

/* The same for any finite number from min to max. */
int query_double(struct http_request *req, struct http_reply *rep, const char *name,
                 double min, double max, const char *expected, double *out);

/* ?benchmark=NAME, when given, must name a benchmark this daemon offers
 * (as POST /runs: test-only ones with --test-benchmarks); otherwise 400
 * unknown_benchmark naming the benchmarks there are, and -1.  0 when
 * absent, empty or known. */
int query_benchmark(struct http_request *req, struct http_reply *rep);

/* Parses the body as one JSON value with nothing but whitespace after it.
 * On failure answers 400 (malformed_json, the byte offset said) and
 * returns NULL.  The caller owns the result. */
cJSON *body_json(struct http_request *req, struct http_reply *rep);

/* The flags and options gpubenchd starts libmicrohttpd with, apart from
 * its address and callbacks; bench/http starts its bare reference server
 * with exactly these, to compare like with like.  http_mhd_flags(tls):
 * for a TLS listener (tls != 0) without MHD_USE_TLS itself, which
 * http_start adds with the certificate.  http_mhd_options fills items
 * (ending with MHD_OPTION_END) and returns their count, or -1 when cap is
 * too small. */
#define HTTP_MHD_OPTIONS_MAX 16
struct MHD_OptionItem;
unsigned int http_mhd_flags(int tls);
int http_mhd_options(const struct http_options *opt, struct MHD_OptionItem *items, int cap);

/* The waiters' park and resume callbacks (waiters_new): a waiting
 * request's token is its connection (req->conn), suspended while its run
 * has not ended and resumed when it has. */
void http_park(void *conn);
void http_resume(void *conn);

/* NULL when addr is an address --listen takes, else what is wrong with it
 * (a static string). */
const char *http_addr_problem(const char *addr);

/* 1 when addr ("127.0.0.1:8080", "[::1]:8080") is a loopback address. */
int http_addr_is_loopback(const char *addr);

/* Binds and listens on addr ("127.0.0.1:8080", "[::1]:8080", ":8080")
 * without serving yet: the daemon takes its port before it changes its
 * database, and serves once the store and the GPUs are ready (clients
 * that connect in between wait in the backlog).  Returns the socket, or
 * -1 with a sentence in errbuf. */
int http_listen(const char *addr, char *errbuf, size_t cap);

/* Writes the address listen_fd is bound to ("127.0.0.1:40123",
 * "[::1]:40123") into out: with --listen ...:0 the kernel picks the port
 * and this is the only place it is known.  Returns 0, or -1 (out empty). */
int http_bound_address(int listen_fd, char *out, size_t cap);

/* Serves HTTP on listen_fd (from http_listen), which it then owns, with
 * the heavy pool of --heavy-threads threads in app->heavy: the
 * daemon closes it in http_stop.  Returns NULL with a sentence in errbuf
 * on failure; whether libmicrohttpd closed the socket then is not said, so
 * the caller leaves it to the process's exit. */
struct MHD_Daemon *http_start(struct app *app, int listen_fd,
                              char *errbuf, size_t cap);

/* Stops serving: first the heavy pool ends what it runs and answers what
 * is still queued 503 (heavy_pool.h), then, for up to half a second, the requests that were
 * parked and have been resumed (waiters_drain, the heavy reads) send
 * their answers; then libmicrohttpd stops, closing every connection, and
 * the pool is freed.  NULL d: nothing. */
void http_stop(struct MHD_Daemon *d, struct app *app);

#endif
