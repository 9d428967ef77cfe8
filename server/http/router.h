/*
 * router.h - the one table of routes (router.c).  A route entry says
 * everything about its route: method, path pattern, handler, who may call
 * it, how large a body it takes and of what type, whether it is
 * rate-limited, and whether it is a heavy read (enum route_weight);
 * http.c applies those, on the headers before any of the
 * body is read, and names no URL itself.
 *
 * A pattern's "*" matches exactly one non-empty path segment; text after
 * the "*" is a suffix the segment must end with ("/runs/ *.csv" without the
 * space), and what "*" matched is then the segment without it.  Routes
 * are tried in order, so a suffix form goes before the plain "*" of the
 * same prefix.  The dispatcher answers 404 for a path no route knows and
 * 405, with the Allow list, for a known path asked with another method.
 */
#ifndef GPUBENCH_HTTP_ROUTER_H
#define GPUBENCH_HTTP_ROUTER_H

#include <stddef.h>

#include "http.h"

/* What a route needs before its handler runs. */
enum route_access {
    ROUTE_READ = 0,   /* open, unless the daemon closes reads too */
    ROUTE_WRITE = 1,  /* changes something: a bearer token where tokens are set */
    ROUTE_PUBLIC = 2, /* never needs a token: liveness, and the page itself */
};

/* Where a route's handler runs.  A light one runs on libmicrohttpd's
 * thread that holds the connection; a heavy one (a reading of every card,
 * every run, or every peer's: what grows with the fleet) on the heavy
 * pool's (heavy_pool.h), the connection suspended meanwhile, so that light
 * requests (/healthz, a single run, a write) never wait behind it. */
enum route_weight {
    ROUTE_LIGHT = 0,
    ROUTE_HEAVY = 1,
};

/* What a route's body may be: its cap, and the media types it is read as
 * ("application/json", or a comma list of them), first the one to name
 * when another is refused. */
struct route_body {
    size_t cap;
    const char *types;
};

struct route {
    const char *method;
    const char *pattern;
    http_handler handler;
    enum route_access access;
    const struct route_body *body; /* static */
    int rate_limited;              /* counted by the post rate limit (--rate-limit) */
    enum route_weight weight;
};

/* The route for method and path, with what "*" matched copied to arg.
 * Returns NULL when none; then *status is 404, or 405 with allow filled.
 * The route is static: it outlives every request. */
const struct route *router_find(const char *method, const char *path, char *arg,
                                size_t arg_cap, char *allow, size_t allow_cap, int *status);

#endif
