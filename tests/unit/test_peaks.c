/* Issue 16's predictions: sectors per warp request (common/predict.c), and
 * the peaks of common/peaks.c (arithmetic table, DRAM from attributes, PCIe
 * link), on the H200's own attributes; and the new benchmarks' parameter
 * bounds and health forms in the one table. */
#include <stdlib.h>

#include "bench_spec.h"
#include "peaks.h"
#include "predict.h"
#include "test.h"

static int test_sectors_for_stride(void)
{
    /* 4-byte words, 32-byte sectors: 8 lanes a sector at stride 1. */
    static const struct {
        long stride;
        int sectors;
    } cases[] = {
        {1, 4},
        {2, 8},
        {3, 12},
        {4, 16},
        {5, 20},
        {7, 28},
        {8, 32},
        {9, 32},
        {16, 32},
        {32, 32},
        {33, 32},
        {1024, 32},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ASSERT_EQ(gb_sectors_for_stride(cases[i].stride), cases[i].sectors);
    ASSERT_EQ(gb_sectors_for_stride(0), 0);
    return 0;
}

static int test_sectors_for_words(void)
{
    long words[GB_WARP_LANES];

    for (int l = 0; l < GB_WARP_LANES; l++)
        words[l] = 0; /* one word for all: one sector */
    ASSERT_EQ(gb_sectors_for_words(words), 1);
    for (int l = 0; l < GB_WARP_LANES; l++)
        words[l] = (l % 2) * 8; /* words 0 and 8: sectors 0 and 1 */
    ASSERT_EQ(gb_sectors_for_words(words), 2);
    for (int l = 0; l < GB_WARP_LANES; l++)
        words[l] = 31 - l; /* a permutation of one 128-byte line */
    ASSERT_EQ(gb_sectors_for_words(words), 4);
    words[3] = -1;
    ASSERT_EQ(gb_sectors_for_words(words), 0);
    return 0;
}

/* H200: 132 SMs at 1980 MHz; the whitepaper's H100 SXM5 figures come
 * back at 1830 MHz for the tensor rates. */
static int test_compute_peaks(void)
{
    const struct gb_arch_peaks *h = gb_arch_peaks_find(9, 0);

    ASSERT(h != NULL);
    ASSERT_NEAR(gb_compute_peak_tflops(h, GB_FP32_FMA, 132, 1980), 66.91, 0.01);
    ASSERT_NEAR(gb_compute_peak_tflops(h, GB_FP64_FMA, 132, 1980), 33.45, 0.01);
    ASSERT_NEAR(gb_compute_peak_tflops(h, GB_FP16X2_FMA, 132, 1980), 133.82, 0.01);
    ASSERT_NEAR(gb_compute_peak_tflops(h, GB_GEMM_BF16, 132, 1830), 989.43, 0.01);
    ASSERT_NEAR(gb_compute_peak_tflops(h, GB_GEMM_FP16, 132, 1830), 989.43, 0.01);
    ASSERT_NEAR(gb_compute_peak_tflops(h, GB_GEMM_TF32, 132, 1830), 494.71, 0.01);
    ASSERT_NEAR(h->quoted_tensor_clock_mhz, 1830, 0);
    ASSERT_NEAR(gb_compute_peak_tflops(gb_arch_peaks_find(8, 0), GB_GEMM_BF16, 108, 1410),
                311.87, 0.01);
    ASSERT(gb_arch_peaks_find(7, 5) == NULL);
    ASSERT_NEAR(gb_compute_peak_tflops(NULL, GB_FP32_FMA, 132, 1980), 0, 0);
    ASSERT_NEAR(gb_compute_peak_tflops(h, GB_FP32_FMA, 132, 0), 0, 0);
    ASSERT_STR_EQ(gb_compute_kind_name(GB_GEMM_TF32), "gemm_tf32");
    return 0;
}

/* The H200's attributes as the worker read them: 3201 MHz, 6016 bits. */
static int test_dram_peak(void)
{
    ASSERT_NEAR(gb_dram_peak_gbps(3201000, 6016), 4814.30, 0.01);
    ASSERT_NEAR(gb_dram_peak_gbps(0, 6016), 0, 0);
    ASSERT_NEAR(gb_dram_peak_gbps(3201000, 0), 0, 0);
    return 0;
}

static int test_pcie_link(void)
{
    ASSERT_NEAR(gb_pcie_link_gbps(5, 16), 63.015, 0.001);
    ASSERT_NEAR(gb_pcie_link_gbps(4, 16), 31.508, 0.001);
    ASSERT_NEAR(gb_pcie_link_gbps(3, 16), 15.754, 0.001);
    ASSERT_NEAR(gb_pcie_link_gbps(5, 8), 31.508, 0.001);
    ASSERT_NEAR(gb_pcie_link_gbps(2, 16), 8.0, 1e-9);
    ASSERT_NEAR(gb_pcie_link_gbps(1, 1), 0.25, 1e-9);
    ASSERT_NEAR(gb_pcie_link_gbps(6, 16), 121.0, 1e-9);
    ASSERT_NEAR(gb_pcie_link_gbps(7, 16), 0, 0);
    ASSERT_NEAR(gb_pcie_link_gbps(5, 0), 0, 0);
    return 0;
}

static int refused(const char *bench, const char *params_json, const char *code)
{
    struct gb_error err;
    cJSON *p = cJSON_Parse(params_json), *r;
    int ok;

    memset(&err, 0, sizeof(err));
    r = gb_params_resolve(gb_benchmark_find(bench), p, &err);
    ok = r == NULL && strcmp(err.code, code) == 0;
    cJSON_Delete(r);
    cJSON_Delete(p);
    return ok;
}

static int test_new_benchmark_bounds(void)
{
    ASSERT(refused("gmem_stride", "{\"strides\":[0]}", "out_of_bounds"));
    ASSERT(refused("gmem_stride", "{\"strides\":[1,1]}", "duplicate"));
    ASSERT(refused("gmem_stride", "{\"footprint_mib\":-1}", "out_of_bounds"));
    ASSERT(refused("hbm_bandwidth", "{\"array_mib\":40000}", "out_of_bounds"));
    ASSERT(refused("compute_peak", "{\"kinds\":[\"fp8\"]}", "out_of_bounds"));
    ASSERT(refused("compute_peak", "{\"gemm_n\":1000}", "out_of_bounds"));
    ASSERT(refused("compute_peak", "{\"gemm_n\":4100}", "out_of_bounds"));
    ASSERT(refused("pcie_bandwidth", "{\"sizes_kib\":[2]}", "out_of_bounds"));
    ASSERT(refused("p2p_bandwidth", "{\"size_mib\":0}", "out_of_bounds"));
    ASSERT(!refused("p2p_bandwidth", "{\"size_mib\":4096}", "out_of_bounds"));
    return 0;
}

/* Every health form resolves against its own benchmark's bounds, and only
 * p2p needs every GPU of the node. */
static int test_health_params(void)
{
    /* The five of issue 16, and the short forms of the first two
     * benchmarks that the suite runs too. */
    static const char *const five[] = {"gmem_stride", "hbm_bandwidth", "compute_peak",
                                       "pcie_bandwidth", "p2p_bandwidth", "smem_stride",
                                       "transpose"};
    for (size_t i = 0; i < sizeof(five) / sizeof(five[0]); i++) {
        const struct gb_benchmark *b = gb_benchmark_find(five[i]);
        struct gb_error err;
        cJSON *p, *r;
        ASSERT(b != NULL && b->health_params != NULL);
        p = cJSON_Parse(b->health_params);
        ASSERT(p != NULL);
        r = gb_params_resolve(b, p, &err);
        cJSON_Delete(p);
        ASSERT(r != NULL);
        cJSON_Delete(r);
        ASSERT_EQ(b->all_devices, strcmp(five[i], "p2p_bandwidth") == 0);
    }
    ASSERT(gb_benchmark_find("smem_pattern")->health_params == NULL);
    return 0;
}

TEST_MAIN({"sectors per request for strides", test_sectors_for_stride},
          {"sectors for word lists", test_sectors_for_words},
          {"FMA and tensor peaks from the table", test_compute_peaks},
          {"DRAM peak from attributes", test_dram_peak},
          {"PCIe link bandwidth by generation and width", test_pcie_link},
          {"new benchmarks' parameter bounds", test_new_benchmark_bounds},
          {"health forms resolve; all_devices only for p2p", test_health_params})
