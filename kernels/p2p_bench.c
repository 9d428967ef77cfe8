/*
 * p2p_bench.c - p2p_bandwidth: every ordered pair of the node's GPUs,
 * bandwidth each way, both ways at once, and the latency of an 8-byte
 * copy, with the link NVML reports between them, as rows and as
 * summary.matrix (I16_CONTRACT.md).  On a node with one GPU the run
 * succeeds with no rows and says there is no pair.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "gb_perf.h"
#include "perf_report.h"
#include "report_json.h"

#define MAX_DEVICES 16
#define MAX_OPS (MAX_DEVICES * (MAX_DEVICES - 1) * 3)

/* NVLink generation of an nvmlNvlinkVersion_t (nvml.h: 1 = 1.0, 2 = 2.0,
 * 3 = 2.2, 4 = 3.0, 5 = 3.1, 6 = 4.0, 7 = 5.0); 0 unknown. */
static double nvlink_generation(int nvml_version)
{
    static const double gen[] = {0, 1.0, 2.0, 2.2, 3.0, 3.1, 4.0, 5.0};

    return nvml_version >= 0 && nvml_version < (int)(sizeof(gen) / sizeof(gen[0]))
               ? gen[nvml_version]
               : 0;
}

/* {"type","links","version"} for src -> dst, from NVML. */
static cJSON *link_between(const struct gb_bench_env *env, int src, int dst)
{
    struct gb_device_info a, b;
    struct gb_cuda_error cuda;
    struct gb_nvml_link l;
    char reason[256];
    int pcie[4];
    cJSON *o = cJSON_CreateObject();

    if (o == NULL)
        return NULL;
    memset(&cuda, 0, sizeof(cuda));
    if (gb_device_query(src, &a, &cuda) != 0 || gb_device_query(dst, &b, &cuda) != 0 ||
        gb_nvml_link_between(env->nvml, a.pci_bus_id, b.pci_bus_id, &l, reason,
                             sizeof(reason)) != 0) {
        cJSON_AddNullToObject(o, "type");
        cJSON_AddStringToObject(o, "reason", env->nvml ? reason : env->nvml_reason);
        return o;
    }
    if (l.nvlink_p2p || l.direct_links > 0) {
        cJSON_AddStringToObject(o, "type", "nvlink");
        cJSON_AddNumberToObject(o, "links", l.direct_links > 0 ? l.direct_links : l.active_links);
        cJSON_AddNumberToObject(o, "version", nvlink_generation(l.version));
        cJSON_AddNumberToObject(o, "nvml_version_enum", l.version);
        cJSON_AddStringToObject(o, "via", l.direct_links > 0 ? "direct" : "nvswitch");
        return o;
    }
    cJSON_AddStringToObject(o, "type", "pcie");
    if (gb_nvml_pcie_link(env->nvml, a.pci_bus_id, pcie, reason, sizeof(reason)) == 0) {
        cJSON_AddNumberToObject(o, "links", pcie[1]);
        cJSON_AddNumberToObject(o, "version", pcie[0]);
    } else {
        cJSON_AddNullToObject(o, "links");
        cJSON_AddNullToObject(o, "version");
    }
    cJSON_AddNumberToObject(o, "active_nvlinks", l.active_links);
    return o;
}

static cJSON *square(int n, double fill)
{
    cJSON *m = cJSON_CreateArray();

    for (int i = 0; m != NULL && i < n; i++) {
        cJSON *row = cJSON_CreateArray();
        cJSON_AddItemToArray(m, row);
        for (int j = 0; row != NULL && j < n; j++)
            cJSON_AddItemToArray(row, fill < 0 ? cJSON_CreateNull() : cJSON_CreateNumber(fill));
    }
    return m;
}

static void set_cell(cJSON *m, int i, int j, cJSON *v)
{
    cJSON_ReplaceItemInArray(cJSON_GetArrayItem(m, i), j, v);
}

int gb_bench_p2p_bandwidth(const struct gb_bench_env *env, const cJSON *params,
                           cJSON **result, struct gb_job_error *err)
{
    struct gb_perf_op *ops = calloc(MAX_OPS, sizeof(*ops));
    const cJSON *mib = cJSON_GetObjectItemCaseSensitive(params, "size_mib");
    struct gb_measure_opts opts;
    struct gb_cuda_error cuda;
    int n = 0, count = 0, rc = -1;
    cJSON *list, *summary, *matrix, *gbps, *lat, *links, *devs;

    *result = NULL;
    memset(&cuda, 0, sizeof(cuda));
    if (ops == NULL)
        return gb_job_fail(err, "internal", "out of memory");
    gb_bench_measure_opts(env, params, &opts);
    rc = gb_p2p_measure(env->dev->index,
                        (long long)(cJSON_IsNumber(mib) ? mib->valuedouble : 256) << 20, &opts,
                        env->hooks, ops, MAX_OPS, &count, &n, &cuda);
    if (rc < 0) {
        gb_job_fail_cuda(err, &cuda);
        goto out;
    }
    if (rc > 0) {
        gb_job_fail(err, "verification_failed", "%s: %lld of %lld bytes wrong",
                    ops[count - 1].label, ops[count - 1].mismatches, ops[count - 1].checked);
        goto out;
    }
    rc = GB_PERF_OOM; /* until the result is whole */
    if (gb_perf_result_begin(result, &list, &summary) != 0)
        goto out;
    matrix = cJSON_AddObjectToObject(summary, "matrix");
    devs = cJSON_AddArrayToObject(matrix, "devices");
    gbps = square(n, -1);
    lat = square(n, -1);
    links = square(n, -1);
    if (matrix == NULL || devs == NULL || gbps == NULL || lat == NULL || links == NULL) {
        cJSON_Delete(gbps);
        cJSON_Delete(lat);
        cJSON_Delete(links);
        goto out;
    }
    cJSON_AddItemToObject(matrix, "gbps", gbps);
    cJSON_AddItemToObject(matrix, "latency_us", lat);
    cJSON_AddItemToObject(matrix, "link", links);
    for (int d = 0; d < n; d++)
        cJSON_AddItemToArray(devs, cJSON_CreateNumber(d));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j)
                set_cell(links, i, j, link_between(env, i, j));
    for (int k = 0; k < count; k++) {
        const struct gb_perf_op *op = &ops[k];
        int latency = strstr(op->label, "latency") != NULL;
        cJSON *o = gb_perf_add_row(list, op, latency ? "us" : "GB/s", 1e9, 0,
                                   "none: no peak is claimed for peer links");
        const cJSON *cell;
        double v;
        if (o == NULL)
            goto out;
        cJSON_AddNumberToObject(o, "src", op->src);
        cJSON_AddNumberToObject(o, "dst", op->dst);
        cJSON_AddStringToObject(o, "mode", op->peer ? "peer" : "staged");
        cJSON_AddStringToObject(o, "direction", op->bidirectional ? "bi" : "uni");
        cJSON_AddNumberToObject(o, "bytes", op->amount / (op->bidirectional ? 2 : 1));
        cell = cJSON_GetArrayItem(cJSON_GetArrayItem(links, op->src), op->dst);
        cJSON_AddItemToObject(o, "link", cJSON_Duplicate(cell, 1));
        v = cJSON_GetNumberValue(cJSON_GetObjectItem(o, "value"));
        if (latency) {
            gb_json_add_number(o, "latency_us", v);
            set_cell(lat, op->src, op->dst, cJSON_CreateNumber(v));
        } else if (!op->bidirectional) {
            set_cell(gbps, op->src, op->dst, cJSON_CreateNumber(v));
        }
    }
    cJSON_AddNumberToObject(summary, "device_count", n);
    if (n < 2)
        cJSON_AddStringToObject(summary, "no_pair",
                                "this node has one GPU: there is no pair to measure");
    gb_perf_summary_closing(summary,
                            "cudaMemcpyPeerAsync from each device's stream, back to back; "
                            "peer access enabled where cudaDeviceCanAccessPeer says so "
                            "(mode peer), otherwise the driver stages the copy through host "
                            "memory (mode staged); bidirectional: both copies at once on two "
                            "streams; latency: the time of one 8-byte copy; each pair's "
                            "destination poisoned and every byte of one copy checked; link "
                            "from NVML (nvmlDeviceGetP2PStatus NVLINK, GetNvLinkState/Version, "
                            "else the PCIe link)");
    rc = 0;
out:
    rc = gb_perf_result_end(rc, result, ops, MAX_OPS, err);
    free(ops);
    return rc;
}
