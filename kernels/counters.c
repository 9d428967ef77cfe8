/*
 * counters.c - the pure half of the hardware counters; see counters.h.
 */
#include "counters.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One table, so the names CUPTI is asked for and the fields a row gets
 * cannot drift apart. */
static const struct {
    const char *metric, *field;
} metrics[GB_CM_COUNT] = {
    [GB_CM_LD_CONFLICTS] = {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                            "bank_conflicts"},
    [GB_CM_ST_CONFLICTS] = {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
                            "store_bank_conflicts"},
    [GB_CM_LD_WAVEFRONTS] = {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                             "wavefronts"},
    [GB_CM_ST_WAVEFRONTS] = {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
                             "store_wavefronts"},
    [GB_CM_LD_REQUESTS] = {"smsp__inst_executed_op_shared_ld.sum", "shared_load_requests"},
    [GB_CM_ST_REQUESTS] = {"smsp__inst_executed_op_shared_st.sum", "shared_store_requests"},
    [GB_CM_GLD_SECTORS] = {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                           "global_load_sectors"},
    [GB_CM_GLD_REQUESTS] = {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                            "global_load_requests"},
    [GB_CM_GLD_SETS] = {"l1tex__t_set_accesses_pipe_lsu_mem_global_op_ld.sum",
                        "global_load_set_accesses"},
    [GB_CM_DRAM_READ] = {"dram__bytes_read.sum", "dram_bytes_read"},
};

const char *gb_counter_metric_name(int m)
{
    return m >= 0 && m < GB_CM_COUNT ? metrics[m].metric : NULL;
}

const char *gb_counter_metric_field(int m)
{
    return m >= 0 && m < GB_CM_COUNT ? metrics[m].field : NULL;
}

enum gb_counters_mode gb_counters_mode_parse(const char *s)
{
    if (s != NULL && strcmp(s, "on") == 0)
        return GB_COUNTERS_ON;
    if (s != NULL && strcmp(s, "off") == 0)
        return GB_COUNTERS_OFF;
    return GB_COUNTERS_AUTO;
}

const char *gb_counters_mode_name(enum gb_counters_mode m)
{
    return m == GB_COUNTERS_ON    ? "on"
           : m == GB_COUNTERS_OFF ? "off"
                                  : "auto";
}

void gb_counters_state_init(struct gb_counters_state *st, enum gb_counters_mode mode)
{
    memset(st, 0, sizeof(*st));
    st->mode = mode;
    st->status = mode == GB_COUNTERS_OFF ? GB_COUNTERS_NOT_ASKED : GB_COUNTERS_READ;
}

void gb_counters_state_finish(struct gb_counters_state *st)
{
    if (st->status == GB_COUNTERS_READ && st->launches == 0)
        gb_counters_fail(st, GB_COUNTERS_NO_PASS, NULL);
}

int gb_counters_fail(struct gb_counters_state *st, enum gb_counters_status status,
                     const char *fmt, ...)
{
    va_list ap;

    st->status = status;
    st->detail[0] = '\0';
    if (fmt != NULL) {
        va_start(ap, fmt);
        vsnprintf(st->detail, sizeof(st->detail), fmt, ap);
        va_end(ap);
    }
    return -1;
}

int gb_counters_wanted(const struct gb_counters_state *st)
{
    return st->status == GB_COUNTERS_READ;
}

/* What happened and what to change, one sentence per status. */
static const char *reason_text(enum gb_counters_status s)
{
    switch (s) {
    case GB_COUNTERS_READ:
        return "";
    case GB_COUNTERS_NOT_ASKED:
        return "hardware counters were not asked for (counters: off)";
    case GB_COUNTERS_NO_CUDA:
        return "gpubench-worker was built without CUDA, so it reads no hardware counters";
    case GB_COUNTERS_NO_CUPTI_BUILD:
        return "gpubench-worker was built without CUPTI's range profiler headers "
               "(cupti_range_profiler.h, CUDA 12.8 or later): rebuild it against such "
               "a toolkit to read hardware counters";
    case GB_COUNTERS_NO_LIBRARY:
        return "CUPTI (libcupti, CUDA 12.8 or later) was not found: install the CUDA "
               "toolkit's CUPTI and put its folder (e.g. /usr/local/cuda/lib64) on "
               "gpubenchd's LD_LIBRARY_PATH";
    case GB_COUNTERS_TOO_OLD:
        return "the libcupti found has no range profiler (it is older than CUDA "
               "12.8): install CUPTI 12.8 or later and put it first on LD_LIBRARY_PATH";
    case GB_COUNTERS_ADMIN_ONLY:
        return "the NVIDIA driver restricts profiling to admin users "
               "(RmProfilingAdminOnly=1): run gpubenchd as root, or set options nvidia "
               "NVreg_RestrictProfilingToAdminUsers=0 in /etc/modprobe.d and reload "
               "the driver";
    case GB_COUNTERS_UNSUPPORTED:
        return "CUPTI's profiler does not support this GPU here (the chip, a MIG "
               "slice or a virtual GPU without profiling)";
    case GB_COUNTERS_FAILED:
        return "reading the hardware counters failed";
    case GB_COUNTERS_NO_PASS:
        return "this run counted no launch (the benchmark has no counter pass)";
    }
    return "unknown counters status";
}

void gb_counters_reason(const struct gb_counters_state *st, char *buf, size_t cap)
{
    const char *text = reason_text(st->status);

    if (st->detail[0] != '\0' && text[0] != '\0')
        snprintf(buf, cap, "%s (%s)", text, st->detail);
    else
        snprintf(buf, cap, "%s", text);
}

double gb_expected_bank_conflicts(double requests, int degree)
{
    return degree > 1 ? requests * (degree - 1) : 0;
}

double gb_expected_wavefronts(double requests, int degree)
{
    return degree > 0 ? requests * degree : 0;
}

int gb_counts_agree(double measured, double expected, double requests)
{
    double scale = expected > 0 ? expected : requests;

    if (!isfinite(measured) || !isfinite(expected))
        return 0;
    return fabs(measured - expected) <= GB_COUNTERS_AGREE_TOL * scale;
}

double gb_measured_degree(double wavefronts, double requests)
{
    return requests > 0 ? wavefronts / requests : 0;
}

int gb_parse_profiling_admin_only(const char *text)
{
    static const char key[] = "RmProfilingAdminOnly:";
    const char *p = text;

    while (p != NULL && (p = strstr(p, key)) != NULL) {
        /* Only at the start of a line: the key is not a suffix of another. */
        if (p == text || p[-1] == '\n') {
            char *end;
            long v = strtol(p + sizeof(key) - 1, &end, 10);
            if (end != p + sizeof(key) - 1)
                return v != 0;
            return -1;
        }
        p += sizeof(key) - 1;
    }
    return -1;
}

int gb_read_profiling_admin_only(const char *path)
{
    char text[8192];
    size_t n;
    FILE *f = fopen(path, "r");

    if (f == NULL)
        return -1;
    n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    return gb_parse_profiling_admin_only(text);
}
