/*
 * gb_perf.h - the C face of the GPU backend for the memory, compute and link benchmarks
 * (gmem_stride, hbm_bandwidth, compute_peak, pcie_bandwidth,
 * p2p_bandwidth).  Same conventions as gb_kernels.h: 0 on success, -1 on
 * a CUDA failure described in err, 1 when an output failed its check (the
 * op's mismatches say how; nothing after it was timed).
 *
 * Every benchmark is a list of operations (struct gb_perf_op), each timed
 * the same way (measure.cuh: warm-up, calibration, samples, hooks for the
 * quiet card and the watch), each verified before it is timed (output
 * poisoned, every element checked).  A sample's time is per work unit
 * (ms / work), and `amount` is what one work unit moves or computes, so
 * every rate is amount / median, one formula for all five.
 */
#ifndef GPUBENCH_KERNELS_GB_PERF_H
#define GPUBENCH_KERNELS_GB_PERF_H

#include "gb_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gb_perf_op {
    char label[64];
    int available; /* 0: not measured; reason says why */
    char reason[200];
    struct gb_samples s;               /* ms per work unit */
    double amount;                     /* bytes or FLOPs per work unit */
    double clock_mhz;                  /* SM clock measured on the SM (median), 0: none */
    long long checked;                 /* output elements verified */
    long long mismatches;              /* of them wrong (or never written) */
    double max_error;                  /* largest |error| / tolerance scale seen */
    struct gb_counter_values counters; /* one launch's counts (gmem_stride) */
    long counter_requests;             /* warp load requests in that launch */
    int src, dst;                      /* p2p: device indices; -1 otherwise */
    int peer;                          /* p2p: through peer access */
    int bidirectional;                 /* p2p: both directions at once */
};

/* Frees every op's samples (the array itself is the caller's). */
void gb_perf_ops_free(struct gb_perf_op *ops, int count);

/* gmem_stride: ops[i] for strides[i]; lane L of each warp request reads
 * word base + L * stride, base 128-byte aligned, the requests sweeping
 * footprint_bytes.  amount = bytes the warps asked for.  l2_fetch_bytes
 * (0: leave the driver's) is set as the L2's DRAM fetch granularity for
 * the measurement and the previous value put back; *l2_fetch_used is the
 * granularity read back while measuring. */
int gb_gmem_stride_measure(int device, const long *strides, int count,
                           long long footprint_bytes, int l2_fetch_bytes, int *l2_fetch_used,
                           struct gb_counters_state *counters,
                           const struct gb_measure_opts *opts, struct gb_hooks *hooks,
                           struct gb_perf_op *ops, struct gb_cuda_error *err);

/* hbm_bandwidth: ops[0..4] = copy, scale, add, triad, device-to-device
 * cudaMemcpy of one array; arrays of `elements` doubles. */
#define GB_HBM_OPS 5
int gb_hbm_measure(int device, long long elements, const struct gb_measure_opts *opts,
                   struct gb_hooks *hooks, struct gb_perf_op *ops, struct gb_cuda_error *err);

/* compute_peak: ops[i] for kinds[i] (enum gb_compute_kind of peaks.h);
 * GEMM rows n x n x n through cuBLAS (dlopen); a GEMM row that cannot run
 * is left available = 0 with its reason. */
int gb_compute_measure(int device, const int *kinds, int count, int gemm_n,
                       const struct gb_measure_opts *opts, struct gb_hooks *hooks,
                       struct gb_perf_op *ops, struct gb_cuda_error *err);

/* pcie_bandwidth: for each size, those of h2d pinned, d2h pinned, h2d
 * pageable, d2h pageable whose memory is in `memories`, in that order
 * (2 or 4 ops a size, packed). */
#define GB_PCIE_PINNED 1
#define GB_PCIE_PAGEABLE 2
/* Mode m (0 h2d pinned, 1 d2h pinned, 2 h2d pageable, 3 d2h pageable) is
 * measured when its memory is in the mask. */
static inline int gb_pcie_mode_on(int memories, int m)
{
    return (memories & (m < 2 ? GB_PCIE_PINNED : GB_PCIE_PAGEABLE)) != 0;
}
int gb_pcie_measure(int device, const long long *sizes, int count, int memories,
                    const struct gb_measure_opts *opts, struct gb_hooks *hooks,
                    struct gb_perf_op *ops, struct gb_cuda_error *err);

/* p2p_bandwidth: the node's devices (*devices of them; at most cap ops);
 * for every ordered pair a bandwidth op of `bytes` and a latency op of 8
 * bytes, and for every unordered pair a bidirectional op.  *op_count is
 * how many were filled. */
int gb_p2p_measure(int device, long long bytes, const struct gb_measure_opts *opts,
                   struct gb_hooks *hooks, struct gb_perf_op *ops, int cap, int *op_count,
                   int *devices, struct gb_cuda_error *err);

/* nccl_allreduce (nccl_kernels.cu): every GPU of the node (*ranks of
 * them, at most GB_NCCL_MAX_RANKS), one communicator a GPU
 * (ncclCommInitAll), ops[i] for sizes[i] bytes of dtype (enum
 * gb_nccl_dtype), summed in place.  Each size is verified before it is
 * timed: rank r fills r + 1, one all-reduce, every element of every rank
 * must hold n(n+1)/2 bit for bit (checked, mismatches).  A sample is
 * `work` all-reduces (each one group over every rank) between events on
 * the device's stream, which waits for every rank's; amount = bytes x
 * 2(n-1)/n, so the op's rate is the bus bandwidth.  Where NCCL cannot be
 * loaded every op is left available = 0 with the reason and 0 returned;
 * on a node of one GPU nothing is measured (0, *ranks 1).  version gets
 * NCCL's ("2.21.5") or "".  The ops' labels are the caller's. */
#define GB_NCCL_MAX_RANKS 16

/* Loads NCCL as nccl_allreduce does (no GPU needed): 0 with its version
 * ("2.28.9") in version, or -1 with why in reason (built without CUDA,
 * library missing or too old). */
int gb_nccl_probe(char *version, size_t version_cap, char *reason, size_t reason_cap);
int gb_nccl_measure(int device, const long long *sizes, int count, int dtype,
                    const struct gb_measure_opts *opts, struct gb_hooks *hooks,
                    struct gb_perf_op *ops, int *ranks, char *version, size_t version_cap,
                    struct gb_cuda_error *err);

#ifdef __cplusplus
}
#endif

#endif
