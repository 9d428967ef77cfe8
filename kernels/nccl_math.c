/*
 * nccl_math.c - nccl_allreduce's arithmetic; see nccl_math.h.
 */
#include "nccl_math.h"

#include <math.h>
#include <string.h>

int gb_nccl_dtype_of(const char *name)
{
    static const char *const names[] = {"float", "bfloat16", "half", "double"};

    for (int i = 0; name != NULL && i < 4; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

int gb_nccl_dtype_size(enum gb_nccl_dtype dtype)
{
    switch (dtype) {
    case GB_NCCL_BFLOAT16:
    case GB_NCCL_HALF:
        return 2;
    case GB_NCCL_DOUBLE:
        return 8;
    case GB_NCCL_FLOAT:
        break;
    }
    return 4;
}

double gb_nccl_algbw_gbps(double bytes, double seconds)
{
    return seconds > 0 ? bytes / seconds / 1e9 : NAN;
}

double gb_nccl_busbw_factor(int ranks)
{
    return ranks < 1 ? 0 : 2.0 * (ranks - 1) / ranks;
}

double gb_nccl_rank_value(int rank)
{
    return rank + 1.0;
}

double gb_nccl_expected_sum(int ranks)
{
    return ranks * (ranks + 1.0) / 2.0;
}

/* binary16 of a whole number v (0 or 1 <= |v| < 2048, exact). */
static uint64_t half_bits(double v)
{
    uint64_t sign = v < 0 ? 0x8000u : 0;
    double a = fabs(v);
    int e;

    if (a == 0)
        return sign;
    (void)frexp(a, &e); /* a = m 2^e, m in [0.5, 1) */
    /* exponent field e - 1 + 15; significand: the 10 bits after the
     * leading one */
    return sign | ((uint64_t)(e - 1 + 15) << 10) |
           ((uint64_t)ldexp(a, 10 - (e - 1)) & 0x3FFu);
}

uint64_t gb_nccl_bits(enum gb_nccl_dtype dtype, double v)
{
    float f = (float)v;
    uint32_t u32;
    uint64_t u64;

    switch (dtype) {
    case GB_NCCL_DOUBLE:
        memcpy(&u64, &v, sizeof(u64));
        return u64;
    case GB_NCCL_HALF:
        return half_bits(v);
    case GB_NCCL_BFLOAT16:
        memcpy(&u32, &f, sizeof(u32));
        return u32 >> 16;
    case GB_NCCL_FLOAT:
        break;
    }
    memcpy(&u32, &f, sizeof(u32));
    return u32;
}
