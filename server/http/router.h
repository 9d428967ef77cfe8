/*
 * router.h - the one table of routes (router.c).  A route entry says
 * everything about its route: method, path pattern, handler, who may call
 * it, how large a body it takes and whether it is rate-limited; http.c
 * applies those and names no URL itself.
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

struct route {
    const char *method;
    const char *pattern;
    http_handler handler;
    enum route_access access;
    size_t body_cap;  /* the most body bytes taken; 0: HTTP_BODY_CAP */
    int rate_limited; /* counted by the post rate limit (--rate-limit) */
};

/* The route for method and path, with what "*" matched copied to arg.
 * Returns NULL when none; then *status is 404, or 405 with allow filled.
 * The route is static: it outlives every request. */
const struct route *router_find(const char *method, const char *path, char *arg,
                                size_t arg_cap, char *allow, size_t allow_cap, int *status);

/* The largest body cap of the routes for path, whatever their method (the
 * body is read before the request is routed and a 405 answered), and
 * HTTP_BODY_CAP when none matches. */
size_t router_body_cap(const char *path);

#endif
