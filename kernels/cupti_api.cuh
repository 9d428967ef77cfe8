/*
 * cupti_api.cuh - CUPTI's range profiler and profiler host functions,
 * loaded at run time with dlopen.  Internal to the CUDA backend; only
 * built where CUPTI's headers were found (GB_HAVE_CUPTI).
 *
 * Why dlopen and not a link: the CUDA runtime is linked statically so the
 * worker runs where only the driver is installed, and libcupti ships with
 * the toolkit, not the driver.  A worker linked to it would not start on a
 * driver-only node; loaded at run time, its absence only means "no
 * counters", with that reason.  The headers give the functions' types
 * (decltype), so nothing is declared twice.
 *
 * The library is loaded once per process and never unloaded (CUPTI keeps
 * state in the driver's contexts while they live).
 */
#ifndef GPUBENCH_KERNELS_CUPTI_API_CUH
#define GPUBENCH_KERNELS_CUPTI_API_CUH

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include "counters.h"

/* Every function the counter pass calls: the X-macro makes the table, its
 * member types and the dlsym loop from one list. */
#define GB_CUPTI_FUNCTIONS(X)                       \
    X(cuptiGetResultString)                         \
    X(cuptiProfilerInitialize)                      \
    X(cuptiProfilerDeInitialize)                    \
    X(cuptiDeviceGetChipName)                       \
    X(cuptiProfilerGetCounterAvailability)          \
    X(cuptiProfilerHostInitialize)                  \
    X(cuptiProfilerHostDeinitialize)                \
    X(cuptiProfilerHostConfigAddMetrics)            \
    X(cuptiProfilerHostGetConfigImageSize)          \
    X(cuptiProfilerHostGetConfigImage)              \
    X(cuptiProfilerHostGetNumOfPasses)              \
    X(cuptiProfilerHostEvaluateToGpuValues)         \
    X(cuptiRangeProfilerEnable)                     \
    X(cuptiRangeProfilerDisable)                    \
    X(cuptiRangeProfilerGetCounterDataSize)         \
    X(cuptiRangeProfilerCounterDataImageInitialize) \
    X(cuptiRangeProfilerSetConfig)                  \
    X(cuptiRangeProfilerStart)                      \
    X(cuptiRangeProfilerStop)                       \
    X(cuptiRangeProfilerPushRange)                  \
    X(cuptiRangeProfilerPopRange)                   \
    X(cuptiRangeProfilerDecodeData)                 \
    X(cuptiRangeProfilerGetCounterDataInfo)

struct gb_cupti_api {
#define GB_CUPTI_MEMBER(f) decltype(&::f) f;
    GB_CUPTI_FUNCTIONS(GB_CUPTI_MEMBER)
#undef GB_CUPTI_MEMBER
    char path[256]; /* the file dlopen loaded */
};

/* The loaded table (static storage, shared by every run of the process),
 * or NULL with st set: NO_LIBRARY when no libcupti loads, TOO_OLD when one
 * lacks a function above. */
const struct gb_cupti_api *gb_cupti_load(struct gb_counters_state *st);

/* Records a failed CUPTI call in st: INSUFFICIENT_PRIVILEGES becomes
 * ADMIN_ONLY, the "not supported here" family UNSUPPORTED, anything else
 * FAILED; the detail names the call and CUPTI's error.  Returns -1. */
int gb_cupti_fail(const struct gb_cupti_api *api, struct gb_counters_state *st,
                  const char *call, CUptiResult r);

#endif
