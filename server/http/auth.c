/*
 * auth.c - see auth.h.  SHA-256 comes from nettle (a dependency of
 * libmicrohttpd's TLS stack already).
 */
#include "auth.h"

#include <ctype.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct auth {
    unsigned char (*digests)[AUTH_DIGEST_LEN];
    int count;
};

static void sha256(const char *data, size_t len, unsigned char out[AUTH_DIGEST_LEN])
{
    struct sha256_ctx ctx;

    sha256_init(&ctx);
    sha256_update(&ctx, len, (const uint8_t *)data);
    sha256_digest(&ctx, AUTH_DIGEST_LEN, out);
}

void auth_sha256_hex(const char *data, size_t len, char out[65])
{
    unsigned char d[AUTH_DIGEST_LEN];

    sha256(data, len, d);
    for (int i = 0; i < AUTH_DIGEST_LEN; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static int parse_hex_digest(const char *s, unsigned char out[AUTH_DIGEST_LEN])
{
    if (strlen(s) != 2 * AUTH_DIGEST_LEN)
        return -1;
    for (int i = 0; i < AUTH_DIGEST_LEN; i++) {
        unsigned int byte;
        if (!isxdigit((unsigned char)s[2 * i]) || !isxdigit((unsigned char)s[2 * i + 1]) ||
            sscanf(s + 2 * i, "%2x", &byte) != 1)
            return -1;
        out[i] = (unsigned char)byte;
    }
    return 0;
}

static char *trim(char *s)
{
    char *end;

    while (isspace((unsigned char)*s))
        s++;
    end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1]))
        *--end = '\0';
    return s;
}

struct auth *auth_load(const char *path, char *err, size_t cap)
{
    struct auth *a = calloc(1, sizeof(*a));
    FILE *f = fopen(path, "r");
    char line[1024];
    int lineno = 0, ok = 0;

    if (a == NULL || f == NULL) {
        snprintf(err, cap, "--token-file %s: cannot read it", path);
        goto done;
    }
    while (fgets(line, sizeof(line), f)) {
        char *t = trim(line);
        void *grown;

        lineno++;
        if (*t == '\0' || *t == '#')
            continue;
        if (strlen(t) < 16) {
            snprintf(err, cap, "--token-file %s: line %d: a token must be at "
                               "least 16 characters",
                     path, lineno);
            goto done;
        }
        grown = realloc(a->digests, (size_t)(a->count + 1) * AUTH_DIGEST_LEN);
        if (grown == NULL) {
            snprintf(err, cap, "out of memory");
            goto done;
        }
        a->digests = grown;
        /* 64 hex digits are a digest; anything else is the token itself. */
        if (parse_hex_digest(t, a->digests[a->count]) != 0)
            sha256(t, strlen(t), a->digests[a->count]);
        a->count++;
        memset(line, 0, sizeof(line));
    }
    if (a->count == 0) {
        snprintf(err, cap, "--token-file %s: no token in it", path);
        goto done;
    }
    ok = 1;

done:
    if (f)
        fclose(f);
    if (!ok) {
        auth_free(a);
        return NULL;
    }
    return a;
}

void auth_free(struct auth *a)
{
    if (a == NULL)
        return;
    free(a->digests);
    free(a);
}

int auth_check(const struct auth *a, const char *header, char *key, size_t key_cap)
{
    unsigned char d[AUTH_DIGEST_LEN];
    const char *token;
    int found = -1;

    if (a == NULL || header == NULL || strncasecmp(header, "Bearer ", 7) != 0)
        return 0;
    token = header + 7;
    while (*token == ' ')
        token++;
    sha256(token, strlen(token), d);
    for (int i = 0; i < a->count; i++) {
        unsigned char diff = 0;
        for (int j = 0; j < AUTH_DIGEST_LEN; j++)
            diff |= (unsigned char)(a->digests[i][j] ^ d[j]);
        /* No early exit: every digest is compared whatever matched. */
        found = diff == 0 && found < 0 ? i : found;
    }
    if (found < 0)
        return 0;
    for (int i = 0; i < 8 && (size_t)(2 * i + 2) < key_cap; i++)
        snprintf(key + 2 * i, 3, "%02x", d[i]);
    return 1;
}
