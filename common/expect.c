/*
 * expect.c - the floors of each card model and the judge; see expect.h.
 *
 * Where a floor comes from, in order of preference:
 *   - measured here: the H200 rows of examples/h200_health_*.json (one H200
 *     SXM, driver 580.159.04, 2026-12-01) times a stated margin: 0.9 for
 *     memory and FP32 (their runs spread under 1%), 0.85 for the BF16 GEMM,
 *     which runs at the card's power cap (validity.h, power_capped) and so
 *     moves with it;
 *   - a datasheet figure times DCGM's fraction, 0.75 of the peak (its
 *     diagnostic's per-SKU floors); for the dense BF16 GEMM 0.6 instead,
 *     because the H200, the same compute as the H100, reached 0.71 of the
 *     dense datasheet figure at gemm_n 4096 under its cap, so 0.75 would
 *     fail a healthy card;
 *   - links: 0.75 of what the link predicts (peaks.c's PCIe table; NVLink 4
 *     and 3 carry 25 GB/s a link each way: 900 and 600 GB/s both ways over
 *     18 and 12 links).  The H200 reached 0.87 of its gen 5 x16 link pinned
 *     (55.1 h2d, 54.9 d2h GB/s) and 388 GB/s one way over 18 NVLink 4 links
 *     through NVSwitch (0.86 of 450); 0.75 x 18 x 25 = 337.5 GB/s, close to
 *     the 335 GB/s azurehpc-health-checks asks of H100/H200 nodes.
 *   - nccl_allreduce: azurehpc-health-checks' floors, as
 *     published, for 8 GPUs over NVLink at 16 GiB (the only topology and
 *     size they judge): 460 GB/s bus bandwidth on ND H100 v5, 431 on ND
 *     H200 v5 (conf/nd96isr_h100_v5.conf, conf/nd96isr_h200_v5.conf:
 *     check_nccl_allreduce 460.0 / 431.0 1 16G).  No floor for other GPU
 *     counts: no published source gives one for 2 or 4 GPUs, and the bus
 *     bandwidth of a ring over fewer GPUs through NVSwitch is not the
 *     8-GPU figure (NVLS, the NVSwitch reduction, needs more ranks), so
 *     such rows are reported and not judged.
 */
#include "expect.h"

#include "expect_deep.h"
#include "json_build.h"
#include "peaks.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define DCGM_FRACTION 0.75
#define GEMM_FRACTION 0.6
#define LINK_FRACTION 0.75
#define NVLINK_GBPS_PER_LINK 25.0

static const char pcie_source[] =
    "0.75 (DCGM's fraction of peak) of the PCIe link meta.link reports (gen x width, "
    "common/peaks.c); the H200 reached 0.87 of gen 5 x16 pinned at 64 MiB (55.1 h2d, "
    "54.9 d2h GB/s, measured here 2026-12-01)";

static const char nvlink_source[] =
    "0.75 (DCGM's fraction of peak) of 25 GB/s a link one way (NVLink 4 and 3: 900 and "
    "600 GB/s both ways over 18 and 12 links) times the links the row's link reports; "
    "the H200 reached 388 GB/s over 18 links via NVSwitch (measured here 2026-12-01)";

/* The link floors every model with them shares. */
#define PCIE_FLOORS                                                                        \
    {"pcie_bandwidth", "h2d", GB_FLOOR_PCIE_LINK, 0, LINK_FRACTION, "GB/s", pcie_source},  \
    {                                                                                      \
        "pcie_bandwidth", "d2h", GB_FLOOR_PCIE_LINK, 0, LINK_FRACTION, "GB/s", pcie_source \
    }
#define NVLINK_FLOOR                                                                       \
    {                                                                                      \
        "p2p_bandwidth", "peer", GB_FLOOR_PER_NVLINK, NVLINK_GBPS_PER_LINK, LINK_FRACTION, \
            "GB/s", nvlink_source                                                          \
    }

#define NCCL_AZURE_SOURCE(figure, sku)                                          \
    figure " GB/s all-reduce bus bandwidth at 16 GiB over 8 GPUs with NVLink: " \
           "azurehpc-health-checks' floor for " sku " (check_nccl_allreduce " figure " 1 16G)"

/* soak: what a card keeps under a sustained load.  The same for
 * every model: the figures are shares of the run's own first 10 s and the
 * card's own NVML threshold, so they need no datasheet. */
static const char soak_gemm_source[] =
    "0.9 of the run's own first 10 s: a tensor GEMM held at the card's power cap keeps its "
    "clock once warm (the H200 ran every compute_peak GEMM row at its cap and their runs "
    "spread under 1%, 2026-12-01), so a card that fades by more is losing clock to heat; "
    "the H200's soak: measured: see examples/h200_daemon_deep (pending)";
static const char soak_hbm_source[] =
    "0.95 of the run's own first 10 s: HBM bandwidth does not follow the SM clock and "
    "sits under 1% spread on an idle H200 (examples/h200_health_hbm_bandwidth.json); the "
    "H200's soak: measured: see examples/h200_daemon_deep (pending)";
static const char soak_temp_source[] =
    "below NVML's slowdown threshold (NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, read by the "
    "run): a card that reaches it under a sustained load slows its clocks";

#define SOAK_FLOORS                                                                         \
    {"soak", "gemm sustained_share", GB_FLOOR_FIXED, 1, 0.9, "share", soak_gemm_source},    \
        {"soak", "hbm sustained_share", GB_FLOOR_FIXED, 1, 0.95, "share", soak_hbm_source}, \
    {                                                                                       \
        "soak", "max_temperature_c", GB_CEILING_SLOWDOWN_TEMP, 1, 1, "C", soak_temp_source  \
    }

/* clang-format off */
static const struct gb_floor h200_floors[] = {
    {"hbm_bandwidth", "memcpy", GB_FLOOR_FIXED, 4206, 0.9, "GB/s",
     "0.9 of 4206 GB/s, measured here on an H200 SXM on 2026-12-01 "
     "(examples/h200_health_hbm_bandwidth.json; datasheet 4.8 TB/s)"},
    {"hbm_bandwidth", "triad", GB_FLOOR_FIXED, 4353, 0.9, "GB/s",
     "0.9 of 4353 GB/s, measured here on an H200 SXM on 2026-12-01 "
     "(examples/h200_health_hbm_bandwidth.json; datasheet 4.8 TB/s)"},
    {"compute_peak", "fp32_fma", GB_FLOOR_FIXED, 65.4, 0.9, "TFLOP/s",
     "0.9 of 65.4 TFLOP/s, measured here on an H200 SXM on 2026-12-01 "
     "(examples/h200_health_compute_peak.json)"},
    {"compute_peak", "gemm_bf16", GB_FLOOR_FIXED, 700, 0.85, "TFLOP/s",
     "0.85 of 700 TFLOP/s at gemm_n 4096, measured here on an H200 SXM on 2026-12-01 "
     "at its power cap (examples/h200_health_compute_peak.json)"},
    PCIE_FLOORS,
    NVLINK_FLOOR,
    SOAK_FLOORS,
    {"nccl_allreduce", "busbw_16g_8gpu", GB_FLOOR_NODE, 431, 1.0, "GB/s",
     NCCL_AZURE_SOURCE("431", "ND H200 v5 (conf/nd96isr_h200_v5.conf)")},
};

static const struct gb_floor h100_floors[] = {
    {"hbm_bandwidth", "memcpy", GB_FLOOR_FIXED, 3350, DCGM_FRACTION, "GB/s",
     "0.75 (DCGM's fraction) of 3.35 TB/s, the H100 SXM datasheet's HBM3 bandwidth"},
    {"hbm_bandwidth", "triad", GB_FLOOR_FIXED, 3350, DCGM_FRACTION, "GB/s",
     "0.75 (DCGM's fraction) of 3.35 TB/s, the H100 SXM datasheet's HBM3 bandwidth"},
    {"compute_peak", "fp32_fma", GB_FLOOR_FIXED, 67, DCGM_FRACTION, "TFLOP/s",
     "0.75 (DCGM's fraction) of 67 TFLOP/s, the H100 SXM datasheet's FP32"},
    {"compute_peak", "gemm_bf16", GB_FLOOR_FIXED, 989.4, GEMM_FRACTION, "TFLOP/s",
     "0.6 of 989.4 TFLOP/s, the H100 SXM datasheet's dense BF16 (the H200, the same "
     "compute, reached 0.71 of it at gemm_n 4096 under its power cap, 2026-12-01)"},
    PCIE_FLOORS,
    NVLINK_FLOOR,
    SOAK_FLOORS,
    {"nccl_allreduce", "busbw_16g_8gpu", GB_FLOOR_NODE, 460, 1.0, "GB/s",
     NCCL_AZURE_SOURCE("460", "ND H100 v5 (conf/nd96isr_h100_v5.conf)")},
};

static const struct gb_floor a100_floors[] = {
    {"hbm_bandwidth", "memcpy", GB_FLOOR_FIXED, 2039, DCGM_FRACTION, "GB/s",
     "0.75 (DCGM's fraction) of 2039 GB/s, the A100 SXM4 80GB datasheet's HBM2e bandwidth"},
    {"hbm_bandwidth", "triad", GB_FLOOR_FIXED, 2039, DCGM_FRACTION, "GB/s",
     "0.75 (DCGM's fraction) of 2039 GB/s, the A100 SXM4 80GB datasheet's HBM2e bandwidth"},
    {"compute_peak", "fp32_fma", GB_FLOOR_FIXED, 19.5, DCGM_FRACTION, "TFLOP/s",
     "0.75 (DCGM's fraction) of 19.5 TFLOP/s, the A100 datasheet's FP32"},
    {"compute_peak", "gemm_bf16", GB_FLOOR_FIXED, 312, GEMM_FRACTION, "TFLOP/s",
     "0.6 of 312 TFLOP/s, the A100 datasheet's dense BF16 (as for Hopper: a GEMM of "
     "gemm_n 4096 reaches about 0.7 of the dense figure)"},
    PCIE_FLOORS,
    NVLINK_FLOOR,
    SOAK_FLOORS,
};

static const struct gb_floor l40s_floors[] = {
    {"hbm_bandwidth", "memcpy", GB_FLOOR_FIXED, 864, DCGM_FRACTION, "GB/s",
     "0.75 (DCGM's fraction) of 864 GB/s, the L40S datasheet's GDDR6 bandwidth"},
    {"hbm_bandwidth", "triad", GB_FLOOR_FIXED, 864, DCGM_FRACTION, "GB/s",
     "0.75 (DCGM's fraction) of 864 GB/s, the L40S datasheet's GDDR6 bandwidth"},
    {"compute_peak", "fp32_fma", GB_FLOOR_FIXED, 91.6, DCGM_FRACTION, "TFLOP/s",
     "0.75 (DCGM's fraction) of 91.6 TFLOP/s, the L40S datasheet's FP32"},
    {"compute_peak", "gemm_bf16", GB_FLOOR_FIXED, 362.05, GEMM_FRACTION, "TFLOP/s",
     "0.6 of 362.05 TFLOP/s, the L40S datasheet's dense BF16 (as for Hopper: a GEMM of "
     "gemm_n 4096 reaches about 0.7 of the dense figure)"},
    PCIE_FLOORS, /* no NVLink: its peers talk over PCIe, which has no floor */
    SOAK_FLOORS,
};
/* clang-format on */

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const struct gb_card_model models[] = {
    {"H200 SXM", {"NVIDIA H200", "NVIDIA H200 141GB HBM3e", NULL}, h200_floors, N(h200_floors)},
    {"H100 SXM", {"NVIDIA H100 80GB HBM3", NULL}, h100_floors, N(h100_floors)},
    {"A100 SXM4 80GB", {"NVIDIA A100-SXM4-80GB", NULL}, a100_floors, N(a100_floors)},
    {"L40S", {"NVIDIA L40S", NULL}, l40s_floors, N(l40s_floors)},
};

const char *const gb_card_state_names[GB_CARD_STATES] = {
    [GB_CARD_HEALTHY] = "healthy",
    [GB_CARD_DEGRADED] = "degraded",
    [GB_CARD_UNKNOWN] = "unknown",
};

const struct gb_card_model *gb_expect_model(const char *device_name)
{
    if (device_name == NULL)
        return NULL;
    for (int m = 0; m < N(models); m++)
        for (const char *const *n = models[m].names; *n; n++)
            if (strcmp(*n, device_name) == 0)
                return &models[m];
    return NULL;
}

int gb_expect_benchmark_checked(const char *benchmark)
{
    if (benchmark == NULL)
        return 0;
    if (gb_deep_exact(benchmark) || strcmp(benchmark, "soak") == 0)
        return 1; /* checks of every model: expect_deep.h */
    for (int m = 0; m < N(models); m++)
        for (int f = 0; f < models[m].nfloors; f++)
            if (strcmp(models[m].floors[f].benchmark, benchmark) == 0)
                return 1;
    return 0;
}

int gb_expect_card_floored(const struct gb_card_model *m, const char *benchmark)
{
    if (m == NULL || benchmark == NULL)
        return 0;
    for (int f = 0; f < m->nfloors; f++)
        if (m->floors[f].basis != GB_FLOOR_PER_NVLINK && m->floors[f].basis != GB_FLOOR_NODE &&
            strcmp(m->floors[f].benchmark, benchmark) == 0)
            return 1;
    return 0;
}

static const char *str_of(const cJSON *obj, const char *name)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(obj, name));
}

static double num_of(const cJSON *obj, const char *name)
{
    const cJSON *v = cJSON_GetObjectItem(obj, name);

    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static int is(const char *s, const char *want)
{
    return s != NULL && strcmp(s, want) == 0;
}

int gb_expect_row_name(const char *benchmark, const cJSON *row, double largest_pinned,
                       char *buf, size_t cap)
{
    const char *name = NULL;

    if (is(benchmark, "hbm_bandwidth"))
        name = str_of(row, "kernel");
    else if (is(benchmark, "compute_peak"))
        name = str_of(row, "kind");
    else if (is(benchmark, "soak")) /* its summary's rows, gb_deep_soak_rows */
        name = str_of(row, "label");
    else if (is(benchmark, "pcie_bandwidth") && is(str_of(row, "memory"), "pinned") &&
             num_of(row, "bytes") == largest_pinned)
        name = str_of(row, "direction");
    else if (is(benchmark, "p2p_bandwidth") && is(str_of(row, "direction"), "uni") &&
             is(str_of(row, "unit"), "GB/s"))
        name = "peer";
    else if (is(benchmark, "nccl_allreduce") && num_of(row, "bytes") == 17179869184.0 &&
             num_of(row, "ranks") == 8 && is(str_of(row, "link_type"), "nvlink"))
        name = "busbw_16g_8gpu";
    if (name == NULL || (size_t)snprintf(buf, cap, "%s", name) >= cap)
        return 0;
    return 1;
}

/* The link meta.link reports: the current generation and width, else the
 * maximum; 0 when neither is there. */
static double pcie_link_gbps(const cJSON *meta, int *gen, int *width)
{
    const cJSON *link = cJSON_GetObjectItem(meta, "link");
    double g = num_of(link, "gen_current"), w = num_of(link, "width_current");

    if (!(g > 0))
        g = num_of(link, "gen_max");
    if (!(w > 0))
        w = num_of(link, "width_max");
    *gen = g > 0 ? (int)g : 0;
    *width = w > 0 ? (int)w : 0;
    return gb_pcie_link_gbps(*gen, *width);
}

/* The floor f sets for row of a run with meta, into *floor, with what it
 * follows appended to note; 0 when the row's topology gives none (a peer
 * row not over NVLink, a run without meta.link). */
static int floor_of(const struct gb_floor *f, const cJSON *row, const cJSON *meta,
                    double *floor, char *note, size_t cap)
{
    const cJSON *link = cJSON_GetObjectItem(row, "link");
    double links;
    int gen, width;

    note[0] = '\0';
    switch (f->basis) {
    case GB_FLOOR_FIXED:
    case GB_FLOOR_NODE:
        *floor = f->figure * f->fraction;
        return 1;
    case GB_FLOOR_PCIE_LINK:
        *floor = f->fraction * pcie_link_gbps(meta, &gen, &width);
        snprintf(note, cap, "; link gen %d x%d", gen, width);
        return *floor > 0;
    case GB_FLOOR_PER_NVLINK:
        links = num_of(link, "links");
        if (!is(str_of(link, "type"), "nvlink") || !(links > 0))
            return 0;
        *floor = f->figure * links * f->fraction;
        snprintf(note, cap, "; %.0f NVLink links", links);
        return 1;
    case GB_CEILING_SLOWDOWN_TEMP:
        *floor = num_of(row, "slowdown_temperature_c") - f->figure;
        snprintf(note, cap, "; NVML's slowdown threshold %.0f C",
                 num_of(row, "slowdown_temperature_c"));
        return isfinite(*floor);
    }
    return 0;
}

static const struct gb_floor *find_floor(const struct gb_card_model *m, const char *benchmark,
                                         const char *row)
{
    for (int i = 0; m && i < m->nfloors; i++)
        if (strcmp(m->floors[i].benchmark, benchmark) == 0 && strcmp(m->floors[i].row, row) == 0)
            return &m->floors[i];
    return NULL;
}

/* Whether some model has a floor for row of benchmark. */
static int any_floor(const char *benchmark, const char *row)
{
    for (int m = 0; m < N(models); m++)
        if (find_floor(&models[m], benchmark, row))
            return 1;
    return 0;
}

/* The largest bytes of the run's pinned rows (pcie_bandwidth's checked
 * size). */
static double largest_pinned_bytes(const cJSON *rows)
{
    double most = 0;
    const cJSON *row;

    cJSON_ArrayForEach(row, rows) {
        double b = num_of(row, "bytes");
        if (is(str_of(row, "memory"), "pinned") && b > most)
            most = b;
    }
    return most;
}

/* One check {"row", "value", "unit", "floor", "source", "pass"}; floor <
 * 0 is none (unknown model: null floor and pass).  value is finite.  A
 * NEW object for jb_push, whole unless jb failed. */
static cJSON *check_json(struct json_build *jb, const cJSON *row, const char *name,
                         double value, const char *unit, double floor, const char *source,
                         int ceiling)
{
    cJSON *c = jb_new_object(jb);
    const char *label = str_of(row, "label");

    jb_string(jb, c, "row", label ? label : name);
    jb_number(jb, c, "value", value);
    jb_string(jb, c, "unit", unit);
    /* a floor made infinite by what the row says (its links) is null, as cJSON printed it */
    jb_number_or_null(jb, c, ceiling ? "ceiling" : "floor", floor >= 0 ? floor : NAN);
    jb_string(jb, c, "source", source);
    if (floor >= 0)
        jb_bool(jb, c, "pass", ceiling ? value <= floor : value >= floor);
    else
        jb_null(jb, c, "pass");
    return c;
}

/* Whether any model's floor of row of benchmark is a ceiling. */
static int is_ceiling(const char *benchmark, const char *row)
{
    for (int m = 0; m < N(models); m++)
        for (int i = 0; i < models[m].nfloors; i++)
            if (strcmp(models[m].floors[i].benchmark, benchmark) == 0 &&
                strcmp(models[m].floors[i].row, row) == 0)
                return models[m].floors[i].basis == GB_CEILING_SLOWDOWN_TEMP;
    return 0;
}

cJSON *gb_checks_judge(const char *benchmark, const cJSON *results, const cJSON *meta)
{
    const cJSON *rows = cJSON_GetObjectItem(results, "rows"), *row;
    const char *device = str_of(cJSON_GetObjectItem(meta, "device"), "name");
    const struct gb_card_model *model = gb_expect_model(device);
    double largest = largest_pinned_bytes(rows);
    char unknown[200];
    struct json_build jb = {0};
    cJSON *out, *own_rows = NULL;

    if (!gb_expect_benchmark_checked(benchmark))
        return NULL;
    out = jb_new_array(&jb);
    if (gb_deep_exact(benchmark)) {
        gb_deep_exact_checks(&jb, out, benchmark, results);
        goto done;
    }
    if (is(benchmark, "soak")) { /* judged on its summary, and its slowdowns */
        gb_deep_soak_slowdown(&jb, out, results);
        if ((own_rows = gb_deep_soak_rows(results)) == NULL)
            jb_fail(&jb);
        rows = own_rows;
    }
    snprintf(unknown, sizeof(unknown),
             "none: the card model \"%.80s\" has no floors in common/expect.c",
             device ? device : "(no device name)");
    cJSON_ArrayForEach(row, rows) {
        const struct gb_floor *f;
        const char *unit = str_of(row, "unit");
        double value = num_of(row, "value"), floor = -1;
        char name[64], note[64], source[600];
        if (!gb_expect_row_name(benchmark, row, largest, name, sizeof(name)) || !isfinite(value) ||
            unit == NULL)
            continue;
        if (model == NULL) {
            if (!any_floor(benchmark, name))
                continue; /* no model has one: nothing to say */
            jb_push(&jb, out,
                    check_json(&jb, row, name, value, unit, -1, unknown,
                               is_ceiling(benchmark, name)));
        } else {
            f = find_floor(model, benchmark, name);
            if (f == NULL || strcmp(f->unit, unit) != 0 ||
                !floor_of(f, row, meta, &floor, note, sizeof(note)))
                continue; /* a row without a floor gets no check */
            snprintf(source, sizeof(source), "%s: %s%s", model->model, f->source, note);
            jb_push(&jb, out,
                    check_json(&jb, row, name, value, unit, floor, source,
                               f->basis == GB_CEILING_SLOWDOWN_TEMP));
        }
    }

done:
    cJSON_Delete(own_rows);
    if (jb_failed(&jb)) {
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}

int gb_checks_failed(const cJSON *checks)
{
    const cJSON *c;
    int n = 0;

    if (!cJSON_IsArray(checks))
        return -1;
    cJSON_ArrayForEach(c, checks)
        n += cJSON_IsFalse(cJSON_GetObjectItem(c, "pass"));
    return n;
}
