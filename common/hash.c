/*
 * hash.c - FNV-1a; see hash.h.
 */
#include "hash.h"

uint32_t hash_fnv1a(const char *s)
{
    uint32_t h = 2166136261u;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

uint32_t hash_fnv1a_casefold(const char *s)
{
    uint32_t h = 2166136261u;

    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        h = (h ^ (c >= 'A' && c <= 'Z' ? c | 0x20u : c)) * 16777619u;
    }
    return h;
}

uint64_t hash_fnv1a64(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 14695981039346656037ull;

    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}
