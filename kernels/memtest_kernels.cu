/*
 * memtest_kernels.cu - memtest on the GPU; see gb_deep.h and memtest_ref.h
 * (the patterns and their three passes).
 *
 * The region is `fraction` of the free memory (cudaMemGetInfo), less
 * 256 MiB of headroom, allocated as one chunk where it can be and in
 * halving chunks (down to 64 MiB) where it cannot.  Each pass is one
 * kernel a chunk, one 16-byte load or store a thread over a grid that
 * covers the chunk once (the one-pass shape that ran STREAM at 100% of
 * cudaMemcpy on an H200, memory_kernels.cu); a word that reads back wrong
 * advances the log's count and fills one of its first 16 records (device
 * address, expected, got) through an atomic.  The ceiling is a
 * device-to-device cudaMemcpy inside the first chunk, timed in the same
 * run (median of 5), counting bytes read plus written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.cuh"
#include "gb_deep.h"

static const int kMtBlock = 256;
static const unsigned long long kMtHeadroom = 256ull << 20;
static const unsigned long long kMtMinChunk = 64ull << 20;
#define MT_MAX_CHUNKS 64

struct mt_log {
    unsigned long long count;
    struct gb_mt_error first[GB_MT_MAX_RECORDS];
};

__device__ inline void mt_check_word(struct mt_log *log, uint64_t addr, uint64_t want,
                                     uint64_t got)
{
    if (got != want) {
        unsigned long long slot = atomicAdd(&log->count, 1ull);
        gb_mt_note(log->first, slot, addr, want, got);
    }
}

__device__ inline uint64_t mt_lo(uint4 v)
{
    return (uint64_t)v.x | ((uint64_t)v.y << 32);
}

__device__ inline uint64_t mt_hi(uint4 v)
{
    return (uint64_t)v.z | ((uint64_t)v.w << 32);
}

__device__ inline uint4 mt_pack(uint64_t lo, uint64_t hi)
{
    return make_uint4((unsigned)lo, (unsigned)(lo >> 32), (unsigned)hi, (unsigned)(hi >> 32));
}

/* kPass 0: write v; 1: check v, write ~v; 2: check ~v. */
template <int kPass>
__global__ void __launch_bounds__(256)
    mt_pass(uint4 *p, long long n16, int pattern, uint64_t seed, struct mt_log *log)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    uint64_t addr, v0, v1;

    if (i >= n16)
        return;
    addr = (uint64_t)(p + i);
    v0 = gb_mt_value(pattern, addr, seed);
    v1 = gb_mt_value(pattern, addr + 8, seed);
    if (kPass == 0) {
        p[i] = mt_pack(v0, v1);
        return;
    }
    uint4 got = p[i];
    if (kPass == 2) {
        v0 = ~v0;
        v1 = ~v1;
    }
    mt_check_word(log, addr, v0, mt_lo(got));
    mt_check_word(log, addr + 8, v1, mt_hi(got));
    if (kPass == 1)
        p[i] = mt_pack(~v0, ~v1);
}

struct mt_region {
    int count;
    void *ptr[MT_MAX_CHUNKS];
    unsigned long long bytes[MT_MAX_CHUNKS];
    unsigned long long total;
};

static void mt_region_free(struct mt_region *r)
{
    for (int i = 0; i < r->count; i++)
        (void)cudaFree(r->ptr[i]);
    r->count = 0;
}

/* As much of want as will come, in the largest chunks that will; a
 * failed cudaMalloc (out of memory) is cleared and a smaller one tried. */
static int mt_allocate(struct mt_region *r, unsigned long long want, struct gb_cuda_error *err)
{
    unsigned long long chunk = want & ~((2ull << 20) - 1);

    memset(r, 0, sizeof(*r));
    while (r->total + kMtMinChunk <= want && chunk >= kMtMinChunk && r->count < MT_MAX_CHUNKS) {
        void *p = NULL;
        if (chunk > want - r->total)
            chunk = (want - r->total) & ~((2ull << 20) - 1);
        cudaError_t e = cudaMalloc(&p, chunk);
        if (e == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError();
            chunk = (chunk / 2) & ~((2ull << 20) - 1);
            continue;
        }
        if (gb_cuda_check(e, "cudaMalloc(memtest chunk)", err) != 0)
            return -1;
        r->ptr[r->count] = p;
        r->bytes[r->count++] = chunk;
        r->total += chunk;
    }
    if (r->count == 0)
        return gb_cuda_check(cudaErrorMemoryAllocation, "cudaMalloc(memtest region)", err);
    return 0;
}

static int mt_launch(int pass, const struct mt_region *r, int pattern, uint64_t seed,
                     struct mt_log *log, cudaStream_t s, struct gb_cuda_error *err)
{
    for (int c = 0; c < r->count; c++) {
        long long n16 = (long long)(r->bytes[c] / 16);
        long long blocks = (n16 + kMtBlock - 1) / kMtBlock;
        uint4 *p = (uint4 *)r->ptr[c];
        if (pass == 0)
            mt_pass<0><<<(unsigned)blocks, kMtBlock, 0, s>>>(p, n16, pattern, seed, log);
        else if (pass == 1)
            mt_pass<1><<<(unsigned)blocks, kMtBlock, 0, s>>>(p, n16, pattern, seed, log);
        else
            mt_pass<2><<<(unsigned)blocks, kMtBlock, 0, s>>>(p, n16, pattern, seed, log);
        if (gb_cuda_check_launch("memtest pass launch", err) != 0)
            return -1;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The ceiling: half the first chunk (at most 4 GiB) copied onto its other
 * half, median of 5 after a warm-up. */
static int mt_memcpy(const struct mt_region *r, cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1,
                     struct gb_memtest_result *out, struct gb_cuda_error *err)
{
    unsigned long long bytes = r->bytes[0] / 2;
    char *base = (char *)r->ptr[0];
    double ms[5];
    float f;

    bytes = bytes > (4ull << 30) ? (4ull << 30) : bytes;
    for (int i = -1; i < 5; i++) {
        if (gb_cuda_check(cudaEventRecord(e0, s), "cudaEventRecord", err) != 0 ||
            gb_cuda_check(cudaMemcpyAsync(base + r->bytes[0] / 2, base, bytes,
                                          cudaMemcpyDeviceToDevice, s),
                          "cudaMemcpyAsync(device to device)", err) != 0 ||
            gb_cuda_check(cudaEventRecord(e1, s), "cudaEventRecord", err) != 0 ||
            gb_cuda_check(cudaEventSynchronize(e1), "cudaEventSynchronize", err) != 0 ||
            gb_cuda_check(cudaEventElapsedTime(&f, e0, e1), "cudaEventElapsedTime", err) != 0)
            return -1;
        if (i >= 0)
            ms[i] = f;
    }
    qsort(ms, 5, sizeof(ms[0]), cmp_double);
    out->memcpy_bytes = bytes;
    out->memcpy_gbps = 2.0 * (double)bytes / (ms[2] * 1e-3) / 1e9;
    return 0;
}

/* One pattern's three passes over the region, timed with events. */
static int mt_pattern(const struct mt_region *r, int pattern, uint64_t seed, struct mt_log *log,
                      cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1,
                      struct gb_memtest_pattern_result *p, struct gb_cuda_error *err)
{
    struct mt_log host;
    float ms = 0;

    if (gb_cuda_check(cudaMemsetAsync(log, 0, sizeof(*log), s), "cudaMemsetAsync(log)", err) !=
            0 ||
        gb_cuda_check(cudaEventRecord(e0, s), "cudaEventRecord", err) != 0)
        return -1;
    for (int pass = 0; pass < 3; pass++)
        if (mt_launch(pass, r, pattern, seed, log, s, err) != 0)
            return -1;
    if (gb_cuda_check(cudaEventRecord(e1, s), "cudaEventRecord", err) != 0 ||
        gb_cuda_check(cudaEventSynchronize(e1), "cudaEventSynchronize", err) != 0 ||
        gb_cuda_check(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime", err) != 0 ||
        gb_cuda_check(cudaMemcpy(&host, log, sizeof(host), cudaMemcpyDeviceToHost),
                      "cudaMemcpy(log)", err) != 0)
        return -1;
    p->seconds += ms * 1e-3;
    p->bytes_moved += 4.0 * (double)r->total;
    /* Records of the earlier passes stay; this pass's fill the rest. */
    for (unsigned long long i = 0; i < host.count && i < GB_MT_MAX_RECORDS; i++)
        gb_mt_note(p->first, p->errors + i, host.first[i].address, host.first[i].expected,
                   host.first[i].got);
    p->errors += host.count;
    return 0;
}

int gb_memtest_run(int device, double fraction, const int *patterns, int count, int passes,
                   uint64_t seed, struct gb_hooks *hooks, struct gb_memtest_result *out,
                   struct gb_cuda_error *err)
{
    struct mt_region region;
    struct mt_log *log = NULL;
    cudaStream_t s = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    size_t free_b = 0, total_b = 0;
    unsigned long long want;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    memset(&region, 0, sizeof(region));
    count = count > GB_MT_PATTERNS ? GB_MT_PATTERNS : count;
    out->count = count;
    if (gb_cuda_check(cudaSetDevice(device), "cudaSetDevice", err) != 0 ||
        gb_cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate",
                      err) != 0 ||
        gb_cuda_check(cudaEventCreate(&e0), "cudaEventCreate", err) != 0 ||
        gb_cuda_check(cudaEventCreate(&e1), "cudaEventCreate", err) != 0 ||
        gb_cuda_check(cudaMalloc(&log, sizeof(*log)), "cudaMalloc(log)", err) != 0 ||
        gb_cuda_check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo", err) != 0)
        goto out;
    out->free_bytes = free_b;
    out->total_bytes = total_b;
    /* Rounded up to 2 MiB, so the region is at least the share asked. */
    want = ((unsigned long long)(fraction * (double)free_b) + (2ull << 20) - 1) &
           ~((2ull << 20) - 1);
    if (want + kMtHeadroom > free_b)
        want = free_b > kMtHeadroom + kMtMinChunk ? free_b - kMtHeadroom : kMtMinChunk;
    if (mt_allocate(&region, want, err) != 0)
        goto out;
    out->bytes_tested = region.total;
    out->chunks = region.count;
    if (mt_memcpy(&region, s, e0, e1, out, err) != 0)
        goto out;
    hooks->total = count * passes;
    for (int i = 0; i < count; i++)
        out->p[i].pattern = patterns[i];
    for (int pass = 0; pass < passes; pass++)
        for (int i = 0; i < count; i++) {
            if (mt_pattern(&region, patterns[i], seed, log, s, e0, e1, &out->p[i], err) != 0)
                goto out;
            hooks->done++;
            if (hooks->progress)
                hooks->progress(hooks->arg, hooks->done, hooks->total);
        }
    for (int i = 0; i < count; i++)
        gb_mt_sort(out->p[i].first, out->p[i].errors < GB_MT_MAX_RECORDS
                                        ? (int)out->p[i].errors
                                        : GB_MT_MAX_RECORDS);
    rc = 0;

out:
    mt_region_free(&region);
    if (log)
        (void)cudaFree(log);
    if (e0)
        (void)cudaEventDestroy(e0);
    if (e1)
        (void)cudaEventDestroy(e1);
    if (s)
        (void)cudaStreamDestroy(s);
    return rc;
}
