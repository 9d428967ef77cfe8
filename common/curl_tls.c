/*
 * curl_tls.c - see curl_tls.h.  A server's refusal of the client's
 * certificate is known by the TLS alert in libcurl's message (its TLS
 * library's words, OpenSSL's and GnuTLS's alike end with the alert's name):
 * libcurl has no code of its own for it.
 */
#include "curl_tls.h"

#include <stdio.h>
#include <string.h>

/* The alerts a server refuses a client certificate with, as libcurl's
 * message ends them. */
static const struct {
    const char *words;
    enum curl_tls_refusal refusal;
} alerts[] = {
    {"alert certificate required", CURL_TLS_CERT_WANTED},
    {"alert unsupported certificate", CURL_TLS_CERT_REFUSED},
    {"alert bad certificate", CURL_TLS_CERT_REFUSED},
    {"alert unknown ca", CURL_TLS_CERT_REFUSED},
    {"alert certificate expired", CURL_TLS_CERT_REFUSED},
    {"alert certificate revoked", CURL_TLS_CERT_REFUSED},
};

CURLcode curl_tls_setup(CURL *c, const struct curl_tls *tls, char *errbuf)
{
    CURLcode rc;

    errbuf[0] = '\0';
    /* libcurl's defaults, set again so that this is the one place that
     * decides them. */
    if ((rc = curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf)) != CURLE_OK ||
        (rc = curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L)) != CURLE_OK ||
        (rc = curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L)) != CURLE_OK ||
        (rc = curl_easy_setopt(c, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2)) !=
            CURLE_OK)
        return rc;
    if (tls == NULL)
        return CURLE_OK;
    if (tls->ca_file && (rc = curl_easy_setopt(c, CURLOPT_CAINFO, tls->ca_file)) != CURLE_OK)
        return rc;
    if (tls->cert_file && (rc = curl_easy_setopt(c, CURLOPT_SSLCERT, tls->cert_file)) != CURLE_OK)
        return rc;
    if (tls->key_file && (rc = curl_easy_setopt(c, CURLOPT_SSLKEY, tls->key_file)) != CURLE_OK)
        return rc;
    return CURLE_OK;
}

enum curl_tls_refusal curl_tls_refused(CURLcode rc, const char *errbuf)
{
    if (rc == CURLE_OK || errbuf == NULL)
        return CURL_TLS_NOT_REFUSED;
    for (size_t i = 0; i < sizeof(alerts) / sizeof(alerts[0]); i++)
        if (strstr(errbuf, alerts[i].words))
            return alerts[i].refusal;
    return CURL_TLS_NOT_REFUSED;
}

void curl_failure_reason(CURLcode rc, const char *errbuf, char *out, size_t cap)
{
    static const char *const said[] = {
        [CURL_TLS_NOT_REFUSED] = "",
        [CURL_TLS_CERT_WANTED] = "the server asks for a client certificate: ",
        [CURL_TLS_CERT_REFUSED] = "the server refused the client certificate: ",
    };

    snprintf(out, cap, "%s%s", said[curl_tls_refused(rc, errbuf)],
             errbuf && errbuf[0] ? errbuf : curl_easy_strerror(rc));
}

int curl_tls_unverified(CURLcode rc)
{
    return rc == CURLE_PEER_FAILED_VERIFICATION;
}
