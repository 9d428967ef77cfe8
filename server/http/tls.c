/*
 * tls.c - see tls.h.  The pair served now is t->current, swapped under
 * t->lock.  A pair is counted (refs, under t->lock): one for being current,
 * one for each connection whose handshake it served (struct tls_conn, the
 * connection's socket context, says which).  The last to let go frees it,
 * so a reload costs nothing once the connections on the old pair closed.
 *
 * A refused client is refused in the verify callback, which sends the TLS
 * alert that says why, logs the reason with the client's address, and
 * reads what the client sent already for a moment: closed on unread data,
 * the socket would answer with a reset, and a TLS 1.3 client (whose side
 * of the handshake is over when it sends its certificate) would report
 * "Broken pipe" instead of the alert.
 */
#include "tls.h"
#include "file_stamp.h"
#include "auth.h"
#include "dynbuf.h"
#include "log.h"
#include "timeutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/abstract.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* A PEM file of a certificate chain, a key or a CA list is far smaller. */
#define TLS_FILE_BYTES (1024 * 1024)
#define TLS_CHAIN_MAX 8
/* How long, and how much, a refused client is read before its socket closes. */
#define TLS_REFUSED_DRAIN_MS 200
#define TLS_REFUSED_DRAIN_BYTES (64 * 1024)

/* One certificate chain with its key, as loaded from the files. */
struct tls_pair {
    gnutls_pcert_st chain[TLS_CHAIN_MAX];
    unsigned int chain_len;
    gnutls_privkey_t key;
    char serial[80];
    time_t not_before, not_after;
    char loaded_at[32];
    char digest[65]; /* SHA-256 of the certificate and key files' bytes */
    long refs;       /* under http_tls.lock: current (1) + connections */
};

/* A connection's socket context: the pair its handshake was served, and
 * the client's address for the log.  Made at its start, freed at its close. */
struct tls_conn {
    struct tls_pair *pair; /* under http_tls.lock; NULL before the handshake */
    char peer[64];
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
    long loads;     /* pairs read and parsed from changed files */
    long unchanged; /* SIGHUPs that found the files as served */
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
    p->not_before = gnutls_x509_crt_get_activation_time(crt);
    p->not_after = gnutls_x509_crt_get_expiration_time(crt);
    rc = 0;

done:
    if (crt)
        gnutls_x509_crt_deinit(crt);
    return rc;
}

/* A time as RFC 3339, for a log line or an error. */
static void utc_text(time_t t, char *out, size_t cap)
{
    struct tm tm;

    snprintf(out, cap, "?");
    if (gmtime_r(&t, &tm))
        strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The SHA-256 (hex) of the two files' bytes, the certificate's length first. */
static void files_digest(const char *cert, size_t cert_len, const char *key, size_t key_len,
                         char out[65])
{
    struct dynbuf b;

    dynbuf_init(&b, 2 * TLS_FILE_BYTES + 32);
    (void)!dynbuf_printf(&b, "%zu:", cert_len);
    (void)!dynbuf_add(&b, cert, cert_len);
    (void)!dynbuf_add(&b, key, key_len);
    if (dynbuf_failed(&b))
        snprintf(out, 65, "unknown"); /* never the digest of a pair: loaded again */
    else
        auth_sha256_hex(b.data, b.len, out);
    dynbuf_free(&b);
}

/* A new pair from cfg's files, or NULL with why.  When the files hold what
 * unless (a digest, or NULL) says, NULL with *same set and why "". */
static struct tls_pair *pair_load(const struct web_config *cfg, const char *unless, int *same,
                                  char *why, size_t cap)
{
    struct tls_pair *p = calloc(1, sizeof(*p));
    char *cert = NULL, *key = NULL;
    size_t cert_len = 0, key_len = 0;
    gnutls_datum_t d;
    int ret, ok = 0;
    time_t now = time(NULL);
    char when[32];

    *same = 0;
    why[0] = '\0';
    if (p == NULL) {
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    cert = read_file(cfg->cert_file, &cert_len, why, cap);
    key = cert ? read_file(cfg->key_file, &key_len, why, cap) : NULL;
    if (key == NULL)
        goto done;
    files_digest(cert, cert_len, key, key_len, p->digest);
    if (unless && strcmp(unless, p->digest) == 0) {
        *same = 1;
        goto done;
    }
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
    if (p->not_after <= now) {
        utc_text(p->not_after, when, sizeof(when));
        snprintf(why, cap, "cert_file %.200s: the certificate expired at %s", cfg->cert_file, when);
        goto done;
    }
    if (p->not_before > now) {
        utc_text(p->not_before, when, sizeof(when));
        snprintf(why, cap, "cert_file %.200s: the certificate is not valid before %s",
                 cfg->cert_file, when);
        goto done;
    }
    time_now_rfc3339(p->loaded_at, sizeof(p->loaded_at));
    p->refs = 1;
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

/* Lets go of one reference to p; the last frees it.  Called with t->lock held. */
static void pair_release_locked(struct tls_pair *p)
{
    if (p != NULL && --p->refs == 0)
        pair_free(p);
}

/* Called with t->lock held.  force (SIGHUP): look at the files' bytes even
 * when their stamps did not change; a pair is parsed only when the bytes
 * differ from the pair served (or the last look failed). */
static void reload_locked(struct http_tls *t, int force)
{
    struct file_stamp cert_now, key_now;
    struct tls_pair *p;
    char why[320];
    int same = 0;

    file_stamp_read(t->cfg.cert_file, &cert_now);
    file_stamp_read(t->cfg.key_file, &key_now);
    if (!force && file_stamp_same(&cert_now, &t->cert_seen) &&
        file_stamp_same(&key_now, &t->key_seen))
        return;
    t->cert_seen = cert_now;
    t->key_seen = key_now;
    p = pair_load(&t->cfg, t->current->digest, &same, why, sizeof(why));
    if (same) {
        t->unchanged++;
        if (t->error[0])
            log_info("TLS: the certificate files are those served again (serial %s)",
                     t->current->serial);
        else if (force)
            log_info("TLS: the certificate files did not change, not reloaded (serial %s)",
                     t->current->serial);
        t->error[0] = '\0';
        return;
    }
    t->loads++;
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
    pair_release_locked(t->current);
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

/* The socket context of session's connection (libmicrohttpd sets the
 * session's pointer to its connection); NULL when there is none. */
static struct tls_conn *conn_of(gnutls_session_t session)
{
    struct MHD_Connection *conn = gnutls_session_get_ptr(session);
    const union MHD_ConnectionInfo *info =
        conn ? MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT) : NULL;

    return info ? info->socket_context : NULL;
}

/* gnutls_certificate_retrieve_function2: the pair for this handshake,
 * counted for its connection until it closes. */
static int pick_certificate(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn,
                            int nreqs, const gnutls_pk_algorithm_t *pk_algos,
                            int pk_algos_length, gnutls_pcert_st **pcert,
                            unsigned int *pcert_length, gnutls_privkey_t *pkey)
{
    struct http_tls *t = atomic_load(&serving);
    struct tls_conn *c = conn_of(session);

    (void)req_ca_rdn;
    (void)nreqs;
    (void)pk_algos;
    (void)pk_algos_length;
    if (t == NULL || c == NULL)
        return -1; /* no connection to count it for: no handshake */
    pthread_mutex_lock(&t->lock);
    reload_locked(t, 0);
    if (c->pair != t->current) {
        pair_release_locked(c->pair);
        c->pair = t->current;
        c->pair->refs++;
    }
    *pcert = c->pair->chain;
    *pcert_length = c->pair->chain_len;
    *pkey = c->pair->key;
    pthread_mutex_unlock(&t->lock);
    return 0;
}

/* GnuTLS's own messages, through the daemon's log (it writes none of its
 * own to stderr, but GNUTLS_DEBUG_LEVEL would). */
static void gnutls_says(int level, const char *text)
{
    size_t n = strlen(text);

    (void)level;
    while (n > 0 && text[n - 1] == '\n')
        n--;
    log_debug("GnuTLS: %.*s", (int)n, text);
}

static void gnutls_audit(gnutls_session_t session, const char *text)
{
    struct tls_conn *c = session ? conn_of(session) : NULL;
    size_t n = strlen(text);

    while (n > 0 && text[n - 1] == '\n')
        n--;
    log_warn("TLS: client %s: GnuTLS: %.*s", c ? c->peer : "unknown", (int)n, text);
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
    int same;

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
    gnutls_global_set_log_function(gnutls_says);
    gnutls_global_set_audit_log_function(gnutls_audit);
    t->current = pair_load(cfg, NULL, &same, why, sizeof(why));
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
    struct http_tls *expected = t;

    if (t == NULL)
        return;
    atomic_compare_exchange_strong(&serving, &expected, NULL);
    /* Every connection has closed (tls.h), so current is the last pair. */
    pair_free(t->current);
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

/* Sends session's client the alert, lets the connection's socket read
 * what is on its way for a moment (see the top), and logs why, with the
 * client's address.  Returns -1, the verify callback's refusal. */
static int refuse(gnutls_session_t session, gnutls_alert_description_t alert, const char *why)
{
    struct MHD_Connection *conn = gnutls_session_get_ptr(session);
    const union MHD_ConnectionInfo *info =
        conn ? MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD) : NULL;
    struct tls_conn *c = conn_of(session);
    char sink[4096];
    size_t drained = 0;
    int waited = 0;

    log_warn("TLS: client %s refused at the handshake: %s", c ? c->peer : "unknown", why);
    if (gnutls_alert_send(session, GNUTLS_AL_FATAL, alert) < 0 || info == NULL)
        return -1;
    if (shutdown(info->connect_fd, SHUT_WR) != 0)
        return -1;
    while (waited < TLS_REFUSED_DRAIN_MS && drained < TLS_REFUSED_DRAIN_BYTES) {
        struct pollfd pfd = {.fd = info->connect_fd, .events = POLLIN};
        ssize_t n;

        if (poll(&pfd, 1, 20) < 0 && errno != EINTR)
            break;
        waited += 20;
        n = recv(info->connect_fd, sink, sizeof(sink), MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            break; /* the client has read the alert and closed */
        if (n > 0)
            drained += (size_t)n;
    }
    return -1;
}

/* 0 when session's client certificate chains to client_ca_file and may
 * authenticate a client: clientAuth among its extended key usages, or no
 * such extension (as Go's crypto/tls, the exporter-toolkit's, allows).
 * Else -1 with why, and the alert that says it. */
static int verify_purpose(gnutls_session_t session, gnutls_alert_description_t *alert,
                          char *why, size_t cap)
{
    gnutls_typed_vdata_st purpose = {GNUTLS_DT_KEY_PURPOSE_OID,
                                     (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT, 0};
    gnutls_datum_t text = {NULL, 0};
    unsigned int status = 1;

    if (gnutls_certificate_verify_peers(session, &purpose, 1, &status) < 0) {
        *alert = GNUTLS_A_BAD_CERTIFICATE;
        snprintf(why, cap, "its certificate could not be verified");
        return -1;
    }
    if (status == 0)
        return 0;
    *alert = GNUTLS_A_BAD_CERTIFICATE;
    if (status & GNUTLS_CERT_PURPOSE_MISMATCH) {
        *alert = GNUTLS_A_UNSUPPORTED_CERTIFICATE;
        snprintf(why, cap, "its certificate is not for client authentication (its extended "
                           "key usage has no clientAuth)");
        return -1;
    }
    if (status & (GNUTLS_CERT_SIGNER_NOT_FOUND | GNUTLS_CERT_SIGNER_NOT_CA))
        *alert = GNUTLS_A_UNKNOWN_CA;
    else if (status & GNUTLS_CERT_EXPIRED)
        *alert = GNUTLS_A_CERTIFICATE_EXPIRED;
    if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &text, 0) == 0)
        snprintf(why, cap, "its certificate did not verify against client_ca_file: %s",
                 text.data);
    else
        snprintf(why, cap, "its certificate did not verify against client_ca_file");
    gnutls_free(text.data);
    return -1;
}

/* gnutls_certificate_verify_function, in the handshake, for every
 * client_auth_type that asks for a certificate: the handshake fails on a
 * certificate that does not verify (where it is verified) and on none
 * (where one is required).  GnuTLS is only asked for one
 * (GNUTLS_CERT_REQUEST), so that a missing one comes here too, to be
 * answered with an alert and logged. */
static int verify_client(gnutls_session_t session)
{
    struct http_tls *t = atomic_load(&serving);
    gnutls_alert_description_t alert;
    unsigned int n = 0;
    char why[320];

    if (t == NULL)
        return -1;
    if (gnutls_certificate_get_peers(session, &n) == NULL || n == 0) {
        if (!web_config_requires_client_cert(&t->cfg))
            return 0;
        snprintf(why, sizeof(why), "it sent no client certificate (client_auth_type %s)",
                 web_client_auth_name(t->cfg.client_auth));
        /* TLS 1.3's certificate_required, under TLS 1.2 too: a fatal alert
         * ends the handshake whatever its number, and this one says why
         * (handshake_failure would read as a cipher mismatch). */
        return refuse(session, GNUTLS_A_CERTIFICATE_REQUIRED, why);
    }
    if (!web_config_verifies_clients(&t->cfg))
        return 0;
    if (verify_purpose(session, &alert, why, sizeof(why)) != 0)
        return refuse(session, alert, why);
    return 0;
}

int http_tls_connection_started(struct http_tls *t, struct MHD_Connection *conn,
                                void **socket_context)
{
    const union MHD_ConnectionInfo *info;
    const union MHD_ConnectionInfo *addr;
    gnutls_session_t session;
    struct tls_conn *c;

    if (t == NULL)
        return 0;
    info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (info == NULL || info->tls_session == NULL)
        return 0;
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return -1;
    snprintf(c->peer, sizeof(c->peer), "unknown");
    addr = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (addr && addr->client_addr) {
        const struct sockaddr *sa = addr->client_addr;
        char host[48] = "";

        if (sa->sa_family == AF_INET &&
            inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, host, sizeof(host)))
            snprintf(c->peer, sizeof(c->peer), "%s:%u", host,
                     ntohs(((const struct sockaddr_in *)sa)->sin_port));
        else if (sa->sa_family == AF_INET6 &&
                 inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, host,
                           sizeof(host)))
            snprintf(c->peer, sizeof(c->peer), "[%s]:%u", host,
                     ntohs(((const struct sockaddr_in6 *)sa)->sin6_port));
    }
    *socket_context = c;
    session = (gnutls_session_t)info->tls_session;
    if (t->cfg.client_auth == WEB_NO_CLIENT_CERT)
        return 0;
    gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUEST);
    gnutls_session_set_verify_function(session, verify_client);
    return 0;
}

void http_tls_connection_closed(struct http_tls *t, void **socket_context)
{
    struct tls_conn *c = *socket_context;

    if (t == NULL || c == NULL)
        return;
    pthread_mutex_lock(&t->lock);
    pair_release_locked(c->pair);
    pthread_mutex_unlock(&t->lock);
    free(c);
    *socket_context = NULL;
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
    gnutls_alert_description_t alert;
    unsigned int n = 0;
    char hex[65], why[320];

    if (!http_tls_identifies(t))
        return 0;
    info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (info == NULL || info->tls_session == NULL)
        return 0;
    session = (gnutls_session_t)info->tls_session;
    peers = gnutls_certificate_get_peers(session, &n);
    if (peers == NULL || n == 0 || verify_purpose(session, &alert, why, sizeof(why)) != 0)
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
    out->loads = t->loads;
    out->unchanged = t->unchanged;
    pthread_mutex_unlock(&t->lock);
}
