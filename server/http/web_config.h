/*
 * web_config.h - --web-config FILE, the Prometheus exporter-toolkit's web
 * configuration (docs/web-configuration.md of prometheus/exporter-toolkit),
 * so a lab writes the same file for gpubenchd as for node_exporter.
 *
 * Only tls_server_config's cert_file, key_file, client_auth_type,
 * client_ca_file, min_version and max_version are served; every other key
 * the toolkit allows, and every key it does not, refuses the start with
 * the key named: a setting silently dropped would be a promise not kept.
 * Relative paths are taken from the file's own folder, as the toolkit
 * does.
 */
#ifndef GPUBENCH_HTTP_WEB_CONFIG_H
#define GPUBENCH_HTTP_WEB_CONFIG_H

#include <stddef.h>

#define WEB_CONFIG_PATH_CAP 4096

/* The toolkit's client_auth_type values, in Go's crypto/tls order. */
enum web_client_auth {
    WEB_NO_CLIENT_CERT,
    WEB_REQUEST_CLIENT_CERT,
    WEB_REQUIRE_ANY_CLIENT_CERT,
    WEB_VERIFY_CLIENT_CERT_IF_GIVEN,
    WEB_REQUIRE_AND_VERIFY_CLIENT_CERT,
};

enum web_tls_version {
    WEB_TLS12,
    WEB_TLS13,
};

struct web_config {
    char cert_file[WEB_CONFIG_PATH_CAP];
    char key_file[WEB_CONFIG_PATH_CAP];
    char client_ca_file[WEB_CONFIG_PATH_CAP]; /* "" when none */
    enum web_client_auth client_auth;
    enum web_tls_version min_version, max_version;
};

/* Reads path into *out.  Returns 0, or -1 with a sentence in err naming
 * the file, and the key or value that is wrong. */
int web_config_load(const char *path, struct web_config *out, char *err, size_t cap);

/* 1 when a client certificate the CA signed is checked at the handshake
 * (VerifyClientCertIfGiven, RequireAndVerifyClientCert): only then is it
 * an identity. */
int web_config_verifies_clients(const struct web_config *c);

/* 1 when a client without a certificate fails the handshake
 * (RequireAnyClientCert, RequireAndVerifyClientCert). */
int web_config_requires_client_cert(const struct web_config *c);

/* The toolkit's name of a client_auth_type. */
const char *web_client_auth_name(enum web_client_auth a);

#endif
