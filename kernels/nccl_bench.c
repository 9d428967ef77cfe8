/*
 * nccl_bench.c - nccl_allreduce: NCCL all-reduce (sum, in place) over
 * every GPU of the node, one row a size, with the links between the GPUs
 * from NVML.  The GPUs are driven by nccl_kernels.cu
 * (gb_nccl_measure); NCCL is loaded at run time (nccl_api.cuh), and where
 * it is missing every row says why and the run still ends.  On a node of
 * one GPU the run ends with no rows (the daemon refuses it before:
 * min_devices 2).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "gb_perf.h"
#include "nccl_math.h"
#include "nccl_report.h"
#include "perf_report.h"
#include "report_json.h"
#include "stats.h"

#define MAX_SIZES 16

/* "8 MiB", "1 GiB", "12 KiB" or "40 B" for bytes. */
static void size_text(long long bytes, char *buf, size_t cap)
{
    static const char *const units[] = {"GiB", "MiB", "KiB"};
    static const int shifts[] = {30, 20, 10};

    for (int i = 0; i < 3; i++)
        if (bytes >= (1LL << shifts[i]) && bytes % (1LL << shifts[i]) == 0) {
            snprintf(buf, cap, "%lld %s", bytes >> shifts[i], units[i]);
            return;
        }
    snprintf(buf, cap, "%lld B", bytes);
}

cJSON *gb_nccl_add_row(cJSON *rows, const struct gb_perf_op *op, long long bytes,
                       const char *dtype_name, int dtype_size, int ranks,
                       const char *link_type)
{
    cJSON *o = gb_perf_add_row(rows, op, "GB/s", 1e9, 0,
                               "none: bus bandwidth is judged against a floor per model and "
                               "topology (common/expect.c), not a peak");
    struct gb_stats st;

    if (o == NULL)
        return NULL;
    cJSON_AddNumberToObject(o, "bytes", (double)bytes);
    cJSON_AddStringToObject(o, "dtype", dtype_name);
    cJSON_AddNumberToObject(o, "ranks", ranks);
    cJSON_AddNumberToObject(o, "elements", (double)(bytes / dtype_size));
    if (link_type != NULL)
        cJSON_AddStringToObject(o, "link_type", link_type);
    else
        cJSON_AddNullToObject(o, "link_type");
    if (op->available && op->s.count > 0 && gb_stats_compute(op->s.ms, op->s.count, &st) == 0 &&
        st.median > 0) {
        double algbw = gb_nccl_algbw_gbps((double)bytes, st.median * 1e-3);
        gb_json_add_number(o, "time_us", st.median * 1e3);
        gb_json_add_number(o, "algbw_gbps", algbw);
        gb_json_add_number(o, "busbw_gbps", algbw * gb_nccl_busbw_factor(ranks));
    }
    return o;
}

/* "nvlink" when NVML says every pair of the node's GPUs talks over
 * NVLink, "pcie" when one pair does not, NULL when NVML cannot tell; the
 * fewest active NVLinks of a GPU into *links_min. */
static const char *node_links(const struct gb_bench_env *env, int n, int *links_min,
                              cJSON *summary)
{
    struct gb_device_info a, b;
    struct gb_cuda_error cuda;
    struct gb_nvml_link l;
    char reason[256];
    int all_nvlink = 1;

    *links_min = -1;
    memset(&cuda, 0, sizeof(cuda));
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            if (gb_device_query(i, &a, &cuda) != 0 || gb_device_query(j, &b, &cuda) != 0 ||
                gb_nvml_link_between(env->nvml, a.pci_bus_id, b.pci_bus_id, &l, reason,
                                     sizeof(reason)) != 0) {
                cJSON_AddStringToObject(summary, "link_reason",
                                        env->nvml ? reason : env->nvml_reason);
                return NULL;
            }
            all_nvlink &= l.nvlink_p2p || l.direct_links > 0;
            if (*links_min < 0 || l.active_links < *links_min)
                *links_min = l.active_links;
        }
    return all_nvlink ? "nvlink" : "pcie";
}

int gb_bench_nccl_allreduce(const struct gb_bench_env *env, const cJSON *params,
                            cJSON **result, struct gb_job_error *err)
{
    const char *dtype_name =
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(params, "dtype"));
    struct gb_perf_op *ops = calloc(MAX_SIZES, sizeof(*ops));
    long sizes[MAX_SIZES];
    long long bytes[MAX_SIZES];
    struct gb_measure_opts opts;
    struct gb_cuda_error cuda;
    char version[32], reason[sizeof(ops[0].reason)];
    int count = gb_bench_long_list(params, "bytes", sizes, MAX_SIZES);
    int dtype = gb_nccl_dtype_of(dtype_name ? dtype_name : "float");
    int n = 0, links_min = -1, rc = -1;
    const char *link_type = NULL;
    cJSON *list, *summary, *topo;

    *result = NULL;
    memset(&cuda, 0, sizeof(cuda));
    if (ops == NULL)
        return gb_job_fail(err, "internal", "out of memory");
    if (count < 1 || dtype < 0) {
        free(ops);
        return gb_job_fail(err, "invalid_params", "bytes or dtype missing or unknown");
    }
    for (int i = 0; i < count; i++) {
        char text[32];
        bytes[i] = sizes[i];
        size_text(bytes[i], text, sizeof(text));
        snprintf(ops[i].label, sizeof(ops[i].label), "all-reduce %s", text);
    }
    gb_bench_measure_opts(env, params, &opts);
    rc = gb_nccl_measure(env->dev->index, bytes, count, dtype, &opts, env->hooks, ops, &n,
                         version, sizeof(version), &cuda);
    if (rc < 0) {
        gb_job_fail_cuda(err, &cuda);
        goto out;
    }
    if (rc > 0) {
        for (int i = 0; i < count; i++)
            if (ops[i].mismatches != 0)
                gb_job_fail(err, "verification_failed",
                            "%s: %lld of %lld elements are not %g (rank r filled r + 1)",
                            ops[i].label, ops[i].mismatches, ops[i].checked,
                            gb_nccl_expected_sum(n));
        rc = -1;
        goto out;
    }
    rc = GB_PERF_OOM; /* until the result is whole */
    if (gb_perf_result_begin(result, &list, &summary) != 0)
        goto out;
    topo = cJSON_AddObjectToObject(summary, "topology");
    if (topo == NULL)
        goto out;
    if (n >= 2)
        link_type = node_links(env, n, &links_min, topo);
    cJSON_AddNumberToObject(topo, "ranks", n);
    if (link_type != NULL)
        cJSON_AddStringToObject(topo, "link_type", link_type);
    else
        cJSON_AddNullToObject(topo, "link_type");
    if (links_min >= 0)
        cJSON_AddNumberToObject(topo, "nvlinks_up_min", links_min);
    for (int i = 0; n >= 2 && i < count; i++) {
        if (!ops[i].available && ops[i].reason[0] == '\0')
            snprintf(ops[i].reason, sizeof(ops[i].reason), "not measured");
        if (gb_nccl_add_row(list, &ops[i], bytes[i], dtype_name ? dtype_name : "float",
                            gb_nccl_dtype_size((enum gb_nccl_dtype)dtype), n, link_type) == NULL)
            goto out;
    }
    cJSON_AddNumberToObject(summary, "device_count", n);
    if (version[0] != '\0')
        cJSON_AddStringToObject(summary, "nccl_version", version);
    else if (n >= 2 && count > 0 && !ops[0].available) {
        snprintf(reason, sizeof(reason), "%s", ops[0].reason);
        cJSON_AddStringToObject(summary, "nccl_reason", reason);
    }
    if (n < 2)
        cJSON_AddStringToObject(summary, "no_pair",
                                "this node has one GPU: there is nothing to all-reduce across");
    gb_perf_summary_closing(summary,
                            "ncclAllReduce (sum, in place) on every GPU of the node, one "
                            "communicator a GPU from ncclCommInitAll in one process, each "
                            "all-reduce one ncclGroupStart/End; a sample is back-to-back "
                            "all-reduces between events on the worker device's stream, which "
                            "waits for every rank's stream; time_us the median all-reduce, "
                            "algbw_gbps = bytes / time, busbw_gbps = algbw x 2(n-1)/n "
                            "(nccl-tests' definitions), value = busbw; before timing each "
                            "size, rank r fills r + 1 and every element of every rank must "
                            "read n(n+1)/2 after one all-reduce; NCCL loaded with dlopen "
                            "(GPUBENCH_NCCL_LIBRARY, else libnccl.so.2)");
    rc = 0;
out:
    rc = gb_perf_result_end(rc, result, ops, MAX_SIZES, err);
    free(ops);
    return rc;
}
