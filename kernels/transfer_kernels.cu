/*
 * transfer_kernels.cu - pcie_bandwidth (host <-> device) and p2p_bandwidth
 * (device <-> device).  See gb_perf.h.
 *
 * A sample is `work` back-to-back cudaMemcpyAsync of one size on the
 * timer's stream (pageable memory cannot be captured in a graph, so none
 * is used here).  Before any op is timed its destination is poisoned, one
 * copy is made and every byte is compared with the source's pattern.
 * p2p: the worker for one device sets each device current in turn; a pair
 * whose cudaDeviceCanAccessPeer says yes gets peer access and
 * cudaMemcpyPeerAsync goes over the peer path; otherwise the same call is
 * staged through host memory by the driver (mode "staged").  Latency is
 * the time of one 8-byte copy.  Peer access is disabled again at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.cuh"
#include "perf_common.cuh"

static const long kMaxCopies = 1L << 16;

static void fill_pattern(unsigned char *p, size_t bytes, uint32_t seed)
{
    for (size_t i = 0; i < bytes; i += 4) {
        uint32_t v = gb_hash32(i / 4, seed);
        memcpy(p + i, &v, bytes - i < 4 ? bytes - i : 4);
    }
}

struct copy_ctx {
    void *dst, *src;
    int dst_dev, src_dev;
    size_t bytes;
    enum cudaMemcpyKind kind;
    int peer;               /* cudaMemcpyPeerAsync */
    cudaStream_t other;     /* bidirectional: the reverse copy's stream */
    cudaEvent_t fork, join; /* bidirectional: order other within the sample */
    void *rdst, *rsrc;      /* bidirectional: the reverse copy */
};

static int launch_copy(void *p, long work, cudaStream_t stream, struct gb_cuda_error *err)
{
    struct copy_ctx *c = (struct copy_ctx *)p;

    if (c->other != NULL &&
        (gb_cuda_check(cudaEventRecord(c->fork, stream), "cudaEventRecord(fork)", err) != 0 ||
         gb_cuda_check(cudaStreamWaitEvent(c->other, c->fork, 0), "cudaStreamWaitEvent", err) != 0))
        return -1;
    for (long i = 0; i < work; i++) {
        cudaError_t e = c->peer ? cudaMemcpyPeerAsync(c->dst, c->dst_dev, c->src, c->src_dev,
                                                      c->bytes, stream)
                                : cudaMemcpyAsync(c->dst, c->src, c->bytes, c->kind, stream);
        if (gb_cuda_check(e, "cudaMemcpyAsync", err) != 0)
            return -1;
        if (c->other != NULL &&
            gb_cuda_check(cudaMemcpyPeerAsync(c->rdst, c->src_dev, c->rsrc, c->dst_dev, c->bytes,
                                              c->other),
                          "cudaMemcpyPeerAsync(reverse)", err) != 0)
            return -1;
    }
    if (c->other != NULL &&
        (gb_cuda_check(cudaEventRecord(c->join, c->other), "cudaEventRecord(join)", err) != 0 ||
         gb_cuda_check(cudaStreamWaitEvent(stream, c->join, 0), "cudaStreamWaitEvent", err) != 0))
        return -1;
    return 0;
}

/* ---- pcie_bandwidth -------------------------------------------------- */

/* Poisons dst, copies once, and compares: for h2d the device copy is read
 * back into check; for d2h the host destination itself is compared. */
static int verify_host_copy(struct copy_ctx *c, struct gb_timer *t, const unsigned char *want,
                            unsigned char *check, struct gb_perf_op *op,
                            struct gb_cuda_error *err)
{
    int h2d = c->kind == cudaMemcpyHostToDevice;

    if (h2d) {
        if (gb_cuda_check(cudaMemset(c->dst, GB_POISON_BYTE, c->bytes), "cudaMemset(poison)",
                          err) != 0)
            return -1;
    } else {
        memset(c->dst, GB_POISON_BYTE, c->bytes);
    }
    if (launch_copy(c, 1, t->stream, err) != 0 ||
        gb_cuda_check(cudaStreamSynchronize(t->stream), "cudaStreamSynchronize", err) != 0)
        return -1;
    if (h2d && gb_cuda_check(cudaMemcpy(check, c->dst, c->bytes, cudaMemcpyDeviceToHost),
                             "cudaMemcpy(read back)", err) != 0)
        return -1;
    for (size_t i = 0; i < c->bytes; i++)
        op->mismatches += (h2d ? check : (unsigned char *)c->dst)[i] != want[i];
    op->checked = (long long)c->bytes;
    return 0;
}

int gb_pcie_measure(int device, const long long *sizes, int count, int memories,
                    const struct gb_measure_opts *opts, struct gb_hooks *hooks,
                    struct gb_perf_op *ops, struct gb_cuda_error *err)
{
    struct gb_timer timer = {NULL, NULL, NULL};
    unsigned char *pinned = NULL, *pageable = NULL, *want = NULL, *check = NULL, *dev = NULL;
    size_t max = 0;
    int rc = -1, k = 0;

    (void)device;
    for (int i = 0; i < count; i++)
        max = (size_t)sizes[i] > max ? (size_t)sizes[i] : max;
    pageable = (unsigned char *)malloc(max);
    want = (unsigned char *)malloc(max);
    check = (unsigned char *)malloc(max);
    if (pageable == NULL || want == NULL || check == NULL) {
        gb_cuda_check(cudaErrorMemoryAllocation, "host allocation", err);
        goto out;
    }
    fill_pattern(want, max, 7);
    if (gb_cuda_check(cudaHostAlloc((void **)&pinned, max, cudaHostAllocDefault),
                      "cudaHostAlloc(pinned)", err) != 0 ||
        gb_cuda_check(cudaMalloc(&dev, max), "cudaMalloc", err) != 0 ||
        gb_cuda_check(cudaMemcpy(dev, want, max, cudaMemcpyHostToDevice), "cudaMemcpy(pattern)",
                      err) != 0 ||
        gb_timer_create(&timer, err) != 0)
        goto out;
    for (int i = 0; i < count; i++) {
        for (int m = 0; m < 4; m++) {
            struct gb_perf_op *op;
            struct copy_ctx c;
            int h2d = m % 2 == 0, is_pinned = m < 2;
            unsigned char *host = is_pinned ? pinned : pageable;

            if (!gb_pcie_mode_on(memories, m))
                continue;
            op = &ops[k++];
            memset(&c, 0, sizeof(c));
            c.bytes = (size_t)sizes[i];
            c.kind = h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
            c.dst = h2d ? (void *)dev : (void *)host;
            c.src = h2d ? (void *)host : (void *)dev;
            if (h2d)
                memcpy(host, want, c.bytes);
            if (verify_host_copy(&c, &timer, want, check, op, err) != 0)
                goto out;
            if (op->mismatches != 0) {
                rc = 1;
                goto out;
            }
            op->amount = (double)c.bytes;
            if (gb_perf_time(&timer, launch_copy, &c, kMaxCopies, 0, opts, hooks, op, err) != 0)
                goto out;
        }
    }
    rc = 0;

out:
    gb_timer_destroy(&timer);
    if (pinned)
        (void)cudaFreeHost(pinned);
    if (dev)
        (void)cudaFree(dev);
    free(pageable);
    free(want);
    free(check);
    return rc;
}

/* ---- p2p_bandwidth --------------------------------------------------- */

#define GB_P2P_MAX_DEVICES 16

static int verify_peer(struct copy_ctx *c, struct gb_timer *t, const unsigned char *want,
                       unsigned char *check, struct gb_perf_op *op, struct gb_cuda_error *err)
{
    if (gb_cuda_check(cudaSetDevice(c->dst_dev), "cudaSetDevice", err) != 0 ||
        gb_cuda_check(cudaMemset(c->dst, GB_POISON_BYTE, c->bytes), "cudaMemset(poison)",
                      err) != 0 ||
        gb_cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", err) != 0 ||
        gb_cuda_check(cudaSetDevice(c->src_dev), "cudaSetDevice", err) != 0 ||
        launch_copy(c, 1, t->stream, err) != 0 ||
        gb_cuda_check(cudaStreamSynchronize(t->stream), "cudaStreamSynchronize", err) != 0 ||
        gb_cuda_check(cudaMemcpy(check, c->dst, c->bytes, cudaMemcpyDeviceToHost),
                      "cudaMemcpy(read back)", err) != 0)
        return -1;
    for (size_t i = 0; i < c->bytes; i++)
        op->mismatches += check[i] != want[i];
    op->checked = (long long)c->bytes;
    return 0;
}

/* Enables peer access from the current device to peer; already enabled
 * is fine. */
static int enable_peer(int peer, struct gb_cuda_error *err)
{
    cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);

    if (e == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError();
        return 0;
    }
    return gb_cuda_check(e, "cudaDeviceEnablePeerAccess", err);
}

static int measure_pair(int i, int j, int bidir, size_t bytes, void **src, void **dst,
                        const unsigned char *want, unsigned char *check,
                        const struct gb_measure_opts *opts, struct gb_hooks *hooks,
                        struct gb_perf_op *op, struct gb_cuda_error *err)
{
    struct gb_timer timer = {NULL, NULL, NULL};
    struct copy_ctx c;
    int can_ij = 0, can_ji = 0, rc = -1;

    memset(&c, 0, sizeof(c));
    if (gb_cuda_check(cudaDeviceCanAccessPeer(&can_ij, i, j), "cudaDeviceCanAccessPeer",
                      err) != 0 ||
        gb_cuda_check(cudaDeviceCanAccessPeer(&can_ji, j, i), "cudaDeviceCanAccessPeer",
                      err) != 0)
        return -1;
    op->src = i;
    op->dst = j;
    op->peer = can_ij && (!bidir || can_ji);
    op->bidirectional = bidir;
    c.src = src[i];
    c.dst = dst[j];
    c.src_dev = i;
    c.dst_dev = j;
    c.bytes = bytes;
    c.peer = 1;
    if (op->peer) {
        if (gb_cuda_check(cudaSetDevice(j), "cudaSetDevice", err) != 0 ||
            enable_peer(i, err) != 0 ||
            gb_cuda_check(cudaSetDevice(i), "cudaSetDevice", err) != 0 ||
            enable_peer(j, err) != 0)
            return -1;
    }
    if (bidir) {
        c.rsrc = src[j];
        c.rdst = dst[i];
        if (gb_cuda_check(cudaSetDevice(j), "cudaSetDevice", err) != 0 ||
            gb_cuda_check(cudaStreamCreateWithFlags(&c.other, cudaStreamNonBlocking),
                          "cudaStreamCreateWithFlags", err) != 0 ||
            gb_cuda_check(cudaEventCreateWithFlags(&c.join, cudaEventDisableTiming),
                          "cudaEventCreate", err) != 0)
            goto out;
    }
    if (gb_cuda_check(cudaSetDevice(i), "cudaSetDevice", err) != 0 ||
        gb_timer_create(&timer, err) != 0 ||
        (bidir && gb_cuda_check(cudaEventCreateWithFlags(&c.fork, cudaEventDisableTiming),
                                "cudaEventCreate", err) != 0))
        goto out;
    if (!bidir) {
        if (verify_peer(&c, &timer, want, check, op, err) != 0)
            goto out;
        if (op->mismatches != 0) {
            rc = 1;
            goto out;
        }
    }
    op->amount = (double)bytes * (bidir ? 2 : 1);
    if (gb_perf_time(&timer, launch_copy, &c, kMaxCopies, 0, opts, hooks, op, err) != 0)
        goto out;
    rc = 0;

out:
    gb_timer_destroy(&timer);
    if (c.fork)
        (void)cudaEventDestroy(c.fork);
    if (c.join)
        (void)cudaEventDestroy(c.join);
    if (c.other)
        (void)cudaStreamDestroy(c.other);
    return rc;
}

int gb_p2p_measure(int device, long long bytes, const struct gb_measure_opts *opts,
                   struct gb_hooks *hooks, struct gb_perf_op *ops, int cap, int *op_count,
                   int *devices, struct gb_cuda_error *err)
{
    void *src[GB_P2P_MAX_DEVICES] = {NULL}, *dst[GB_P2P_MAX_DEVICES] = {NULL};
    unsigned char *want = NULL, *check = NULL;
    int n = 0, rc = -1, k = 0;

    *op_count = 0;
    if (gb_cuda_check(cudaGetDeviceCount(&n), "cudaGetDeviceCount", err) != 0)
        return -1;
    n = n > GB_P2P_MAX_DEVICES ? GB_P2P_MAX_DEVICES : n;
    *devices = n;
    if (n < 2)
        return 0;
    hooks->total = opts->samples * (n * (n - 1) * 2 + n * (n - 1) / 2);
    want = (unsigned char *)malloc((size_t)bytes);
    check = (unsigned char *)malloc((size_t)bytes);
    if (want == NULL || check == NULL) {
        gb_cuda_check(cudaErrorMemoryAllocation, "host allocation", err);
        goto out;
    }
    fill_pattern(want, (size_t)bytes, 9);
    for (int d = 0; d < n; d++) {
        if (gb_cuda_check(cudaSetDevice(d), "cudaSetDevice", err) != 0 ||
            gb_cuda_check(cudaMalloc(&src[d], (size_t)bytes), "cudaMalloc(peer src)", err) != 0 ||
            gb_cuda_check(cudaMalloc(&dst[d], (size_t)bytes), "cudaMalloc(peer dst)", err) != 0 ||
            gb_cuda_check(cudaMemcpy(src[d], want, (size_t)bytes, cudaMemcpyHostToDevice),
                          "cudaMemcpy(pattern)", err) != 0)
            goto out;
    }
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            for (int kind = 0; kind < 3 && i != j; kind++) {
                /* kind 0: bandwidth i -> j; 1: latency; 2: both ways (i < j). */
                if ((kind == 2 && i > j) || k >= cap)
                    continue;
                snprintf(ops[k].label, sizeof(ops[k].label), "%d->%d %s", i, j,
                         kind == 0 ? "bandwidth" : kind == 1 ? "latency"
                                                             : "bidirectional");
                rc = measure_pair(i, j, kind == 2, kind == 1 ? 8 : (size_t)bytes, src, dst,
                                  want, check, opts, hooks, &ops[k], err);
                k++;
                *op_count = k;
                if (rc != 0)
                    goto out;
                rc = -1;
            }
        }
    }
    rc = 0;

out:
    for (int d = 0; d < n; d++) {
        (void)cudaSetDevice(d);
        for (int p = 0; p < n; p++)
            if (p != d && cudaDeviceDisablePeerAccess(p) != cudaSuccess)
                (void)cudaGetLastError();
        if (src[d])
            (void)cudaFree(src[d]);
        if (dst[d])
            (void)cudaFree(dst[d]);
    }
    (void)cudaSetDevice(device);
    free(want);
    free(check);
    return rc;
}
