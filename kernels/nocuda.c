/*
 * nocuda.c - the GPU backend where no CUDA compiler was found at build
 * time.  Every call answers that the worker was built without CUDA, so the
 * worker still builds, `--list` prints an empty list with that reason, and
 * the server refuses runs with it instead of queueing them forever.
 */
#include <stdio.h>
#include <string.h>

#include "gb_kernels.h"
#include "gb_deep.h"
#include "gb_perf.h"

#define NO_CUDA "gpubench-worker was built without CUDA (CUDA disabled or no " \
                "nvcc found at configure time); rebuild with the CUDA toolkit"

static int no_cuda(struct gb_cuda_error *err, const char *call)
{
    memset(err, 0, sizeof(*err));
    snprintf(err->call, sizeof(err->call), "%s", call);
    snprintf(err->name, sizeof(err->name), "no_cuda");
    snprintf(err->text, sizeof(err->text), "%s", NO_CUDA);
    return -1;
}

int gb_backend_has_cuda(void)
{
    return 0;
}

int gb_device_count(int *count, char *reason, size_t reason_cap)
{
    *count = 0;
    snprintf(reason, reason_cap, "%s", NO_CUDA);
    return -1;
}

int gb_device_query(int index, struct gb_device_info *out,
                    struct gb_cuda_error *err)
{
    (void)index;
    memset(out, 0, sizeof(*out));
    return no_cuda(err, "gb_device_query");
}

int gb_device_open(int index, struct gb_cuda_error *err)
{
    (void)index;
    return no_cuda(err, "gb_device_open");
}

void gb_cuda_versions(int *driver, int *runtime)
{
    *driver = 0;
    *runtime = 0;
}

int gb_fault_illegal_address(struct gb_cuda_error *err)
{
    return no_cuda(err, "gb_fault_illegal_address");
}

int gb_hang_forever(struct gb_cuda_error *err)
{
    return no_cuda(err, "gb_hang_forever");
}

int gb_smem_measure(int device, const struct gb_smem_plan *plan,
                    const struct gb_measure_opts *opts, struct gb_hooks *hooks,
                    struct gb_smem_timing *t, struct gb_cuda_error *err)
{
    (void)device, (void)plan, (void)opts, (void)hooks;
    memset(t, 0, sizeof(*t));
    return no_cuda(err, "gb_smem_measure");
}

int gb_transpose_measure(int device, const struct gb_transpose_plan *plan,
                         const struct gb_measure_opts *opts,
                         struct gb_hooks *hooks, struct gb_transpose_timing *t,
                         struct gb_cuda_error *err)
{
    (void)device, (void)plan, (void)opts, (void)hooks;
    memset(t, 0, sizeof(*t));
    t->failed_kernel = -1;
    return no_cuda(err, "gb_transpose_measure");
}

void gb_counters_probe(struct gb_counters_state *st)
{
    if (gb_counters_wanted(st))
        gb_counters_fail(st, GB_COUNTERS_NO_CUDA, NULL);
}

int gb_gmem_stride_measure(int device, const long *strides, int count,
                           long long footprint_bytes, int l2_fetch_bytes, int *l2_fetch_used,
                           struct gb_counters_state *counters,
                           const struct gb_measure_opts *opts, struct gb_hooks *hooks,
                           struct gb_perf_op *ops, struct gb_cuda_error *err)
{
    (void)device, (void)strides, (void)count, (void)footprint_bytes, (void)counters;
    (void)l2_fetch_bytes;
    *l2_fetch_used = 0;
    (void)opts, (void)hooks, (void)ops;
    return no_cuda(err, __func__);
}

int gb_hbm_measure(int device, long long elements, const struct gb_measure_opts *opts,
                   struct gb_hooks *hooks, struct gb_perf_op *ops, struct gb_cuda_error *err)
{
    (void)device, (void)elements, (void)opts, (void)hooks, (void)ops;
    return no_cuda(err, __func__);
}

int gb_compute_measure(int device, const int *kinds, int count, int gemm_n,
                       const struct gb_measure_opts *opts, struct gb_hooks *hooks,
                       struct gb_perf_op *ops, struct gb_cuda_error *err)
{
    (void)device, (void)kinds, (void)count, (void)gemm_n, (void)opts, (void)hooks, (void)ops;
    return no_cuda(err, __func__);
}

int gb_pcie_measure(int device, const long long *sizes, int count, int memories,
                    const struct gb_measure_opts *opts, struct gb_hooks *hooks,
                    struct gb_perf_op *ops, struct gb_cuda_error *err)
{
    (void)device, (void)sizes, (void)count, (void)opts, (void)hooks, (void)ops;
    (void)memories;
    return no_cuda(err, __func__);
}

int gb_p2p_measure(int device, long long bytes, const struct gb_measure_opts *opts,
                   struct gb_hooks *hooks, struct gb_perf_op *ops, int cap, int *op_count,
                   int *devices, struct gb_cuda_error *err)
{
    (void)device, (void)bytes, (void)opts, (void)hooks, (void)ops, (void)cap;
    *op_count = 0;
    *devices = 0;
    return no_cuda(err, __func__);
}

int gb_nccl_measure(int device, const long long *sizes, int count, int dtype,
                    const struct gb_measure_opts *opts, struct gb_hooks *hooks,
                    struct gb_perf_op *ops, int *ranks, char *version, size_t version_cap,
                    struct gb_cuda_error *err)
{
    (void)device, (void)sizes, (void)count, (void)dtype, (void)opts, (void)hooks, (void)ops;
    *ranks = 0;
    if (version_cap > 0)
        version[0] = '\0';
    return no_cuda(err, __func__);
}

int gb_nccl_probe(char *version, size_t version_cap, char *reason, size_t reason_cap)
{
    if (version_cap > 0)
        version[0] = '\0';
    snprintf(reason, reason_cap, "%s", NO_CUDA);
    return -1;
}

int gb_known_answer_run(int device, int kind, double seconds, struct gb_ka_result *out,
                        struct gb_cuda_error *err)
{
    (void)device, (void)kind, (void)seconds;
    memset(out, 0, sizeof(*out));
    return no_cuda(err, __func__);
}

int gb_memtest_run(int device, double fraction, const int *patterns, int count, int passes,
                   uint64_t seed, struct gb_hooks *hooks, struct gb_memtest_result *out,
                   struct gb_cuda_error *err)
{
    (void)device, (void)fraction, (void)patterns, (void)count, (void)passes, (void)seed;
    (void)hooks;
    memset(out, 0, sizeof(*out));
    return no_cuda(err, __func__);
}

int gb_soak_run(int device, double seconds, int cap, gb_soak_tick_fn tick, void *arg,
                struct gb_soak_result *out, struct gb_cuda_error *err)
{
    (void)device, (void)seconds, (void)cap, (void)tick, (void)arg, (void)out;
    return no_cuda(err, __func__);
}
