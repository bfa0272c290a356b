/*
 * gpu/pmsamp.c: DRAM throughput over time per CUDA device through CUPTI PM
 * Sampling (dram__bytes_read.sum and dram__bytes_write.sum, or the
 * dramc__/dram__ throughput ratios scaled by the peak), GPU-time-interval
 * trigger every MEMWATCH_GPU_INTERVAL_US; the first window after each start
 * is discarded (it spans the time before sampling began), hardware-buffer
 * overflow is recorded. Windows go to the device's attribution store
 * (gpu/attrib.c) and out as MWR_GPU_SAMPLE records. Also sets each device's peak and threshold (mw_pm_device).
 * Threading: every function with g.mu held.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include "cupti_util.h"
#include "inject.h"
#include "memwatch/gpu.h"
#include "memwatch/mwr.h"

static const mw_pm_set pm_sets[] = {
    {"dram__bytes_read.sum", "dram__bytes_write.sum", 0},
    {"dramc__read_throughput.avg.pct_of_peak_sustained_elapsed",
     "dramc__write_throughput.avg.pct_of_peak_sustained_elapsed", 1},
    {"dram__read_throughput.avg.pct_of_peak_sustained_elapsed",
     "dram__write_throughput.avg.pct_of_peak_sustained_elapsed", 1},
};

/* Peak and threshold of dev: the GPU profile's threshold when the profile is
 * of a GPU with this one's peak (within 10 %), else half this device's peak,
 * marked uncalibrated. */
void mw_pm_device(uint32_t dev)
{
    mw_dev *pd = &g.dev[dev];
    if (pd->seen)
        return;
    pd->seen = 1;
    CUdevice cd;
    int mhz = 0, bw = 0, ma = 0, mi = 0;
    if (cuDeviceGet(&cd, (int)dev) == CUDA_SUCCESS) {
        if (cuDeviceGetAttribute(&mhz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, cd) == CUDA_SUCCESS &&
            cuDeviceGetAttribute(&bw, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, cd) ==
                CUDA_SUCCESS)
            pd->peak_bw = mhz * 1e3 * 2.0 * bw / 8.0;
        cuDeviceGetAttribute(&ma, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cd);
        cuDeviceGetAttribute(&mi, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cd);
        if (cuDeviceGetName(pd->name, sizeof pd->name, cd) != CUDA_SUCCESS)
            pd->name[0] = 0;
    }
    const char *src = g.threshold_src;
    char why[160] = "";
    if (g.profile_thr > 0 && (!(g.profile_peak > 0) || !(pd->peak_bw > 0) ||
                              fabs(pd->peak_bw / g.profile_peak - 1) <= 0.1)) {
        pd->threshold_bw = g.profile_thr;
        if (!(pd->peak_bw > 0))
            pd->peak_bw = g.profile_peak;
    } else {
        pd->threshold_bw = MW_GPU_DEFAULT_THRESHOLD_FRAC * pd->peak_bw;
        pd->uncalibrated = 1;
        if (g.profile_thr > 0) {
            snprintf(why, sizeof why,
                     "default (uncalibrated: the GPU profile is of a GPU with a %.0f GB/s peak; "
                     "run 'memwatch calibrate --gpu --device %u')",
                     g.profile_peak / 1e9, dev);
            src = why;
        }
    }
    mw_cuda_meta("%s=%u\n%s=%s\n%s=%d.%d\n%s=%.6g\n%s=%.6g\n%s=%s\n",
                 mw_meta_key(MW_META_GPU_DEVICE), dev, mw_meta_key(MW_META_GPU_NAME), pd->name,
                 mw_meta_key(MW_META_GPU_CC), ma, mi, mw_meta_key(MW_META_GPU_PEAK_BW),
                 pd->peak_bw, mw_meta_key(MW_META_GPU_THRESHOLD_BW), pd->threshold_bw,
                 mw_meta_key(MW_META_GPU_THRESHOLD_SOURCE), src);
    mw_cuda_dbg("device %u (%s): peak %.1f GB/s, threshold %.1f GB/s", dev, pd->name,
                pd->peak_bw / 1e9, pd->threshold_bw / 1e9);
}

static int pm_config(mw_dev *pd, const char *chip, const mw_pm_set *set, CUptiResult *err)
{
    const char *names[2] = {set->rd, set->wr};
    CUpti_Profiler_Host_Initialize_Params hi = {CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    hi.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
    hi.pChipName = chip;
    if ((*err = cuptiProfilerHostInitialize(&hi)))
        return -1;
    pd->host = hi.pHostObject;
    CUpti_Profiler_Host_ConfigAddMetrics_Params am = {
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    am.pHostObject = pd->host;
    am.ppMetricNames = names;
    am.numMetrics = 2;
    if ((*err = cuptiProfilerHostConfigAddMetrics(&am)))
        goto fail;
    CUpti_Profiler_Host_GetConfigImageSize_Params cs = {
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    cs.pHostObject = pd->host;
    if ((*err = cuptiProfilerHostGetConfigImageSize(&cs)))
        goto fail;
    pd->config_size = cs.configImageSize;
    pd->config = calloc(1, pd->config_size);
    CUpti_Profiler_Host_GetConfigImage_Params ci = {
        CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    ci.pHostObject = pd->host;
    ci.pConfigImage = pd->config;
    ci.configImageSize = pd->config_size;
    if (!pd->config || (*err = cuptiProfilerHostGetConfigImage(&ci)))
        goto fail;
    CUpti_Profiler_Host_GetNumOfPasses_Params np = {
        CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
    np.pConfigImage = pd->config;
    np.configImageSize = pd->config_size;
    if ((*err = cuptiProfilerHostGetNumOfPasses(&np)))
        goto fail;
    if (np.numOfPasses != 1) {
        *err = CUPTI_ERROR_NOT_SUPPORTED;
        goto fail;
    }
    pd->set = set;
    return 0;
fail:
    free(pd->config);
    pd->config = NULL;
    {
        CUpti_Profiler_Host_Deinitialize_Params d = {
            CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
        d.pHostObject = pd->host;
        cuptiProfilerHostDeinitialize(&d);
        pd->host = NULL;
    }
    return -1;
}

/* Enable, configure and start on dev (config image already made). */
static CUptiResult pm_enable_start(uint32_t dev, const char **step)
{
    mw_dev *pd = &g.dev[dev];
    CUptiResult r;
    CUpti_PmSampling_Enable_Params en = {CUpti_PmSampling_Enable_Params_STRUCT_SIZE};
    en.deviceIndex = dev;
    *step = "cuptiPmSamplingEnable";
    if ((r = cuptiPmSamplingEnable(&en)))
        return r;
    pd->obj = en.pPmSamplingObject;
    CUpti_PmSampling_SetConfig_Params sc = {CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE};
    sc.pPmSamplingObject = pd->obj;
    sc.configSize = pd->config_size;
    sc.pConfig = pd->config;
    sc.hardwareBufferSize = 256u << 20;
    sc.samplingInterval = g.interval_ns;
    sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
    sc.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST;
    *step = "cuptiPmSamplingSetConfig";
    if ((r = cuptiPmSamplingSetConfig(&sc)))
        return r;
    if (!pd->data) {
        const char *names[2] = {pd->set->rd, pd->set->wr};
        CUpti_PmSampling_GetCounterDataSize_Params ds = {
            CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE};
        ds.pPmSamplingObject = pd->obj;
        ds.pMetricNames = names;
        ds.numMetrics = 2;
        ds.maxSamples = 8192;
        *step = "cuptiPmSamplingGetCounterDataSize";
        if ((r = cuptiPmSamplingGetCounterDataSize(&ds)))
            return r;
        pd->data_size = ds.counterDataSize;
        pd->data = calloc(1, pd->data_size);
        if (!pd->data)
            return CUPTI_ERROR_OUT_OF_MEMORY;
    }
    CUpti_PmSampling_CounterDataImage_Initialize_Params ci = {
        CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    ci.pPmSamplingObject = pd->obj;
    ci.counterDataSize = pd->data_size;
    ci.pCounterData = pd->data;
    *step = "cuptiPmSamplingCounterDataImageInitialize";
    if ((r = cuptiPmSamplingCounterDataImageInitialize(&ci)))
        return r;
    CUpti_PmSampling_Start_Params st = {CUpti_PmSampling_Start_Params_STRUCT_SIZE};
    st.pPmSamplingObject = pd->obj;
    *step = "cuptiPmSamplingStart";
    return cuptiPmSamplingStart(&st);
}

static void pm_disable(mw_dev *pd)
{
    if (!pd->obj)
        return;
    CUpti_PmSampling_Disable_Params d = {CUpti_PmSampling_Disable_Params_STRUCT_SIZE};
    d.pPmSamplingObject = pd->obj;
    cuptiPmSamplingDisable(&d);
    pd->obj = NULL;
}

void mw_pm_start(uint32_t dev)
{
    mw_dev *pd = &g.dev[dev];
    CUptiResult r;
    const char *step = "";
    if (pd->active || pd->failed)
        return;
    if (g.pm_off) {
        pd->failed = 1;
        snprintf(pd->why, sizeof pd->why, "turned off by MEMWATCH_GPU_PM=0");
        mw_cuda_meta("%s=unavailable:%s\n", mw_meta_key(MW_META_GPU_SAMPLING), pd->why);
        return;
    }
    if (!g.profiler_up) {
        CUpti_Profiler_Initialize_Params p = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
        step = "cuptiProfilerInitialize";
        if ((r = cuptiProfilerInitialize(&p)))
            goto fail;
        g.profiler_up = 1;
    }
    CUpti_Device_GetChipName_Params cn = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    cn.deviceIndex = dev;
    step = "cuptiDeviceGetChipName";
    if ((r = cuptiDeviceGetChipName(&cn)))
        goto fail;
    step = "PM sampling metric configuration";
    r = CUPTI_ERROR_INVALID_METRIC_NAME;
    for (size_t i = 0; i < sizeof pm_sets / sizeof pm_sets[0]; i++)
        if (pm_config(pd, cn.pChipName, &pm_sets[i], &r) == 0)
            break;
    if (!pd->config)
        goto fail;
    if ((r = pm_enable_start(dev, &step)))
        goto fail;
    pd->active = 1;
    mw_cuda_meta("%s=pm:%s,%s:%llu\n", mw_meta_key(MW_META_GPU_SAMPLING), pd->set->rd,
                 pd->set->wr, (unsigned long long)g.interval_ns);
    mw_cuda_dbg("PM sampling on device %u (%s) with %s every %llu ns", dev, cn.pChipName,
                pd->set->rd, (unsigned long long)g.interval_ns);
    return;
fail:
    pd->failed = 1;
    mw_cupti_explain(step, r, pd->why, sizeof pd->why);
    mw_cuda_meta("%s=unavailable:device %u: %s\n", mw_meta_key(MW_META_GPU_SAMPLING), dev,
                 pd->why);
    mw_cuda_dbg("PM sampling unavailable on device %u: %s", dev, pd->why);
    pm_disable(pd);
    free(pd->config);
    pd->config = NULL;
}

static void push_sample(uint32_t dev, uint64_t s, uint64_t e, double rd, double wr,
                        uint32_t flags)
{
    mw_dev *pd = &g.dev[dev];
    if (g.trace)
        fprintf(g.trace, "W %u %llu %llu %.0f %.0f %u\n", dev, (unsigned long long)s,
                (unsigned long long)e, rd, wr, flags);
    if (mw_ga_push(&pd->ga, s, e, rd + wr, flags & MWR_GPU_OVERFLOW))
        g.dropped++;
    mwr_gpu_sample r;
    memset(&r, 0, sizeof r);
    r.start_ns = s;
    r.end_ns = e;
    r.device = dev;
    r.dram_read_bytes = rd;
    r.dram_write_bytes = wr;
    r.dram_bw = e > s ? (rd + wr) / ((double)(e - s) * 1e-9) : 0;
    r.threshold_bw = pd->threshold_bw;
    r.flags = flags | MWR_GPU_BW_VALID | (pd->uncalibrated ? MWR_GPU_UNCALIBRATED : 0);
    if (pd->threshold_bw > 0 && r.dram_bw > pd->threshold_bw)
        r.flags |= MWR_GPU_BW_BOUND;
    pd->samples++;
    pd->flagged_samples += !!(r.flags & MWR_GPU_BW_BOUND);
    mw_cuda_emit(MWR_GPU_SAMPLE, &r, sizeof r, NULL, 0);
}

void mw_pm_drain(uint32_t dev)
{
    mw_dev *pd = &g.dev[dev];
    if (!pd->obj || !pd->data)
        return;
    const char *names[2] = {pd->set->rd, pd->set->wr};
    for (int round = 0; round < 64; round++) {
        CUpti_PmSampling_DecodeData_Params dd = {CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE};
        dd.pPmSamplingObject = pd->obj;
        dd.pCounterDataImage = pd->data;
        dd.counterDataImageSize = pd->data_size;
        CUptiResult r = cuptiPmSamplingDecodeData(&dd);
        if (r != CUPTI_SUCCESS) {
            mw_cupti_explain("cuptiPmSamplingDecodeData", r, pd->why, sizeof pd->why);
            mw_cuda_dbg("%s", pd->why);
            return;
        }
        uint32_t of = 0;
        if (dd.overflow) {
            pd->overflowed++;
            of = MWR_GPU_OVERFLOW;
        }
        CUpti_PmSampling_GetCounterDataInfo_Params ci = {
            CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE};
        ci.pCounterDataImage = pd->data;
        ci.counterDataImageSize = pd->data_size;
        if (cuptiPmSamplingGetCounterDataInfo(&ci) != CUPTI_SUCCESS)
            return;
        for (size_t i = 0; i < ci.numCompletedSamples; i++) {
            CUpti_PmSampling_CounterData_GetSampleInfo_Params si = {
                CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE};
            si.pPmSamplingObject = pd->obj;
            si.pCounterDataImage = pd->data;
            si.counterDataImageSize = pd->data_size;
            si.sampleIndex = i;
            if (cuptiPmSamplingCounterDataGetSampleInfo(&si) != CUPTI_SUCCESS)
                continue;
            double v[2] = {0, 0};
            CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
                CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
            ev.pHostObject = pd->host;
            ev.pCounterDataImage = pd->data;
            ev.counterDataImageSize = pd->data_size;
            ev.rangeIndex = i;
            ev.ppMetricNames = names;
            ev.numMetrics = 2;
            ev.pMetricValues = v;
            if (cuptiProfilerHostEvaluateToGpuValues(&ev) != CUPTI_SUCCESS)
                continue;
            if (!pd->discarded_first) {
                /* The first window spans the time before sampling started. */
                pd->discarded_first = 1;
                if (g.trace)
                    fprintf(g.trace, "F %u %llu %llu %.0f %.0f\n", dev,
                            (unsigned long long)si.startTimestamp,
                            (unsigned long long)si.endTimestamp, v[0], v[1]);
                continue;
            }
            double secs = (double)(si.endTimestamp - si.startTimestamp) * 1e-9;
            if (pd->set->pct) {
                v[0] = v[0] / 100 * pd->peak_bw * secs;
                v[1] = v[1] / 100 * pd->peak_bw * secs;
            }
            push_sample(dev, si.startTimestamp, si.endTimestamp, v[0], v[1], of);
            of = 0;
        }
        if (ci.numCompletedSamples)
            mw_cuda_dbg("PM decode device %u: %zu windows, last ends at %llu", dev,
                        ci.numCompletedSamples, (unsigned long long)pd->ga.last_end);
        CUpti_PmSampling_CounterDataImage_Initialize_Params re = {
            CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE};
        re.pPmSamplingObject = pd->obj;
        re.counterDataSize = pd->data_size;
        re.pCounterData = pd->data;
        cuptiPmSamplingCounterDataImageInitialize(&re);
        if (dd.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL)
            break;
    }
}

void mw_pm_stop(uint32_t dev)
{
    mw_dev *pd = &g.dev[dev];
    if (!pd->active)
        return;
    if (pd->obj) {
        CUpti_PmSampling_Stop_Params st = {CUpti_PmSampling_Stop_Params_STRUCT_SIZE};
        st.pPmSamplingObject = pd->obj;
        cuptiPmSamplingStop(&st);
        mw_pm_drain(dev);
    }
    pm_disable(pd);
    pd->active = 0;
    free(pd->config);
    pd->config = NULL;
}

/* At the end: the host object and buffers. */
void mw_pm_release(uint32_t dev)
{
    mw_dev *pd = &g.dev[dev];
    if (pd->host) {
        CUpti_Profiler_Host_Deinitialize_Params hd = {
            CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
        hd.pHostObject = pd->host;
        cuptiProfilerHostDeinitialize(&hd);
        pd->host = NULL;
    }
    free(pd->data);
    pd->data = NULL;
}
