/*
 * test_expect.c - the floors table and the judge of common/expect.c, on
 * the H200 health runs in examples/ (every check passes), the same runs
 * degraded (a check fails), a card on a narrower PCIe link (judged against
 * that link) and a card model the table does not know (no floor).
 */
#include "alloc_fail.h"
#include "expect.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

static cJSON *load_example(const char *name)
{
    char path[512];
    FILE *f;
    long n;
    char *text;
    cJSON *doc = NULL;

    snprintf(path, sizeof(path), "%s/%s", GB_EXAMPLES, name);
    if ((f = fopen(path, "rb")) == NULL)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = malloc((size_t)n + 1)) != NULL) {
        if (fread(text, 1, (size_t)n, f) == (size_t)n) {
            text[n] = '\0';
            doc = cJSON_Parse(text);
        }
        free(text);
    }
    fclose(f);
    return doc;
}

/* The checks of example name, with (when row_label) that row's value set. */
static cJSON *judge_example(const char *benchmark, const char *name, const char *row_label,
                            double value)
{
    cJSON *doc = load_example(name), *out, *row;
    cJSON *result = cJSON_GetObjectItem(doc, "result");

    cJSON_ArrayForEach(row, cJSON_GetObjectItem(result, "rows"))
        if (row_label && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(row, "label")),
                                row_label) == 0)
            cJSON_ReplaceItemInObject(row, "value", cJSON_CreateNumber(value));
    out = gb_checks_judge(benchmark, result, cJSON_GetObjectItem(doc, "meta"));
    cJSON_Delete(doc);
    return out;
}

static const cJSON *check_of(const cJSON *checks, const char *row)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, checks)
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "row")), row) == 0)
            return c;
    return NULL;
}

static double floor_of(const cJSON *checks, const char *row)
{
    return cJSON_GetNumberValue(cJSON_GetObjectItem(check_of(checks, row), "floor"));
}

static int test_models(void)
{
    ASSERT_STR_EQ(gb_expect_model("NVIDIA H200")->model, "H200 SXM");
    ASSERT_STR_EQ(gb_expect_model("NVIDIA H100 80GB HBM3")->model, "H100 SXM");
    ASSERT_STR_EQ(gb_expect_model("NVIDIA A100-SXM4-80GB")->model, "A100 SXM4 80GB");
    ASSERT_STR_EQ(gb_expect_model("NVIDIA L40S")->model, "L40S");
    /* exact names only: a PCIe H100 is another card */
    ASSERT(gb_expect_model("NVIDIA H100 PCIe") == NULL);
    ASSERT(gb_expect_model(NULL) == NULL);
    ASSERT(gb_expect_benchmark_checked("hbm_bandwidth"));
    ASSERT(!gb_expect_benchmark_checked("smem_stride"));
    return 0;
}

static int test_h200_passes(void)
{
    static const struct {
        const char *bench, *file;
        int n;
    } runs[] = {
        {"hbm_bandwidth", "h200_health_hbm_bandwidth.json", 2},
        {"compute_peak", "h200_health_compute_peak.json", 2},
        {"pcie_bandwidth", "h200_health_pcie_bandwidth.json", 2},
        {"p2p_bandwidth", "h200_health_p2p_bandwidth.json", 2},
    };

    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        cJSON *checks = judge_example(runs[i].bench, runs[i].file, NULL, 0);
        const cJSON *c;
        ASSERT(checks != NULL);
        ASSERT_EQ(cJSON_GetArraySize(checks), runs[i].n);
        ASSERT_EQ(gb_checks_failed(checks), 0);
        cJSON_ArrayForEach(c, checks) {
            ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(c, "pass")));
            ASSERT(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(c, "source")), "H200") != NULL);
        }
        cJSON_Delete(checks);
    }
    return 0;
}

static int test_floors(void)
{
    cJSON *hbm = judge_example("hbm_bandwidth", "h200_health_hbm_bandwidth.json", NULL, 0);
    cJSON *pcie = judge_example("pcie_bandwidth", "h200_health_pcie_bandwidth.json", NULL, 0);
    cJSON *p2p = judge_example("p2p_bandwidth", "h200_health_p2p_bandwidth.json", NULL, 0);

    ASSERT_NEAR(floor_of(hbm, "triad"), 0.9 * 4353, 1e-6);
    ASSERT_NEAR(floor_of(hbm, "memcpy"), 0.9 * 4206, 1e-6);
    ASSERT(check_of(hbm, "copy") == NULL); /* a row without a floor: no check */
    /* the largest pinned size only, each way: 0.75 of gen 5 x16 */
    ASSERT(check_of(pcie, "h2d pinned 1 MiB") == NULL);
    ASSERT(check_of(pcie, "h2d pageable 64 MiB") == NULL);
    ASSERT_NEAR(floor_of(pcie, "h2d pinned 64 MiB"), 0.75 * 32 * 16 * 128 / 130 / 8, 1e-9);
    ASSERT_NEAR(floor_of(pcie, "d2h pinned 64 MiB"), 0.75 * 32 * 16 * 128 / 130 / 8, 1e-9);
    /* one way over 18 NVLink links; no latency or bidirectional check */
    ASSERT_NEAR(floor_of(p2p, "0->1 bandwidth"), 0.75 * 25 * 18, 1e-9);
    ASSERT(check_of(p2p, "0->1 latency") == NULL && check_of(p2p, "0->1 bidirectional") == NULL);
    cJSON_Delete(hbm);
    cJSON_Delete(pcie);
    cJSON_Delete(p2p);
    return 0;
}

static int test_degraded_fails(void)
{
    cJSON *hbm = judge_example("hbm_bandwidth", "h200_health_hbm_bandwidth.json", "triad", 3100);
    cJSON *gemm = judge_example("compute_peak", "h200_health_compute_peak.json", "gemm_bf16", 550);
    const cJSON *triad = check_of(hbm, "triad");

    ASSERT_EQ(gb_checks_failed(hbm), 1);
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(triad, "pass")));
    ASSERT_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(triad, "value")), 3100, 1e-9);
    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(check_of(hbm, "memcpy"), "pass")));
    ASSERT_EQ(gb_checks_failed(gemm), 1);
    cJSON_Delete(hbm);
    cJSON_Delete(gemm);
    return 0;
}

/* A card in a gen 5 x8 slot reaching 0.87 of that link passes against
 * the link it has; the same figures fail a card that trained at x16. */
static int test_narrow_link(void)
{
    cJSON *doc = load_example("h200_health_pcie_bandwidth.json"), *checks, *row;
    cJSON *result = cJSON_GetObjectItem(doc, "result");
    cJSON *link = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "meta"), "link");

    cJSON_ArrayForEach(row, cJSON_GetObjectItem(result, "rows")) {
        double half = cJSON_GetNumberValue(cJSON_GetObjectItem(row, "value")) / 2;
        cJSON_ReplaceItemInObject(row, "value", cJSON_CreateNumber(half));
    }
    checks = gb_checks_judge("pcie_bandwidth", result, cJSON_GetObjectItem(doc, "meta"));
    ASSERT_EQ(gb_checks_failed(checks), 2);
    cJSON_Delete(checks);
    cJSON_ReplaceItemInObject(link, "width_current", cJSON_CreateNumber(8));
    cJSON_ReplaceItemInObject(link, "width_max", cJSON_CreateNumber(8));
    checks = gb_checks_judge("pcie_bandwidth", result, cJSON_GetObjectItem(doc, "meta"));
    ASSERT_EQ(cJSON_GetArraySize(checks), 2);
    ASSERT_EQ(gb_checks_failed(checks), 0);
    ASSERT_NEAR(floor_of(checks, "h2d pinned 64 MiB"), 0.75 * 32 * 8 * 128 / 130 / 8, 1e-9);
    ASSERT(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(check_of(checks, "h2d pinned 64 MiB"),
                                                           "source")),
                  "gen 5 x8") != NULL);
    cJSON_Delete(checks);
    /* no current width: the maximum stands for it */
    cJSON_DeleteItemFromObject(link, "width_current");
    checks = gb_checks_judge("pcie_bandwidth", result, cJSON_GetObjectItem(doc, "meta"));
    ASSERT_EQ(gb_checks_failed(checks), 0);
    cJSON_Delete(checks);
    cJSON_Delete(doc);
    return 0;
}

static int test_unknown_model(void)
{
    cJSON *doc = load_example("h200_health_hbm_bandwidth.json"), *checks;
    cJSON *device = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "meta"), "device");
    const cJSON *c;

    cJSON_ReplaceItemInObject(device, "name", cJSON_CreateString("Fake GPU (test double)"));
    checks = gb_checks_judge("hbm_bandwidth", cJSON_GetObjectItem(doc, "result"),
                             cJSON_GetObjectItem(doc, "meta"));
    ASSERT_EQ(cJSON_GetArraySize(checks), 2); /* the rows a model could have a floor for */
    ASSERT_EQ(gb_checks_failed(checks), 0);
    cJSON_ArrayForEach(c, checks) {
        ASSERT(cJSON_IsNull(cJSON_GetObjectItem(c, "floor")));
        ASSERT(cJSON_IsNull(cJSON_GetObjectItem(c, "pass")));
        ASSERT(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(c, "source")), "Fake GPU") != NULL);
    }
    cJSON_Delete(checks);
    /* a benchmark without floors is not checked at all */
    ASSERT(gb_checks_judge("smem_stride", cJSON_GetObjectItem(doc, "result"),
                           cJSON_GetObjectItem(doc, "meta")) == NULL);
    ASSERT_EQ(gb_checks_failed(NULL), -1);
    cJSON_Delete(doc);
    return 0;
}

/* What a card must run and meet after a one-off event: its own floors'
 * benchmarks, not the pair's peer bandwidth, not a benchmark without one. */
static int test_card_floored(void)
{
    static const char *const models[] = {"NVIDIA H200", "NVIDIA H100 80GB HBM3",
                                         "NVIDIA A100-SXM4-80GB", "NVIDIA L40S"};

    for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
        const struct gb_card_model *m = gb_expect_model(models[i]);
        ASSERT(gb_expect_card_floored(m, "hbm_bandwidth"));
        ASSERT(gb_expect_card_floored(m, "compute_peak"));
        ASSERT(gb_expect_card_floored(m, "pcie_bandwidth"));
        ASSERT(!gb_expect_card_floored(m, "p2p_bandwidth"));
        ASSERT(!gb_expect_card_floored(m, "nccl_allreduce")); /* the node's */
        ASSERT(!gb_expect_card_floored(m, "smem_stride"));
        ASSERT(!gb_expect_card_floored(m, NULL));
    }
    /* p2p_bandwidth has a floor, of a pair: checked, not the card's own */
    ASSERT(gb_expect_benchmark_checked("p2p_bandwidth"));
    ASSERT(!gb_expect_card_floored(NULL, "hbm_bandwidth"));
    return 0;
}

/* nccl_allreduce (issue 37): Azure's 8-GPU floors at 16 GiB over NVLink,
 * and nothing judged at another size, rank count or link. */
static int test_nccl_floor(void)
{
    static const char rows_json[] =
        "{\"rows\":["
        "{\"label\":\"a\",\"value\":440,\"unit\":\"GB/s\",\"bytes\":17179869184,"
        "\"ranks\":8,\"link_type\":\"nvlink\"},"
        "{\"label\":\"b\",\"value\":420,\"unit\":\"GB/s\",\"bytes\":17179869184,"
        "\"ranks\":8,\"link_type\":\"nvlink\"},"
        "{\"label\":\"c\",\"value\":100,\"unit\":\"GB/s\",\"bytes\":17179869184,"
        "\"ranks\":2,\"link_type\":\"nvlink\"},"
        "{\"label\":\"d\",\"value\":100,\"unit\":\"GB/s\",\"bytes\":4294967296,"
        "\"ranks\":8,\"link_type\":\"nvlink\"},"
        "{\"label\":\"e\",\"value\":100,\"unit\":\"GB/s\",\"bytes\":17179869184,"
        "\"ranks\":8,\"link_type\":\"pcie\"}]}";
    cJSON *results = cJSON_Parse(rows_json);
    cJSON *h200 = cJSON_Parse("{\"device\":{\"name\":\"NVIDIA H200\"}}");
    cJSON *h100 = cJSON_Parse("{\"device\":{\"name\":\"NVIDIA H100 80GB HBM3\"}}");
    cJSON *checks;

    ASSERT(results != NULL && h200 != NULL && h100 != NULL);
    ASSERT(gb_expect_benchmark_checked("nccl_allreduce"));
    checks = gb_checks_judge("nccl_allreduce", results, h200);
    ASSERT_EQ(cJSON_GetArraySize(checks), 2); /* a and b only */
    ASSERT_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(checks, 0), "floor")),
                431, 1e-9);
    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(checks, 0), "pass")));
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetArrayItem(checks, 1), "pass")));
    ASSERT(strstr(cJSON_GetStringValue(
                      cJSON_GetObjectItem(cJSON_GetArrayItem(checks, 0), "source")),
                  "azurehpc-health-checks") != NULL);
    cJSON_Delete(checks);
    checks = gb_checks_judge("nccl_allreduce", results, h100);
    ASSERT_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(checks, 0), "floor")),
                460, 1e-9);
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetArrayItem(checks, 0), "pass")));
    cJSON_Delete(checks);
    cJSON_Delete(results);
    cJSON_Delete(h200);
    cJSON_Delete(h100);
    return 0;
}

/* The checks of ctx: {benchmark, example document}. */
struct checks_input {
    const char *benchmark;
    cJSON *doc;
};

static cJSON *checks_of(void *ctx)
{
    const struct checks_input *in = ctx;

    return gb_checks_judge(in->benchmark, cJSON_GetObjectItem(in->doc, "result"),
                           cJSON_GetObjectItem(in->doc, "meta"));
}

/* Every cJSON allocation of the checks of a known card (the link's too)
 * failed in turn: the checks are all there or NULL, never some of them. */
static int test_allocation_fails_in_turn(void)
{
    struct checks_input in[2] = {
        {"hbm_bandwidth", load_example("h200_health_hbm_bandwidth.json")},
        {"pcie_bandwidth", load_example("h200_health_pcie_bandwidth.json")},
    };

    for (int i = 0; i < 2; i++) {
        ASSERT(in[i].doc != NULL);
        ASSERT_EQ(alloc_fail_whole_or_null(in[i].benchmark, checks_of, &in[i]), 0);
        cJSON_Delete(in[i].doc);
    }
    return 0;
}

TEST_MAIN({"models", test_models}, {"h200_passes", test_h200_passes}, {"floors", test_floors},
          {"degraded_fails", test_degraded_fails}, {"narrow_link", test_narrow_link},
          {"unknown_model", test_unknown_model}, {"card_floored", test_card_floored},
          {"allocation_fails_in_turn", test_allocation_fails_in_turn},
          {"nccl_floor", test_nccl_floor})
