/*
 * http_client.c - see http_client.h.  One CURL easy handle serves every
 * request of the invocation (keep-alive while `run --wait` polls); a
 * request that ends without an answer says which URL and why, in
 * libcurl's words.
 */
#include "http_client.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gb_http {
    CURL *curl;
    char *base;
    struct curl_slist *auth; /* the Authorization header, or NULL */
    struct curl_tls tls;     /* set again after each curl_easy_reset */
    char curl_err[CURL_ERROR_SIZE];
};

struct gb_http *gb_http_open(const char *base, const char *token, const struct curl_tls *tls,
                             char *err, size_t cap)
{
    struct gb_http *h = calloc(1, sizeof(*h));
    size_t n = strlen(base);

    if (h == NULL || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
        (h->curl = curl_easy_init()) == NULL) {
        snprintf(err, cap, "libcurl could not be started");
        goto fail;
    }
    if (tls != NULL)
        h->tls = *tls;
    while (n > 0 && base[n - 1] == '/')
        n--;
    if ((h->base = strndup(base, n)) == NULL) {
        snprintf(err, cap, "out of memory");
        goto fail;
    }
    if (token != NULL) {
        char header[1024];
        if ((size_t)snprintf(header, sizeof(header), "Authorization: Bearer %s", token) >=
            sizeof(header)) {
            snprintf(err, cap, "the token is over %zu bytes", sizeof(header) - 32);
            goto fail;
        }
        if ((h->auth = curl_slist_append(NULL, header)) == NULL) {
            snprintf(err, cap, "out of memory");
            goto fail;
        }
    }
    return h;

fail:
    gb_http_close(h);
    return NULL;
}

void gb_http_close(struct gb_http *h)
{
    if (h == NULL)
        return;
    curl_slist_free_all(h->auth);
    if (h->curl)
        curl_easy_cleanup(h->curl);
    free(h->base);
    free(h);
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *userp)
{
    struct dynbuf *b = userp;

    /* A refused append ends the transfer: libcurl reports a write error. */
    return dynbuf_add(b, data, size * nmemb) == 0 ? size * nmemb : 0;
}

int gb_http_request(struct gb_http *h, const char *method, const char *path, const char *body,
                    size_t len, const char *content_type, struct gb_response *res, char *err,
                    size_t cap)
{
    struct curl_slist *headers = NULL, *more;
    struct dynbuf url;
    char *ctype = NULL;
    int rc = -1;
    CURLcode cc;

    memset(res, 0, sizeof(*res));
    dynbuf_init(&res->body, GB_HTTP_ANSWER_CAP);
    dynbuf_init(&url, 8192);
    if (dynbuf_printf(&url, "%s%s", h->base, path) != 0) {
        snprintf(err, cap, "the URL is too long");
        goto done;
    }
    for (struct curl_slist *a = h->auth; a; a = a->next)
        if ((more = curl_slist_append(headers, a->data)) == NULL)
            goto oom;
        else
            headers = more;
    if (content_type != NULL) {
        char line[128];
        snprintf(line, sizeof(line), "Content-Type: %s", content_type);
        if ((more = curl_slist_append(headers, line)) == NULL)
            goto oom;
        headers = more;
    }
    /* No "Expect: 100-continue" pause before a large import. */
    if ((more = curl_slist_append(headers, "Expect:")) == NULL)
        goto oom;
    headers = more;

    curl_easy_reset(h->curl);
    if (curl_easy_setopt(h->curl, CURLOPT_URL, url.data) != CURLE_OK ||
        curl_easy_setopt(h->curl, CURLOPT_CUSTOMREQUEST, method) != CURLE_OK ||
        curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, headers) != CURLE_OK ||
        curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, on_body) != CURLE_OK ||
        curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, &res->body) != CURLE_OK ||
        curl_easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT, 10L) != CURLE_OK ||
        curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
        curl_tls_setup(h->curl, &h->tls, h->curl_err) != CURLE_OK) {
        snprintf(err, cap, "%s: libcurl refused an option", url.data);
        goto done;
    }
    if (strcmp(method, "HEAD") == 0 && curl_easy_setopt(h->curl, CURLOPT_NOBODY, 1L) != CURLE_OK)
        goto oom;
    if (body != NULL &&
        (curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, body) != CURLE_OK ||
         curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len) != CURLE_OK)) {
        snprintf(err, cap, "%s: libcurl refused the body", url.data);
        goto done;
    }
    cc = curl_easy_perform(h->curl);
    if (cc == CURLE_WRITE_ERROR && dynbuf_failed(&res->body)) {
        snprintf(err, cap, "%s: the answer is over %d MiB", url.data,
                 GB_HTTP_ANSWER_CAP / (1024 * 1024));
        goto done;
    }
    if (cc != CURLE_OK) {
        char why[CURL_ERROR_SIZE + 160];
        static const char *const hint[] = {
            [CURL_TLS_NOT_REFUSED] = "",
            [CURL_TLS_CERT_WANTED] = "the daemon asks for a client certificate: --cert/--key "
                                     "FILE (or $GPUBENCH_CERT, $GPUBENCH_KEY) name one; ",
            [CURL_TLS_CERT_REFUSED] = "the daemon refused the client certificate of --cert "
                                      "(or $GPUBENCH_CERT); ",
        };
        const char *detail = h->curl_err[0] ? h->curl_err : curl_easy_strerror(cc);
        enum curl_tls_refusal refused = curl_tls_refused(cc, h->curl_err);

        if (refused == CURL_TLS_NOT_REFUSED)
            curl_failure_reason(cc, h->curl_err, why, sizeof(why));
        else
            snprintf(why, sizeof(why), "%s%s", hint[refused], detail);
        snprintf(err, cap, "%s: %s%s", url.data, why,
                 curl_tls_unverified(cc) ? " (--cacert FILE or $GPUBENCH_CACERT names the CA "
                                           "that signed the daemon's certificate)"
                                         : "");
        goto done;
    }
    if (curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &res->status) != CURLE_OK ||
        curl_easy_getinfo(h->curl, CURLINFO_CONTENT_TYPE, &ctype) != CURLE_OK) {
        snprintf(err, cap, "%s: the answer's status could not be read", url.data);
        goto done;
    }
    snprintf(res->content_type, sizeof(res->content_type), "%s", ctype ? ctype : "");
    rc = 0;
    goto done;

oom:
    snprintf(err, cap, "out of memory");
done:
    curl_slist_free_all(headers);
    dynbuf_free(&url);
    return rc;
}

void gb_response_free(struct gb_response *res)
{
    dynbuf_free(&res->body);
}

int gb_http_add_query(struct gb_http *h, struct dynbuf *q, const char *name, const char *value)
{
    char *escaped;
    int rc;

    if (value == NULL)
        return 0;
    if ((escaped = curl_easy_escape(h->curl, value, 0)) == NULL)
        return -1;
    rc = dynbuf_printf(q, "%s%s=%s", q->data && strchr(q->data, '?') ? "&" : "?", name, escaped);
    curl_free(escaped);
    return rc;
}
