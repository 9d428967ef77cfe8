/*
 * web_config.c - see web_config.h.  libyaml's document API loads the file
 * whole (it is a few lines, read with a byte cap); the two tables below
 * say what each key of the file means here, so a key is one line.
 */
#include "web_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* A web config is a few lines; anything larger is not one. */
#define WEB_CONFIG_BYTES (64 * 1024)

struct key_spec {
    const char *name;
    /* Stores the scalar text; -1 with err filled when it is not a value
     * this key takes.  NULL: a key the toolkit has and gpubench refuses. */
    int (*set)(struct web_config *c, const struct key_spec *k, const char *dir,
               const char *text, char *err, size_t cap);
    size_t field;
    const char *refused; /* why, when set is NULL */
};

static const char *const client_auth_names[] = {
    [WEB_NO_CLIENT_CERT] = "NoClientCert",
    [WEB_REQUEST_CLIENT_CERT] = "RequestClientCert",
    [WEB_REQUIRE_ANY_CLIENT_CERT] = "RequireAnyClientCert",
    [WEB_VERIFY_CLIENT_CERT_IF_GIVEN] = "VerifyClientCertIfGiven",
    [WEB_REQUIRE_AND_VERIFY_CLIENT_CERT] = "RequireAndVerifyClientCert",
};

const char *web_client_auth_name(enum web_client_auth a)
{
    return client_auth_names[a];
}

int web_config_verifies_clients(const struct web_config *c)
{
    return c->client_auth == WEB_VERIFY_CLIENT_CERT_IF_GIVEN ||
           c->client_auth == WEB_REQUIRE_AND_VERIFY_CLIENT_CERT;
}

int web_config_requires_client_cert(const struct web_config *c)
{
    return c->client_auth == WEB_REQUIRE_ANY_CLIENT_CERT ||
           c->client_auth == WEB_REQUIRE_AND_VERIFY_CLIENT_CERT;
}

/* A relative path is the config file's folder's, as in the toolkit. */
static int set_path(struct web_config *c, const struct key_spec *k, const char *dir,
                    const char *text, char *err, size_t cap)
{
    char *dst = (char *)c + k->field;
    int n;

    if (text[0] == '\0') {
        snprintf(err, cap, "tls_server_config.%s: empty", k->name);
        return -1;
    }
    n = text[0] == '/' ? snprintf(dst, WEB_CONFIG_PATH_CAP, "%s", text)
                       : snprintf(dst, WEB_CONFIG_PATH_CAP, "%s/%s", dir, text);
    if (n < 0 || n >= WEB_CONFIG_PATH_CAP) {
        snprintf(err, cap, "tls_server_config.%s: the path is too long", k->name);
        return -1;
    }
    return 0;
}

static int set_client_auth(struct web_config *c, const struct key_spec *k, const char *dir,
                           const char *text, char *err, size_t cap)
{
    (void)dir;
    for (size_t i = 0; i < sizeof(client_auth_names) / sizeof(client_auth_names[0]); i++) {
        if (strcmp(text, client_auth_names[i]) == 0) {
            c->client_auth = (enum web_client_auth)i;
            return 0;
        }
    }
    snprintf(err, cap,
             "tls_server_config.%s: \"%.60s\" is not one of NoClientCert, RequestClientCert, "
             "RequireAnyClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert",
             k->name, text);
    return -1;
}

static int set_version(struct web_config *c, const struct key_spec *k, const char *dir,
                       const char *text, char *err, size_t cap)
{
    enum web_tls_version *dst = (enum web_tls_version *)((char *)c + k->field);

    (void)dir;
    if (strcmp(text, "TLS12") == 0 || strcmp(text, "TLS13") == 0) {
        *dst = text[4] == '2' ? WEB_TLS12 : WEB_TLS13;
        return 0;
    }
    if (strcmp(text, "TLS10") == 0 || strcmp(text, "TLS11") == 0)
        snprintf(err, cap, "tls_server_config.%s: %s: TLS 1.1 and below are not served "
                           "(TLS12 or TLS13)",
                 k->name, text);
    else
        snprintf(err, cap, "tls_server_config.%s: \"%.60s\": expected TLS12 or TLS13", k->name,
                 text);
    return -1;
}

#define FIELD(member) offsetof(struct web_config, member)

/* tls_server_config, every key the toolkit knows. */
static const struct key_spec tls_keys[] = {
    {"cert_file", set_path, FIELD(cert_file), NULL},
    {"key_file", set_path, FIELD(key_file), NULL},
    {"client_ca_file", set_path, FIELD(client_ca_file), NULL},
    {"client_auth_type", set_client_auth, 0, NULL},
    {"min_version", set_version, FIELD(min_version), NULL},
    {"max_version", set_version, FIELD(max_version), NULL},
    {"cert", NULL, 0, "an inline certificate: give cert_file"},
    {"key", NULL, 0, "an inline key: give key_file"},
    {"client_ca", NULL, 0, "an inline CA: give client_ca_file"},
    {"client_allowed_sans", NULL, 0, "client certificates are not matched by SAN"},
    {"cipher_suites", NULL, 0, "GnuTLS's default suites for the versions are used"},
    {"curve_preferences", NULL, 0, "GnuTLS's default curves are used"},
    {"prefer_server_cipher_suites", NULL, 0, "GnuTLS's default order is used"},
};

/* The file's top level, apart from tls_server_config. */
static const struct key_spec top_keys[] = {
    {"http_server_config", NULL, 0, "HTTP/2 and extra headers are not served"},
    {"basic_auth_users", NULL, 0, "use --token-file or client certificates"},
    {"rate_limit", NULL, 0, "use --rate-limit and --rate-burst"},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const struct key_spec *find_key(const struct key_spec *table, size_t n,
                                       const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

static const char *scalar(yaml_node_t *node)
{
    return node && node->type == YAML_SCALAR_NODE ? (const char *)node->data.scalar.value
                                                  : NULL;
}

/* tls_server_config's pairs, each key looked up in tls_keys. */
static int read_tls_section(yaml_document_t *doc, yaml_node_t *map, const char *dir,
                            struct web_config *c, char *err, size_t cap)
{
    unsigned int seen = 0;

    if (map->type != YAML_MAPPING_NODE) {
        snprintf(err, cap, "tls_server_config: expected a mapping of keys to values");
        return -1;
    }
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const char *name = scalar(yaml_document_get_node(doc, p->key));
        const char *value = scalar(yaml_document_get_node(doc, p->value));
        const struct key_spec *k = name ? find_key(tls_keys, COUNT(tls_keys), name) : NULL;
        unsigned int bit;

        if (k == NULL) {
            snprintf(err, cap, "tls_server_config.%.60s: no such key in a web config",
                     name ? name : "?");
            return -1;
        }
        if (k->set == NULL) {
            snprintf(err, cap, "tls_server_config.%s: not supported by gpubench (%s)", k->name,
                     k->refused);
            return -1;
        }
        bit = 1u << (unsigned int)(k - tls_keys);
        if (seen & bit) {
            snprintf(err, cap, "tls_server_config.%s: given twice", k->name);
            return -1;
        }
        seen |= bit;
        if (value == NULL) {
            snprintf(err, cap, "tls_server_config.%s: expected a single value", k->name);
            return -1;
        }
        if (k->set(c, k, dir, value, err, cap) != 0)
            return -1;
    }
    return 0;
}

static int read_root(yaml_document_t *doc, const char *dir, struct web_config *c, char *err,
                     size_t cap)
{
    yaml_node_t *root = yaml_document_get_root_node(doc);
    int have_tls = 0;

    if (root == NULL || root->type != YAML_MAPPING_NODE) {
        snprintf(err, cap, "expected a mapping with tls_server_config");
        return -1;
    }
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
         p < root->data.mapping.pairs.top; p++) {
        const char *name = scalar(yaml_document_get_node(doc, p->key));
        const struct key_spec *k;

        if (name && strcmp(name, "tls_server_config") == 0 && !have_tls) {
            have_tls = 1;
            if (read_tls_section(doc, yaml_document_get_node(doc, p->value), dir, c, err,
                                 cap) != 0)
                return -1;
            continue;
        }
        k = name ? find_key(top_keys, COUNT(top_keys), name) : NULL;
        if (name && strcmp(name, "tls_server_config") == 0)
            snprintf(err, cap, "tls_server_config: given twice");
        else if (k)
            snprintf(err, cap, "%s: not supported by gpubench (%s)", k->name, k->refused);
        else
            snprintf(err, cap, "%.60s: no such key in a web config", name ? name : "?");
        return -1;
    }
    if (!have_tls) {
        snprintf(err, cap, "no tls_server_config in it");
        return -1;
    }
    return 0;
}

/* The toolkit's own rules on how the keys go together. */
static int check_combination(const struct web_config *c, char *err, size_t cap)
{
    if (c->cert_file[0] == '\0' || c->key_file[0] == '\0') {
        snprintf(err, cap, "tls_server_config needs both cert_file and key_file");
        return -1;
    }
    if (c->client_ca_file[0] && c->client_auth == WEB_NO_CLIENT_CERT) {
        snprintf(err, cap, "tls_server_config.client_ca_file is given with client_auth_type "
                           "NoClientCert: say which client_auth_type it is for");
        return -1;
    }
    if (!c->client_ca_file[0] && web_config_verifies_clients(c)) {
        snprintf(err, cap, "tls_server_config.client_auth_type %s needs client_ca_file, the "
                           "CA that signs the clients' certificates",
                 client_auth_names[c->client_auth]);
        return -1;
    }
    if (c->min_version > c->max_version) {
        snprintf(err, cap, "tls_server_config: min_version is above max_version");
        return -1;
    }
    return 0;
}

int web_config_load(const char *path, struct web_config *out, char *err, size_t cap)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    int have_parser = 0, have_doc = 0, rc = -1;
    char *text = malloc(WEB_CONFIG_BYTES + 1);
    char dir[WEB_CONFIG_PATH_CAP], why[400];
    const char *slash = strrchr(path, '/');
    FILE *f = fopen(path, "rb");
    size_t n = 0;

    memset(out, 0, sizeof(*out));
    out->client_auth = WEB_NO_CLIENT_CERT;
    out->min_version = WEB_TLS12;
    out->max_version = WEB_TLS13;
    why[0] = '\0';
    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (slash == path)
        snprintf(dir, sizeof(dir), "/");
    if (text == NULL || f == NULL) {
        snprintf(why, sizeof(why), "cannot read it");
        goto done;
    }
    n = fread(text, 1, WEB_CONFIG_BYTES + 1, f);
    if (ferror(f) || n > WEB_CONFIG_BYTES) {
        snprintf(why, sizeof(why), ferror(f) ? "cannot read it" : "over %d bytes",
                 WEB_CONFIG_BYTES);
        goto done;
    }
    if (!yaml_parser_initialize(&parser)) {
        snprintf(why, sizeof(why), "out of memory");
        goto done;
    }
    have_parser = 1;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, n);
    if (!yaml_parser_load(&parser, &doc)) {
        snprintf(why, sizeof(why), "not YAML: line %lu: %s",
                 (unsigned long)parser.problem_mark.line + 1,
                 parser.problem ? parser.problem : "a syntax error");
        goto done;
    }
    have_doc = 1;
    if (read_root(&doc, dir, out, why, sizeof(why)) != 0 ||
        check_combination(out, why, sizeof(why)) != 0)
        goto done;
    rc = 0;

done:
    if (rc != 0)
        snprintf(err, cap, "--web-config %s: %s", path, why);
    if (have_doc)
        yaml_document_delete(&doc);
    if (have_parser)
        yaml_parser_delete(&parser);
    if (f)
        fclose(f);
    free(text);
    return rc;
}
