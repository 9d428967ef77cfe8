/*
 * bench_spec.c - the benchmark table and the parameter checks; see
 * bench_spec.h.  Each check names the field it refused, so that a user who
 * typed "stides" or a stride of 0 learns exactly what to change.
 */
#include "bench_spec.h"
#include "json_build.h"
#include "json_items.h"
#include "work_units.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const counters_choices[] = {"auto", "on", "off", NULL};
static const char *const quiet_choices[] = {"wait", "check", "off", NULL};

/* Parameters every measuring benchmark takes: how many timed samples, the
 * least time a sample must last so that launch overhead is noise,
 * whether to read the shared-memory hardware counters (in a pass of their
 * own after the timed samples; auto reads them where the driver allows),
 * whether to wait for a quiet card first (a run beside another
 * process's kernels measured 47x for a 32-way conflict), and an optional
 * precision of the median that samples are added until (max_samples is
 * only read with precision; its lower bound is the samples default).
 * Laid out by hand: clang-format indents every initializer of a macro's
 * list but the first as a continuation line. */
/* clang-format off */
#define QUIET_PARAMS                                                        \
    {.name = "quiet", .type = GB_PARAM_CHOICE,                              \
     .help = "before the first timed sample, look through NVML for other "  \
             "processes on the card and its utilisation: wait (until none " \
             "and under 5% for 1 s, up to quiet_wait_s; then measure "      \
             "anyway and say so), check (measure at once, record what was " \
             "found), off",                                                 \
     .choices = quiet_choices, .default_json = "\"wait\""},                 \
    {.name = "quiet_wait_s", .type = GB_PARAM_NUMBER,                       \
     .help = "the longest quiet: wait waits for a quiet card, in seconds",  \
     .min = 0, .max = 600, .default_json = "30"}
#define MEASURE_PARAMS                                                      \
    {.name = "samples", .type = GB_PARAM_INT,                               \
     .help = "timed samples after warm-up; every one is stored",            \
     .min = 3, .max = 1000, .default_json = "20"},                          \
    {.name = "min_sample_ms", .type = GB_PARAM_NUMBER,                      \
     .help = "least duration of one sample; the work per sample is "        \
             "calibrated up to it",                                         \
     .min = 0.05, .max = 1000, .default_json = "1"},                        \
    {.name = "counters", .type = GB_PARAM_CHOICE,                           \
     .help = "shared-memory bank conflicts and wavefronts through CUPTI, "  \
             "one launch per row after the timed samples: auto (where "     \
             "the driver allows), on (fail the run if they cannot be "      \
             "read), off",                                                  \
     .choices = counters_choices, .default_json = "\"auto\""},              \
    QUIET_PARAMS,                                                           \
    {.name = "precision", .type = GB_PARAM_NUMBER,                          \
     .help = "optional: take samples in rounds until every row's 95% "      \
             "interval of the median has a half-width within this share "   \
             "of the median (0.005 = 0.5%), or max_samples, or the run's "  \
             "deadline; without it the sample count is `samples`",          \
     .min = 0.0005, .max = 0.5},                                            \
    {.name = "max_samples", .type = GB_PARAM_INT,                           \
     .help = "with precision: the most timed samples a row may take",       \
     .min = 20, .max = 10000, .default_json = "200"}
/* clang-format on */

static const struct gb_param smem_stride_params[] = {
    {
        .name = "strides",
        .measures = 1,
        .type = GB_PARAM_INT_LIST,
        .help = "word strides; lane L reads 32-bit word L*stride",
        .min = 1,
        .max = 1024,
        .min_items = 1,
        .max_items = 64,
        .unique = 1,
        .default_json = "[1,2,4,8,16,32,33]",
    },
    MEASURE_PARAMS,
    {.name = NULL},
};

static const struct gb_param smem_pattern_params[] = {
    {
        .name = "words",
        .measures = 1,
        .type = GB_PARAM_INT_LIST,
        .help = "32 word indices, one a lane: lane L reads 32-bit word words[L]",
        .min = 0,
        .max = 65535,
        .min_items = 32,
        .max_items = 32,
        .default_json = "[0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,"
                        "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30]",
    },
    MEASURE_PARAMS,
    {.name = NULL},
};

static const char *const transpose_variants[] = {
    "copy", "tile32", "tile33", "tile32_swizzle", NULL};

static const struct gb_param transpose_params[] = {
    {
        .name = "n",
        .measures = 1,
        .type = GB_PARAM_INT,
        .help = "matrix side: an n x n float matrix, a multiple of 32",
        .min = 256,
        .max = 32768,
        .multiple_of = 32,
        .default_json = "8192",
    },
    {
        .name = "variants",
        .measures = 1,
        .type = GB_PARAM_CHOICE_LIST,
        .help = "kernels to time; the copy ceiling is always measured",
        .min_items = 1,
        .max_items = 4,
        .unique = 1,
        .choices = transpose_variants,
        .default_json = "[\"copy\",\"tile32\",\"tile33\",\"tile32_swizzle\"]",
    },
    MEASURE_PARAMS,
    {.name = NULL},
};

static const struct gb_param gmem_stride_params[] = {
    {
        .name = "strides",
        .measures = 1,
        .type = GB_PARAM_INT_LIST,
        .help = "word strides; lane L reads 32-bit word L*stride of global memory",
        .min = 1,
        .max = 1024,
        .min_items = 1,
        .max_items = 64,
        .unique = 1,
        .default_json = "[1,2,4,8,16,32]",
    },
    {
        .name = "footprint_mib",
        .measures = 1,
        .type = GB_PARAM_INT,
        .help = "MiB the warps sweep through; 0: 4x the L2 (data from DRAM); a size "
                "under the L2 (e.g. 16) measures the L2-resident case",
        .min = 0,
        .max = 16384,
        .default_json = "0",
    },
    {
        .name = "l2_fetch_bytes",
        .measures = 1,
        .type = GB_PARAM_INT,
        .help = "bytes the L2 fetches from DRAM per miss for the run "
                "(cudaLimitMaxL2FetchGranularity); 32 moves exactly the sectors "
                "the prediction counts; 0 leaves the driver's default (64 on an H200)",
        .min = 0,
        .max = 128,
        .power_of_two = 1,
        .default_json = "32",
    },
    MEASURE_PARAMS,
    {.name = NULL},
};

static const struct gb_param hbm_params[] = {
    {
        .name = "array_mib",
        .measures = 1,
        .type = GB_PARAM_INT,
        .help = "MiB of each of the three double arrays (a, b, c); 0: the larger "
                "of 4x the L2 and 1024; under 4x the L2 is refused (the L2 would "
                "serve it)",
        .min = 0,
        .max = 32768,
        .default_json = "0",
    },
    MEASURE_PARAMS,
    {.name = NULL},
};

static const char *const compute_kinds[] = {
    "fp32_fma", "fp64_fma", "fp16x2_fma", "gemm_bf16", "gemm_fp16", "gemm_tf32", NULL};

static const struct gb_param compute_params[] = {
    {
        .name = "kinds",
        .measures = 1,
        .type = GB_PARAM_CHOICE_LIST,
        .help = "what to measure: FMA chains on the CUDA cores, GEMM on the "
                "tensor cores (cuBLAS, loaded at run time)",
        .min_items = 1,
        .max_items = 6,
        .unique = 1,
        .choices = compute_kinds,
        .default_json = "[\"fp32_fma\",\"fp64_fma\",\"fp16x2_fma\","
                        "\"gemm_bf16\",\"gemm_fp16\",\"gemm_tf32\"]",
    },
    {
        .name = "gemm_n",
        .measures = 1,
        .type = GB_PARAM_INT,
        .help = "side of the square GEMM (n x n x n)",
        .min = 1024,
        .max = 16384,
        .multiple_of = 256,
        .default_json = "8192",
    },
    MEASURE_PARAMS,
    {.name = NULL},
};

static const char *const pcie_memories[] = {"pinned", "pageable", NULL};

static const struct gb_param pcie_params[] = {
    {
        .name = "sizes_kib",
        .measures = 1,
        .type = GB_PARAM_INT_LIST,
        .help = "transfer sizes in KiB, each timed host to device and device to "
                "host in each kind of host memory",
        .min = 4,
        .max = 4194304,
        .min_items = 1,
        .max_items = 16,
        .unique = 1,
        .default_json = "[64,1024,16384,262144]",
    },
    {
        .name = "memory",
        .measures = 1,
        .type = GB_PARAM_CHOICE_LIST,
        .help = "host memory to copy from and to: pinned (cudaHostAlloc, what "
                "the link allows) and pageable (malloc: the host's memory system "
                "and the driver's staging, noisier)",
        .min_items = 1,
        .max_items = 2,
        .unique = 1,
        .choices = pcie_memories,
        .default_json = "[\"pinned\",\"pageable\"]",
    },
    MEASURE_PARAMS,
    {.name = NULL},
};

static const struct gb_param p2p_params[] = {
    {
        .name = "size_mib",
        .measures = 1,
        .type = GB_PARAM_INT,
        .help = "MiB copied between each ordered pair of GPUs for bandwidth "
                "(latency: 8-byte copies)",
        .min = 1,
        .max = 4096,
        .default_json = "256",
    },
    MEASURE_PARAMS,
    {.name = NULL},
};

/* nccl_allreduce: sizes in bytes, a multiple of 8 (the widest
 * dtype) from 8 KiB to 16 GiB (Azure's health checks judge an 8-GPU node
 * at 16 GiB, common/expect.c); the default sweep is 8 MiB to 4 GiB, x4
 * then x2. */
static const char *const nccl_dtypes[] = {"float", "bfloat16", "half", "double", NULL};

static const struct gb_param nccl_params[] = {
    {
        .name = "bytes",
        .measures = 1,
        .type = GB_PARAM_INT_LIST,
        .help = "buffer sizes in bytes, one row each: every GPU all-reduces a buffer of "
                "this size in place (sum)",
        .min = 8192,
        .max = 17179869184.0,
        .min_items = 1,
        .max_items = 16,
        .multiple_of = 8,
        .unique = 1,
        .default_json = "[8388608,33554432,134217728,536870912,2147483648,4294967296]",
    },
    {
        .name = "dtype",
        .measures = 1,
        .type = GB_PARAM_CHOICE,
        .help = "element type summed: float, bfloat16, half or double",
        .choices = nccl_dtypes,
        .default_json = "\"float\"",
    },
    MEASURE_PARAMS,
    {.name = NULL},
};

/* The deep checks.  They time no samples (known_answer and memtest
 * count wrong answers; soak samples once a second for its whole length),
 * so they take only the quiet card parameters. */
static const char *const known_answer_kinds[] = {"fp32_fma", "fp64_fma", "int_mix",
                                                 "mma_bf16", "cublas_bf16", NULL};

static const struct gb_param known_answer_params[] = {
    {
        .name = "seconds",
        .measures = 1,
        .type = GB_PARAM_NUMBER,
        .help = "how long to run the kinds, shared between them; every SM gets "
                "work in every kind",
        .min = 1,
        .max = 600,
        .default_json = "20",
    },
    {
        .name = "kinds",
        .measures = 1,
        .type = GB_PARAM_CHOICE_LIST,
        .help = "what to check bit for bit against the host's exact answer: FP32 "
                "and FP64 FMA chains, integer mixing, a tensor-core product "
                "through the worker's own mma kernel and through cuBLAS",
        .min_items = 1,
        .max_items = 5,
        .unique = 1,
        .choices = known_answer_kinds,
        .default_json = "[\"fp32_fma\",\"fp64_fma\",\"int_mix\",\"mma_bf16\","
                        "\"cublas_bf16\"]",
    },
    QUIET_PARAMS,
    {.name = NULL},
};

static const char *const memtest_patterns[] = {"inversions", "walking", "address", "random",
                                               NULL};

static const struct gb_param memtest_params[] = {
    {
        .name = "fraction",
        .measures = 1,
        .type = GB_PARAM_NUMBER,
        .help = "share of the card's free memory to test",
        .min = 0.001,
        .max = 0.97,
        .default_json = "0.9",
    },
    {
        .name = "patterns",
        .measures = 1,
        .type = GB_PARAM_CHOICE_LIST,
        .help = "test patterns, each written and read back: inversions (moving "
                "inversions of all zeros and all ones), walking (a walking 64-bit "
                "pattern and its inverse), address (each word holds its own "
                "address), random (a seeded random sequence)",
        .min_items = 1,
        .max_items = 4,
        .unique = 1,
        .choices = memtest_patterns,
        .default_json = "[\"inversions\",\"walking\",\"address\",\"random\"]",
    },
    {
        .name = "passes",
        .measures = 1,
        .type = GB_PARAM_INT,
        .help = "how many times the whole set of patterns is run",
        .min = 1,
        .max = 100,
        .default_json = "1",
    },
    {
        .name = "seed",
        .type = GB_PARAM_INT,
        .help = "seed of the random pattern",
        .min = 0,
        .max = 2147483647,
        .default_json = "1",
    },
    QUIET_PARAMS,
    {.name = NULL},
};

static const char *const soak_loads[] = {"gemm", "hbm", "both", NULL};

static const struct gb_param soak_params[] = {
    {
        .name = "seconds",
        .measures = 1,
        .type = GB_PARAM_NUMBER,
        .help = "how long the load is held, sampled once a second",
        .min = 10,
        .max = 3600,
        .default_json = "120",
    },
    {
        .name = "load",
        .measures = 1,
        .type = GB_PARAM_CHOICE,
        .help = "gemm (tensor-core GEMM at full rate), hbm (a STREAM triad over "
                "device memory) or both at once",
        .choices = soak_loads,
        .default_json = "\"both\"",
    },
    QUIET_PARAMS,
    {.name = NULL},
};

/* Method versions (bench_spec.h, struct gb_method), one table a benchmark.
 * Every method before the last was measured by 0.1.0 only (since NULL), so
 * such runs cannot be told apart and are grouped by their build; the last
 * is stamped on runs from GB_METHODS_SINCE.  A commit that changes what a
 * benchmark's numbers mean adds a line here, with the release that ships it. */
/* clang-format off */
static const struct gb_method smem_methods[] = {
    {1, NULL, "first kernel: CUDA events around calibrated launches (482f192)"},
    {2, NULL, "quiet card before timing, NVML watch between samples, ratio_cycles (bd549c4)"},
    {3, GB_METHODS_SINCE, "SM clock measured on the SM; ratio_cycles from busy cycles (a0b54f4)"},
    {0, NULL, NULL},
};
static const struct gb_method transpose_methods[] = {
    {1, NULL, "first kernels: copy, tile32, tile33, tile32_swizzle (482f192)"},
    {2, NULL, "quiet card before timing, NVML watch between samples (bd549c4)"},
    {3, GB_METHODS_SINCE, "counter pass one block an SM; counters equal the prediction (caef0b2)"},
    {0, NULL, NULL},
};
static const struct gb_method gmem_methods[] = {
    {1, NULL, "first kernel: lane L reads word L*stride of global memory (ad4a989)"},
    {2, NULL, "l2_fetch_bytes (default 32) sets the L2's DRAM fetch granularity (24736d5)"},
    {3, GB_METHODS_SINCE, "rows add predicted lines a request and DRAM bytes a request (78bb572)"},
    {0, NULL, NULL},
};
static const struct gb_method hbm_methods[] = {
    {1, NULL, "first STREAM kernels, grid-stride (ad4a989)"},
    {2, NULL, "STREAM kernels with 4 loads in flight; memcpy ceiling without a graph (1b42a24)"},
    {3, GB_METHODS_SINCE, "STREAM kernels in one pass, one double2 a thread (24736d5)"},
    {0, NULL, NULL},
};
static const struct gb_method compute_methods[] = {
    {1, NULL, "first FMA chains and cuBLAS GEMMs (ad4a989)"},
    {2, GB_METHODS_SINCE, "GEMM rows power-bound, NVML SM clock during each row (607cbc2)"},
    {0, NULL, NULL},
};
static const struct gb_method pcie_methods[] = {
    {1, NULL, "first copies, pinned and pageable in every run (ad4a989)"},
    {2, GB_METHODS_SINCE, "the memory parameter chooses pinned and pageable rows (41127d5)"},
    {0, NULL, NULL},
};
static const struct gb_method p2p_methods[] = {
    {1, NULL, "first copies between each ordered pair (ad4a989)"},
    {2, GB_METHODS_SINCE, "latency copies verified (1b42a24)"},
    {0, NULL, NULL},
};
static const struct gb_method nccl_methods[] = {
    {1, GB_METHODS_SINCE, "ncclAllReduce in place, one communicator a GPU, verified"},
    {0, NULL, NULL},
};
static const struct gb_method known_answer_methods[] = {
    {1, GB_METHODS_SINCE, "FMA, integer, mma, cuBLAS answers bit for bit on every SM"},
    {0, NULL, NULL},
};
static const struct gb_method memtest_methods[] = {
    {1, GB_METHODS_SINCE, "four patterns over a share of free memory"},
    {0, NULL, NULL},
};
static const struct gb_method soak_methods[] = {
    {1, GB_METHODS_SINCE, "GEMM and/or triad held, NVML once a second"},
    {0, NULL, NULL},
};
static const struct gb_method test_methods[] = {
    {1, GB_METHODS_SINCE, "a test of the daemon; nothing is measured"},
    {0, NULL, NULL},
};
/* clang-format on */

/* The test-only benchmarks take nothing; they exist to prove the daemon
 * survives a kernel that faults and one that never ends. */
static const struct gb_param no_params[] = {{.name = NULL}};

static const struct gb_benchmark benchmarks[] = {
    {
        .name = "smem_stride",
        .methods = smem_methods,
        .description = "Shared-memory stride sweep: lane L reads word L*stride; "
                       "predicted conflict degree gcd(stride, 32), measured "
                       "time and its ratio to stride 1 in the same run.",
        .params = smem_stride_params,
        .health_params = "{\"strides\":[1,2,32,33],\"samples\":5,\"quiet_wait_s\":5}",
    },
    {
        .name = "smem_pattern",
        .methods = smem_methods,
        .description = "A custom warp access: 32 word indices, one a lane; "
                       "predicted degree is the most DISTINCT words any bank "
                       "is asked for (a shared word is a broadcast).",
        .params = smem_pattern_params,
    },
    {
        .name = "transpose",
        .methods = transpose_methods,
        .description = "Tiled n x n float transpose with and without padding "
                       "against a copy ceiling; GB/s counts bytes read plus "
                       "written, every output verified.",
        .params = transpose_params,
        .health_params = "{\"n\":4096,\"variants\":[\"copy\",\"tile32\",\"tile33\"],"
                         "\"samples\":5,\"quiet_wait_s\":5}",
    },
    {
        .name = "gmem_stride",
        .methods = gmem_methods,
        .description = "Global-memory coalescing: lane L reads 32-bit word "
                       "L*stride; predicted 32-byte sectors per warp request "
                       "(distinct sectors touched), time ratio to stride 1, "
                       "hardware sectors per request where counters are read.",
        .params = gmem_stride_params,
        .health_params = "{\"strides\":[1,2,4,8,32],\"samples\":5,"
                         "\"quiet_wait_s\":5}",
    },
    {
        .name = "hbm_bandwidth",
        .methods = hbm_methods,
        .description = "STREAM copy, scale, add, triad on device memory (arrays "
                       ">= 4x L2) in GB/s, against the DRAM peak from the "
                       "device's attributes and the device-to-device cudaMemcpy "
                       "measured in the same run; outputs verified.",
        .params = hbm_params,
        .health_params = "{\"array_mib\":256,\"samples\":5,\"quiet_wait_s\":5}",
    },
    {
        .name = "compute_peak",
        .methods = compute_methods,
        .description = "FP32, FP64, FP16x2 FMA throughput against SMs x FMA "
                       "lanes x 2 x the SM clock measured on the SM, and "
                       "BF16/FP16/TF32 cuBLAS GEMM against the dense tensor "
                       "peak; results checked against a reference.",
        .params = compute_params,
        .health_params = "{\"gemm_n\":4096,\"samples\":5,\"quiet_wait_s\":5}",
    },
    {
        .name = "pcie_bandwidth",
        .methods = pcie_methods,
        .description = "Host to device and device to host, pinned and pageable, "
                       "over a size sweep, against the bandwidth the PCIe link "
                       "NVML reports (read during the transfers) predicts.",
        .params = pcie_params,
        /* Pinned only: the nightly run checks the card's link; pageable
         * copies measure the host and were `noisy` (spread80 0.25-0.53 on an
         * H200 node), which would make every nightly run invalid. */
        .health_params = "{\"sizes_kib\":[1024,65536],\"memory\":[\"pinned\"],"
                         "\"samples\":5,\"quiet_wait_s\":5}",
    },
    {
        .name = "p2p_bandwidth",
        .methods = p2p_methods,
        .description = "Every ordered pair of the node's GPUs: bandwidth both "
                       "ways and latency, through peer access where the pair "
                       "has it, staged through the host otherwise, with the "
                       "link type NVML reports.",
        .params = p2p_params,
        .all_devices = 1,
        .min_devices = 2,
        .health_params = "{\"size_mib\":64,\"samples\":5,\"quiet_wait_s\":5}",
    },
    {
        .name = "nccl_allreduce",
        .methods = nccl_methods,
        .description = "NCCL all-reduce (sum, in place) over every GPU of the node, one "
                       "communicator a GPU (ncclCommInitAll), over a size sweep: time, "
                       "algorithm bandwidth (bytes / time) and bus bandwidth (x 2(n-1)/n, "
                       "as nccl-tests), every element of the result checked.",
        .params = nccl_params,
        .all_devices = 1,
        .min_devices = 2,
        .health_params = "{\"bytes\":[33554432,1073741824],\"samples\":5,\"quiet_wait_s\":5}",
    },
    {
        .name = "known_answer",
        .methods = known_answer_methods,
        .description = "Deterministic kernels on every SM whose exact results the "
                       "host computes (FP32/FP64 FMA chains, integer mixing, BF16 "
                       "tensor-core products through mma and cuBLAS), compared bit "
                       "for bit; any mismatch names the SM and the element.",
        .params = known_answer_params,
    },
    {
        .name = "memtest",
        .methods = memtest_methods,
        .description = "Device memory test over a share of the free memory: moving "
                       "inversions, walking 64-bit, address-in-address and seeded "
                       "random patterns written and read back, against the memcpy "
                       "ceiling of the same run; ECC counters before and after.",
        .params = memtest_params,
    },
    {
        .name = "soak",
        .methods = soak_methods,
        .description = "A sustained GEMM and/or HBM load sampled once a second (rate, "
                       "clocks, power, temperature, throttle reasons): first 10 s, "
                       "last 30 s, worst 10 s and the share sustained.",
        .params = soak_params,
    },
    {
        .name = "test_fault",
        .methods = test_methods,
        .description = "TEST ONLY: a kernel that writes through an illegal "
                       "address; the worker must die and the daemon go on.",
        .params = no_params,
        .test_only = 1,
    },
    {
        .name = "test_hang",
        .methods = test_methods,
        .description = "TEST ONLY: a kernel that never ends; the run's "
                       "deadline must kill its worker.",
        .params = no_params,
        .test_only = 1,
    },
    {
        .name = "test_all_devices",
        .methods = test_methods,
        .description = "TEST ONLY: a run that needs every GPU of the node, as "
                       "p2p_bandwidth does; it must wait for the other GPUs "
                       "to be idle and hold them while it runs.",
        .params = no_params,
        .test_only = 1,
        .all_devices = 1,
    },
};

#define BENCHMARK_COUNT (sizeof(benchmarks) / sizeof(benchmarks[0]))

int gb_error_set(struct gb_error *err, const char *code, const char *field,
                 const char *fmt, ...)
{
    va_list ap;

    if (err == NULL)
        return -1;
    snprintf(err->code, sizeof(err->code), "%s", code);
    snprintf(err->field, sizeof(err->field), "%s", field ? field : "");
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
    return -1;
}

const char *gb_json_duplicate_key(const cJSON *obj)
{
    const cJSON *a, *b;

    if (!cJSON_IsObject(obj))
        return NULL;
    for (a = obj->child; a; a = a->next)
        for (b = a->next; b; b = b->next)
            if (a->string && b->string && strcmp(a->string, b->string) == 0)
                return a->string;
    return NULL;
}

size_t gb_benchmark_count(void)
{
    return BENCHMARK_COUNT;
}

const struct gb_benchmark *gb_benchmark_at(size_t i)
{
    return i < BENCHMARK_COUNT ? &benchmarks[i] : NULL;
}

const struct gb_benchmark *gb_benchmark_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < BENCHMARK_COUNT; i++)
        if (strcmp(benchmarks[i].name, name) == 0)
            return &benchmarks[i];
    return NULL;
}

static const struct gb_param *find_param(const struct gb_benchmark *b, const char *name);

int gb_benchmark_method(const struct gb_benchmark *b)
{
    int last = 0;

    for (const struct gb_method *m = b->methods; m && m->method; m++)
        last = m->method;
    return last;
}

/* version "MAJOR.MINOR.PATCH" (a suffix such as "-rc1" ignored) into v;
 * 0, or -1 when it is not one. */
static int version_parse(const char *version, long v[3])
{
    char *end;
    const char *at = version;

    for (int i = 0; i < 3; i++) {
        if (at == NULL || *at < '0' || *at > '9')
            return -1;
        v[i] = strtol(at, &end, 10);
        at = i < 2 ? (*end == '.' ? end + 1 : NULL) : end;
    }
    return 0;
}

static int version_cmp(const long a[3], const long b[3])
{
    for (int i = 0; i < 3; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

int gb_method_of_version(const struct gb_benchmark *b, const char *version)
{
    long run[3], since[3];
    int found = 0;

    if (b == NULL || version == NULL || version_parse(version, run) != 0)
        return 0;
    /* A method with no since was only measured by 0.1.0, where methods
     * changed without a record on the run: no version implies it. */
    for (const struct gb_method *m = b->methods; m && m->method; m++)
        if (m->since && version_parse(m->since, since) == 0 && version_cmp(since, run) <= 0)
            found = m->method;
    return found;
}

cJSON *gb_method_versions_describe(void)
{
    cJSON *d = cJSON_CreateObject();

    if (d == NULL || cJSON_AddStringToObject(d, "since", GB_METHODS_SINCE) == NULL ||
        cJSON_AddStringToObject(d, "unknown",
                                "a run without a method from gpubench before " GB_METHODS_SINCE
                                " (0.1.0, a development version during which every "
                                "benchmark's method changed) has method null and is "
                                "compared only with runs of its own build "
                                "(meta.build.git_commit, -dirty included)") == NULL) {
        cJSON_Delete(d);
        return NULL;
    }
    return d;
}

cJSON *gb_params_key(const struct gb_benchmark *b, const cJSON *params)
{
    cJSON *key = cJSON_CreateObject();
    const cJSON *field;

    if (key == NULL)
        return NULL;
    if (!cJSON_IsObject(params))
        params = NULL;
    if (b == NULL) {
        cJSON_Delete(key);
        return params ? cJSON_Duplicate(params, 1) : cJSON_CreateObject();
    }
    /* In the spec's order, so that one key has one text. */
    for (const struct gb_param *p = b->params; p->name; p++) {
        const cJSON *given = cJSON_GetObjectItemCaseSensitive(params, p->name);
        cJSON *v = NULL;
        if (!p->measures)
            continue;
        if (given)
            v = cJSON_Duplicate(given, 1);
        else if (p->default_json)
            v = cJSON_Parse(p->default_json);
        else
            continue;
        if (v == NULL || !cJSON_AddItemToObject(key, p->name, v)) {
            cJSON_Delete(v);
            goto fail;
        }
    }
    /* A parameter this build does not know may have changed what was
     * measured: it stays, so such a run is compared only with its like. */
    cJSON_ArrayForEach(field, params) {
        cJSON *v;
        if (field->string == NULL || find_param(b, field->string) != NULL)
            continue;
        v = cJSON_Duplicate(field, 1);
        if (v == NULL || !cJSON_AddItemToObject(key, field->string, v)) {
            cJSON_Delete(v);
            goto fail;
        }
    }
    return key;

fail:
    cJSON_Delete(key);
    return NULL;
}

static const char *type_name(enum gb_param_type type)
{
    switch (type) {
    case GB_PARAM_INT:
        return "integer";
    case GB_PARAM_NUMBER:
        return "number";
    case GB_PARAM_INT_LIST:
        return "array of integers";
    case GB_PARAM_CHOICE:
        return "string";
    case GB_PARAM_CHOICE_LIST:
        return "array of strings";
    }
    return "?";
}

static int is_choice(const struct gb_param *p, const char *s)
{
    for (const char *const *c = p->choices; c && *c; c++)
        if (strcmp(*c, s) == 0)
            return 1;
    return 0;
}

static void choices_text(const struct gb_param *p, char *buf, size_t cap)
{
    size_t used = 0;

    buf[0] = '\0';
    for (const char *const *c = p->choices; c && *c && used < cap; c++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s",
                                 c == p->choices ? "" : ", ", *c);
}

void gb_number_text(char *buf, size_t cap, double v)
{
    /* A whole number prints every digit (%g would give 1.04858e+06 for
     * 1048577); past 1e18 digits stop meaning anything and %g is kinder.
     * Otherwise the shortest %g that reads back as the same double, so a
     * bound of 0.0005 prints as 0.0005 and 1000.25 as 1000.25. */
    if (cap == 0)
        return;
    if (isfinite(v) && v == floor(v) && fabs(v) < 1e18) {
        snprintf(buf, cap, "%.0f", v == 0 ? 0.0 : v); /* never "-0" */
        return;
    }
    for (int digits = 6; digits <= 17; digits++) {
        snprintf(buf, cap, "%.*g", digits, v);
        if (!isfinite(v) || strtod(buf, NULL) == v)
            return;
    }
}

/* One scalar value: its type, then bounds.  field is the path to report. */
static int check_scalar(const struct gb_param *p, const cJSON *v,
                        const char *field, struct gb_error *err)
{
    int want_int = p->type == GB_PARAM_INT || p->type == GB_PARAM_INT_LIST;
    int want_choice = p->type == GB_PARAM_CHOICE ||
                      p->type == GB_PARAM_CHOICE_LIST;
    char value[GB_NUMBER_TEXT_MAX];

    if (want_choice) {
        char list[160];
        if (!cJSON_IsString(v))
            return gb_error_set(err, "wrong_type", field,
                                "%s must be a string", field);
        if (!is_choice(p, v->valuestring)) {
            choices_text(p, list, sizeof(list));
            return gb_error_set(err, "out_of_bounds", field,
                                "%s: \"%.40s\" is not one of %s", field,
                                v->valuestring, list);
        }
        return 0;
    }
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return gb_error_set(err, "wrong_type", field, "%s must be %s", field,
                            want_int ? "an integer" : "a number");
    gb_number_text(value, sizeof(value), v->valuedouble);
    if (want_int && v->valuedouble != floor(v->valuedouble))
        return gb_error_set(err, "wrong_type", field, "%s must be an integer, not %s", field,
                            value);
    if (v->valuedouble < p->min || v->valuedouble > p->max) {
        char lo[GB_NUMBER_TEXT_MAX], hi[GB_NUMBER_TEXT_MAX];
        gb_number_text(lo, sizeof(lo), p->min);
        gb_number_text(hi, sizeof(hi), p->max);
        return gb_error_set(err, "out_of_bounds", field, "%s is %s; it must be between %s and %s",
                            field, value, lo, hi);
    }
    if (want_int && p->multiple_of > 0 && fmod(v->valuedouble, (double)p->multiple_of) != 0)
        return gb_error_set(err, "out_of_bounds", field, "%s is %s; it must be a multiple of %ld",
                            field, value, p->multiple_of);
    if (want_int && p->power_of_two && v->valuedouble > 0 &&
        ((unsigned long long)v->valuedouble & ((unsigned long long)v->valuedouble - 1)) != 0)
        return gb_error_set(err, "out_of_bounds", field, "%s is %s; it must be 0 or a power of two",
                            field, value);
    return 0;
}

static int same_value(const cJSON *a, const cJSON *b)
{
    return cJSON_Compare(a, b, 1);
}

static int check_value(const struct gb_param *p, const cJSON *v,
                       const char *prefix, struct gb_error *err)
{
    char field[96];
    const cJSON **items;
    int n, rc = 0;

    snprintf(field, sizeof(field), "%s%s", prefix, p->name);
    if (p->type == GB_PARAM_INT || p->type == GB_PARAM_NUMBER ||
        p->type == GB_PARAM_CHOICE)
        return check_scalar(p, v, field, err);

    if (!cJSON_IsArray(v))
        return gb_error_set(err, "wrong_type", field, "%s must be an %s",
                            field, type_name(p->type));
    n = cJSON_GetArraySize(v);
    if (n < p->min_items || n > p->max_items) {
        if (p->min_items == p->max_items)
            return gb_error_set(err, "out_of_bounds", field,
                                "%s has %d elements; it must have exactly %d",
                                field, n, p->min_items);
        return gb_error_set(err, "out_of_bounds", field,
                            "%s has %d elements; it must have %d to %d",
                            field, n, p->min_items, p->max_items);
    }
    items = json_items(v, &n); /* indexed twice below: built once */
    if (items == NULL && n < 0)
        return gb_error_set(err, "internal", field, "out of memory checking %s", field);
    for (int i = 0; i < n; i++) {
        const cJSON *item = items[i];
        char item_field[96];

        snprintf(item_field, sizeof(item_field), "%s%s[%d]", prefix, p->name, i);
        if (check_scalar(p, item, item_field, err) != 0) {
            rc = -1;
            break;
        }
        for (int j = 0; p->unique && j < i && rc == 0; j++) {
            if (same_value(items[j], item))
                rc = gb_error_set(err, "duplicate", item_field,
                                  "%s repeats %s[%d]; each value may "
                                  "appear once",
                                  item_field, field, j);
        }
        if (rc != 0)
            break;
    }
    free(items);
    return rc;
}

static const struct gb_param *find_param(const struct gb_benchmark *b,
                                         const char *name)
{
    for (const struct gb_param *p = b->params; p->name; p++)
        if (strcmp(p->name, name) == 0)
            return p;
    return NULL;
}

static void param_names(const struct gb_benchmark *b, char *buf, size_t cap)
{
    size_t used = 0;

    buf[0] = '\0';
    for (const struct gb_param *p = b->params; p->name && used < cap; p++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s",
                                 p == b->params ? "" : ", ", p->name);
}

cJSON *gb_params_resolve(const struct gb_benchmark *b, const cJSON *params,
                         struct gb_error *err)
{
    return gb_params_resolve_at(b, params, "params.", err);
}

cJSON *gb_params_resolve_at(const struct gb_benchmark *b, const cJSON *params,
                            const char *prefix, struct gb_error *err)
{
    cJSON *out = NULL;
    const cJSON *field;

    if (params != NULL && !cJSON_IsNull(params) && !cJSON_IsObject(params)) {
        /* "params." names the object "params"; "" names the body. */
        int n = (int)strlen(prefix);
        char name[64];
        snprintf(name, sizeof(name), "%.*s", n > 0 ? n - 1 : 0, prefix);
        gb_error_set(err, "wrong_type", name, "%s must be a JSON object",
                     name[0] ? name : "the body");
        goto fail;
    }
    if (gb_json_duplicate_key(params)) {
        char path[96];
        snprintf(path, sizeof(path), "%s%.80s", prefix, gb_json_duplicate_key(params));
        gb_error_set(err, "duplicate", path, "%s is given twice", path);
        goto fail;
    }
    /* Unknown names first: a typo must not be answered with a default. */
    cJSON_ArrayForEach(field, params) {
        if (find_param(b, field->string) == NULL) {
            char names[200], path[96];
            param_names(b, names, sizeof(names));
            snprintf(path, sizeof(path), "%s%.80s", prefix, field->string);
            gb_error_set(err, "unknown_field", path,
                         "%s is not a parameter of %s (it takes: %s)", path,
                         b->name, names);
            goto fail;
        }
    }
    out = cJSON_CreateObject();
    if (out == NULL) {
        gb_error_set(err, "internal", "", "out of memory");
        goto fail;
    }
    for (const struct gb_param *p = b->params; p->name; p++) {
        const cJSON *given = params ? cJSON_GetObjectItemCaseSensitive(params, p->name) : NULL;
        cJSON *value;

        if (given != NULL) {
            if (check_value(p, given, prefix, err) != 0)
                goto fail;
            value = cJSON_Duplicate(given, 1);
        } else if (p->default_json != NULL) {
            value = cJSON_Parse(p->default_json);
        } else {
            continue; /* optional, with no default */
        }
        if (value == NULL || !cJSON_AddItemToObject(out, p->name, value)) {
            cJSON_Delete(value);
            gb_error_set(err, "internal", "", "out of memory");
            goto fail;
        }
    }
    return out;

fail:
    cJSON_Delete(out);
    return NULL;
}

double gb_params_device_bytes(const struct gb_benchmark *b, const cJSON *params)
{
    const cJSON *n = cJSON_GetObjectItem(params, "n");

    const cJSON *mib = cJSON_GetObjectItem(params, "array_mib");
    const cJSON *gemm = cJSON_GetObjectItem(params, "gemm_n");

    /* transpose: an input and an output matrix of n x n floats. */
    if (strcmp(b->name, "transpose") == 0 && cJSON_IsNumber(n))
        return 2.0 * n->valuedouble * n->valuedouble * 4.0;
    /* hbm_bandwidth: three arrays (0: chosen from the L2 by the worker). */
    if (strcmp(b->name, "hbm_bandwidth") == 0 && cJSON_IsNumber(mib))
        return 3.0 * mib->valuedouble * 1048576.0;
    /* compute_peak: A, B (at most 4 bytes), C and the reference (4 bytes). */
    if (strcmp(b->name, "compute_peak") == 0 && cJSON_IsNumber(gemm))
        return 4.0 * gemm->valuedouble * gemm->valuedouble * 4.0;
    return 0;
}

/* b's method and its history into obj ("method", "methods"). */
static int describe_methods(const struct gb_benchmark *b, cJSON *obj)
{
    struct json_build jb = {0};
    cJSON *list;

    jb_number(&jb, obj, "method", gb_benchmark_method(b));
    list = jb_array(&jb, obj, "methods");
    for (const struct gb_method *m = b->methods; m && m->method && !jb_failed(&jb); m++) {
        cJSON *d = jb_new_object(&jb);

        jb_push(&jb, list, d); /* list's now, or deleted */
        jb_number(&jb, d, "method", m->method);
        jb_string(&jb, d, "since", m->since); /* null: before versions were kept */
        if (m->change == NULL)
            jb_fail(&jb); /* every method says what changed */
        jb_string(&jb, d, "change", m->change);
    }
    return jb_failed(&jb) ? -1 : 0;
}

cJSON *gb_benchmark_describe(const struct gb_benchmark *b)
{
    struct json_build jb = {0};
    cJSON *obj = jb_new_object(&jb);
    cJSON *params = jb_array(&jb, obj, "params");

    jb_string(&jb, obj, "name", b->name);
    jb_string(&jb, obj, "description", b->description);
    jb_item(&jb, obj, "health_params",
            b->health_params ? cJSON_Parse(b->health_params) : cJSON_CreateNull());
    jb_bool(&jb, obj, "all_devices", b->all_devices != 0);
    if (jb_failed(&jb) || describe_methods(b, obj) != 0)
        goto fail;
    /* what comparisons across runs give its times per (work_units.h) */
    jb_item(&jb, obj, "work_unit", gb_work_unit_describe(b->name));
    for (const struct gb_param *p = b->params; p->name && !jb_failed(&jb); p++) {
        cJSON *d = jb_new_object(&jb);

        jb_push(&jb, params, d); /* params' now, or deleted */
        jb_string(&jb, d, "name", p->name);
        jb_string(&jb, d, "type", type_name(p->type));
        jb_string(&jb, d, "help", p->help);
        jb_bool(&jb, d, "measures", p->measures != 0);
        jb_item(&jb, d, "default",
                p->default_json ? cJSON_Parse(p->default_json) : cJSON_CreateNull());
        if (p->type == GB_PARAM_CHOICE || p->type == GB_PARAM_CHOICE_LIST) {
            cJSON *c = jb_array(&jb, d, "choices");
            for (const char *const *s = p->choices; *s && !jb_failed(&jb); s++)
                jb_push(&jb, c, cJSON_CreateString(*s));
        } else {
            jb_number(&jb, d, "min", p->min);
            jb_number(&jb, d, "max", p->max);
        }
        if (p->multiple_of > 0)
            jb_number(&jb, d, "multiple_of", (double)p->multiple_of);
        if (p->power_of_two)
            jb_bool(&jb, d, "power_of_two", 1);
        if (p->type == GB_PARAM_INT_LIST || p->type == GB_PARAM_CHOICE_LIST) {
            jb_number(&jb, d, "min_items", p->min_items);
            jb_number(&jb, d, "max_items", p->max_items);
            jb_bool(&jb, d, "unique", p->unique != 0);
        }
    }
    if (jb_failed(&jb))
        goto fail;
    return obj;

fail:
    cJSON_Delete(obj);
    return NULL;
}
