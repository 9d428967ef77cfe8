/*
 * request_guard.h - what is decided on a request's headers alone, before
 * any of its body is read (http.c asks these on libmicrohttpd's first call
 * of a request): whether its Host names this daemon, whether its Origin may
 * speak to it, whether its body is of the type its route reads, and whether
 * the daemon has room to buffer that body now.
 *
 * A web page can reach a daemon on loopback: these keep it from writing
 * there.  A browser names the page's origin in Origin on every write it
 * sends, so a page of another site is refused by that; a page that
 * rebinds its own name to 127.0.0.1 (DNS rebinding) has its name in Host,
 * so a loopback or unauthenticated daemon answers only the names it is
 * known by.  A form can send only form encodings and text/plain, and a
 * body is read only as the type its route says (router.c), so no form can
 * post what a client posts.
 *
 * The pure checks keep no state.  The body budget is one counter for the
 * whole daemon, an atomic: every HTTP thread takes from it and gives back.
 */
#ifndef GPUBENCH_HTTP_REQUEST_GUARD_H
#define GPUBENCH_HTTP_REQUEST_GUARD_H

#include <stddef.h>

/* 1 when host, a Host header ("name:port", "[v6]:port", or without the
 * port), names this daemon: an IP address (no page can rebind one),
 * "localhost", the node's own name node, or a name in names (a comma list,
 * --web-host; NULL: none).  The port may be any: rebinding is in the name,
 * and an ssh tunnel or a TLS front in between gives its own port.  A NULL
 * host (an HTTP/1.0 client, never a browser) is taken. */
int guard_host_ok(const char *host, const char *node, const char *names);

/* 1 when origin (the Origin header; NULL: none sent) is this daemon's own,
 * "http://" or "https://" then host, the request's Host header (either
 * scheme: a TLS front before a plain daemon keeps the Host; only the
 * daemon's own front serves that name and port), or is listed in allowed
 * (a comma list of origins, --web-allowed-origins; NULL: none). */
int guard_origin_ok(const char *origin, const char *host, const char *allowed);

/* 1 when content_type's media type (what comes before any ";" parameter,
 * "application/json; charset=utf-8") is one of types, a comma list; case
 * is not significant.  A NULL content_type is none of them. */
int guard_type_ok(const char *content_type, const char *types);

/* Takes n bytes from the daemon's body budget of limit bytes: 1 when they
 * fit beside what the other requests hold now, else 0 and nothing taken.
 * What is taken is given back with guard_budget_give. */
int guard_budget_take(size_t n, size_t limit);
void guard_budget_give(size_t n);

#endif
