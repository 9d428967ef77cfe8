/*
 * http_client.h - the client's one connection to gpubenchd, over libcurl:
 * a base URL, an optional bearer token, TLS settings for an https://
 * daemon (curl_tls.h: always verified), and requests whose answers are
 * read into a capped buffer (GB_HTTP_ANSWER_CAP), so a daemon that answers
 * without end cannot make the client allocate without bound.
 */
#ifndef GPUBENCH_CLIENT_HTTP_CLIENT_H
#define GPUBENCH_CLIENT_HTTP_CLIENT_H

#include "curl_tls.h"
#include "dynbuf.h"

#include <stddef.h>

#define GB_HTTP_ANSWER_CAP (256 * 1024 * 1024)

struct gb_http;

struct gb_response {
    long status;           /* the HTTP status, 0 when none came */
    struct dynbuf body;    /* the answer's bytes, NUL-terminated */
    char content_type[96]; /* "" when the daemon sent none */
};

/* Opens a connection handle for base ("http://host:port", no trailing
 * path needed) sending token as 'Authorization: Bearer' when not NULL.
 * Both are copied; tls (NULL: the system's CAs, no client certificate)
 * is copied but its strings must outlive the handle.  NULL with a
 * sentence in err when libcurl fails.  Close with gb_http_close. */
struct gb_http *gb_http_open(const char *base, const char *token, const struct curl_tls *tls,
                             char *err, size_t cap);
void gb_http_close(struct gb_http *h);

/* method path (with its query, already escaped) with an optional body of
 * len bytes and its content type.  Fills res, which the caller frees with
 * gb_response_free even on failure.  0 when an answer came (whatever its
 * status); -1 with a sentence in err naming the URL when none did (a
 * certificate that does not verify: libcurl's words, as curl says it). */
int gb_http_request(struct gb_http *h, const char *method, const char *path, const char *body,
                    size_t len, const char *content_type, struct gb_response *res, char *err,
                    size_t cap);
void gb_response_free(struct gb_response *res);

/* Appends "?name=VALUE" (the first argument: q holds no '?' yet) or
 * "&name=VALUE" to q, a path being built, the value percent-escaped;
 * nothing when value is NULL.  -1 out of memory or past q's cap. */
int gb_http_add_query(struct gb_http *h, struct dynbuf *q, const char *name, const char *value);

#endif
