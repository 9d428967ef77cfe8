/*
 * test_kernels_counters.c - the hardware counters' parts that need no GPU
 * (kernels/counters.c, counters_report.c, the no-CUDA probe): the metric
 * list, the prediction turned into counts, the agreement rule, the
 * driver's RmProfilingAdminOnly, and the unavailable path with the
 * sentence a user reads.
 */
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "counters_report.h"
#include "gb_kernels.h"
#include "predict.h"
#include "test.h"
#include "transpose_report.h"

/* smem_read's launch on an H200 as Nsight Compute counted it: 264 blocks
 * x 32 warps x 64 iterations x 32 loads = 17,301,504 warp loads. */
#define H200_REQUESTS 17301504.0

static const cJSON *get(const cJSON *o, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(o, name);
}

static int test_metric_list(void)
{
    ASSERT_STR_EQ(gb_counter_metric_name(GB_CM_LD_CONFLICTS),
                  "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum");
    ASSERT_STR_EQ(gb_counter_metric_name(GB_CM_ST_CONFLICTS),
                  "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum");
    ASSERT_STR_EQ(gb_counter_metric_name(GB_CM_LD_WAVEFRONTS),
                  "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum");
    ASSERT_STR_EQ(gb_counter_metric_name(GB_CM_ST_WAVEFRONTS),
                  "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum");
    ASSERT_STR_EQ(gb_counter_metric_field(GB_CM_LD_CONFLICTS), "bank_conflicts");
    ASSERT_STR_EQ(gb_counter_metric_field(GB_CM_LD_WAVEFRONTS), "wavefronts");
    for (int m = 0; m < GB_CM_COUNT; m++) {
        ASSERT(gb_counter_metric_name(m) != NULL && gb_counter_metric_field(m) != NULL);
        for (int k = 0; k < m; k++)
            ASSERT(strcmp(gb_counter_metric_name(m), gb_counter_metric_name(k)) != 0);
    }
    ASSERT(gb_counter_metric_name(GB_CM_COUNT) == NULL);
    ASSERT(gb_counter_metric_name(-1) == NULL);
    return 0;
}

static int test_mode(void)
{
    ASSERT_EQ(gb_counters_mode_parse("on"), GB_COUNTERS_ON);
    ASSERT_EQ(gb_counters_mode_parse("off"), GB_COUNTERS_OFF);
    ASSERT_EQ(gb_counters_mode_parse("auto"), GB_COUNTERS_AUTO);
    ASSERT_EQ(gb_counters_mode_parse(NULL), GB_COUNTERS_AUTO);
    ASSERT_STR_EQ(gb_counters_mode_name(GB_COUNTERS_OFF), "off");
    return 0;
}

/* The stride sweep's implied counts, through common/predict.c; the figures
 * for strides 2, 4 and 32 are Nsight Compute's on the H200
 * (kernels/README.md): 17.3 M, 51.9 M and 536.3 M conflicts. */
static int test_prediction_to_counts(void)
{
    const long strides[] = {1, 2, 4, 8, 16, 32, 33, 64, 65};
    const double conflicts[] = {0, 1, 3, 7, 15, 31, 0, 31, 0};

    for (size_t i = 0; i < sizeof(strides) / sizeof(strides[0]); i++) {
        int d = gb_degree_for_stride(strides[i]);
        ASSERT_NEAR(gb_expected_bank_conflicts(H200_REQUESTS, d), conflicts[i] * H200_REQUESTS, 0);
        ASSERT_NEAR(gb_expected_wavefronts(H200_REQUESTS, d), (conflicts[i] + 1) * H200_REQUESTS,
                    0);
    }
    ASSERT_NEAR(gb_expected_bank_conflicts(H200_REQUESTS, 32), 536346624.0, 0);
    ASSERT_NEAR(gb_expected_bank_conflicts(1000, 0), 0, 0); /* no shared access */
    ASSERT_NEAR(gb_expected_wavefronts(1000, 0), 0, 0);
    ASSERT_NEAR(gb_measured_degree(4000, 1000), 4.0, 1e-12);
    ASSERT_NEAR(gb_measured_degree(5, 0), 0, 0);
    /* transpose: (n/32)^2 blocks x 8 warps x 4 column reads */
    ASSERT_NEAR(gb_transpose_tile_requests(GB_TRANSPOSE_TILE32, 8192), 2097152.0, 0);
    ASSERT_NEAR(gb_transpose_tile_requests(GB_TRANSPOSE_COPY, 8192), 0, 0);
    return 0;
}

static int test_agreement(void)
{
    double e = gb_expected_bank_conflicts(H200_REQUESTS, 32);

    ASSERT(gb_counts_agree(e, e, H200_REQUESTS));
    ASSERT(gb_counts_agree(e * 1.009, e, H200_REQUESTS));
    ASSERT(!gb_counts_agree(e * 1.02, e, H200_REQUESTS));
    ASSERT(!gb_counts_agree(e * 0.98, e, H200_REQUESTS));
    /* No conflict predicted: judged against the requests. */
    ASSERT(gb_counts_agree(0, 0, H200_REQUESTS));
    ASSERT(gb_counts_agree(0.005 * H200_REQUESTS, 0, H200_REQUESTS));
    ASSERT(!gb_counts_agree(0.02 * H200_REQUESTS, 0, H200_REQUESTS));
    ASSERT(!gb_counts_agree(1, 0, 0)); /* no requests: exactly none */
    ASSERT(!gb_counts_agree(NAN, 0, H200_REQUESTS));
    return 0;
}

static int test_admin_only(void)
{
    const char *on = "EnableVGA: 1\nRmProfilingAdminOnly: 1\nRegistryDwords: \"\"\n";
    const char *off = "RmProfilingAdminOnly: 0\nEnableVGA: 1\n";
    const char *path = "test_kernels_counters_params.txt";
    FILE *f;

    ASSERT_EQ(gb_parse_profiling_admin_only(on), 1);
    ASSERT_EQ(gb_parse_profiling_admin_only(off), 0);
    ASSERT_EQ(gb_parse_profiling_admin_only("EnableVGA: 1\n"), -1);
    ASSERT_EQ(gb_parse_profiling_admin_only("XRmProfilingAdminOnly: 1\n"), -1);
    ASSERT_EQ(gb_parse_profiling_admin_only("RmProfilingAdminOnly: x\n"), -1);
    f = fopen(path, "w");
    ASSERT(f != NULL);
    fputs(on, f);
    fclose(f);
    ASSERT_EQ(gb_read_profiling_admin_only(path), 1);
    remove(path);
    ASSERT_EQ(gb_read_profiling_admin_only("/nonexistent/params"), -1);
    return 0;
}

/* The message names the driver option to change. */
static int test_unavailable_message(void)
{
    struct gb_counters_state st;
    char reason[640];
    cJSON *meta;

    gb_counters_state_init(&st, GB_COUNTERS_AUTO);
    ASSERT(gb_counters_wanted(&st));
    ASSERT_EQ(gb_counters_fail(&st, GB_COUNTERS_ADMIN_ONLY, "cuptiRangeProfilerEnable: %s",
                               "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"),
              -1);
    ASSERT(!gb_counters_wanted(&st));
    gb_counters_reason(&st, reason, sizeof(reason));
    ASSERT(strstr(reason, "RmProfilingAdminOnly=1") != NULL);
    ASSERT(strstr(reason, "run gpubenchd as root") != NULL);
    ASSERT(strstr(reason, "options nvidia NVreg_RestrictProfilingToAdminUsers=0") != NULL);
    ASSERT(strstr(reason, "/etc/modprobe.d") != NULL);
    ASSERT(strstr(reason, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES") != NULL);

    meta = gb_counters_meta_json(&st);
    ASSERT(meta != NULL);
    ASSERT(cJSON_IsFalse(get(meta, "available")));
    ASSERT_STR_EQ(get(meta, "reason")->valuestring, reason);
    ASSERT_STR_EQ(get(meta, "mode")->valuestring, "auto");
    ASSERT_EQ(cJSON_GetArraySize(get(meta, "metrics")), GB_CM_COUNT);
    cJSON_Delete(meta);

    gb_counters_fail(&st, GB_COUNTERS_NO_LIBRARY, "tried libcupti.so.13");
    gb_counters_reason(&st, reason, sizeof(reason));
    ASSERT(strstr(reason, "LD_LIBRARY_PATH") != NULL);
    gb_counters_state_init(&st, GB_COUNTERS_OFF);
    ASSERT_EQ(st.status, GB_COUNTERS_NOT_ASKED);
    gb_counters_reason(&st, reason, sizeof(reason));
    ASSERT(strstr(reason, "counters: off") != NULL);
    return 0;
}

/* A run that counted nothing never says it did; neither does a run with
 * no counter state at all. */
static int test_no_pass(void)
{
    struct gb_counters_state st;
    cJSON *meta;

    gb_counters_state_init(&st, GB_COUNTERS_AUTO);
    gb_counters_state_finish(&st);
    ASSERT_EQ(st.status, GB_COUNTERS_NO_PASS);
    meta = gb_counters_meta_json(NULL);
    ASSERT(cJSON_IsFalse(get(meta, "available")));
    ASSERT(cJSON_IsString(get(meta, "reason")));
    cJSON_Delete(meta);
    gb_counters_state_init(&st, GB_COUNTERS_AUTO);
    st.launches = 3;
    gb_counters_state_finish(&st);
    meta = gb_counters_meta_json(&st);
    ASSERT(cJSON_IsTrue(get(meta, "available")));
    ASSERT(get(meta, "reason") == NULL);
    cJSON_Delete(meta);
    return 0;
}

/* The backend without CUDA: the probe says so, and off stays off. */
static int test_probe_without_cuda(void)
{
    struct gb_counters_state st;

    gb_counters_state_init(&st, GB_COUNTERS_AUTO);
    gb_counters_probe(&st);
    ASSERT_EQ(st.status, GB_COUNTERS_NO_CUDA);
    gb_counters_state_init(&st, GB_COUNTERS_OFF);
    gb_counters_probe(&st);
    ASSERT_EQ(st.status, GB_COUNTERS_NOT_ASKED);
    return 0;
}

static int test_rows(void)
{
    struct gb_counter_values v;
    cJSON *rows = cJSON_CreateArray(), *a = cJSON_CreateObject(), *b = cJSON_CreateObject();
    cJSON *summary;

    cJSON_AddItemToArray(rows, a);
    cJSON_AddItemToArray(rows, b);
    /* Not read: counts null, the implied counts still there. */
    ASSERT_EQ(gb_counters_add_row(a, NULL, 1000, 4), 0);
    ASSERT(cJSON_IsNull(get(a, "bank_conflicts")) && cJSON_IsNull(get(a, "wavefronts")));
    ASSERT(cJSON_IsNull(get(a, "counters_agree")));
    ASSERT_NEAR(get(a, "expected_bank_conflicts")->valuedouble, 3000, 0);
    summary = gb_counters_summary(rows, "one launch");
    ASSERT(cJSON_IsFalse(get(summary, "read")));
    cJSON_Delete(summary);

    /* Read: a 4-way row as the hardware would count it. */
    memset(&v, 0, sizeof(v));
    v.read = 1;
    v.v[GB_CM_LD_REQUESTS] = 1000;
    v.v[GB_CM_LD_WAVEFRONTS] = 4000;
    v.v[GB_CM_LD_CONFLICTS] = 3000;
    cJSON_DeleteItemFromArray(rows, 0);
    a = cJSON_CreateObject();
    cJSON_InsertItemInArray(rows, 0, a);
    ASSERT_EQ(gb_counters_add_row(a, &v, 1000, 4), 1);
    ASSERT_NEAR(get(a, "bank_conflicts")->valuedouble, 3000, 0);
    ASSERT_NEAR(get(a, "wavefronts")->valuedouble, 4000, 0);
    ASSERT_NEAR(get(a, "measured_degree")->valuedouble, 4, 1e-12);
    ASSERT(cJSON_IsTrue(get(a, "counters_agree")));
    /* A broadcast read as conflicts would be a disagreement. */
    v.v[GB_CM_LD_CONFLICTS] = 500;
    ASSERT_EQ(gb_counters_add_row(b, &v, 1000, 1), 0);
    ASSERT(cJSON_IsFalse(get(b, "counters_agree")));
    summary = gb_counters_summary(rows, "one launch");
    ASSERT(cJSON_IsTrue(get(summary, "read")));
    ASSERT_EQ(get(summary, "rows_agreeing")->valueint, 1);
    ASSERT(cJSON_IsFalse(get(summary, "all_agree")));
    cJSON_Delete(summary);
    cJSON_Delete(rows);
    return 0;
}

TEST_MAIN({"metric list", test_metric_list},
          {"mode", test_mode},
          {"prediction to counts", test_prediction_to_counts},
          {"agreement within 1%", test_agreement},
          {"RmProfilingAdminOnly", test_admin_only},
          {"unavailable: the message", test_unavailable_message},
          {"no counter pass", test_no_pass},
          {"probe without CUDA", test_probe_without_cuda},
          {"rows and summary", test_rows})
