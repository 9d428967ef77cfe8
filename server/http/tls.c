/*
 * tls.c - see tls.h.  The pair served now is t->current, swapped under
 * t->lock; every pair loaded stays on t->pairs until http_tls_free.
 */
#include "tls.h"
#include "file_stamp.h"
#include "auth.h"
#include "log.h"
#include "timeutil.h"

#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/abstract.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A PEM file of a certificate chain, a key or a CA list is far smaller. */
#define TLS_FILE_BYTES (1024 * 1024)
#define TLS_CHAIN_MAX 8

/* One certificate chain with its key, as loaded from the files. */
struct tls_pair {
    gnutls_pcert_st chain[TLS_CHAIN_MAX];
    unsigned int chain_len;
    gnutls_privkey_t key;
    char serial[80];
    time_t not_after;
    char loaded_at[32];
    struct tls_pair *older;
};

struct http_tls {
    struct web_config cfg;
    char *client_ca; /* PEM for MHD_OPTION_HTTPS_MEM_TRUST; NULL: none */
    char priorities[96];
    pthread_mutex_t lock;                  /* guards the fields below */
    struct tls_pair *current;              /* served; newest first on its list */
    struct file_stamp cert_seen, key_seen; /* of the last load tried */
    char error[320];                       /* why that load failed; "" */
    long failures;
};

/* The callback below has no argument of its own (tls.h).  Set before the
 * daemon serves and cleared after it stopped; atomic all the same, since
 * the handshakes read it from libmicrohttpd's threads. */
static _Atomic(struct http_tls *) serving;

/* Reads a whole file, NUL-terminated, up to TLS_FILE_BYTES.  Returns the
 * buffer (caller wipes and frees) or NULL with why. */
static char *read_file(const char *path, size_t *len, char *why, size_t cap)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n;

    if (f == NULL) {
        snprintf(why, cap, "%.250s: %s", path, strerror(errno));
        return NULL;
    }
    buf = malloc(TLS_FILE_BYTES + 1);
    if (buf == NULL) {
        snprintf(why, cap, "%s: out of memory", path);
        goto done;
    }
    n = fread(buf, 1, TLS_FILE_BYTES + 1, f);
    if (ferror(f) || n > TLS_FILE_BYTES) {
        snprintf(why, cap, "%.250s: %s", path, ferror(f) ? "cannot read it" : "over 1 MiB");
        free(buf);
        buf = NULL;
        goto done;
    }
    buf[n] = '\0';
    *len = n;

done:
    fclose(f);
    return buf;
}

static void wipe_free(char *buf, size_t len)
{
    if (buf == NULL)
        return;
    gnutls_memset(buf, 0, len);
    free(buf);
}

static void pair_free(struct tls_pair *p)
{
    if (p == NULL)
        return;
    for (unsigned int i = 0; i < p->chain_len; i++)
        gnutls_pcert_deinit(&p->chain[i]);
    gnutls_privkey_deinit(p->key);
    free(p);
}

/* 0 when key is the private half of the chain's first certificate. */
static int key_matches(const struct tls_pair *p)
{
    gnutls_pubkey_t from_key = NULL;
    gnutls_datum_t a = {NULL, 0}, b = {NULL, 0};
    int rc = -1;

    if (gnutls_pubkey_init(&from_key) < 0 ||
        gnutls_pubkey_import_privkey(from_key, p->key, 0, 0) < 0 ||
        gnutls_pubkey_export2(from_key, GNUTLS_X509_FMT_DER, &a) < 0 ||
        gnutls_pubkey_export2(p->chain[0].pubkey, GNUTLS_X509_FMT_DER, &b) < 0)
        goto done;
    rc = a.size == b.size && memcmp(a.data, b.data, a.size) == 0 ? 0 : -1;

done:
    gnutls_free(a.data);
    gnutls_free(b.data);
    gnutls_pubkey_deinit(from_key);
    return rc;
}

/* The serial (hex) and end of the chain's first certificate. */
static int describe(struct tls_pair *p)
{
    gnutls_x509_crt_t crt = NULL;
    unsigned char serial[40];
    size_t n = sizeof(serial);
    int rc = -1;

    if (gnutls_x509_crt_init(&crt) < 0 ||
        gnutls_x509_crt_import(crt, &p->chain[0].cert, GNUTLS_X509_FMT_DER) < 0 ||
        gnutls_x509_crt_get_serial(crt, serial, &n) < 0)
        goto done;
    for (size_t i = 0; i < n && 2 * i + 2 < sizeof(p->serial); i++)
        snprintf(p->serial + 2 * i, 3, "%02x", serial[i]);
    p->not_after = gnutls_x509_crt_get_expiration_time(crt);
    rc = 0;

done:
    if (crt)
        gnutls_x509_crt_deinit(crt);
    return rc;
}

/* A new pair from cfg's files, or NULL with why. */
static struct tls_pair *pair_load(const struct web_config *cfg, char *why, size_t cap)
{
    struct tls_pair *p = calloc(1, sizeof(*p));
    char *cert = NULL, *key = NULL;
    size_t cert_len = 0, key_len = 0;
    gnutls_datum_t d;
    int ret, ok = 0;

    if (p == NULL) {
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    cert = read_file(cfg->cert_file, &cert_len, why, cap);
    key = cert ? read_file(cfg->key_file, &key_len, why, cap) : NULL;
    if (key == NULL)
        goto done;
    p->chain_len = TLS_CHAIN_MAX;
    d = (gnutls_datum_t){(unsigned char *)cert, (unsigned int)cert_len};
    ret = gnutls_pcert_list_import_x509_raw(p->chain, &p->chain_len, &d, GNUTLS_X509_FMT_PEM,
                                            0);
    if (ret < 0 || p->chain_len == 0) {
        p->chain_len = 0;
        snprintf(why, cap, "cert_file %.200s: not a PEM certificate (%s)", cfg->cert_file,
                 gnutls_strerror(ret));
        goto done;
    }
    d = (gnutls_datum_t){(unsigned char *)key, (unsigned int)key_len};
    if ((ret = gnutls_privkey_init(&p->key)) < 0 ||
        (ret = gnutls_privkey_import_x509_raw(p->key, &d, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
        snprintf(why, cap, "key_file %.200s: not a PEM private key without a password (%s)",
                 cfg->key_file, gnutls_strerror(ret));
        goto done;
    }
    if (key_matches(p) != 0) {
        snprintf(why, cap, "key_file %.130s is not the key of cert_file %.130s", cfg->key_file,
                 cfg->cert_file);
        goto done;
    }
    if (describe(p) != 0) {
        snprintf(why, cap, "cert_file %.200s: cannot read its serial and dates", cfg->cert_file);
        goto done;
    }
    if (p->not_after <= time(NULL)) {
        struct tm tm;
        char when[32] = "?";
        if (gmtime_r(&p->not_after, &tm))
            strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
        snprintf(why, cap, "cert_file %.200s: the certificate expired at %s", cfg->cert_file, when);
        goto done;
    }
    time_now_rfc3339(p->loaded_at, sizeof(p->loaded_at));
    ok = 1;

done:
    wipe_free(key, key_len);
    free(cert);
    if (!ok) {
        pair_free(p);
        return NULL;
    }
    return p;
}

/* Called with t->lock held. */
static void reload_locked(struct http_tls *t, int force)
{
    struct file_stamp cert_now, key_now;
    struct tls_pair *p;
    char why[320];

    file_stamp_read(t->cfg.cert_file, &cert_now);
    file_stamp_read(t->cfg.key_file, &key_now);
    if (!force && file_stamp_same(&cert_now, &t->cert_seen) &&
        file_stamp_same(&key_now, &t->key_seen))
        return;
    t->cert_seen = cert_now;
    t->key_seen = key_now;
    p = pair_load(&t->cfg, why, sizeof(why));
    if (p == NULL) {
        t->failures++;
        snprintf(t->error, sizeof(t->error), "%s", why);
        log_error("TLS: the new certificate was not taken, serving serial %s still: %s",
                  t->current->serial, why);
        return;
    }
    if (t->error[0] || strcmp(p->serial, t->current->serial) != 0)
        log_info("TLS: serving certificate serial %s now (was %s)", p->serial,
                 t->current->serial);
    t->error[0] = '\0';
    p->older = t->current;
    t->current = p;
}

void http_tls_reload(struct http_tls *t, int force)
{
    if (t == NULL)
        return;
    pthread_mutex_lock(&t->lock);
    reload_locked(t, force);
    pthread_mutex_unlock(&t->lock);
}

/* gnutls_certificate_retrieve_function2: the pair for this handshake. */
static int pick_certificate(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn,
                            int nreqs, const gnutls_pk_algorithm_t *pk_algos,
                            int pk_algos_length, gnutls_pcert_st **pcert,
                            unsigned int *pcert_length, gnutls_privkey_t *pkey)
{
    struct http_tls *t = atomic_load(&serving);

    (void)session;
    (void)req_ca_rdn;
    (void)nreqs;
    (void)pk_algos;
    (void)pk_algos_length;
    if (t == NULL)
        return -1;
    pthread_mutex_lock(&t->lock);
    reload_locked(t, 0);
    *pcert = t->current->chain;
    *pcert_length = t->current->chain_len;
    *pkey = t->current->key;
    pthread_mutex_unlock(&t->lock);
    return 0;
}

static const char *const priority_strings[2][2] = {
    /* [min_version][max_version] */
    {"NORMAL:-VERS-ALL:+VERS-TLS1.2", "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"},
    {NULL, "NORMAL:-VERS-ALL:+VERS-TLS1.3"},
};

struct http_tls *http_tls_load(const struct web_config *cfg, char *err, size_t cap)
{
    struct http_tls *t = calloc(1, sizeof(*t));
    size_t len = 0;
    char why[320];

    if (t == NULL) {
        snprintf(err, cap, "out of memory");
        return NULL;
    }
    t->cfg = *cfg;
    if (pthread_mutex_init(&t->lock, NULL) != 0) {
        free(t);
        snprintf(err, cap, "out of memory");
        return NULL;
    }
    snprintf(t->priorities, sizeof(t->priorities), "%s",
             priority_strings[cfg->min_version][cfg->max_version]);
    file_stamp_read(cfg->cert_file, &t->cert_seen);
    file_stamp_read(cfg->key_file, &t->key_seen);
    t->current = pair_load(cfg, why, sizeof(why));
    if (t->current == NULL) {
        snprintf(err, cap, "--web-config: %s", why);
        goto fail;
    }
    if (cfg->client_ca_file[0]) {
        gnutls_x509_crt_t *cas = NULL;
        unsigned int n = 0;
        gnutls_datum_t d;

        t->client_ca = read_file(cfg->client_ca_file, &len, why, sizeof(why));
        if (t->client_ca == NULL) {
            snprintf(err, cap, "--web-config: client_ca_file %s", why);
            goto fail;
        }
        d = (gnutls_datum_t){(unsigned char *)t->client_ca, (unsigned int)len};
        if (gnutls_x509_crt_list_import2(&cas, &n, &d, GNUTLS_X509_FMT_PEM, 0) < 0 || n == 0) {
            snprintf(err, cap, "--web-config: client_ca_file %s: no PEM certificate in it",
                     cfg->client_ca_file);
            goto fail;
        }
        for (unsigned int i = 0; i < n; i++)
            gnutls_x509_crt_deinit(cas[i]);
        gnutls_free(cas);
    }
    atomic_store(&serving, t);
    log_info("TLS: serving certificate serial %s from %s (client certificates: %s)",
             t->current->serial, cfg->cert_file, web_client_auth_name(cfg->client_auth));
    return t;

fail:
    http_tls_free(t);
    return NULL;
}

void http_tls_free(struct http_tls *t)
{
    struct tls_pair *p, *older;
    struct http_tls *expected = t;

    if (t == NULL)
        return;
    atomic_compare_exchange_strong(&serving, &expected, NULL);
    for (p = t->current; p; p = older) {
        older = p->older;
        pair_free(p);
    }
    free(t->client_ca);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

int http_tls_mhd_options(struct http_tls *t, struct MHD_OptionItem *items, int cap)
{
    gnutls_certificate_retrieve_function2 *cb = pick_certificate;
    void *cb_ptr;
    int n = 0;

    if (cap < 3)
        return -1;
    /* libmicrohttpd takes the callback through a void *. */
    memcpy(&cb_ptr, &cb, sizeof(cb_ptr));
    items[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_CERT_CALLBACK, 0, cb_ptr};
    items[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0, t->priorities};
    if (t->client_ca)
        items[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_TRUST, 0, t->client_ca};
    return n;
}

/* gnutls_certificate_verify_function, in the handshake: a certificate the
 * CA did not sign fails the handshake itself.  gnutls_session_set_verify_cert
 * would also fail a client that sends none, which VerifyClientCertIfGiven
 * lets in (GNUTLS_CERT_REQUIRE refuses those where they must be). */
static int verify_given(gnutls_session_t session)
{
    unsigned int n = 0, status = 1;

    if (gnutls_certificate_get_peers(session, &n) == NULL || n == 0)
        return 0;
    return gnutls_certificate_verify_peers2(session, &status) == 0 && status == 0 ? 0 : -1;
}

void http_tls_connection_started(const struct http_tls *t, struct MHD_Connection *conn)
{
    static const gnutls_certificate_request_t request[] = {
        [WEB_NO_CLIENT_CERT] = GNUTLS_CERT_IGNORE,
        [WEB_REQUEST_CLIENT_CERT] = GNUTLS_CERT_REQUEST,
        [WEB_REQUIRE_ANY_CLIENT_CERT] = GNUTLS_CERT_REQUIRE,
        [WEB_VERIFY_CLIENT_CERT_IF_GIVEN] = GNUTLS_CERT_REQUEST,
        [WEB_REQUIRE_AND_VERIFY_CLIENT_CERT] = GNUTLS_CERT_REQUIRE,
    };
    const union MHD_ConnectionInfo *info;
    gnutls_session_t session;

    if (t == NULL)
        return;
    info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (info == NULL || info->tls_session == NULL)
        return;
    session = (gnutls_session_t)info->tls_session;
    gnutls_certificate_server_set_request(session, request[t->cfg.client_auth]);
    if (web_config_verifies_clients(&t->cfg))
        gnutls_session_set_verify_function(session, verify_given);
}

int http_tls_identifies(const struct http_tls *t)
{
    return t != NULL && web_config_verifies_clients(&t->cfg);
}

int http_tls_client_verified(const struct http_tls *t, struct MHD_Connection *conn,
                             char *key, size_t key_cap)
{
    const union MHD_ConnectionInfo *info;
    gnutls_session_t session;
    const gnutls_datum_t *peers;
    unsigned int n = 0, status = 1;
    char hex[65];

    if (!http_tls_identifies(t))
        return 0;
    info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (info == NULL || info->tls_session == NULL)
        return 0;
    session = (gnutls_session_t)info->tls_session;
    peers = gnutls_certificate_get_peers(session, &n);
    if (peers == NULL || n == 0 || gnutls_certificate_verify_peers2(session, &status) < 0 ||
        status != 0)
        return 0;
    auth_sha256_hex((const char *)peers[0].data, peers[0].size, hex);
    snprintf(key, key_cap, "%.16s", hex);
    return 1;
}

void http_tls_status(struct http_tls *t, struct http_tls_status *out)
{
    pthread_mutex_lock(&t->lock);
    snprintf(out->serial, sizeof(out->serial), "%s", t->current->serial);
    out->not_after = t->current->not_after;
    snprintf(out->loaded_at, sizeof(out->loaded_at), "%s", t->current->loaded_at);
    snprintf(out->error, sizeof(out->error), "%s", t->error);
    out->reload_failures = t->failures;
    pthread_mutex_unlock(&t->lock);
}
