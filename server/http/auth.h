/*
 * auth.h - bearer tokens for the endpoints that change something.
 *
 * The token file holds one token a line, or its SHA-256 as 64 hex digits
 * (so the file need not hold the secret itself); blank lines and lines
 * starting with '#' are skipped.  Only digests are kept in memory.  A
 * presented token is hashed and compared with every digest in constant
 * time, so neither the match nor its position shows in the timing.
 */
#ifndef GPUBENCH_HTTP_AUTH_H
#define GPUBENCH_HTTP_AUTH_H

#include <stddef.h>

#define AUTH_DIGEST_LEN 32

struct auth;

/* Reads path.  Returns NULL with a sentence in err on failure (a file that
 * cannot be read, a line that is neither, no token at all).  Caller frees
 * with auth_free. */
struct auth *auth_load(const char *path, char *err, size_t cap);
void auth_free(struct auth *a);

/* 1 when header ("Bearer TOKEN") carries a known token; then key (at
 * least 17 bytes) names the token for rate limiting: the first 16 hex
 * digits of its digest.  0 otherwise. */
int auth_check(const struct auth *a, const char *header, char *key, size_t key_cap);

/* SHA-256 of data, as 64 lower-case hex digits and a NUL. */
void auth_sha256_hex(const char *data, size_t len, char out[65]);

#endif
