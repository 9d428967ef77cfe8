/*
 * request_guard.c - see request_guard.h.  Names and origins are compared
 * without regard to case, as DNS and browsers do; a list is words
 * separated by commas, spaces around them ignored.
 */
#include "request_guard.h"

#include <arpa/inet.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The bytes of request bodies buffered now, daemon-wide. */
static atomic_size_t buffered;

/* 1 when the n bytes at item are one of list's words. */
static int in_list(const char *item, size_t n, const char *list)
{
    while (list && *list) {
        size_t len;

        list += strspn(list, " \t");
        len = strcspn(list, ",");
        while (len > 0 && (list[len - 1] == ' ' || list[len - 1] == '\t'))
            len--;
        if (len == n && n > 0 && strncasecmp(list, item, n) == 0)
            return 1;
        list += strcspn(list, ",");
        list += *list == ',';
    }
    return 0;
}

/* 1 when name ("127.0.0.1", "[::1]") is an IP address. */
static int is_address(const char *name)
{
    unsigned char addr[16];
    char inner[64];
    size_t n = strlen(name);

    if (name[0] != '[')
        return inet_pton(AF_INET, name, addr) == 1;
    if (n < 3 || n - 2 >= sizeof(inner) || name[n - 1] != ']')
        return 0;
    memcpy(inner, name + 1, n - 2);
    inner[n - 2] = '\0';
    return inet_pton(AF_INET6, inner, addr) == 1;
}

int guard_host_ok(const char *host, const char *node, const char *names)
{
    char name[256];
    const char *rest;
    size_t n;

    if (host == NULL)
        return 1;
    if (host[0] == '[') {
        const char *close = strchr(host, ']');
        if (close == NULL)
            return 0;
        n = (size_t)(close + 1 - host);
    } else {
        n = strcspn(host, ":");
    }
    rest = host + n;
    if (n == 0 || n >= sizeof(name) || (rest[0] != '\0' && rest[0] != ':'))
        return 0;
    if (rest[0] == ':' && (rest[1] == '\0' || rest[1 + strspn(rest + 1, "0123456789")] != '\0'))
        return 0;
    memcpy(name, host, n);
    name[n] = '\0';
    return is_address(name) || strcasecmp(name, "localhost") == 0 ||
           (node && node[0] && strcasecmp(name, node) == 0) || in_list(name, n, names);
}

int guard_origin_ok(const char *origin, const char *host, const char *allowed)
{
    const char *rest = NULL;

    if (origin == NULL)
        return 1;
    if (strncasecmp(origin, "http://", 7) == 0)
        rest = origin + 7;
    else if (strncasecmp(origin, "https://", 8) == 0)
        rest = origin + 8;
    if (host && rest && strcasecmp(rest, host) == 0)
        return 1;
    return in_list(origin, strlen(origin), allowed);
}

int guard_type_ok(const char *content_type, const char *types)
{
    size_t n;

    if (content_type == NULL)
        return 0;
    content_type += strspn(content_type, " \t");
    n = strcspn(content_type, ";");
    while (n > 0 && (content_type[n - 1] == ' ' || content_type[n - 1] == '\t'))
        n--;
    return in_list(content_type, n, types);
}

int guard_budget_take(size_t n, size_t limit)
{
    size_t now = atomic_load(&buffered);

    do {
        if (n > limit || now > limit - n)
            return 0;
    } while (!atomic_compare_exchange_weak(&buffered, &now, now + n));
    return 1;
}

void guard_budget_give(size_t n)
{
    atomic_fetch_sub(&buffered, n);
}
