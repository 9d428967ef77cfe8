/*
 * peaks.c - the tables of peaks and their arithmetic; see peaks.h.
 *
 * Why per clock per SM and not a datasheet's TFLOP/s: the datasheets quote
 * one clock for a whole product line, while the worker measures the clock
 * its kernels ran at (compute_peak's FMA rows) and knows the card's SM
 * count; rate x SMs x clock is the peak of THIS card at THAT clock.
 */
#include "peaks.h"

#include <stddef.h>

static const char *const kind_names[GB_COMPUTE_KIND_COUNT] = {
    "fp32_fma",
    "fp64_fma",
    "fp16x2_fma",
    "gemm_bf16",
    "gemm_fp16",
    "gemm_tf32",
};

const char *gb_compute_kind_name(enum gb_compute_kind k)
{
    return (int)k >= 0 && k < GB_COMPUTE_KIND_COUNT ? kind_names[k] : "?";
}

static const char hopper_source[] =
    "NVIDIA H100 Tensor Core GPU Architecture whitepaper (Hopper), per SM: 128 FP32 "
    "and 64 FP64 FMA lanes, FP16 (non-tensor) at 2x FP32; dense tensor FP16/BF16 "
    "1024 and TF32 512 FMA a clock (H100 SXM5 table: 989.4 / 494.7 dense TFLOPS = "
    "132 SMs x 4096 / 2048 x 1830 MHz; the H200 datasheet quotes the same 1,979 / "
    "989 TFLOPS with sparsity)";

static const char ampere_source[] =
    "NVIDIA A100 Tensor Core GPU Architecture whitepaper: per SM 64 FP32 and 32 FP64 "
    "FMA lanes, FP16 (non-tensor) 4x FP32; dense tensor FP16/BF16 1024 and TF32 512 "
    "FMA a clock (A100 SXM: 312 / 156 dense TFLOPS = 108 SMs x 2048 / 1024 x 1410 MHz)";

static const struct gb_arch_peaks arch_table[] = {
    {.cc_major = 9,
     .cc_minor = 0,
     .name = "Hopper (H100, H200)",
     .flops_per_clock_per_sm = {256, 128, 512, 4096, 4096, 2048},
     .source = hopper_source,
     .quoted_tensor_clock_mhz = 1830},
    {.cc_major = 8,
     .cc_minor = 0,
     .name = "Ampere (A100)",
     .flops_per_clock_per_sm = {128, 64, 512, 2048, 2048, 1024},
     .source = ampere_source,
     .quoted_tensor_clock_mhz = 1410},
};

const struct gb_arch_peaks *gb_arch_peaks_find(int cc_major, int cc_minor)
{
    for (size_t i = 0; i < sizeof(arch_table) / sizeof(arch_table[0]); i++)
        if (arch_table[i].cc_major == cc_major && arch_table[i].cc_minor == cc_minor)
            return &arch_table[i];
    return NULL;
}

double gb_compute_peak_tflops(const struct gb_arch_peaks *a, enum gb_compute_kind k,
                              int sm_count, double clock_mhz)
{
    if (a == NULL || (int)k < 0 || k >= GB_COMPUTE_KIND_COUNT || sm_count < 1 ||
        !(clock_mhz > 0))
        return 0;
    return a->flops_per_clock_per_sm[k] * sm_count * clock_mhz * 1e6 / 1e12;
}

double gb_dram_peak_gbps(double mem_clock_khz, int bus_width_bits)
{
    if (!(mem_clock_khz > 0) || bus_width_bits < 1)
        return 0;
    return mem_clock_khz * 1e3 * (bus_width_bits / 8.0) * 2.0 / 1e9;
}

static const struct gb_pcie_gen pcie_table[] = {
    {1, 2.5, 8.0 / 10.0, "PCI Express Base Specification 1.1: 2.5 GT/s, 8b/10b"},
    {2, 5.0, 8.0 / 10.0, "PCI Express Base Specification 2.0: 5.0 GT/s, 8b/10b"},
    {3, 8.0, 128.0 / 130.0, "PCI Express Base Specification 3.0: 8.0 GT/s, 128b/130b"},
    {4, 16.0, 128.0 / 130.0, "PCI Express Base Specification 4.0: 16.0 GT/s, 128b/130b"},
    {5, 32.0, 128.0 / 130.0, "PCI Express Base Specification 5.0: 32.0 GT/s, 128b/130b"},
    {6, 64.0, 242.0 / 256.0,
     "PCI Express Base Specification 6.0: 64 GT/s PAM4, 256-byte FLITs with 242 bytes of TLP"},
};

const struct gb_pcie_gen *gb_pcie_gen_find(int gen)
{
    for (size_t i = 0; i < sizeof(pcie_table) / sizeof(pcie_table[0]); i++)
        if (pcie_table[i].gen == gen)
            return &pcie_table[i];
    return NULL;
}

double gb_pcie_link_gbps(int gen, int width)
{
    const struct gb_pcie_gen *g = gb_pcie_gen_find(gen);

    if (g == NULL || width < 1)
        return 0;
    return g->gt_per_s * width * g->encoding / 8.0;
}
