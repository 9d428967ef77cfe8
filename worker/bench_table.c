/*
 * bench_table.c - which benchmark runs and prints through which function;
 * see bench_table.h.  Adding a benchmark is a line in common/bench_spec.c
 * (its parameters) and a line here (its code).
 */
#include "bench_table.h"
#include "table.h"

#include <stdio.h>
#include <string.h>

static const struct gb_bench_impl impls[] = {
    {"smem_stride", gb_bench_smem_stride, gb_table_smem_stride},
    {"smem_pattern", gb_bench_smem_pattern, gb_table_smem_pattern},
    {"transpose", gb_bench_transpose, gb_table_transpose},
    {"gmem_stride", gb_bench_gmem_stride, gb_table_peaks},
    {"hbm_bandwidth", gb_bench_hbm_bandwidth, gb_table_peaks},
    {"compute_peak", gb_bench_compute_peak, gb_table_peaks},
    {"pcie_bandwidth", gb_bench_pcie_bandwidth, gb_table_peaks},
    {"p2p_bandwidth", gb_bench_p2p_bandwidth, gb_table_peaks},
    {"nccl_allreduce", gb_bench_nccl_allreduce, gb_table_peaks},
    {"known_answer", gb_bench_known_answer, gb_table_deep},
    {"memtest", gb_bench_memtest, gb_table_deep},
    {"soak", gb_bench_soak, gb_table_deep},
    {"test_fault", gb_bench_test_fault, NULL},
    {"test_hang", gb_bench_test_hang, NULL},
};

#define IMPL_COUNT (sizeof(impls) / sizeof(impls[0]))

const struct gb_bench_impl *gb_bench_impl_for(const struct gb_benchmark *spec)
{
    for (size_t i = 0; spec && i < IMPL_COUNT; i++)
        if (strcmp(impls[i].name, spec->name) == 0)
            return &impls[i];
    return NULL;
}

const struct gb_bench_impl *gb_bench_impl_find(const char *name)
{
    return name ? gb_bench_impl_for(gb_benchmark_find(name)) : NULL;
}

void gb_bench_impl_names(char *buf, size_t cap)
{
    size_t used = 0;

    if (cap == 0)
        return;
    buf[0] = '\0';
    for (size_t i = 0; i < IMPL_COUNT && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", impls[i].name);
}
