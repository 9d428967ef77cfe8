/*
 * nccl_kernels.cu - nccl_allreduce on the GPUs: buffers, communicators,
 * the known-answer check and the timing.  See gb_perf.h (gb_nccl_measure)
 * and nccl_api.cuh (how NCCL is loaded).
 *
 * One process, one thread: ncclCommInitAll makes one communicator a GPU
 * and each all-reduce is one ncclGroupStart/End around a call a rank, as
 * NCCL documents for a single thread driving several devices (and as
 * nccl-tests' -g mode does).  The timer's events sit on the worker
 * device's stream; the other ranks' streams wait on a fork event recorded
 * there before the first all-reduce, and that stream waits on their join
 * events after the last, so a sample spans every rank's work.
 */
#include <stdio.h>
#include <string.h>

#include "cuda_check.cuh"
#include "nccl_api.cuh"
#include "nccl_math.h"
#include "perf_common.cuh"

static const long kMaxAllReduces = 1L << 12;

struct nccl_ctx {
    const struct gb_nccl_api *api;
    int n, device;
    gb_ncclComm_t comms[GB_NCCL_MAX_RANKS];
    cudaStream_t streams[GB_NCCL_MAX_RANKS]; /* [device]: the timer's */
    cudaEvent_t fork, join[GB_NCCL_MAX_RANKS];
    void *buf[GB_NCCL_MAX_RANKS];
    unsigned long long *bad[GB_NCCL_MAX_RANKS];
    size_t count;
    int nccl_type;
};

static int nccl_check(const struct gb_nccl_api *api, gb_ncclResult_t r, const char *call,
                      struct gb_cuda_error *err)
{
    if (r == GB_NCCL_SUCCESS)
        return 0;
    if (err->call[0] == '\0') {
        snprintf(err->call, sizeof(err->call), "%s", call);
        snprintf(err->name, sizeof(err->name), "ncclResult %d", r);
        snprintf(err->text, sizeof(err->text), "%s", api->error_string(r));
    }
    return -1;
}

/* One all-reduce over every rank, in place. */
static int all_reduce_once(struct nccl_ctx *c, struct gb_cuda_error *err)
{
    gb_ncclResult_t r = c->api->group_start();

    if (nccl_check(c->api, r, "ncclGroupStart", err) != 0)
        return -1;
    for (int k = 0; k < c->n; k++) {
        r = c->api->all_reduce(c->buf[k], c->buf[k], c->count, c->nccl_type, GB_NCCL_SUM,
                               c->comms[k], c->streams[k]);
        if (r != GB_NCCL_SUCCESS)
            break;
    }
    /* the group is closed even after a failed call */
    if (nccl_check(c->api, r, "ncclAllReduce", err) != 0) {
        (void)c->api->group_end();
        return -1;
    }
    return nccl_check(c->api, c->api->group_end(), "ncclGroupEnd", err);
}

static int launch_all_reduce(void *p, long work, cudaStream_t stream, struct gb_cuda_error *err)
{
    struct nccl_ctx *c = (struct nccl_ctx *)p;

    c->streams[c->device] = stream;
    if (gb_cuda_check(cudaEventRecord(c->fork, stream), "cudaEventRecord(fork)", err) != 0)
        return -1;
    for (int k = 0; k < c->n; k++)
        if (k != c->device && gb_cuda_check(cudaStreamWaitEvent(c->streams[k], c->fork, 0),
                                            "cudaStreamWaitEvent(fork)", err) != 0)
            return -1;
    for (long i = 0; i < work; i++)
        if (all_reduce_once(c, err) != 0)
            return -1;
    /* each join is recorded with its own device current, as the event
     * and the stream are that device's */
    for (int k = 0; k < c->n; k++)
        if (k != c->device &&
            (gb_cuda_check(cudaSetDevice(k), "cudaSetDevice", err) != 0 ||
             gb_cuda_check(cudaEventRecord(c->join[k], c->streams[k]), "cudaEventRecord(join)",
                           err) != 0 ||
             gb_cuda_check(cudaStreamWaitEvent(stream, c->join[k], 0),
                           "cudaStreamWaitEvent(join)", err) != 0))
            return -1;
    return gb_cuda_check(cudaSetDevice(c->device), "cudaSetDevice", err);
}

/* Every element of buf (count of size bytes) set to bits. */
static __global__ void nccl_fill(void *buf, size_t count, int size, unsigned long long bits)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x) {
        if (size == 2)
            ((unsigned short *)buf)[i] = (unsigned short)bits;
        else if (size == 4)
            ((unsigned int *)buf)[i] = (unsigned int)bits;
        else
            ((unsigned long long *)buf)[i] = bits;
    }
}

/* *bad += the elements of buf that are not bits. */
static __global__ void nccl_check_kernel(const void *buf, size_t count, int size,
                                         unsigned long long bits, unsigned long long *bad)
{
    unsigned long long mine = 0;

    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long v = size == 2   ? ((const unsigned short *)buf)[i]
                               : size == 4 ? ((const unsigned int *)buf)[i]
                                           : ((const unsigned long long *)buf)[i];
        mine += v != bits;
    }
    if (mine)
        atomicAdd(bad, mine);
}

/* Rank k fills k + 1, one all-reduce, every rank's every element must be
 * n(n+1)/2: op->checked and op->mismatches. */
static int verify_size(struct nccl_ctx *c, int dtype, struct gb_perf_op *op,
                       struct gb_cuda_error *err)
{
    int size = gb_nccl_dtype_size((enum gb_nccl_dtype)dtype);
    unsigned long long want = gb_nccl_bits((enum gb_nccl_dtype)dtype, gb_nccl_expected_sum(c->n));

    for (int k = 0; k < c->n; k++) {
        unsigned long long mine = gb_nccl_bits((enum gb_nccl_dtype)dtype, gb_nccl_rank_value(k));
        if (gb_cuda_check(cudaSetDevice(k), "cudaSetDevice", err) != 0)
            return -1;
        nccl_fill<<<1024, 256, 0, c->streams[k]>>>(c->buf[k], c->count, size, mine);
        if (gb_cuda_check_launch("nccl_fill", err) != 0 ||
            gb_cuda_check(cudaStreamSynchronize(c->streams[k]), "cudaStreamSynchronize", err) !=
                0)
            return -1;
    }
    if (all_reduce_once(c, err) != 0)
        return -1;
    op->checked = 0;
    op->mismatches = 0;
    for (int k = 0; k < c->n; k++) {
        unsigned long long bad = 0;
        /* all on the rank's stream: it does not wait for the legacy
         * default stream (cudaStreamNonBlocking) */
        if (gb_cuda_check(cudaSetDevice(k), "cudaSetDevice", err) != 0 ||
            gb_cuda_check(cudaMemsetAsync(c->bad[k], 0, sizeof(*c->bad[k]), c->streams[k]),
                          "cudaMemsetAsync(bad)", err) != 0)
            return -1;
        nccl_check_kernel<<<1024, 256, 0, c->streams[k]>>>(c->buf[k], c->count, size, want,
                                                           c->bad[k]);
        if (gb_cuda_check_launch("nccl_check", err) != 0 ||
            gb_cuda_check(cudaMemcpyAsync(&bad, c->bad[k], sizeof(bad), cudaMemcpyDeviceToHost,
                                          c->streams[k]),
                          "cudaMemcpyAsync(bad)", err) != 0 ||
            gb_cuda_check(cudaStreamSynchronize(c->streams[k]), "cudaStreamSynchronize", err) !=
                0)
            return -1;
        op->mismatches += (long long)bad;
        op->checked += (long long)c->count;
    }
    return 0;
}

static int nccl_type_of(int dtype)
{
    static const int types[] = {GB_NCCL_FLOAT_T, GB_NCCL_BFLOAT16_T, GB_NCCL_HALF_T,
                                GB_NCCL_DOUBLE_T};
    return types[dtype];
}

/* Buffers of `most` bytes, a stream, an event and a counter a rank; the
 * fork event on the worker's device; then the communicators. */
static int setup(struct nccl_ctx *c, size_t most, struct gb_cuda_error *err)
{
    int devs[GB_NCCL_MAX_RANKS];

    for (int k = 0; k < c->n; k++) {
        devs[k] = k;
        if (gb_cuda_check(cudaSetDevice(k), "cudaSetDevice", err) != 0 ||
            gb_cuda_check(cudaMalloc(&c->buf[k], most), "cudaMalloc(all-reduce buffer)", err) !=
                0 ||
            gb_cuda_check(cudaMalloc((void **)&c->bad[k], sizeof(*c->bad[k])), "cudaMalloc(bad)",
                          err) != 0 ||
            gb_cuda_check(cudaStreamCreateWithFlags(&c->streams[k], cudaStreamNonBlocking),
                          "cudaStreamCreateWithFlags", err) != 0 ||
            gb_cuda_check(cudaEventCreateWithFlags(&c->join[k], cudaEventDisableTiming),
                          "cudaEventCreate(join)", err) != 0)
            return -1;
    }
    if (gb_cuda_check(cudaSetDevice(c->device), "cudaSetDevice", err) != 0 ||
        gb_cuda_check(cudaEventCreateWithFlags(&c->fork, cudaEventDisableTiming),
                      "cudaEventCreate(fork)", err) != 0)
        return -1;
    return nccl_check(c->api, c->api->comm_init_all(c->comms, c->n, devs), "ncclCommInitAll",
                      err);
}

/* Releases what setup made (c->streams[c->device] must be the rank's own
 * stream again). */
static void teardown(struct nccl_ctx *c)
{
    for (int k = 0; k < c->n; k++) {
        (void)cudaSetDevice(k);
        if (c->comms[k])
            (void)c->api->comm_destroy(c->comms[k]);
        if (c->buf[k])
            (void)cudaFree(c->buf[k]);
        if (c->bad[k])
            (void)cudaFree(c->bad[k]);
        if (c->join[k])
            (void)cudaEventDestroy(c->join[k]);
        if (c->streams[k])
            (void)cudaStreamDestroy(c->streams[k]);
    }
    if (c->fork)
        (void)cudaEventDestroy(c->fork);
    (void)cudaSetDevice(c->device);
}

int gb_nccl_measure(int device, const long long *sizes, int count, int dtype,
                    const struct gb_measure_opts *opts, struct gb_hooks *hooks,
                    struct gb_perf_op *ops, int *ranks, char *version, size_t version_cap,
                    struct gb_cuda_error *err)
{
    static struct nccl_ctx c; /* large; one run a process at a time */
    struct gb_timer timer = {NULL, NULL, NULL};
    cudaStream_t own = NULL;
    char reason[sizeof(ops[0].reason)];
    size_t most = 0;
    int n = 0, rc = -1, size = gb_nccl_dtype_size((enum gb_nccl_dtype)dtype);

    memset(&c, 0, sizeof(c));
    version[0] = '\0';
    if (gb_cuda_check(cudaGetDeviceCount(&n), "cudaGetDeviceCount", err) != 0)
        return -1;
    *ranks = n = n > GB_NCCL_MAX_RANKS ? GB_NCCL_MAX_RANKS : n;
    if (n < 2)
        return 0;
    c.api = gb_nccl(reason, sizeof(reason));
    for (int i = 0; i < count; i++) {
        ops[i].src = ops[i].dst = -1;
        if (c.api == NULL)
            snprintf(ops[i].reason, sizeof(ops[i].reason), "%s", reason);
        if ((size_t)sizes[i] > most)
            most = (size_t)sizes[i];
    }
    if (c.api == NULL)
        return 0;
    gb_nccl_version_text(c.api->version, version, version_cap);
    c.n = n;
    c.device = device;
    c.nccl_type = nccl_type_of(dtype);
    hooks->total = opts->samples * count;
    if (setup(&c, most, err) != 0 ||
        gb_cuda_check(cudaSetDevice(device), "cudaSetDevice", err) != 0 ||
        gb_timer_create(&timer, err) != 0)
        goto out;
    /* the worker device's rank runs on the timer's stream; its own is
     * kept to be destroyed */
    own = c.streams[device];
    c.streams[device] = timer.stream;
    for (int i = 0; i < count; i++) {
        c.count = (size_t)sizes[i] / (size_t)size;
        ops[i].amount = (double)sizes[i] * gb_nccl_busbw_factor(n);
        if (verify_size(&c, dtype, &ops[i], err) != 0)
            goto out;
        if (ops[i].mismatches != 0) {
            rc = 1;
            goto out;
        }
        if (gb_cuda_check(cudaSetDevice(device), "cudaSetDevice", err) != 0 ||
            gb_perf_time(&timer, launch_all_reduce, &c, kMaxAllReduces, 0, opts, hooks, &ops[i],
                         err) != 0)
            goto out;
    }
    rc = 0;
out:
    for (int k = 0; k < n; k++) {
        if (c.streams[k] == NULL)
            continue;
        (void)cudaSetDevice(k);
        (void)cudaStreamSynchronize(c.streams[k]);
    }
    if (own != NULL)
        c.streams[device] = own;
    teardown(&c);
    gb_timer_destroy(&timer);
    return rc;
}
