/*
 * test_benchmarks.c - test_fault and test_hang, the two benchmarks that
 * exist only to prove the daemon survives a worker whose GPU context dies
 * (an illegal address: reported by name, then the worker exits) and one
 * whose kernel never ends (the run's deadline kills the worker).  The
 * shared table (common/bench_spec.c) marks them test_only, so the daemon
 * offers them only when told to.
 */
#include <string.h>

#include "bench.h"

int gb_bench_test_fault(const struct gb_bench_env *env, const cJSON *params,
                        cJSON **result, struct gb_job_error *err)
{
    struct gb_cuda_error cuda;

    (void)env, (void)params;
    *result = NULL;
    memset(&cuda, 0, sizeof(cuda));
    if (gb_fault_illegal_address(&cuda) != 0)
        return gb_job_fail_cuda(err, &cuda);
    return gb_job_fail(err, "internal", "the fault kernel did not fault");
}

int gb_bench_test_hang(const struct gb_bench_env *env, const cJSON *params,
                       cJSON **result, struct gb_job_error *err)
{
    struct gb_cuda_error cuda;

    (void)env, (void)params;
    *result = NULL;
    memset(&cuda, 0, sizeof(cuda));
    if (gb_hang_forever(&cuda) != 0)
        return gb_job_fail_cuda(err, &cuda);
    return gb_job_fail(err, "internal", "the hanging kernel ended");
}
