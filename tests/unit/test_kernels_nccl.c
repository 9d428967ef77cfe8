/*
 * test_kernels_nccl.c - nccl_allreduce's arithmetic without a GPU: the
 * bus bandwidth factor nccl-tests defines, the known answer's bit patterns
 * in each dtype (kernels/nccl_math.c), and the rows built from measured
 * ops (kernels/nccl_bench.c, gb_nccl_add_row): busbw = algbw x 2(n-1)/n,
 * value = busbw, an unloaded NCCL's reason in the row.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_math.h"
#include "nccl_report.h"
#include "test.h"

static int test_busbw_factor(void)
{
    ASSERT_NEAR(gb_nccl_busbw_factor(1), 0.0, 1e-12);
    ASSERT_NEAR(gb_nccl_busbw_factor(2), 1.0, 1e-12);
    ASSERT_NEAR(gb_nccl_busbw_factor(4), 1.5, 1e-12);
    ASSERT_NEAR(gb_nccl_busbw_factor(8), 1.75, 1e-12);
    ASSERT_NEAR(gb_nccl_busbw_factor(0), 0.0, 1e-12);
    /* 1 GiB in 4 ms: 268.435456 GB/s */
    ASSERT_NEAR(gb_nccl_algbw_gbps(1073741824.0, 0.004), 268.435456, 1e-9);
    ASSERT(isnan(gb_nccl_algbw_gbps(1024, 0)));
    return 0;
}

static int test_known_answer(void)
{
    ASSERT_NEAR(gb_nccl_expected_sum(2), 3.0, 0);
    ASSERT_NEAR(gb_nccl_expected_sum(8), 36.0, 0);
    ASSERT_NEAR(gb_nccl_rank_value(0), 1.0, 0);
    /* the sum of rank + 1 over n ranks is n(n+1)/2 for every n the
     * worker allows */
    for (int n = 1; n <= GB_NCCL_MAX_EXACT_RANKS; n++) {
        double s = 0;
        for (int r = 0; r < n; r++)
            s += gb_nccl_rank_value(r);
        ASSERT_NEAR(s, gb_nccl_expected_sum(n), 0);
    }
    ASSERT_EQ(gb_nccl_dtype_of("float"), GB_NCCL_FLOAT);
    ASSERT_EQ(gb_nccl_dtype_of("bfloat16"), GB_NCCL_BFLOAT16);
    ASSERT_EQ(gb_nccl_dtype_of("half"), GB_NCCL_HALF);
    ASSERT_EQ(gb_nccl_dtype_of("double"), GB_NCCL_DOUBLE);
    ASSERT_EQ(gb_nccl_dtype_of("int8"), -1);
    ASSERT_EQ(gb_nccl_dtype_size(GB_NCCL_HALF), 2);
    ASSERT_EQ(gb_nccl_dtype_size(GB_NCCL_DOUBLE), 8);
    return 0;
}

static int test_bit_patterns(void)
{
    /* IEEE encodings, written out: 3.0 and 36.0 */
    ASSERT_EQ(gb_nccl_bits(GB_NCCL_FLOAT, 3.0), 0x40400000u);
    ASSERT_EQ(gb_nccl_bits(GB_NCCL_BFLOAT16, 3.0), 0x4040u);
    ASSERT_EQ(gb_nccl_bits(GB_NCCL_HALF, 3.0), 0x4200u);
    ASSERT_EQ(gb_nccl_bits(GB_NCCL_DOUBLE, 3.0), 0x4008000000000000ull);
    ASSERT_EQ(gb_nccl_bits(GB_NCCL_HALF, 1.0), 0x3C00u);
    ASSERT_EQ(gb_nccl_bits(GB_NCCL_HALF, 36.0), 0x5080u);
    ASSERT_EQ(gb_nccl_bits(GB_NCCL_BFLOAT16, 36.0), 0x4210u);
    ASSERT_EQ(gb_nccl_bits(GB_NCCL_HALF, 253.0), 0x5BE8u);
    ASSERT_EQ(gb_nccl_bits(GB_NCCL_BFLOAT16, 253.0), 0x437Du);
    /* 2 and 3 differ in every dtype: a rank's own value never passes */
    for (int d = GB_NCCL_FLOAT; d <= GB_NCCL_DOUBLE; d++)
        ASSERT(gb_nccl_bits((enum gb_nccl_dtype)d, 2.0) !=
               gb_nccl_bits((enum gb_nccl_dtype)d, 3.0));
    return 0;
}

static double num(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItem(o, name);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static int test_rows(void)
{
    double ms[5] = {4.0, 4.2, 3.9, 4.1, 4.0}; /* median 4.0 ms */
    struct gb_perf_op op;
    cJSON *rows = cJSON_CreateArray(), *row;
    const long long bytes = 1LL << 30;

    for (int ranks = 2; ranks <= 8; ranks *= 2) {
        memset(&op, 0, sizeof(op));
        op.available = 1;
        op.s.ms = ms;
        op.s.count = op.s.capacity = 5;
        op.s.work = 1;
        op.amount = (double)bytes * gb_nccl_busbw_factor(ranks);
        op.checked = (bytes / 4) * ranks;
        row = gb_nccl_add_row(rows, &op, bytes, "float", 4, ranks, "nvlink");
        ASSERT(row != NULL);
        ASSERT_NEAR(num(row, "time_us"), 4000.0, 1e-9);
        ASSERT_NEAR(num(row, "algbw_gbps"), 268.435456, 1e-9);
        ASSERT_NEAR(num(row, "busbw_gbps"),
                    num(row, "algbw_gbps") * 2.0 * (ranks - 1) / ranks, 1e-9);
        ASSERT_NEAR(num(row, "value"), num(row, "busbw_gbps"), 1e-9);
        ASSERT_NEAR(num(row, "ranks"), ranks, 0);
        ASSERT_NEAR(num(row, "elements"), bytes / 4, 0);
        ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(row, "verified")));
        ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(row, "unit")), "GB/s");
    }
    /* one wrong element: not verified */
    op.mismatches = 1;
    row = gb_nccl_add_row(rows, &op, bytes, "float", 4, 8, "nvlink");
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(row, "verified")));
    /* NCCL not loaded: no value, no bandwidths, the reason */
    memset(&op, 0, sizeof(op));
    strcpy(op.reason, "NCCL not loaded (libnccl.so.2)");
    row = gb_nccl_add_row(rows, &op, bytes, "half", 2, 2, NULL);
    ASSERT(cJSON_IsNull(cJSON_GetObjectItem(row, "value")));
    ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(row, "available")));
    ASSERT(cJSON_GetObjectItem(row, "busbw_gbps") == NULL);
    ASSERT(cJSON_IsNull(cJSON_GetObjectItem(row, "link_type")));
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(row, "reason")),
                  "NCCL not loaded (libnccl.so.2)");
    cJSON_Delete(rows);
    return 0;
}

TEST_MAIN({"busbw: 2(n-1)/n and algbw", test_busbw_factor},
          {"known answer: n(n+1)/2", test_known_answer},
          {"known answer: bit patterns", test_bit_patterns},
          {"rows: busbw = algbw x 2(n-1)/n", test_rows})
