/*
 * peaks.h - the peaks a measurement is a share of, each with its source:
 * per-architecture arithmetic rates (one table), the DRAM peak from the
 * device's attributes, and the bandwidth a PCIe link of a generation and
 * width predicts (one table).  Pure: numbers in, numbers out, so every
 * peak is unit-tested and the worker and the daemon cannot disagree.
 */
#ifndef GPUBENCH_COMMON_PEAKS_H
#define GPUBENCH_COMMON_PEAKS_H

#ifdef __cplusplus
extern "C" {
#endif

/* What compute_peak measures; the order of a gb_arch_peaks' rates. */
enum gb_compute_kind {
    GB_FP32_FMA,
    GB_FP64_FMA,
    GB_FP16X2_FMA,
    GB_GEMM_BF16,
    GB_GEMM_FP16,
    GB_GEMM_TF32,
    GB_COMPUTE_KIND_COUNT
};

/* "fp32_fma", ..., "gemm_tf32"; "?" out of range. */
const char *gb_compute_kind_name(enum gb_compute_kind k);

/* One architecture: FLOPs per clock per SM of each kind (an FMA lane
 * counts 2, a half2 FMA lane 4; tensor rates are DENSE, without
 * sparsity), and where each figure comes from. */
struct gb_arch_peaks {
    int cc_major, cc_minor;
    const char *name;
    double flops_per_clock_per_sm[GB_COMPUTE_KIND_COUNT];
    const char *source;
    double quoted_tensor_clock_mhz; /* the SM clock the datasheets' dense
                                     * tensor TFLOPS imply (rate x SMs x it) */
};

/* The entry of compute capability major.minor, or NULL (no figures: the
 * rows' peak is then null and says so).  Static storage. */
const struct gb_arch_peaks *gb_arch_peaks_find(int cc_major, int cc_minor);

/* SMs x FLOPs per clock per SM x clock, in TFLOP/s; 0 where a is NULL or
 * an input is not positive. */
double gb_compute_peak_tflops(const struct gb_arch_peaks *a, enum gb_compute_kind k,
                              int sm_count, double clock_mhz);

/* DRAM peak in GB/s: memory clock (kHz, cudaDevAttrMemoryClockRate) x
 * bus width (bits, cudaDevAttrGlobalMemoryBusWidth) / 8 x 2 (double data
 * rate).  0 when an input is not positive. */
double gb_dram_peak_gbps(double mem_clock_khz, int bus_width_bits);

/* PCIe: the transfer rate of one lane of a generation (GT/s) and the
 * share of it that carries data after line encoding (8b/10b for 1-2,
 * 128b/130b for 3-5, FLIT 242/256 for 6). */
struct gb_pcie_gen {
    int gen;
    double gt_per_s;
    double encoding;
    const char *source;
};

/* The entry of generation gen (1..6), or NULL.  Static storage. */
const struct gb_pcie_gen *gb_pcie_gen_find(int gen);

/* One direction's bandwidth in GB/s a link of gen x width predicts:
 * GT/s x width x encoding / 8.  0 for an unknown generation or width < 1. */
double gb_pcie_link_gbps(int gen, int width);

#ifdef __cplusplus
}
#endif

#endif
