/*
 * curl_tls.h - the TLS side of every libcurl transfer gpubench makes: the
 * daemon's pulls from its peers and its alert webhook, and the
 * command-line client.  One place sets the CA, the client certificate and
 * its key, and keeps verification on; one words a failed transfer's
 * reason in libcurl's own detail, the words curl(1) prints.
 *
 * Verification is never optional: a server whose certificate does not
 * verify against the CA (or the system's CAs) and name the host asked for
 * is an error, and there is no setting here to turn that off.  The files
 * are named, not read here: libcurl reads them at each connection, so a
 * renewed certificate is used by the next transfer without a restart.
 * The daemon links this (with libcurl) apart from gb_common, which the
 * worker links too and which needs no libcurl.
 */
#ifndef GPUBENCH_COMMON_CURL_TLS_H
#define GPUBENCH_COMMON_CURL_TLS_H

#include <curl/curl.h>
#include <stddef.h>

/* PEM files, each NULL when not given; the strings outlive the transfers. */
struct curl_tls {
    const char *ca_file;   /* the CAs a server's certificate must chain to; NULL: the system's */
    const char *cert_file; /* a client certificate, for servers that ask (mutual TLS) */
    const char *key_file;  /* its private key; NULL: it is in cert_file */
};

/* Sets c's TLS options from tls (NULL: the system's CAs, no client
 * certificate), with the server's certificate and host name verified, and
 * errbuf (CURL_ERROR_SIZE bytes, which must outlive the transfer) as c's
 * error buffer, emptied.  CURLE_OK, or libcurl's refusal of an option. */
CURLcode curl_tls_setup(CURL *c, const struct curl_tls *tls, char *errbuf);

/* Why a transfer failed with rc, into out: libcurl's detailed message in
 * errbuf when it wrote one ("SSL certificate problem: certificate has
 * expired", "Failed to connect to node7 port 8080 ..."), else its message
 * for rc, after "the server asks for a client certificate: " or "the
 * server refused the client certificate: " when its alert says so
 * (curl_tls_refused).  For any failure, not only TLS's: one wording for all. */
void curl_failure_reason(CURLcode rc, const char *errbuf, char *out, size_t cap);

/* Whether the server refused the TLS handshake for the client's
 * certificate, by the alert named in errbuf (the transfer's error buffer):
 * none sent where one is required (TLS 1.3's certificate_required), or the
 * one sent refused (unsupported for a client, an unknown CA, expired). */
enum curl_tls_refusal {
    CURL_TLS_NOT_REFUSED,
    CURL_TLS_CERT_WANTED,
    CURL_TLS_CERT_REFUSED,
};
enum curl_tls_refusal curl_tls_refused(CURLcode rc, const char *errbuf);

/* Whether rc is the server's certificate failing verification (an
 * unknown CA, an expired certificate, another host's name), so that a
 * caller can say which of its options names the CA. */
int curl_tls_unverified(CURLcode rc);

#endif
