/*
 * test_kernels_known_answer.c - the host side of issue 32's deep checks:
 * known_answer's exact answers, comparison and hash
 * (kernels/known_answer_ref.c), memtest's patterns and error records
 * (kernels/memtest_ref.c) and soak's windows (kernels/soak_report.c).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_spec.h"
#include "deep_report.h"
#include "known_answer_ref.h"
#include "memtest_ref.h"
#include "soak_report.h"
#include "test.h"

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static uint64_t dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* The host's fmaf is one rounding, as the GPU's: (1 + 2^-12)^2 - (1 + 2^-11)
 * is 2^-24 fused and 0 when the product is rounded first. */
static int test_host_fma_is_fused(void)
{
    volatile float x = 1.0f + 0x1p-12f, c = -(1.0f + 0x1p-11f);
    volatile double xd = 1.0 + 0x1p-27, cd = -(1.0 + 0x1p-26);

    ASSERT(fmaf(x, x, c) == 0x1p-24f);
    ASSERT(fma(xd, xd, cd) == 0x1p-54);
    return 0;
}

/* splitmix64's first output from state 0 is 0xe220a8397b1dcdaf; int_mix
 * with no steps is that mix. */
static int test_mix_and_int_chain(void)
{
    uint64_t out[3];

    ASSERT(gb_ka_mix(0, 0) == 0xe220a8397b1dcdafull);
    ASSERT(gb_ka_int_elem(0, 0, 0) == 0xe220a8397b1dcdafull);
    gb_ka_int_ref(out, 3, 0, 1);
    {
        uint64_t x = 0xe220a8397b1dcdafull;
        uint32_t lo = (uint32_t)x, hi = (uint32_t)(x >> 32);
        x ^= x >> 29;
        x *= 0xBF58476D1CE4E5B9ull;
        x += (uint64_t)(lo * 0x2545F491u + hi);
        x = (x << 17) | (x >> 47);
        ASSERT(out[0] == x);
    }
    ASSERT(out[1] != out[0] && out[2] != out[1]);
    return 0;
}

/* One step is one fma from the start; the chains stay finite in (-2, 2),
 * so no element turns NaN (whose bits differ between host and GPU). */
static int test_fma_chains(void)
{
    enum { N = 2000 };
    static uint32_t f[N];
    static uint64_t d[N];

    for (uint64_t i = 0; i < 8; i++) {
        float x = (float)gb_ka_start(i, 7), c = (float)gb_ka_c(i, 7);
        double xd = gb_ka_start(i, 7), cd = gb_ka_c(i, 7);
        ASSERT(gb_ka_fp32_elem(i, 7, 0) == fbits(x));
        ASSERT(gb_ka_fp32_elem(i, 7, 1) == fbits(fmaf(x, x, c)));
        ASSERT(gb_ka_fp32_elem(i, 7, 2) == fbits(fmaf(fmaf(x, x, c), fmaf(x, x, c), c)));
        ASSERT(gb_ka_fp64_elem(i, 7, 1) == dbits(fma(xd, xd, cd)));
        ASSERT(xd >= -1 && xd < 1 && cd >= -1.95 && cd < -1.6);
    }
    gb_ka_fp32_ref(f, N, GB_KA_SEED, GB_KA_CHAIN_STEPS);
    gb_ka_fp64_ref(d, N, GB_KA_SEED, GB_KA_CHAIN_STEPS);
    for (int i = 0; i < N; i++) {
        float x;
        double y;
        memcpy(&x, &f[i], 4);
        memcpy(&y, &d[i], 8);
        ASSERT(isfinite(x) && fabsf(x) < 2);
        ASSERT(isfinite(y) && fabs(y) < 2);
    }
    /* distinct elements: the chains do not collapse to one value */
    ASSERT(f[0] != f[1] && d[0] != d[1] && f[N - 1] != f[N - 2]);
    return 0;
}

/* The tensor-core answer: each element the integer sum, times reps, as an
 * exact float; k = 16 in a tile. */
static int test_mma_ref(void)
{
    uint32_t one[2 * 128], three[2 * 128];

    gb_ka_mma_ref(one, 2, 1, 1, 9);
    gb_ka_mma_ref(three, 2, 1, 3, 9);
    for (int w = 0; w < 2; w++)
        for (int r = 0; r < 16; r++)
            for (int c = 0; c < 8; c++) {
                int sum = 0;
                for (int k = 0; k < 16; k++) {
                    int a = gb_ka_mma_a((uint64_t)w, r, k, 9);
                    int b = gb_ka_mma_b((uint64_t)w, k, c, 9);
                    ASSERT(a >= -4 && a <= 4 && b >= -4 && b <= 4);
                    sum += a * b;
                }
                ASSERT(one[w * 128 + r * 8 + c] == fbits((float)sum));
                ASSERT(three[w * 128 + r * 8 + c] == fbits((float)(3 * sum)));
            }
    ASSERT(memcmp(one, one + 128, 128 * 4) != 0); /* warps get their own inputs */
    return 0;
}

/* cuBLAS's answer, column-major, on a 3 x 2 x 4 product by hand. */
static int test_gemm_ref(void)
{
    uint32_t c[6];

    gb_ka_gemm_ref(c, 3, 2, 4, 5);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) {
            int sum = 0;
            for (int k = 0; k < 4; k++)
                sum += gb_ka_gemm_in((uint64_t)(i + k * 3), 5) *
                       gb_ka_gemm_in((uint64_t)(k + j * 4), 5 ^ 0xb0b0u);
            ASSERT(c[i + j * 3] == fbits((float)sum));
        }
    return 0;
}

/* A flipped bit is one mismatch, named by element and SM, with both
 * values; a clean copy is none. */
static int test_compare_flipped_bit(void)
{
    enum { N = 100 };
    uint32_t want[N], got[N];
    uint64_t want64[N], got64[N];
    int sm[N];
    struct gb_ka_log log;

    gb_ka_fp32_ref(want, N, 3, 4);
    gb_ka_int_ref(want64, N, 3, 4);
    memcpy(got, want, sizeof(got));
    memcpy(got64, want64, sizeof(got64));
    for (int i = 0; i < N; i++)
        sm[i] = i / 10;
    memset(&log, 0, sizeof(log));
    ASSERT_EQ(gb_ka_compare(want, got, N, 4, sm, &log), 0);
    got[42] ^= 1u << 7;
    ASSERT_EQ(gb_ka_compare(want, got, N, 4, sm, &log), 1);
    ASSERT_EQ(log.count, 1);
    ASSERT_EQ(log.first[0].element, 42);
    ASSERT_EQ(log.first[0].sm, 4);
    ASSERT(log.first[0].expected == want[42]);
    ASSERT(log.first[0].got == (want[42] ^ 0x80u));
    /* 64-bit results, the top bit; no SM known */
    got64[99] ^= 1ull << 63;
    ASSERT_EQ(gb_ka_compare(want64, got64, N, 8, NULL, &log), 1);
    ASSERT_EQ(log.count, 2);
    ASSERT_EQ(log.first[1].element, 99);
    ASSERT_EQ(log.first[1].sm, -1);
    ASSERT(log.first[1].got == (want64[99] ^ (1ull << 63)));
    return 0;
}

/* Only the first 16 are kept, the count goes on; sorted by element. */
static int test_compare_keeps_first_16(void)
{
    enum { N = 40 };
    uint32_t want[N], got[N];
    struct gb_ka_log log;

    memset(want, 0, sizeof(want));
    for (int i = 0; i < N; i++)
        got[i] = (uint32_t)(N - i);
    memset(&log, 0, sizeof(log));
    ASSERT_EQ(gb_ka_compare(want, got, N, 4, NULL, &log), N);
    ASSERT_EQ(log.count, N);
    ASSERT_EQ(log.first[15].element, 15);
    /* the GPU notes them in any order: reversed, then sorted */
    for (int i = 0; i < 8; i++) {
        struct gb_ka_mismatch t = log.first[i];
        log.first[i] = log.first[15 - i];
        log.first[15 - i] = t;
    }
    gb_ka_sort(log.first, GB_KA_MAX_RECORDS);
    for (int i = 0; i < GB_KA_MAX_RECORDS; i++)
        ASSERT_EQ(log.first[i].element, i);
    return 0;
}

static int test_hash(void)
{
    uint32_t a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 4};
    uint64_t wide[4] = {1, 2, 3, 4};

    ASSERT(gb_ka_hash(a, 0, 4) == 0xcbf29ce484222325ull); /* FNV-1a's offset basis */
    ASSERT(gb_ka_hash(a, 4, 4) == gb_ka_hash(b, 4, 4));
    ASSERT(gb_ka_hash(a, 4, 4) == gb_ka_hash(wide, 4, 8)); /* zero-extended words */
    b[2] ^= 1u << 20;
    ASSERT(gb_ka_hash(a, 4, 4) != gb_ka_hash(b, 4, 4));
    b[2] = 4;
    b[3] = 3;
    ASSERT(gb_ka_hash(a, 4, 4) != gb_ka_hash(b, 4, 4)); /* order counts */
    ASSERT_EQ(gb_ka_kind_parse("cublas_bf16"), GB_KA_CUBLAS);
    ASSERT_EQ(gb_ka_kind_parse("fp16"), -1);
    ASSERT_STR_EQ(gb_ka_kind_name(GB_KA_INT), "int_mix");
    return 0;
}

/* ---- memtest ---------------------------------------------------------- */

static int test_memtest_values(void)
{
    ASSERT(gb_mt_value(GB_MT_INVERSIONS, 0x1000, 1) == 0);
    ASSERT(gb_mt_value(GB_MT_WALKING, 0x1000, 1) == 1); /* word 512: 512 mod 64 = 0 */
    ASSERT(gb_mt_value(GB_MT_WALKING, 0x1008, 1) == 2);
    ASSERT(gb_mt_value(GB_MT_WALKING, 0x11f8, 1) == 1ull << 63);
    ASSERT(gb_mt_value(GB_MT_ADDRESS, 0x7f0012345678, 1) == 0x7f0012345678ull);
    ASSERT(gb_mt_value(GB_MT_RANDOM, 0x1000, 1) == gb_mt_value(GB_MT_RANDOM, 0x1000, 1));
    ASSERT(gb_mt_value(GB_MT_RANDOM, 0x1000, 1) != gb_mt_value(GB_MT_RANDOM, 0x1000, 2));
    ASSERT(gb_mt_value(GB_MT_RANDOM, 0x1000, 1) != gb_mt_value(GB_MT_RANDOM, 0x1008, 1));
    ASSERT_EQ(gb_mt_pattern_parse("address"), GB_MT_ADDRESS);
    ASSERT_EQ(gb_mt_pattern_parse("march"), -1);
    return 0;
}

/* A region written with each pattern reads back clean; one flipped bit is
 * one error at its address with the expected and got words. */
static int test_memtest_planted_error(void)
{
    enum { N = 256 };
    uint64_t words[N], base = 0x7f0000200000ull;
    struct gb_mt_error first[GB_MT_MAX_RECORDS];

    for (int p = 0; p < GB_MT_PATTERNS; p++)
        for (int inverted = 0; inverted < 2; inverted++) {
            unsigned long long errors = 0;
            for (int i = 0; i < N; i++) {
                uint64_t v = gb_mt_value(p, base + 8 * (uint64_t)i, 11);
                words[i] = inverted ? ~v : v;
            }
            gb_mt_check_host(words, N, base, p, inverted, 11, &errors, first);
            ASSERT_EQ(errors, 0);
            words[37] ^= 1ull << 5;
            gb_mt_check_host(words, N, base, p, inverted, 11, &errors, first);
            ASSERT_EQ(errors, 1);
            ASSERT(first[0].address == base + 37 * 8);
            ASSERT(first[0].got == (first[0].expected ^ (1ull << 5)));
            ASSERT(first[0].expected ==
                   (inverted ? ~gb_mt_value(p, base + 296, 11) : gb_mt_value(p, base + 296, 11)));
            /* read as the other phase: every word is wrong, 16 are kept */
            errors = 0;
            gb_mt_check_host(words, N, base, p, !inverted, 11, &errors, first);
            ASSERT_EQ(errors, N);
            ASSERT(first[15].address == base + 15 * 8);
        }
    return 0;
}

static int test_memtest_sort(void)
{
    struct gb_mt_error e[3] = {{0x300, 1, 2}, {0x100, 3, 4}, {0x200, 5, 6}};

    gb_mt_sort(e, 3);
    ASSERT(e[0].address == 0x100 && e[0].expected == 3 && e[0].got == 4);
    ASSERT(e[1].address == 0x200 && e[2].address == 0x300);
    return 0;
}

/* ---- soak ------------------------------------------------------------- */

static void soak_series(struct gb_soak_second *s, int n)
{
    for (int i = 0; i < n; i++) {
        memset(&s[i], 0, sizeof(s[i]));
        s[i].rate[GB_SOAK_GEMM] = i < 20 ? 100 : 80;
        s[i].rate[GB_SOAK_HBM] = -1;
        s[i].sm_clock_mhz = i < 20 ? 1980 : 1700;
        s[i].mem_clock_mhz = 2619;
        s[i].power_w = i % 2 ? -1 : 600; /* every other reading missing */
        s[i].temperature_c = 40 + i / 2.0;
        s[i].throttle_read = 1;
        s[i].throttle_mask = i >= 20 ? 0x4 : 0;
    }
}

static int test_soak_windows(void)
{
    enum { N = 60 };
    struct gb_soak_second s[N];
    struct gb_soak_window f, l, w;
    unsigned long long mask;

    soak_series(s, N);
    /* the slowest 10 s are in the 80s; first 10 s at 100 */
    s[45].rate[GB_SOAK_GEMM] = 20;
    gb_soak_windows(s, N, GB_SOAK_GEMM, &f, &l, &w);
    ASSERT_NEAR(f.rate, 100, 1e-9);
    ASSERT_EQ(f.start, 0);
    ASSERT_EQ(f.len, 10);
    ASSERT_NEAR(f.sm_clock_mhz, 1980, 1e-9);
    ASSERT_NEAR(f.power_w, 600, 1e-9); /* the missing readings left out */
    ASSERT_EQ(f.throttle_mask, 0);
    ASSERT_EQ(l.start, 30);
    ASSERT_EQ(l.len, 30);
    ASSERT_NEAR(l.rate, (29 * 80 + 20) / 30.0, 1e-9);
    ASSERT_EQ(l.throttle_mask, 0x4);
    ASSERT_EQ(w.len, 10);
    ASSERT(w.start >= 36 && w.start <= 45);
    ASSERT_NEAR(w.rate, (9 * 80 + 20) / 10.0, 1e-9);
    /* a load that did not run has no rate */
    gb_soak_windows(s, N, GB_SOAK_HBM, &f, &l, &w);
    ASSERT(f.rate < 0 && l.rate < 0 && w.rate < 0);
    /* power capped only: no slowdown; a thermal one at second 33 */
    ASSERT_EQ(gb_soak_first_slowdown(s, N, &mask), -1);
    s[33].throttle_mask |= 0x40;
    s[50].throttle_mask |= 0x8;
    ASSERT_EQ(gb_soak_first_slowdown(s, N, &mask), 33);
    ASSERT_EQ(mask, 0x40);
    return 0;
}

/* Shorter than the windows: each is clipped to what there is. */
static int test_soak_short(void)
{
    struct gb_soak_second s[12];
    struct gb_soak_window f, l, w;

    soak_series(s, 12);
    gb_soak_windows(s, 12, GB_SOAK_GEMM, &f, &l, &w);
    ASSERT_EQ(f.len, 10);
    ASSERT_EQ(l.start, 0);
    ASSERT_EQ(l.len, 12);
    ASSERT_EQ(w.len, 10);
    ASSERT_NEAR(w.rate, 100, 1e-9);
    return 0;
}

/* ---- the rows (deep_report.c) -------------------------------------------- */

static const cJSON *get(const cJSON *o, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(o, name);
}

static const cJSON *row_at(const cJSON *result, int i)
{
    return cJSON_GetArrayItem(get(result, "rows"), i);
}

/* A kind with 3 wrong results names each by SM and element, hex bits;
 * cuBLAS missing is a row unavailable with its reason; the summary's
 * total and SMs. */
static int test_ka_report(void)
{
    int kinds[3] = {GB_KA_FP32, GB_KA_INT, GB_KA_CUBLAS};
    struct gb_ka_result res[3];
    const cJSON *r, *m;
    cJSON *out;

    memset(res, 0, sizeof(res));
    for (int i = 0; i < 2; i++) {
        res[i].available = 1;
        res[i].sm_count = 132;
        res[i].sms_covered = 132 - i;
        res[i].launches = 10;
        res[i].checked = 1000;
        res[i].hash = 0xabcdef;
        res[i].seconds = 2;
    }
    res[0].log.count = 3;
    for (int i = 0; i < 3; i++) {
        res[0].log.first[i].sm = 17;
        res[0].log.first[i].element = 5 + i;
        res[0].log.first[i].expected = 0x3f800000;
        res[0].log.first[i].got = 0x3f800001;
    }
    res[2].sm_count = 132;
    snprintf(res[2].reason, sizeof(res[2].reason), "cuBLAS not loaded");
    out = gb_ka_report(kinds, res, 3);
    ASSERT(out != NULL);
    r = row_at(out, 0);
    ASSERT_STR_EQ(get(r, "label")->valuestring, "fp32_fma");
    ASSERT_STR_EQ(get(r, "unit")->valuestring, "mismatches");
    ASSERT_EQ(get(r, "value")->valuedouble, 3);
    ASSERT_EQ(get(r, "mismatches")->valuedouble, 3);
    ASSERT(cJSON_IsFalse(get(r, "verified")));
    ASSERT_STR_EQ(get(r, "result_hash")->valuestring, "0000000000abcdef");
    ASSERT_EQ(cJSON_GetArraySize(get(r, "first_mismatches")), 3);
    m = cJSON_GetArrayItem(get(r, "first_mismatches"), 1);
    ASSERT_EQ(get(m, "sm")->valuedouble, 17);
    ASSERT_EQ(get(m, "element")->valuedouble, 6);
    ASSERT_STR_EQ(get(m, "expected")->valuestring, "0x3f800000");
    ASSERT_STR_EQ(get(m, "got")->valuestring, "0x3f800001");
    r = row_at(out, 1);
    ASSERT(cJSON_IsTrue(get(r, "verified")));
    ASSERT_EQ(get(r, "sms_covered")->valuedouble, 131);
    r = row_at(out, 2);
    ASSERT(cJSON_IsFalse(get(r, "available")));
    ASSERT(cJSON_IsNull(get(r, "value")) && cJSON_IsNull(get(r, "verified")));
    ASSERT_STR_EQ(get(r, "reason")->valuestring, "cuBLAS not loaded");
    r = get(out, "summary");
    ASSERT_EQ(get(r, "mismatches")->valuedouble, 3);
    ASSERT_EQ(get(r, "sms_covered")->valuedouble, 131); /* the least, of those recorded */
    ASSERT_EQ(get(r, "sm_count")->valuedouble, 132);
    cJSON_Delete(out);
    return 0;
}

/* An error at one address, its share of memcpy, and a corrected ECC count
 * that rose during the test. */
static int test_memtest_report(void)
{
    struct gb_memtest_result m;
    struct gb_mt_ecc ecc;
    const cJSON *r, *e;
    cJSON *out;

    memset(&m, 0, sizeof(m));
    memset(&ecc, 0, sizeof(ecc));
    m.free_bytes = 1000ull << 20;
    m.total_bytes = 2000ull << 20;
    m.bytes_tested = 900ull << 20;
    m.memcpy_gbps = 4000;
    m.count = 2;
    m.p[0].pattern = GB_MT_ADDRESS;
    m.p[0].seconds = 1;
    m.p[0].bytes_moved = 3600e9;
    m.p[0].errors = 1;
    m.p[0].first[0].address = 0x7f0000001008ull;
    m.p[0].first[0].expected = 0x7f0000001008ull;
    m.p[0].first[0].got = 0x7f0000001048ull;
    m.p[1].pattern = GB_MT_RANDOM;
    m.p[1].seconds = 1;
    m.p[1].bytes_moved = 4400e9;
    ecc.read = 1;
    ecc.before.ecc_read[0] = ecc.after.ecc_read[0] = 1;
    ecc.after.ecc[0][0] = 2;
    out = gb_memtest_report(&m, 1, &ecc);
    ASSERT(out != NULL);
    r = row_at(out, 0);
    ASSERT_STR_EQ(get(r, "pattern")->valuestring, "address");
    ASSERT(cJSON_IsFalse(get(r, "verified")));
    ASSERT_NEAR(get(r, "value")->valuedouble, 3600, 1e-9);
    ASSERT_NEAR(get(r, "share_of_memcpy")->valuedouble, 0.9, 1e-12);
    e = cJSON_GetArrayItem(get(r, "first_errors"), 0);
    ASSERT_STR_EQ(get(e, "address")->valuestring, "0x7f0000001008");
    ASSERT_STR_EQ(get(e, "got")->valuestring, "0x7f0000001048");
    ASSERT(cJSON_IsTrue(get(row_at(out, 1), "verified")));
    ASSERT_STR_EQ(get(row_at(out, 2), "label")->valuestring, "memcpy");
    r = get(out, "summary");
    ASSERT_EQ(get(r, "errors")->valuedouble, 1);
    ASSERT_NEAR(get(r, "share_of_memory")->valuedouble, 0.45, 1e-12);
    ASSERT_NEAR(get(r, "share_of_free")->valuedouble, 0.9, 1e-12);
    ASSERT(cJSON_IsTrue(get(r, "ecc_increase")));
    ASSERT_EQ(get(get(r, "ecc_after"), "volatile_corrected")->valuedouble, 2);
    ASSERT(cJSON_IsNull(get(get(r, "ecc_after"), "remap_pending"))); /* not read */
    cJSON_Delete(out);
    /* NVML not read: counters null, no increase, the reason */
    ecc.read = 0;
    ecc.reason = "NVML not loaded";
    out = gb_memtest_report(&m, 1, &ecc);
    ASSERT(out != NULL);
    r = get(out, "summary");
    ASSERT(cJSON_IsFalse(get(r, "ecc_increase")));
    ASSERT(cJSON_IsNull(get(get(r, "ecc_before"), "volatile_corrected")));
    ASSERT_STR_EQ(get(r, "ecc_reason")->valuestring, "NVML not loaded");
    cJSON_Delete(out);
    return 0;
}

/* 40 s of both loads, GEMM power-capped, a thermal slowdown at second 31
 * (reported 1-based, at the second's end), the HBM load unavailable. */
static int test_soak_report(void)
{
    enum { N = 40 };
    struct gb_soak_second s[N];
    struct gb_soak_result res;
    const cJSON *r, *e;
    cJSON *out;

    soak_series(s, N);
    s[30].throttle_mask |= 0x40;
    memset(&res, 0, sizeof(res));
    res.load[GB_SOAK_GEMM] = res.load[GB_SOAK_HBM] = 1;
    res.available[GB_SOAK_GEMM] = 1;
    snprintf(res.reason[GB_SOAK_HBM], sizeof(res.reason[0]), "no arrays");
    res.seconds = N;
    out = gb_soak_report(&res, s, 87, "unused");
    ASSERT(out != NULL);
    ASSERT_EQ(cJSON_GetArraySize(get(out, "rows")), 6);
    r = row_at(out, 1);
    ASSERT_STR_EQ(get(r, "label")->valuestring, "gemm last_30s");
    ASSERT_STR_EQ(get(r, "unit")->valuestring, "TFLOP/s");
    ASSERT_NEAR(get(r, "value")->valuedouble, (10 * 100 + 20 * 80) / 30.0, 1e-9); /* s 10-39 */
    e = get(r, "throttle_reasons");
    ASSERT_EQ(cJSON_GetArraySize(e), 2);
    ASSERT_STR_EQ(cJSON_GetArrayItem(e, 0)->valuestring, "sw_power_cap");
    ASSERT_STR_EQ(cJSON_GetArrayItem(e, 1)->valuestring, "hw_thermal_slowdown");
    r = row_at(out, 3);
    ASSERT_STR_EQ(get(r, "label")->valuestring, "hbm first_10s");
    ASSERT(cJSON_IsFalse(get(r, "available")) && cJSON_IsNull(get(r, "value")));
    r = get(out, "summary");
    ASSERT_NEAR(get(get(r, "sustained_share"), "gemm")->valuedouble, 2600 / 3000.0, 1e-12);
    ASSERT(cJSON_IsNull(get(get(r, "sustained_share"), "hbm")));
    ASSERT_EQ(get(r, "first_slowdown_s")->valuedouble, 31);
    ASSERT_STR_EQ(get(r, "first_slowdown_reason")->valuestring, "hw_thermal_slowdown");
    ASSERT_NEAR(get(r, "max_temperature_c")->valuedouble, 59.5, 1e-9);
    ASSERT_EQ(get(r, "slowdown_temperature_c")->valuedouble, 87);
    ASSERT(cJSON_IsTrue(get(r, "power_capped")));
    ASSERT(get(r, "nvml_reason") == NULL); /* throttle reasons were read */
    ASSERT_EQ(cJSON_GetArraySize(get(r, "series")), N);
    e = cJSON_GetArrayItem(get(r, "series"), 1);
    ASSERT_EQ(get(e, "t")->valuedouble, 2);
    ASSERT(cJSON_IsNull(get(e, "power_w")) && cJSON_IsNull(get(e, "hbm_gbps")));
    ASSERT_NEAR(get(e, "gemm_tflops")->valuedouble, 100, 1e-9);
    cJSON_Delete(out);
    return 0;
}

/* ---- without CUDA ----------------------------------------------------- */

/* This test links the C-only backend (nocuda.c): each deep check fails as
 * a CUDA failure whose message says the worker was built without CUDA,
 * and leaves no result. */
static int test_without_cuda(void)
{
    static const char *const names[] = {"known_answer", "memtest", "soak"};
    static const gb_bench_fn fns[] = {gb_bench_known_answer, gb_bench_memtest, gb_bench_soak};
    struct gb_device_info dev;
    struct gb_hooks hooks;
    struct gb_bench_env env;

    memset(&dev, 0, sizeof(dev));
    memset(&hooks, 0, sizeof(hooks));
    memset(&env, 0, sizeof(env));
    env.dev = &dev;
    env.hooks = &hooks;
    env.nvml_reason = "no NVML in this test";
    for (int i = 0; i < 3; i++) {
        struct gb_error spec;
        struct gb_job_error err;
        cJSON *params, *result = (cJSON *)&dev; /* must come back NULL */
        memset(&spec, 0, sizeof(spec));
        memset(&err, 0, sizeof(err));
        params = gb_params_resolve(gb_benchmark_find(names[i]), NULL, &spec);
        ASSERT(params != NULL);
        ASSERT_EQ(fns[i](&env, params, &result, &err), -1);
        cJSON_Delete(params);
        ASSERT(result == NULL);
        ASSERT_STR_EQ(err.code, "cuda_error");
        ASSERT(strstr(err.message, "built without CUDA") != NULL);
    }
    return 0;
}

TEST_MAIN({"known_answer: host fma is fused", test_host_fma_is_fused},
          {"known_answer: mix and int chain", test_mix_and_int_chain},
          {"known_answer: fma chains", test_fma_chains},
          {"known_answer: mma answer", test_mma_ref},
          {"known_answer: gemm answer", test_gemm_ref},
          {"known_answer: flipped bit is one mismatch", test_compare_flipped_bit},
          {"known_answer: first 16 kept and sorted", test_compare_keeps_first_16},
          {"known_answer: hash", test_hash},
          {"memtest: pattern values", test_memtest_values},
          {"memtest: planted error", test_memtest_planted_error},
          {"memtest: records sorted", test_memtest_sort},
          {"soak: windows and slowdown", test_soak_windows},
          {"soak: short run", test_soak_short},
          {"known_answer: rows and summary", test_ka_report},
          {"memtest: rows and summary", test_memtest_report},
          {"soak: rows and summary", test_soak_report},
          {"deep checks fail cleanly without CUDA", test_without_cuda})
