/*
 * router.h - the one table of routes (router.c): method, path pattern and
 * handler.  A pattern's "*" matches exactly one path segment.  The
 * dispatcher answers 404 for a path no route knows and 405, with the Allow
 * list, for a known path asked with another method.
 */
#ifndef GPUBENCH_ROUTER_H
#define GPUBENCH_ROUTER_H

#include <stddef.h>

#include "http.h"

/* What a route needs before its handler runs. */
enum route_access {
    ROUTE_READ = 0,   /* open, unless the daemon closes reads too */
    ROUTE_WRITE = 1,  /* changes something: a bearer token where tokens are set */
    ROUTE_PUBLIC = 2, /* never needs a token: liveness, and the page itself */
};

/* The handler for method and path, with what "*" matched copied to arg
 * and the route's access in *access.  Returns NULL when none; then
 * *status is 404, or 405 with allow filled. */
http_handler router_find(const char *method, const char *path, char *arg,
                         size_t arg_cap, char *allow, size_t allow_cap,
                         int *status, enum route_access *access);

#endif
