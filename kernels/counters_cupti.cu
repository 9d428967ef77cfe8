/*
 * counters_cupti.cu - a CUPTI Range Profiler session (counters_pass.cuh)
 * and the check before the timed samples (gb_counters_probe, gb_kernels.h).
 *
 * The flow, per the CUDA 12.8+ profiler API:
 *   open:    cuptiProfilerInitialize; the chip's name and counter
 *            availability; a Profiler Host object that turns the metric
 *            list into a config image (and says how many passes it needs);
 *   profile: cuptiRangeProfilerEnable on the context; a counter data image
 *            for one range; SetConfig (user range, user replay); then
 *            Start, PushRange, the launch, a synchronise, PopRange, Stop,
 *            repeated until CUPTI says every pass was submitted; Decode;
 *            the Host object evaluates the metrics of range 0; Disable;
 *   close:   the Host object and the profiler are released.
 * Enable and Disable bracket every launch, so a session never holds the
 * profiler on the context between rows or after the run.
 *
 * Built without CUPTI's headers (GB_HAVE_CUPTI unset), every entry point
 * answers NO_CUPTI_BUILD and the worker runs on without counters.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "counters_pass.cuh"
#include "cuda_check.cuh"

#ifdef GB_HAVE_CUPTI

#include <cuda.h>

#include "cupti_api.cuh"

/* A launch needs one pass per group of counters the hardware can collect
 * at once; a handful here.  The bound only stops a runaway loop. */
static const int kMaxPasses = 64;

struct gb_counter_session {
    const struct gb_cupti_api *api;
    struct gb_counters_state *st;
    CUcontext ctx;
    CUpti_Profiler_Host_Object *host;
    uint8_t *config;
    size_t config_size;
    const char *metrics[GB_CM_COUNT];
    int profiler_initialized;
};

#define CUPTI_PARAMS(type, var)   \
    type var;                     \
    memset(&var, 0, sizeof(var)); \
    var.structSize = type##_STRUCT_SIZE

/* Calls api->f(&p); a failure is recorded in s->st.  0 or -1. */
static int cupti_call(struct gb_counter_session *s, const char *name, CUptiResult r)
{
    return r == CUPTI_SUCCESS ? 0 : gb_cupti_fail(s->api, s->st, name, r);
}
#define CALL(s, f, p) cupti_call((s), #f, (s)->api->f(&(p)))

/* The context the runtime made current for the device: CUPTI speaks the
 * driver API, and the driver library is reached through the runtime's
 * entry points (the worker does not link libcuda). */
static int current_context(struct gb_counter_session *s)
{
    CUresult (*get_current)(CUcontext *) = NULL;
    cudaDriverEntryPointQueryResult found;

    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", (void **)&get_current, 12000,
                                         cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess || get_current == NULL ||
        get_current(&s->ctx) != CUDA_SUCCESS || s->ctx == NULL)
        return gb_counters_fail(s->st, GB_COUNTERS_FAILED,
                                "the CUDA context could not be found (cuCtxGetCurrent)");
    return 0;
}

/* The counter availability image, then the Host object and the config
 * image of the metric list. */
static int build_config(struct gb_counter_session *s, int device)
{
    CUPTI_PARAMS(CUpti_Device_GetChipName_Params, chip);
    CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params, avail);
    CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params, host);
    CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params, add);
    CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params, size);
    CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params, image);
    CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params, passes);
    uint8_t *avail_image = NULL;
    int rc = -1;

    chip.deviceIndex = (size_t)device;
    avail.ctx = s->ctx;
    if (CALL(s, cuptiDeviceGetChipName, chip) != 0 ||
        CALL(s, cuptiProfilerGetCounterAvailability, avail) != 0)
        goto out;
    avail_image = (uint8_t *)malloc(avail.counterAvailabilityImageSize);
    if (avail_image == NULL) {
        gb_counters_fail(s->st, GB_COUNTERS_FAILED, "out of memory");
        goto out;
    }
    avail.pCounterAvailabilityImage = avail_image;
    host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    host.pChipName = chip.pChipName;
    host.pCounterAvailabilityImage = avail_image;
    if (CALL(s, cuptiProfilerGetCounterAvailability, avail) != 0 ||
        CALL(s, cuptiProfilerHostInitialize, host) != 0)
        goto out;
    s->host = host.pHostObject;
    add.pHostObject = s->host;
    add.ppMetricNames = s->metrics;
    add.numMetrics = GB_CM_COUNT;
    size.pHostObject = s->host;
    if (CALL(s, cuptiProfilerHostConfigAddMetrics, add) != 0 ||
        CALL(s, cuptiProfilerHostGetConfigImageSize, size) != 0)
        goto out;
    s->config_size = size.configImageSize;
    s->config = (uint8_t *)malloc(s->config_size);
    if (s->config == NULL) {
        gb_counters_fail(s->st, GB_COUNTERS_FAILED, "out of memory");
        goto out;
    }
    image.pHostObject = s->host;
    image.configImageSize = s->config_size;
    image.pConfigImage = s->config;
    passes.configImageSize = s->config_size;
    passes.pConfigImage = s->config;
    if (CALL(s, cuptiProfilerHostGetConfigImage, image) != 0 ||
        CALL(s, cuptiProfilerHostGetNumOfPasses, passes) != 0)
        goto out;
    s->st->passes = (int)passes.numOfPasses;
    rc = 0;

out:
    free(avail_image);
    return rc;
}

int gb_counter_session_open(int device, struct gb_counters_state *st,
                            struct gb_counter_session **out)
{
    struct gb_counter_session *s;
    CUPTI_PARAMS(CUpti_Profiler_Initialize_Params, init);

    *out = NULL;
    if (!gb_counters_wanted(st))
        return 1;
    s = (struct gb_counter_session *)calloc(1, sizeof(*s));
    if (s == NULL)
        return gb_counters_fail(st, GB_COUNTERS_FAILED, "out of memory"), 1;
    s->st = st;
    for (int m = 0; m < GB_CM_COUNT; m++)
        s->metrics[m] = gb_counter_metric_name(m);
    s->api = gb_cupti_load(st);
    if (s->api == NULL || CALL(s, cuptiProfilerInitialize, init) != 0)
        goto fail;
    s->profiler_initialized = 1;
    if (current_context(s) != 0 || build_config(s, device) != 0)
        goto fail;
    *out = s;
    return 0;

fail:
    gb_counter_session_close(s);
    return 1;
}

void gb_counter_session_close(struct gb_counter_session *s)
{
    if (s == NULL)
        return;
    /* Returns ignored: this runs on the way out, where the first failure
     * is the one recorded. */
    if (s->host != NULL) {
        CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params, p);
        p.pHostObject = s->host;
        (void)s->api->cuptiProfilerHostDeinitialize(&p);
    }
    if (s->profiler_initialized) {
        CUPTI_PARAMS(CUpti_Profiler_DeInitialize_Params, p);
        (void)s->api->cuptiProfilerDeInitialize(&p);
    }
    free(s->config);
    free(s);
}

/* Passes of one range around one enqueue, until CUPTI has them all.
 * Returns 0, 1 (CUPTI refused) or -1 (CUDA error). */
static int run_passes(struct gb_counter_session *s, CUpti_RangeProfiler_Object *obj,
                      gb_launch_fn launch, void *ctx, long work, cudaStream_t stream,
                      struct gb_cuda_error *err)
{
    for (int pass = 0; pass < kMaxPasses; pass++) {
        CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params, start);
        CUPTI_PARAMS(CUpti_RangeProfiler_PushRange_Params, push);
        CUPTI_PARAMS(CUpti_RangeProfiler_PopRange_Params, pop);
        CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params, stop);
        int launched;

        start.pRangeProfilerObject = push.pRangeProfilerObject = obj;
        pop.pRangeProfilerObject = stop.pRangeProfilerObject = obj;
        push.pRangeName = "gpubench";
        if (CALL(s, cuptiRangeProfilerStart, start) != 0)
            return 1;
        if (CALL(s, cuptiRangeProfilerPushRange, push) != 0) {
            (void)s->api->cuptiRangeProfilerStop(&stop);
            return 1;
        }
        /* The range must close on finished work: synchronise first. */
        launched = launch(ctx, work, stream, err) == 0 &&
                   gb_cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize(counters)",
                                 err) == 0;
        if (CALL(s, cuptiRangeProfilerPopRange, pop) != 0 && launched) {
            (void)s->api->cuptiRangeProfilerStop(&stop);
            return 1;
        }
        if (CALL(s, cuptiRangeProfilerStop, stop) != 0 && launched)
            return 1;
        if (!launched)
            return -1;
        if (stop.isAllPassSubmitted)
            return 0;
    }
    gb_counters_fail(s->st, GB_COUNTERS_FAILED, "CUPTI asked for more than %d passes",
                     kMaxPasses);
    return 1;
}

/* Decodes the passes and evaluates the metrics of the one range. */
static int evaluate(struct gb_counter_session *s, CUpti_RangeProfiler_Object *obj,
                    uint8_t *image, size_t image_size, struct gb_counter_values *out)
{
    CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params, decode);
    CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params, info);
    CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params, eval);

    decode.pRangeProfilerObject = obj;
    info.pCounterDataImage = image;
    info.counterDataImageSize = image_size;
    if (CALL(s, cuptiRangeProfilerDecodeData, decode) != 0 ||
        CALL(s, cuptiRangeProfilerGetCounterDataInfo, info) != 0)
        return 1;
    if (decode.numOfRangeDropped != 0 || info.numTotalRanges < 1) {
        gb_counters_fail(s->st, GB_COUNTERS_FAILED,
                         "the profiled range was dropped (%zu dropped, %zu kept)",
                         decode.numOfRangeDropped, info.numTotalRanges);
        return 1;
    }
    eval.pHostObject = s->host;
    eval.pCounterDataImage = image;
    eval.counterDataImageSize = image_size;
    eval.rangeIndex = 0;
    eval.ppMetricNames = s->metrics;
    eval.numMetrics = GB_CM_COUNT;
    eval.pMetricValues = out->v;
    if (CALL(s, cuptiProfilerHostEvaluateToGpuValues, eval) != 0)
        return 1;
    out->read = 1;
    return 0;
}

int gb_counter_profile(struct gb_counter_session *s, gb_launch_fn launch, void *ctx,
                       long work, cudaStream_t stream, struct gb_counter_values *out,
                       struct gb_cuda_error *err)
{
    CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params, enable);
    CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params, disable);
    CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params, size);
    CUPTI_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params, init);
    CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params, config);
    uint8_t *image = NULL;
    int rc = 1;

    memset(out, 0, sizeof(*out));
    enable.ctx = s->ctx;
    if (CALL(s, cuptiRangeProfilerEnable, enable) != 0)
        return 1;
    size.pRangeProfilerObject = enable.pRangeProfilerObject;
    size.pMetricNames = s->metrics;
    size.numMetrics = GB_CM_COUNT;
    size.maxNumOfRanges = 1;
    size.maxNumRangeTreeNodes = 1;
    if (CALL(s, cuptiRangeProfilerGetCounterDataSize, size) != 0)
        goto out;
    image = (uint8_t *)calloc(1, size.counterDataSize);
    if (image == NULL) {
        gb_counters_fail(s->st, GB_COUNTERS_FAILED, "out of memory");
        goto out;
    }
    init.pRangeProfilerObject = enable.pRangeProfilerObject;
    init.counterDataSize = size.counterDataSize;
    init.pCounterData = image;
    config.pRangeProfilerObject = enable.pRangeProfilerObject;
    config.configSize = s->config_size;
    config.pConfig = s->config;
    config.counterDataImageSize = size.counterDataSize;
    config.pCounterDataImage = image;
    config.range = CUPTI_UserRange;
    config.replayMode = CUPTI_UserReplay;
    config.maxRangesPerPass = 1;
    config.numNestingLevels = 1;
    config.minNestingLevel = 1;
    config.passIndex = 0;
    config.targetNestingLevel = 1;
    if (CALL(s, cuptiRangeProfilerCounterDataImageInitialize, init) != 0 ||
        CALL(s, cuptiRangeProfilerSetConfig, config) != 0)
        goto out;
    rc = run_passes(s, enable.pRangeProfilerObject, launch, ctx, work, stream, err);
    if (rc == 0)
        rc = evaluate(s, enable.pRangeProfilerObject, image, size.counterDataSize, out);

out:
    disable.pRangeProfilerObject = enable.pRangeProfilerObject;
    (void)s->api->cuptiRangeProfilerDisable(&disable);
    free(image);
    return rc;
}

/* Rules out what can be ruled out before the timed samples, touching
 * neither the GPU nor CUPTI's state: the driver's admin-only restriction,
 * then whether a libcupti with the range profiler loads at all. */
extern "C" void gb_counters_probe(struct gb_counters_state *st)
{
    int admin_only;

    if (!gb_counters_wanted(st))
        return;
    admin_only = gb_read_profiling_admin_only(GB_PROC_DRIVER_PARAMS_PATH);
    if (admin_only == 1 && geteuid() != 0) {
        gb_counters_fail(st, GB_COUNTERS_ADMIN_ONLY,
                         "RmProfilingAdminOnly: 1 in %s; the worker runs as uid %d",
                         GB_PROC_DRIVER_PARAMS_PATH, (int)geteuid());
        return;
    }
    (void)gb_cupti_load(st);
}

#else /* !GB_HAVE_CUPTI */

static int no_cupti(struct gb_counters_state *st)
{
    if (gb_counters_wanted(st))
        gb_counters_fail(st, GB_COUNTERS_NO_CUPTI_BUILD, NULL);
    return 1;
}

int gb_counter_session_open(int device, struct gb_counters_state *st,
                            struct gb_counter_session **out)
{
    (void)device;
    *out = NULL;
    return no_cupti(st);
}

int gb_counter_profile(struct gb_counter_session *s, gb_launch_fn launch, void *ctx,
                       long work, cudaStream_t stream, struct gb_counter_values *out,
                       struct gb_cuda_error *err)
{
    (void)s, (void)launch, (void)ctx, (void)work, (void)stream, (void)err;
    memset(out, 0, sizeof(*out));
    return 1;
}

void gb_counter_session_close(struct gb_counter_session *s)
{
    (void)s;
}

extern "C" void gb_counters_probe(struct gb_counters_state *st)
{
    (void)no_cupti(st);
}

#endif
