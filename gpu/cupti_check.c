/*
 * gpu/cupti_check.c: CUPTI metrics checked against a volume memwatch knows.
 *
 * Owns: one Range Profiler session (CUDA 13 cuptiRangeProfiler* with the
 * cuptiProfilerHost* config and evaluation), AutoRange + KernelReplay, around a
 * single triad launched after an L2 flush; each metric gets a verdict against
 * the triad's known bytes (3 x n x 8: reads of b and c, write of a; GPUs do not
 * write-allocate) and its event-timed duration.
 * May call: the CUDA driver and runtime, CUPTI, gpu/probes_mem.cu's triad helpers.
 * Threading: one call at a time; prints nothing (errors in mw_gpu_cupti).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include "cupti_util.h"
#include "memwatch/gpu.h"
#include "memwatch/memwatch.h"

static const char *const metrics[] = {
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "lts__t_bytes.sum",
    "gpu__time_duration.sum",
};
#define NMETRICS (sizeof metrics / sizeof metrics[0])

#define CUPTI_TRY(call, what)                                                           \
    do {                                                                                \
        CUptiResult r_ = (call);                                                        \
        if (r_ != CUPTI_SUCCESS) {                                                      \
            mw_cupti_explain(what, r_, o->status_text, sizeof o->status_text);          \
            o->status = mw_cupti_is_access_error(r_) ? MW_ERR_PRIV : MW_ERR_GPU;        \
            if (r_ == CUPTI_ERROR_HARDWARE_BUSY ||                                      \
                r_ == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)                   \
                o->status = MW_ERR_UNSUPPORTED;                                         \
            goto out;                                                                   \
        }                                                                               \
    } while (0)

static int host_object(const char *chip, CUpti_Profiler_Host_Object **h)
{
    CUpti_Profiler_Host_Initialize_Params p = {CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip;
    CUptiResult r = cuptiProfilerHostInitialize(&p);
    *h = p.pHostObject;
    return (int)r;
}

static void host_free(CUpti_Profiler_Host_Object *h)
{
    if (!h)
        return;
    CUpti_Profiler_Host_Deinitialize_Params p = {
        CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    p.pHostObject = h;
    cuptiProfilerHostDeinitialize(&p);
}

static void set_check(mw_gpu_metric_check *m, const char *name, double value, double expected,
                      const char *why)
{
    snprintf(m->metric, sizeof m->metric, "%s", name);
    m->value = value;
    m->expected = expected;
    m->ratio = expected > 0 ? value / expected : 0;
    snprintf(m->verdict, sizeof m->verdict, "%s", mw_gpu_verdict(value, expected));
    snprintf(m->reason, sizeof m->reason, "%s", why);
}

/* mw_gpu_cupti_check's session: the result, the context, the host and range
 * profiler objects and the config and counter-data images (freed at its end). */
typedef struct cupti_sess {
    mw_gpu_cupti *o;
    CUcontext ctx;
    CUpti_Profiler_Host_Object *host;
    CUpti_RangeProfiler_Object *rp;
    uint8_t *config, *data;
    size_t config_size, data_size;
    int profiler_up;
} cupti_sess;

/* The triad timed by CUDA events outside the session: the best of five
 * after a warm-up, into *triad_s; o->status on failure. */
static int cupti_time_triad(mw_gpu_triad_bufs *t, double *triad_s, mw_gpu_cupti *o)
{
    /* Timed triads outside the session (the best of five) give the duration
     * to compare with. */
    *triad_s = 1e30;
    for (int i = 0; i < 6; i++) {
        double s = 0;
        if (mw_gpu_triad_launch(t, &s)) {
            o->status = MW_ERR_GPU;
            snprintf(o->status_text, sizeof o->status_text, "the triad kernel failed");
            return o->status;
        }
        if (i && s < *triad_s)
            *triad_s = s;
    }
    return 0;
}

/* The current CUDA context, or NULL. */
static CUcontext cupti_current_ctx(void)
{
    CUcontext ctx = NULL;
    /* The driver's cuCtxGetCurrent through the runtime: memwatch-gpu does not
     * link libcuda, so that it starts (and says why) on machines without one. */
    CUresult (*get_ctx)(CUcontext *) = NULL;
    enum cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", (void **)&get_ctx, 12000,
                                         cudaEnableDefault, &q) != cudaSuccess ||
        !get_ctx || get_ctx(&ctx) != CUDA_SUCCESS)
        ctx = NULL;
    return ctx;
}

/* Starts the profiler and builds the config image for device dev: the chip,
 * the metrics, their passes; o->status (0 when it worked). */
static int cupti_config(cupti_sess *s, int dev)
{
    mw_gpu_cupti *o = s->o;
    {
        CUpti_Profiler_Initialize_Params p = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
        CUPTI_TRY(cuptiProfilerInitialize(&p), "cuptiProfilerInitialize");
        s->profiler_up = 1;
    }
    {
        CUpti_Device_GetChipName_Params p = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
        p.deviceIndex = (size_t)dev;
        CUPTI_TRY(cuptiDeviceGetChipName(&p), "cuptiDeviceGetChipName");
        snprintf(o->chip, sizeof o->chip, "%s", p.pChipName);
    }
    /* Config image: which counters, scheduled into passes. */
    CUPTI_TRY((CUptiResult)host_object(o->chip, &s->host), "cuptiProfilerHostInitialize");
    {
        CUpti_Profiler_Host_ConfigAddMetrics_Params p = {
            CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
        p.pHostObject = s->host;
        p.ppMetricNames = (const char **)metrics;
        p.numMetrics = NMETRICS;
        CUPTI_TRY(cuptiProfilerHostConfigAddMetrics(&p), "cuptiProfilerHostConfigAddMetrics");
    }
    {
        CUpti_Profiler_Host_GetConfigImageSize_Params p = {
            CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
        p.pHostObject = s->host;
        CUPTI_TRY(cuptiProfilerHostGetConfigImageSize(&p), "cuptiProfilerHostGetConfigImageSize");
        s->config_size = p.configImageSize;
        s->config = calloc(1, s->config_size);
        if (!s->config) {
            o->status = -ENOMEM;
            goto out;
        }
        CUpti_Profiler_Host_GetConfigImage_Params q = {
            CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
        q.pHostObject = s->host;
        q.pConfigImage = s->config;
        q.configImageSize = s->config_size;
        CUPTI_TRY(cuptiProfilerHostGetConfigImage(&q), "cuptiProfilerHostGetConfigImage");
        CUpti_Profiler_Host_GetNumOfPasses_Params r = {
            CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
        r.pConfigImage = s->config;
        r.configImageSize = s->config_size;
        CUPTI_TRY(cuptiProfilerHostGetNumOfPasses(&r), "cuptiProfilerHostGetNumOfPasses");
        o->passes = (int)r.numOfPasses;
    }
out:
    return o->status;
}

/* Enables the range profiler on the context, with its counter-data image and
 * config (AutoRange, KernelReplay); o->status (0 when it worked). */
static int cupti_counter_data(cupti_sess *s)
{
    mw_gpu_cupti *o = s->o;
    {
        CUpti_RangeProfiler_Enable_Params p = {CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
        p.ctx = s->ctx;
        CUPTI_TRY(cuptiRangeProfilerEnable(&p), "cuptiRangeProfilerEnable");
        s->rp = p.pRangeProfilerObject;
    }
    {
        CUpti_RangeProfiler_GetCounterDataSize_Params p = {
            CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
        p.pRangeProfilerObject = s->rp;
        p.pMetricNames = (const char **)metrics;
        p.numMetrics = NMETRICS;
        p.maxNumOfRanges = 4;
        p.maxNumRangeTreeNodes = 4;
        CUPTI_TRY(cuptiRangeProfilerGetCounterDataSize(&p), "cuptiRangeProfilerGetCounterDataSize");
        s->data_size = p.counterDataSize;
        s->data = calloc(1, s->data_size);
        if (!s->data) {
            o->status = -ENOMEM;
            goto out;
        }
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params q = {
            CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
        q.pRangeProfilerObject = s->rp;
        q.pCounterData = s->data;
        q.counterDataSize = s->data_size;
        CUPTI_TRY(cuptiRangeProfilerCounterDataImageInitialize(&q),
                  "cuptiRangeProfilerCounterDataImageInitialize");
    }
    {
        CUpti_RangeProfiler_SetConfig_Params p = {CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
        p.pRangeProfilerObject = s->rp;
        p.configSize = s->config_size;
        p.pConfig = s->config;
        p.counterDataImageSize = s->data_size;
        p.pCounterDataImage = s->data;
        p.range = CUPTI_AutoRange;
        p.replayMode = CUPTI_KernelReplay;
        p.maxRangesPerPass = 4;
        p.numNestingLevels = 1;
        p.minNestingLevel = 1;
        p.passIndex = 0;
        p.targetNestingLevel = 0;
        CUPTI_TRY(cuptiRangeProfilerSetConfig(&p), "cuptiRangeProfilerSetConfig");
    }
out:
    return o->status;
}

/* One triad after an L2 flush, as the session's range, and the metrics'
 * values for it; o->status (0 when it worked). */
static int cupti_measure(cupti_sess *s, mw_gpu_triad_bufs *t, double *values)
{
    mw_gpu_cupti *o = s->o;
    /* Flush outside the session so that only the triad is a range. */
    if (mw_gpu_triad_flush_l2(t)) {
        o->status = MW_ERR_GPU;
        snprintf(o->status_text, sizeof o->status_text, "L2 flush kernel failed");
        goto out;
    }
    {
        CUpti_RangeProfiler_Start_Params p = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
        p.pRangeProfilerObject = s->rp;
        CUPTI_TRY(cuptiRangeProfilerStart(&p), "cuptiRangeProfilerStart");
    }
    if (mw_gpu_triad_launch(t, NULL)) {
        o->status = MW_ERR_GPU;
        snprintf(o->status_text, sizeof o->status_text, "the triad failed under the profiler");
        goto out;
    }
    {
        CUpti_RangeProfiler_Stop_Params p = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
        p.pRangeProfilerObject = s->rp;
        CUPTI_TRY(cuptiRangeProfilerStop(&p), "cuptiRangeProfilerStop");
    }
    {
        CUpti_RangeProfiler_DecodeData_Params p = {
            CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
        p.pRangeProfilerObject = s->rp;
        CUPTI_TRY(cuptiRangeProfilerDecodeData(&p), "cuptiRangeProfilerDecodeData");
    }
    {
        CUpti_RangeProfiler_GetCounterDataInfo_Params p = {
            CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
        p.pCounterDataImage = s->data;
        p.counterDataImageSize = s->data_size;
        CUPTI_TRY(cuptiRangeProfilerGetCounterDataInfo(&p), "cuptiRangeProfilerGetCounterDataInfo");
        if (p.numTotalRanges < 1) {
            o->status = MW_ERR_NODATA;
            snprintf(o->status_text, sizeof o->status_text,
                     "the range profiler recorded no range for the triad");
            goto out;
        }
        CUpti_Profiler_Host_EvaluateToGpuValues_Params q = {
            CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
        q.pHostObject = s->host;
        q.pCounterDataImage = s->data;
        q.counterDataImageSize = s->data_size;
        q.rangeIndex = p.numTotalRanges - 1;
        q.ppMetricNames = (const char **)metrics;
        q.numMetrics = NMETRICS;
        q.pMetricValues = values;
        CUPTI_TRY(cuptiProfilerHostEvaluateToGpuValues(&q), "cuptiProfilerHostEvaluateToGpuValues");
    }
out:
    return o->status;
}

/* Each metric's verdict against the triad's known bytes and its timed duration. */
static void cupti_verdicts(mw_gpu_cupti *o, const mw_gpu_device *dev, size_t n,
                           const double *values, double triad_s)
{
    double nb = (double)n * 8, l2 = (double)dev->l2_bytes;
    char why[240];
    set_check(&o->m[0], metrics[0], values[0], 2 * nb,
              "known: b and c read once (2 x n x 8 bytes)");
    snprintf(why, sizeof why,
             "known: a written once (n x 8 bytes, no write-allocate); up to the L2 size "
             "(%.0f MB, %.1f %% of it) may still sit dirty in the L2 when the kernel ends",
             l2 / 1e6, 100 * l2 / nb);
    set_check(&o->m[1], metrics[1], values[1], nb, why);
    set_check(&o->m[2], metrics[2], values[2], 3 * nb,
              "known: every byte the SMs read or write passes the L2 once (3 x n x 8); "
              "traffic between the two L2 partitions may count twice");
    set_check(&o->m[3], metrics[3], values[3] * 1e-9, triad_s,
              "compared with the same triad timed by CUDA events outside the session");
    o->m[3].value = values[3];
    o->m[3].expected = triad_s * 1e9;
    o->n = 4;
    if (strcmp(o->m[1].verdict, "accurate") && values[1] < nb && nb - values[1] <= l2 * 1.05) {
        snprintf(o->m[1].verdict, sizeof o->m[1].verdict, "accurate-within-l2");
    }
}

int mw_gpu_cupti_check(int dev, size_t n, mw_gpu_cupti *o)
{
    mw_gpu_triad_bufs t;
    cupti_sess s = {.o = o};
    double values[NMETRICS] = {0};
    double triad_s = 0;
    mw_gpu_device d;

    memset(o, 0, sizeof *o);
    memset(&t, 0, sizeof t);
    if (mw_gpu_device_get(dev, &d, o->status_text, sizeof o->status_text))
        return o->status = MW_ERR_GPU;
    if ((o->status = mw_gpu_triad_alloc(dev, n, &t))) {
        snprintf(o->status_text, sizeof o->status_text, "cannot allocate the triad's arrays");
        return o->status;
    }
    n = t.n;
    if (cupti_time_triad(&t, &triad_s, o))
        goto out;
    s.ctx = cupti_current_ctx();
    if (!s.ctx) {
        o->status = MW_ERR_GPU;
        snprintf(o->status_text, sizeof o->status_text, "no current CUDA context");
        goto out;
    }
    if (cupti_config(&s, dev) || cupti_counter_data(&s) || cupti_measure(&s, &t, values))
        goto out;
    cupti_verdicts(o, &d, n, values, triad_s);
out:
    if (s.rp) {
        CUpti_RangeProfiler_Disable_Params p = {CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
        p.pRangeProfilerObject = s.rp;
        cuptiRangeProfilerDisable(&p);
    }
    host_free(s.host);
    if (s.profiler_up) {
        CUpti_Profiler_DeInitialize_Params p = {CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
        cuptiProfilerDeInitialize(&p);
    }
    free(s.config);
    free(s.data);
    mw_gpu_triad_free(&t);
    if (o->status && !o->status_text[0])
        snprintf(o->status_text, sizeof o->status_text, "failed with code %d", o->status);
    return o->status;
}
