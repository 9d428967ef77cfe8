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
