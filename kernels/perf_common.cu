/*
 * perf_common.cu - device shape and one op's timing; see perf_common.cuh.
 */
#include "cuda_check.cuh"
#include "perf_common.cuh"

int gb_perf_device_shape(int device, int *sm_count, int *threads_per_sm,
                         struct gb_cuda_error *err)
{
    if (gb_cuda_check(cudaDeviceGetAttribute(sm_count, cudaDevAttrMultiProcessorCount, device),
                      "cudaDeviceGetAttribute(SMs)", err) != 0 ||
        gb_cuda_check(cudaDeviceGetAttribute(threads_per_sm,
                                             cudaDevAttrMaxThreadsPerMultiProcessor, device),
                      "cudaDeviceGetAttribute(threads per SM)", err) != 0)
        return -1;
    return 0;
}

int gb_perf_time(struct gb_timer *t, gb_launch_fn launch, void *ctx, long max_work,
                 int use_graph, const struct gb_measure_opts *opts, struct gb_hooks *hooks,
                 struct gb_perf_op *op, struct gb_cuda_error *err)
{
    if (gb_measure_op(t, launch, ctx, max_work, use_graph, opts, hooks, &op->s, err) != 0)
        return -1;
    op->available = 1;
    return 0;
}
