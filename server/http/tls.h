/*
 * tls.h - HTTPS for gpubenchd, on libmicrohttpd's own TLS (GnuTLS), set
 * up from a web config (web_config.h).
 *
 * The certificate and key are handed to each handshake by a GnuTLS
 * certificate callback, which first looks at the files' inode, size and
 * mtime: a renewed certificate is served by the next handshake, as the
 * exporter-toolkit does, without a restart.  SIGHUP looks at the files'
 * bytes as well; files that hold the pair served are not loaded again.  A
 * new pair that does not load (unreadable, not PEM, a key that is not the
 * certificate's, expired, not valid yet) is logged and reported by
 * http_tls_status, and the old pair goes on being served.  Connections
 * already open keep the pair they shook hands with: a pair is freed when
 * it is no longer served and the last connection that used it closed.
 *
 * Client certificates: client_auth_type sets, at each connection's start,
 * whether one is asked for, required, and verified against client_ca_file
 * at the handshake; a verified one must be for client authentication
 * (clientAuth among its extended key usages, or none listed).  A client
 * refused gets the TLS alert that says why (certificate_required,
 * unsupported_certificate, unknown_ca, ...), and the log says why with
 * its address.  GnuTLS's own messages go through log.h.
 *
 * Nothing here logs a key, or more of a certificate than its serial.
 */
#ifndef GPUBENCH_HTTP_TLS_H
#define GPUBENCH_HTTP_TLS_H

#include <stddef.h>
#include <time.h>

#include "web_config.h"

struct http_tls;
struct MHD_Connection;
struct MHD_OptionItem;

/* Loads the certificate, key and client CA that cfg names; refuses an
 * expired certificate, and one not valid yet.  Returns NULL with a sentence in err.  One at a
 * time in a process: the certificate callback GnuTLS calls has no
 * argument of its own to find it by.  Caller frees with http_tls_free,
 * after the daemon serving with it has stopped. */
struct http_tls *http_tls_load(const struct web_config *cfg, char *err, size_t cap);
void http_tls_free(struct http_tls *t);

/* libmicrohttpd's options for serving with t: the certificate callback,
 * the client CA, the versions.  Fills items (without MHD_OPTION_END) and
 * returns their count, or -1 when cap is too small. */
int http_tls_mhd_options(struct http_tls *t, struct MHD_OptionItem *items, int cap);

/* At a connection's start, before its handshake: asks for, requires and
 * verifies a client certificate as client_auth_type says, and sets
 * *socket_context (libmicrohttpd's, for this connection) to what the
 * handshake needs, which http_tls_connection_closed frees.  0, or -1 when
 * out of memory (the connection is then to be refused: its handshake
 * would fail).  NULL t: 0, nothing done. */
int http_tls_connection_started(struct http_tls *t, struct MHD_Connection *conn,
                                void **socket_context);

/* At its close: lets go of the pair its handshake used, frees what
 * http_tls_connection_started put in *socket_context and sets it NULL. */
void http_tls_connection_closed(struct http_tls *t, void **socket_context);

/* 1 when a verified client certificate is an identity here
 * (VerifyClientCertIfGiven, RequireAndVerifyClientCert); NULL t: 0. */
int http_tls_identifies(const struct http_tls *t);

/* 1 when conn presented a certificate that client_ca_file signed (and t
 * identifies); then key (17 bytes or more) names it for rate limiting:
 * 16 hex digits of the SHA-256 of its DER. */
int http_tls_client_verified(const struct http_tls *t, struct MHD_Connection *conn,
                             char *key, size_t key_cap);

/* Loads the files again if their stamps changed; force (SIGHUP): if their
 * bytes differ from the pair served, or the last load failed. */
void http_tls_reload(struct http_tls *t, int force);

struct http_tls_status {
    char serial[80];      /* of the certificate served, hex */
    time_t not_after;     /* its end */
    char loaded_at[32];   /* when it was loaded, RFC 3339 */
    char error[320];      /* why the newest files were not taken; "" when they were */
    long reload_failures; /* since the start */
    long loads;           /* changed files read and parsed (taken or not) */
    long unchanged;       /* looks that found the files as served: not loaded */
};
void http_tls_status(struct http_tls *t, struct http_tls_status *out);

#endif
