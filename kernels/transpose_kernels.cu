/*
 * transpose_kernels.cu - the transpose benchmark's kernels, their check
 * and their timing.  See gb_kernels.h (gb_transpose_measure).
 *
 * All kernels move the matrix in 32 x 32 tiles with 32 x 8 threads (each
 * thread four elements), reading and writing global memory in 128-byte
 * rows; they differ only in the shared tile:
 *   copy            no tile, out[y][x] = in[y][x]: the ceiling's kernel;
 *   tile32          tile[32][32]: the column read is 32-way conflicted;
 *   tile33          tile[32][33]: one column of padding makes it free;
 *   tile32_swizzle  tile[32][32] with column c of row r stored at c ^ r:
 *                   conflict-free without the padding.
 * The ceiling's other half is a device-to-device cudaMemcpy of the same
 * bytes.  A sample is one CUDA graph of back-to-back launches (their
 * number calibrated), so host launch overhead is not timed.  Every
 * kernel's output is poisoned, written once, copied back and checked
 * element by element on the host (verify.c) before it is timed.
 * After every kernel is timed, each runs once more under CUPTI for its
 * hardware counters (counters_pass.cuh).
 */
#include <stdlib.h>
#include <string.h>

#include "counters_pass.cuh"
#include "cuda_check.cuh"
#include "measure.cuh"

static const int kTile = 32;
static const int kRows = 8;
static const long kMaxLaunches = 1L << 20;

__global__ void copy_tile(const float *__restrict__ in, float *__restrict__ out, int n)
{
    int x = blockIdx.x * kTile + threadIdx.x;
    int y = blockIdx.y * kTile + threadIdx.y;

    for (int j = 0; j < kTile; j += kRows)
        out[(size_t)(y + j) * n + x] = in[(size_t)(y + j) * n + x];
}

/* kPad extra columns; kSwizzle stores column c of row r at c ^ r. */
template <int kPad, bool kSwizzle>
__global__ void transpose_tile(const float *__restrict__ in, float *__restrict__ out, int n)
{
    __shared__ float tile[kTile][kTile + kPad];
    int x = blockIdx.x * kTile + threadIdx.x;
    int y = blockIdx.y * kTile + threadIdx.y;

    for (int j = 0; j < kTile; j += kRows) {
        int r = threadIdx.y + j;
        tile[r][kSwizzle ? (threadIdx.x ^ r) : threadIdx.x] = in[(size_t)(y + j) * n + x];
    }
    __syncthreads();
    x = blockIdx.y * kTile + threadIdx.x;
    y = blockIdx.x * kTile + threadIdx.y;
    for (int j = 0; j < kTile; j += kRows) {
        int c = threadIdx.y + j;
        out[(size_t)(y + j) * n + x] = tile[threadIdx.x][kSwizzle ? (c ^ threadIdx.x) : c];
    }
}

typedef void (*tile_kernel)(const float *, float *, int);

/* Indexed by enum gb_transpose_kernel. */
static const tile_kernel kKernels[GB_TRANSPOSE_KERNEL_COUNT] = {
    copy_tile,
    transpose_tile<0, false>,
    transpose_tile<1, false>,
    transpose_tile<0, true>,
};

static const char *const kLaunchNames[GB_TRANSPOSE_KERNEL_COUNT] = {
    "copy launch",
    "tile32 launch",
    "tile33 launch",
    "tile32_swizzle launch",
};

struct transpose_ctx {
    const float *in;
    float *out;
    int n;
    size_t bytes;
    enum gb_transpose_kernel kernel;
    const enum gb_transpose_kernel *kernels; /* the plan's, for the counter pass */
    /* Dynamic shared memory a block reserves: 0 when timed; in the counter
     * pass enough that one block fills an SM. */
    size_t alone_smem;
};

static void select_kernel(void *p, int i)
{
    struct transpose_ctx *c = (struct transpose_ctx *)p;

    c->kernel = c->kernels[i];
}

static int launch_kernel(void *p, long work, cudaStream_t stream,
                         struct gb_cuda_error *err)
{
    struct transpose_ctx *c = (struct transpose_ctx *)p;
    dim3 grid(c->n / kTile, c->n / kTile), block(kTile, kRows);

    for (long i = 0; i < work; i++) {
        kKernels[c->kernel]<<<grid, block, c->alone_smem, stream>>>(c->in, c->out, c->n);
        if (gb_cuda_check_launch(kLaunchNames[c->kernel], err) != 0)
            return -1;
    }
    return 0;
}

/* The counter pass runs one block an SM.  Beside other blocks, the
 * hardware also counts as bank conflicts the collisions of different
 * blocks' shared loads and stores in one bank (on an H200, n = 8192: tile33
 * 73,557 load and 72,477 store "conflicts" on 2,097,152 column reads at the
 * usual 8 blocks an SM; 0 and 0 alone, and tile32 exactly 31 x its
 * requests), which no per-instruction prediction describes.  The timed
 * launches keep the usual occupancy.  Reserving the largest dynamic shared
 * memory a block may have, less the tile, leaves room for one block. */
static int isolate_blocks(struct transpose_ctx *c, int device, struct gb_cuda_error *err)
{
    int optin = 0, blocks = 0;
    size_t tile = sizeof(float) * kTile * (kTile + 1);

    if (gb_cuda_check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                             device),
                      "cudaDeviceGetAttribute(MaxSharedMemoryPerBlockOptin)", err) != 0)
        return -1;
    c->alone_smem = (size_t)optin > tile ? (size_t)optin - tile : 0;
    for (int k = 0; k < GB_TRANSPOSE_KERNEL_COUNT; k++) {
        if (gb_cuda_check(cudaFuncSetAttribute(kKernels[k],
                                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               (int)c->alone_smem),
                          "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)", err) != 0 ||
            gb_cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                              &blocks, kKernels[k], kTile * kRows, c->alone_smem),
                          "cudaOccupancyMaxActiveBlocksPerMultiprocessor", err) != 0)
            return -1;
        if (blocks != 1)
            return gb_cuda_check(cudaErrorInvalidConfiguration,
                                 "one block an SM for the counter pass", err);
    }
    return 0;
}

static int launch_memcpy(void *p, long work, cudaStream_t stream,
                         struct gb_cuda_error *err)
{
    struct transpose_ctx *c = (struct transpose_ctx *)p;

    for (long i = 0; i < work; i++) {
        if (gb_cuda_check(cudaMemcpyAsync(c->out, c->in, c->bytes,
                                          cudaMemcpyDeviceToDevice, stream),
                          "cudaMemcpyAsync(device to device)", err) != 0)
            return -1;
    }
    return 0;
}

/* Poison, one launch, copy back, check every element. */
static int verify_once(struct transpose_ctx *c, struct gb_timer *timer,
                       const uint32_t *host_in, uint32_t *host_out,
                       struct gb_verify_report *report, struct gb_cuda_error *err)
{
    if (gb_cuda_check(cudaMemsetAsync(c->out, GB_POISON_BYTE, c->bytes, timer->stream),
                      "cudaMemsetAsync(poison)", err) != 0 ||
        launch_kernel(c, 1, timer->stream, err) != 0 ||
        gb_cuda_check(cudaStreamSynchronize(timer->stream), "cudaStreamSynchronize", err) != 0 ||
        gb_cuda_check(cudaMemcpy(host_out, c->out, c->bytes, cudaMemcpyDeviceToHost),
                      "cudaMemcpy(output to host)", err) != 0)
        return -1;
    gb_verify_matrix(host_in, host_out, c->n, c->kernel != GB_TRANSPOSE_COPY, report);
    return 0;
}

static int time_op(struct gb_timer *timer, gb_launch_fn launch, struct transpose_ctx *c,
                   const struct gb_measure_opts *opts, struct gb_hooks *hooks,
                   struct gb_samples *out, struct gb_cuda_error *err)
{
    return gb_measure_op(timer, launch, c, kMaxLaunches, 1, opts, hooks, out, err);
}

int gb_transpose_measure(int device, const struct gb_transpose_plan *plan,
                         const struct gb_measure_opts *opts,
                         struct gb_hooks *hooks, struct gb_transpose_timing *t,
                         struct gb_cuda_error *err)
{
    struct transpose_ctx c;
    struct gb_timer timer = {NULL, NULL, NULL};
    long long count = (long long)plan->n * plan->n;
    uint32_t *host_in = NULL, *host_out = NULL;
    float *d_in = NULL, *d_out = NULL;
    int rc = -1;

    memset(t, 0, sizeof(*t));
    t->failed_kernel = -1;
    t->count = plan->count;
    memset(&c, 0, sizeof(c));
    c.n = plan->n;
    c.kernels = plan->kernels;
    c.bytes = (size_t)count * sizeof(float);
    t->kernels = (struct gb_samples *)calloc((size_t)plan->count, sizeof(*t->kernels));
    t->verify = (struct gb_verify_report *)calloc((size_t)plan->count, sizeof(*t->verify));
    t->counters = (struct gb_counter_values *)calloc((size_t)plan->count, sizeof(*t->counters));
    host_in = (uint32_t *)malloc(c.bytes);
    host_out = (uint32_t *)malloc(c.bytes);
    if (t->kernels == NULL || t->verify == NULL || t->counters == NULL || host_in == NULL ||
        host_out == NULL) {
        gb_cuda_check(cudaErrorMemoryAllocation, "host allocation", err);
        goto out;
    }
    gb_fill_input(host_in, count, plan->seed);
    if (gb_cuda_check(cudaMalloc(&d_in, c.bytes), "cudaMalloc(in)", err) != 0 ||
        gb_cuda_check(cudaMalloc(&d_out, c.bytes), "cudaMalloc(out)", err) != 0 ||
        gb_cuda_check(cudaMemcpy(d_in, host_in, c.bytes, cudaMemcpyHostToDevice),
                      "cudaMemcpy(input to device)", err) != 0 ||
        gb_timer_create(&timer, err) != 0)
        goto out;
    c.in = d_in;
    c.out = d_out;

    if (time_op(&timer, launch_memcpy, &c, opts, hooks, &t->memcpy_d2d, err) != 0)
        goto out;
    for (int i = 0; i < plan->count; i++) {
        c.kernel = plan->kernels[i];
        if (verify_once(&c, &timer, host_in, host_out, &t->verify[i], err) != 0)
            goto out;
        if (t->verify[i].mismatches != 0) {
            t->failed_kernel = i;
            rc = 1;
            goto out;
        }
        if (time_op(&timer, launch_kernel, &c, opts, hooks, &t->kernels[i], err) != 0)
            goto out;
    }
    /* Counters in a pass of their own, once every kernel is timed: one
     * launch of each (one launch moves the whole matrix). */
    if (plan->counters != NULL &&
        (isolate_blocks(&c, device, err) != 0 ||
         gb_counter_pass(device, plan->counters, plan->count, select_kernel, launch_kernel, &c,
                         1, timer.stream, t->counters, err) != 0))
        goto out;
    rc = 0;

out:
    gb_timer_destroy(&timer);
    /* Frees are not checked: on the error path the first error stands. */
    if (d_in)
        (void)cudaFree(d_in);
    if (d_out)
        (void)cudaFree(d_out);
    free(host_in);
    free(host_out);
    return rc;
}
