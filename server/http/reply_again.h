/*
 * reply_again.h - the last held answer each libmicrohttpd thread sent,
 * kept as its libmicrohttpd response with its headers, and queued again
 * when the same thread's next answer is the same held body (a finished
 * run asked again and again, a kept list page, a kept /metrics body).
 *
 * A held body (http.h, reply_held) is text that the run cache or the
 * metrics cache keeps and counts holders of: the same hold, the same
 * bytes and the same headers are the same answer.  Building a response
 * costs libmicrohttpd an allocation and a copy of each header (about 3,000
 * instructions of the 8,000 a GET /runs/ID took); a response is counted
 * by libmicrohttpd and may be queued on any number of connections, so the
 * kept one is queued as it is.
 *
 * What is kept: one response a thread (thread-local), with the hold of
 * the answer it was made for, for bodies of REPLY_AGAIN_MAX_BYTES or less
 * (a run, a list page).  A bigger body (a hub's whole /metrics, megabytes)
 * is not kept: a kept response would keep that body alive on each thread
 * after its cache replaced it, for a saving of a few thousand
 * instructions against its send's millions; the new answer's own hold is let go at once
 * (the kept response still holds the body).  Only answers with no
 * Location, Allow, WWW-Authenticate, Content-Security-Policy or
 * Retry-After are kept: the key is the hold, the body's address and
 * length, the status, the content type and the ETag.  When the thread's
 * next held answer differs, the kept response is destroyed (its hold let
 * go once libmicrohttpd has sent it everywhere it was queued), and when
 * the thread ends, a destructor lets it go: libmicrohttpd's threads end
 * in http_stop, before the caches that own the bodies are freed.
 */
#ifndef GPUBENCH_HTTP_REPLY_AGAIN_H
#define GPUBENCH_HTTP_REPLY_AGAIN_H

#include "http.h"

struct MHD_Response;

#define REPLY_AGAIN_MAX_BYTES (256 * 1024)

/* 1 when rep's answer may be kept: a held body of REPLY_AGAIN_MAX_BYTES
 * or less and no header beyond the content type and the ETag (and a
 * libmicrohttpd that lets go of a held body when a response is
 * destroyed). */
int reply_again_keepable(const struct http_reply *rep);

/* The thread's kept response when the keepable rep is the same answer
 * (then rep's own hold is let go and its body left: the caller queues the
 * response and does not destroy it), else NULL. */
struct MHD_Response *reply_again_find(struct http_reply *rep);

/* Keeps resp, just made for the keepable rep whose hold and body were
 * hold and body (the response has them now), as the thread's; the one
 * kept before is destroyed.  1 when it took the caller's reference to
 * resp (the caller does not destroy it), else 0. */
int reply_again_keep(const struct http_reply *rep, const void *hold, const char *body,
                     struct MHD_Response *resp);

#endif
