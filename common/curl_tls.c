/*
 * curl_tls.c - see curl_tls.h.
 */
#include "curl_tls.h"

#include <stdio.h>

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

void curl_failure_reason(CURLcode rc, const char *errbuf, char *out, size_t cap)
{
    snprintf(out, cap, "%s", errbuf && errbuf[0] ? errbuf : curl_easy_strerror(rc));
}

int curl_tls_unverified(CURLcode rc)
{
    return rc == CURLE_PEER_FAILED_VERIFICATION;
}
