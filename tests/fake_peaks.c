/*
 * fake_peaks.c - see fake_peaks.h.  One table per benchmark of what its
 * rows say (label, value, peak); the row builder is shared.
 */
#include "fake_peaks.h"
#include "predict.h"

#include <stdio.h>
#include <string.h>

#define FAKE_DRAM_PEAK_GBPS 4800.0
#define FAKE_MEMCPY_GBPS 4150.0
#define FAKE_NVLINK_GBPS 450.0
/* A GEMM at full rate runs into the power cap (as on the H200): the SM
 * clock NVML reads during the GEMM rows, and the cap. */
#define FAKE_GEMM_SM_MHZ 1755.0
#define FAKE_BOOST_SM_MHZ 1980.0
#define FAKE_POWER_LIMIT_W 700.0

struct fake_row {
    const char *key; /* the value of the row's own field */
    double value;
    double peak; /* 0: none */
};

static const struct fake_row hbm_rows[] = {
    {"copy", 4110, 0},
    {"scale", 4080, 0},
    {"add", 4190, 0},
    {"triad", 4170, 0},
    {"memcpy", 4150, 0},
};

static const struct fake_row compute_rows[] = {
    {"fp32_fma", 64.1, 66.9},
    {"fp64_fma", 32.9, 33.5},
    {"fp16x2_fma", 126.0, 133.8},
    {"gemm_bf16", 741.0, 989.0},
    {"gemm_fp16", 752.0, 989.0},
    {"gemm_tf32", 371.0, 494.0},
};

int fake_peaks_knows(const char *bench)
{
    static const char *const names[] = {"gmem_stride", "hbm_bandwidth", "compute_peak",
                                        "pcie_bandwidth", "p2p_bandwidth", "nccl_allreduce",
                                        NULL};

    for (const char *const *n = names; *n; n++)
        if (strcmp(*n, bench) == 0)
            return 1;
    return 0;
}

/* The generic fields of the contract; share_of_peak null without a peak. */
static cJSON *peak_row(const char *label, double value, const char *unit, double peak,
                       const char *source)
{
    cJSON *row = cJSON_CreateObject();

    cJSON_AddStringToObject(row, "label", label);
    cJSON_AddNumberToObject(row, "value", value);
    cJSON_AddStringToObject(row, "unit", unit);
    if (peak > 0) {
        cJSON_AddNumberToObject(row, "peak", peak);
        cJSON_AddNumberToObject(row, "share_of_peak", value / peak);
    } else {
        cJSON_AddNullToObject(row, "peak");
        cJSON_AddNullToObject(row, "share_of_peak");
    }
    cJSON_AddStringToObject(row, "peak_source", source);
    /* a time that grows as the value falls, for the timing fields */
    cJSON_AddNumberToObject(row, "synthetic_ms", value > 0 ? 1000.0 / value : 1.0);
    return row;
}

static int listed(const cJSON *params, const char *name, const char *key)
{
    const cJSON *list = cJSON_GetObjectItem(params, name);
    const cJSON *v;

    if (!cJSON_IsArray(list))
        return 1;
    cJSON_ArrayForEach(v, list)
        if (cJSON_IsString(v) && strcmp(v->valuestring, key) == 0)
            return 1;
    return 0;
}

static void gmem_rows(cJSON *rows, const cJSON *params)
{
    static const int fallback[] = {1, 2, 4, 8, 16, 32};
    const cJSON *strides = cJSON_GetObjectItem(params, "strides");
    int n = cJSON_IsArray(strides) ? cJSON_GetArraySize(strides) : 6;

    for (int i = 0; i < n; i++) {
        int s = cJSON_IsArray(strides) ? cJSON_GetArrayItem(strides, i)->valueint : fallback[i];
        int sectors = gb_predict_gmem_sectors(s, 4);
        char label[32];
        /* useful bytes over moved bytes: 128 of sectors*32 */
        double gbps = FAKE_DRAM_PEAK_GBPS * 0.9 * 4.0 / sectors;
        cJSON *row;

        snprintf(label, sizeof(label), "stride %d", s);
        row = peak_row(label, gbps, "GB/s", FAKE_DRAM_PEAK_GBPS,
                       "synthetic: the test double's DRAM peak");
        cJSON_AddNumberToObject(row, "stride", s);
        cJSON_AddNumberToObject(row, "predicted_sectors", sectors);
        cJSON_AddNumberToObject(row, "predicted_lines", gb_predict_gmem_lines(s, 4));
        cJSON_AddNumberToObject(row, "sectors_per_request", sectors);
        cJSON_AddNumberToObject(row, "sectors_per_request_predicted", sectors);
        cJSON_ReplaceItemInObject(row, "synthetic_ms", cJSON_CreateNumber(0.1 * sectors));
        cJSON_AddItemToArray(rows, row);
    }
}

static void hbm_bench_rows(cJSON *rows, const cJSON *params)
{
    for (size_t i = 0; i < sizeof(hbm_rows) / sizeof(hbm_rows[0]); i++) {
        const struct fake_row *f = &hbm_rows[i];
        cJSON *row;

        if (!listed(params, "kernels", f->key))
            continue;
        row = peak_row(f->key, f->value, "GB/s", FAKE_DRAM_PEAK_GBPS,
                       "synthetic: memory clock x bus width x 2 of the test double");
        cJSON_AddStringToObject(row, "kernel", f->key);
        cJSON_AddNumberToObject(row, "bytes_moved", 3.0 * 1024 * 1024 * 1024);
        cJSON_AddNumberToObject(row, "share_of_memcpy", f->value / FAKE_MEMCPY_GBPS);
        cJSON_AddItemToArray(rows, row);
    }
}

static void compute_bench_rows(cJSON *rows, const cJSON *params)
{
    for (size_t i = 0; i < sizeof(compute_rows) / sizeof(compute_rows[0]); i++) {
        const struct fake_row *f = &compute_rows[i];
        int gemm = strncmp(f->key, "gemm_", 5) == 0;
        cJSON *row;

        if (!listed(params, "kinds", f->key))
            continue;
        row = peak_row(f->key, f->value, "TFLOP/s", f->peak,
                       "synthetic: SMs x lanes x 2 x clock of the test double");
        cJSON_AddStringToObject(row, "kind", f->key);
        /* The GEMM rows are power-bound by design (the worker marks them;
         * the double's watch then shows them at sw_power_cap). */
        cJSON_AddBoolToObject(row, "power_bound", gemm);
        cJSON_AddNumberToObject(row, "sm_clock_mhz_nvml",
                                gemm ? FAKE_GEMM_SM_MHZ : FAKE_BOOST_SM_MHZ);
        if (gemm) {
            double at_clock = f->peak * FAKE_GEMM_SM_MHZ / FAKE_BOOST_SM_MHZ;
            cJSON_AddNumberToObject(row, "peak_at_clock", at_clock);
            cJSON_AddNumberToObject(row, "share_of_peak_at_clock", f->value / at_clock);
        }
        cJSON_AddItemToArray(rows, row);
    }
}

static double link_gbps(const char *mode)
{
    return strcmp(mode, "link_degraded") == 0 ? 31.5 : 63.0;
}

/* The memories params.memory names (both when it names none). */
static int pcie_memory_on(const cJSON *params, const char *memory)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(params, "memory"), *m;

    if (!cJSON_IsArray(list))
        return 1;
    cJSON_ArrayForEach(m, list)
        if (cJSON_IsString(m) && strcmp(m->valuestring, memory) == 0)
            return 1;
    return 0;
}

static void pcie_bench_rows(cJSON *rows, const cJSON *params, const char *mode)
{
    static const char *const dirs[] = {"h2d", "d2h"};
    static const char *const mems[] = {"pinned", "pageable"};
    double link = link_gbps(mode);

    for (int d = 0; d < 2; d++)
        for (int m = 0; m < 2; m++) {
            char label[64];
            double value = link * (m == 0 ? 0.87 : 0.35);
            cJSON *row;

            if (!pcie_memory_on(params, mems[m]))
                continue;
            snprintf(label, sizeof(label), "%s %s 256 MiB", dirs[d], mems[m]);
            row = peak_row(label, value, "GB/s", link,
                           "synthetic: the link's generation and width (meta.link)");
            cJSON_AddStringToObject(row, "direction", dirs[d]);
            cJSON_AddStringToObject(row, "memory", mems[m]);
            cJSON_AddNumberToObject(row, "bytes", 256.0 * 1024 * 1024);
            cJSON_AddItemToArray(rows, row);
        }
}

/* Pair (src, dst)'s synthetic bandwidth: each pair a little different, so
 * that a heat map has something to show. */
static double pair_gbps(int src, int dst)
{
    return 380.0 - 10.0 * src - 5.0 * dst;
}

static void p2p_bench_rows(cJSON *rows, int gpus)
{
    for (int s = 0; s < gpus; s++)
        for (int d = 0; d < gpus; d++) {
            char label[64];
            cJSON *row;

            if (s == d)
                continue;
            snprintf(label, sizeof(label), "%d->%d peer", s, d);
            row = peak_row(label, pair_gbps(s, d), "GB/s", FAKE_NVLINK_GBPS,
                           "synthetic: NVLink links x per-link rate of the test double");
            cJSON_AddNumberToObject(row, "src", s);
            cJSON_AddNumberToObject(row, "dst", d);
            cJSON_AddStringToObject(row, "mode", "peer");
            cJSON_AddStringToObject(row, "direction", "uni");
            cJSON_AddItemToArray(rows, row);
            snprintf(label, sizeof(label), "%d->%d latency", s, d);
            row = peak_row(label, 2.5 + 0.1 * s, "us", 0, "none: a latency has no peak");
            cJSON_AddNumberToObject(row, "src", s);
            cJSON_AddNumberToObject(row, "dst", d);
            cJSON_AddStringToObject(row, "mode", "peer");
            cJSON_AddStringToObject(row, "direction", "uni");
            cJSON_AddNumberToObject(row, "latency_us", 2.5 + 0.1 * s);
            cJSON_AddItemToArray(rows, row);
        }
}

/* nccl_allreduce's synthetic bus bandwidth at a size: FAKE_NCCL_BUSBW
 * approached as the size grows past 32 MiB, as a ring's fixed cost
 * fades. */
#define FAKE_NCCL_BUSBW 360.0
static double nccl_busbw(double bytes)
{
    return FAKE_NCCL_BUSBW * bytes / (bytes + 32.0 * 1024 * 1024);
}

/* nccl-tests' bus bandwidth factor, written out here (the worker's is
 * kernels/nccl_math.c): 2(n-1)/n. */
static double nccl_factor(int gpus)
{
    return 2.0 * (gpus - 1) / gpus;
}

static void nccl_bench_rows(cJSON *rows, const cJSON *params, int gpus)
{
    const cJSON *sizes = cJSON_GetObjectItem(params, "bytes"), *v;
    const char *dtype = cJSON_GetStringValue(cJSON_GetObjectItem(params, "dtype"));
    int size = dtype && strcmp(dtype, "double") == 0  ? 8
               : dtype && strcmp(dtype, "float") != 0 ? 2
                                                      : 4;

    if (gpus < 2)
        return; /* as the worker: nothing to all-reduce across */
    cJSON_ArrayForEach(v, sizes) {
        double bytes = v->valuedouble, algbw = nccl_busbw(bytes) / nccl_factor(gpus);
        char label[64];
        cJSON *row;

        if (bytes >= 1 << 30)
            snprintf(label, sizeof(label), "all-reduce %.0f GiB", bytes / (1 << 30));
        else
            snprintf(label, sizeof(label), "all-reduce %.0f MiB", bytes / (1 << 20));
        row = peak_row(label, nccl_busbw(bytes), "GB/s", 0,
                       "none: bus bandwidth is judged against a floor per model and topology "
                       "(common/expect.c), not a peak");
        /* the time one all-reduce takes at that bandwidth */
        cJSON_SetNumberValue(cJSON_GetObjectItem(row, "synthetic_ms"), bytes / algbw / 1e6);
        cJSON_AddNumberToObject(row, "bytes", bytes);
        cJSON_AddStringToObject(row, "dtype", dtype ? dtype : "float");
        cJSON_AddNumberToObject(row, "ranks", gpus);
        cJSON_AddNumberToObject(row, "elements", bytes / size);
        cJSON_AddStringToObject(row, "link_type", "nvlink");
        cJSON_AddBoolToObject(row, "available", 1);
        cJSON_AddBoolToObject(row, "verified", 1);
        cJSON_AddNumberToObject(row, "elements_checked", bytes / size * gpus);
        cJSON_AddItemToArray(rows, row);
    }
}

void fake_peaks_finish(const char *bench, cJSON *rows)
{
    cJSON *row;

    if (strcmp(bench, "nccl_allreduce") != 0)
        return;
    /* from the timing the double made: as kernels/nccl_bench.c does */
    cJSON_ArrayForEach(row, rows) {
        double ms = cJSON_GetNumberValue(cJSON_GetObjectItem(row, "median_ms"));
        double bytes = cJSON_GetNumberValue(cJSON_GetObjectItem(row, "bytes"));
        int gpus = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(row, "ranks"));
        double algbw = bytes / (ms * 1e-3) / 1e9;

        cJSON_AddNumberToObject(row, "time_us", ms * 1e3);
        cJSON_AddNumberToObject(row, "algbw_gbps", algbw);
        cJSON_AddNumberToObject(row, "busbw_gbps", algbw * nccl_factor(gpus));
        cJSON_SetNumberValue(cJSON_GetObjectItem(row, "value"), algbw * nccl_factor(gpus));
        cJSON_AddNumberToObject(row, "work_per_sample", 1);
    }
}

cJSON *fake_peaks_rows(const char *bench, const cJSON *params, const char *mode, int gpus)
{
    cJSON *rows = cJSON_CreateArray();

    if (rows == NULL)
        return NULL;
    if (strcmp(bench, "gmem_stride") == 0)
        gmem_rows(rows, params);
    else if (strcmp(bench, "hbm_bandwidth") == 0)
        hbm_bench_rows(rows, params);
    else if (strcmp(bench, "compute_peak") == 0)
        compute_bench_rows(rows, params);
    else if (strcmp(bench, "pcie_bandwidth") == 0)
        pcie_bench_rows(rows, params, mode);
    else if (strcmp(bench, "p2p_bandwidth") == 0)
        p2p_bench_rows(rows, gpus);
    else if (strcmp(bench, "nccl_allreduce") == 0)
        nccl_bench_rows(rows, params, gpus);
    return rows;
}

/* summary.matrix of p2p_bandwidth: n x n, the diagonal null. */
static cJSON *p2p_matrix(int gpus)
{
    cJSON *m = cJSON_CreateObject();
    cJSON *devices = cJSON_AddArrayToObject(m, "devices");
    cJSON *gbps = cJSON_AddArrayToObject(m, "gbps");
    cJSON *lat = cJSON_AddArrayToObject(m, "latency_us");
    cJSON *link = cJSON_AddArrayToObject(m, "link");

    for (int s = 0; s < gpus; s++) {
        cJSON *g = cJSON_CreateArray(), *l = cJSON_CreateArray(), *k = cJSON_CreateArray();
        cJSON_AddItemToArray(devices, cJSON_CreateNumber(s));
        for (int d = 0; d < gpus; d++) {
            cJSON *t = cJSON_CreateObject();
            cJSON_AddItemToArray(g, s == d ? cJSON_CreateNull()
                                           : cJSON_CreateNumber(pair_gbps(s, d)));
            cJSON_AddItemToArray(l, s == d ? cJSON_CreateNull()
                                           : cJSON_CreateNumber(2.5 + 0.1 * s));
            cJSON_AddStringToObject(t, "type", "nvlink");
            cJSON_AddNumberToObject(t, "links", 18);
            cJSON_AddNumberToObject(t, "version", 4);
            cJSON_AddItemToArray(k, t);
        }
        cJSON_AddItemToArray(gbps, g);
        cJSON_AddItemToArray(lat, l);
        cJSON_AddItemToArray(link, k);
    }
    return m;
}

void fake_peaks_summary(const char *bench, const char *mode, int gpus, cJSON *summary,
                        cJSON *meta)
{
    if (strcmp(bench, "hbm_bandwidth") == 0) {
        cJSON_AddNumberToObject(summary, "dram_peak_gbps", FAKE_DRAM_PEAK_GBPS);
        cJSON_AddStringToObject(summary, "dram_peak_source",
                                "synthetic: memory clock x bus width x 2 of the test double");
        cJSON_AddNumberToObject(summary, "memcpy_ceiling_gbps", FAKE_MEMCPY_GBPS);
    } else if (strcmp(bench, "compute_peak") == 0) {
        cJSON_AddNumberToObject(summary, "enforced_power_limit_w", FAKE_POWER_LIMIT_W);
        cJSON_AddNumberToObject(meta, "enforced_power_limit_w", FAKE_POWER_LIMIT_W);
    } else if (strcmp(bench, "pcie_bandwidth") == 0) {
        int degraded = strcmp(mode, "link_degraded") == 0;
        cJSON *link = cJSON_AddObjectToObject(meta, "link");
        cJSON_AddNumberToObject(link, "gen_current", degraded ? 4 : 5);
        cJSON_AddNumberToObject(link, "gen_max", 5);
        cJSON_AddNumberToObject(link, "width_current", 16);
        cJSON_AddNumberToObject(link, "width_max", 16);
        cJSON_AddNumberToObject(link, "predicted_gbps", link_gbps(mode));
    } else if (strcmp(bench, "p2p_bandwidth") == 0) {
        cJSON_AddItemToObject(summary, "matrix", p2p_matrix(gpus));
    } else if (strcmp(bench, "nccl_allreduce") == 0) {
        cJSON *topo = cJSON_AddObjectToObject(summary, "topology");
        cJSON_AddNumberToObject(topo, "ranks", gpus);
        cJSON_AddStringToObject(topo, "link_type", "nvlink");
        cJSON_AddNumberToObject(topo, "nvlinks_up_min", 18);
        cJSON_AddNumberToObject(summary, "device_count", gpus);
        cJSON_AddStringToObject(summary, "nccl_version", "synthetic (test double)");
    }
}
