/*
 * gpu/inject.c: libmemwatch_cuda.so, the CUDA profiling library that CUDA
 * loads through CUDA_INJECTION64_PATH (libmemwatch.so sets it for programs it
 * watches, unless MEMWATCH_GPU=0 or another tool set it first).
 *
 * Owns: kernel records from the CUPTI Activity API (concurrent-kernel kind),
 * DRAM throughput over time from CUPTI PM Sampling (GPU-time-interval trigger,
 * first sample discarded, overflow flagged), and the flags: a kernel or
 * interval whose DRAM throughput exceeds the threshold of the GPU profile
 * (gpu-profile.json from `memwatch calibrate --gpu`; without one, half the
 * computed peak, and every record says "uncalibrated").
 * Output: MWR_GPU_* records (include/memwatch/mwr_gpu.h) through
 * mw_preload_emit() of libmemwatch.so when it is loaded, else its own .mwr file
 * ($MEMWATCH_GPU_OUT, default ./memwatch-gpu.<pid>.mwr) following mwr.h.
 * May call: CUPTI, the CUDA driver, gpu/gpu_profile.c, libc.
 * Threading: CUPTI calls the buffer and resource callbacks from its own and the
 * application's threads; one decode thread of ours drains PM samples and
 * matches kernels every MEMWATCH_GPU_PERIOD_MS; all shared state sits under
 * g.mu. Nothing here runs on a signal path. Prints nothing unless
 * MEMWATCH_GPU_DEBUG=1 (diagnostics to stderr).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>

#include <cuda.h>
#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include "cupti_util.h"
#include "pcsamp.h"
#include "memwatch/gpu.h"
#include "memwatch/memwatch.h"
#include "memwatch/mwr.h"
#include "memwatch/mwr_gpu.h"

#define MAX_DEV 16
#define MAX_SAMPLES (1u << 18)
#define NAME_MAX_LEN 512

typedef int (*emit_fn)(uint32_t type, const void *payload, uint32_t len);

typedef struct sample {
    uint64_t s, e;
    double rd, wr;
    uint32_t dev, flags;
} sample;

typedef struct pending {
    mwr_gpu_kernel k;
    char name[NAME_MAX_LEN];
} pending;

/* One metric set that PM sampling may accept; pct sets are scaled by the peak. */
typedef struct pm_set {
    const char *rd, *wr;
    int pct;
} pm_set;

static const pm_set pm_sets[] = {
    {"dram__bytes_read.sum", "dram__bytes_write.sum", 0},
    {"dramc__read_throughput.avg.pct_of_peak_sustained_elapsed",
     "dramc__write_throughput.avg.pct_of_peak_sustained_elapsed", 1},
    {"dram__read_throughput.avg.pct_of_peak_sustained_elapsed",
     "dram__write_throughput.avg.pct_of_peak_sustained_elapsed", 1},
};

typedef struct pm_dev {
    int want, active, failed, discarded_first, overflowed;
    CUpti_PmSampling_Object *obj;
    CUpti_Profiler_Host_Object *host;
    const pm_set *set;
    uint8_t *data;
    size_t data_size;
    uint8_t *config;           /* CUPTI keeps using the config image: freed after Disable */
    uint64_t last_end;
    double peak_bw;
    char why[400];
} pm_dev;

static struct {
    pthread_mutex_t mu;
    int on, done, profiler_up;
    emit_fn emit;
    int fd;
    uint64_t records, bytes, dropped;
    double threshold_bw, peak_bw;
    int uncalibrated;
    char threshold_src[4200];
    uint64_t interval_ns;
    unsigned period_ms;
    int debug;
    pm_dev pm[MAX_DEV];
    sample *smp;
    size_t nsmp;
    pending *pend;
    size_t npend, cappend;
    pthread_t thr;
    int thr_up, stop;
    CUpti_SubscriberHandle sub;
    uint64_t kernels, flagged, samples, flagged_samples;
    int late_exit;
    int pc_on;                 /* PC sampling wanted (MEMWATCH_GPU_PC=1) */
    int pm_off;                /* MEMWATCH_GPU_PM=0: no PM sampling (kernels only) */
    unsigned pc_period;        /* log2 cycles between PC samples */
    char *flagged_names[64];   /* kernels flagged at least once: their lines are named */
    int nflagged_names;
} g = {.mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

static void dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void dbg(const char *fmt, ...)
{
    if (!g.debug)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "memwatch-cuda: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* MEMWATCH_GPU_DEBUG=1 only: a backtrace on SIGSEGV, to stderr. */
static void on_segv(int sig)
{
    void *f[32];
    int n = backtrace(f, 32);
    static const char m[] = "memwatch-cuda: SIGSEGV, backtrace:\n";
    if (write(2, m, sizeof m - 1) < 0)
        _exit(128 + sig);
    backtrace_symbols_fd(f, n, 2);
    signal(sig, SIG_DFL);
    raise(sig);
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------ raw output */

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Called with g.mu held. */
static void emit(uint32_t type, const void *a, uint32_t alen, const void *b, uint32_t blen)
{
    uint8_t buf[sizeof(mwr_rec_hdr) + 4096];
    uint32_t len = alen + blen;
    if (len > 4096) {
        g.dropped++;
        return;
    }
    if (g.emit) {
        memcpy(buf, a, alen);
        if (blen)
            memcpy(buf + alen, b, blen);
        if (g.emit(type, buf, len) < 0)
            g.dropped++;
        else
            g.records++;
        return;
    }
    if (g.fd < 0)
        return;
    mwr_rec_hdr h = {type, (uint32_t)MWR_ALIGN(sizeof h + len)};
    memset(buf, 0, h.size);
    memcpy(buf, &h, sizeof h);
    memcpy(buf + sizeof h, a, alen);
    if (blen)
        memcpy(buf + sizeof h + alen, b, blen);
    if (write_all(g.fd, buf, h.size))
        g.dropped++;
    else {
        g.records++;
        g.bytes += h.size;
    }
}

static void emit_meta(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void emit_meta(const char *fmt, ...)
{
    char t[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t, sizeof t, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof t)
        n = sizeof t - 1;
    emit(MWR_GPU_META, t, (uint32_t)n, NULL, 0);
}

static void open_own_file(void)
{
    char path[4096];
    const char *e = getenv("MEMWATCH_GPU_OUT");
    if (e && *e)
        snprintf(path, sizeof path, "%s", e);
    else
        snprintf(path, sizeof path, "memwatch-gpu.%d.mwr", (int)getpid());
    g.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (g.fd < 0)
        return;
    mwr_file_header fh;
    memset(&fh, 0, sizeof fh);
    memcpy(fh.magic, MWR_MAGIC, 8);
    fh.version_major = MWR_VERSION_MAJOR;
    fh.version_minor = MWR_VERSION_MINOR;
    fh.header_size = sizeof fh;
    if (write_all(g.fd, &fh, sizeof fh)) {
        close(g.fd);
        g.fd = -1;
        return;
    }
    char meta[256];
    int n = snprintf(meta, sizeof meta, "writer=libmemwatch_cuda\npid=%d\n", (int)getpid());
    emit(MWR_META, meta, (uint32_t)n, NULL, 0);
}

/* ------------------------------------------------------------ matching */

/* DRAM bytes PM sampling saw during [s, e) on dev, and the time covered. */
static void overlap(uint32_t dev, uint64_t s, uint64_t e, double *bytes, double *covered,
                    uint32_t *flags)
{
    *bytes = 0;
    *covered = 0;
    for (size_t i = 0; i < g.nsmp; i++) {
        const sample *p = &g.smp[i];
        if (p->dev != dev || p->e <= s || p->s >= e || p->e <= p->s)
            continue;
        uint64_t a = p->s > s ? p->s : s, b = p->e < e ? p->e : e;
        double f = (double)(b - a) / (double)(p->e - p->s);
        *bytes += f * (p->rd + p->wr);
        *covered += (double)(b - a);
        *flags |= p->flags & MWR_GPU_OVERFLOW;
    }
}

/* Emit kernels that PM samples now cover (all of them when final). g.mu held. */
static void match_kernels(int final)
{
    size_t keep = 0;
    for (size_t i = 0; i < g.npend; i++) {
        pending *p = &g.pend[i];
        uint32_t dev = p->k.device < MAX_DEV ? p->k.device : 0;
        pm_dev *pd = &g.pm[dev];
        if (!final && pd->active && pd->last_end < p->k.end_ns) {
            g.pend[keep++] = *p;
            continue;
        }
        double bytes = 0, cov = 0, dur = (double)(p->k.end_ns - p->k.start_ns);
        uint32_t fl = 0;
        if (pd->active || pd->discarded_first)
            overlap(dev, p->k.start_ns, p->k.end_ns, &bytes, &cov, &fl);
        p->k.threshold_bw = g.threshold_bw;
        p->k.peak_bw = pd->peak_bw > 0 ? pd->peak_bw : g.peak_bw;
        if (cov > 0 && dur > 0) {
            fl |= MWR_GPU_BW_VALID;
            if (cov < 0.9 * dur)
                fl |= MWR_GPU_PARTIAL;
            p->k.dram_bytes = bytes;
            p->k.dram_bw = bytes / (cov * 1e-9);
            if (g.threshold_bw > 0 && p->k.dram_bw > g.threshold_bw)
                fl |= MWR_GPU_BW_BOUND;
        }
        if (g.uncalibrated)
            fl |= MWR_GPU_UNCALIBRATED;
        p->k.flags = fl;
        g.kernels++;
        g.flagged += !!(fl & MWR_GPU_BW_BOUND);
        if ((fl & MWR_GPU_BW_BOUND) && g.nflagged_names < 64) {
            int known = 0;
            for (int f = 0; f < g.nflagged_names && !known; f++)
                known = strlen(g.flagged_names[f]) == p->k.name_len &&
                        !memcmp(g.flagged_names[f], p->name, p->k.name_len);
            if (!known && (g.flagged_names[g.nflagged_names] = strndup(p->name, p->k.name_len)))
                g.nflagged_names++;
        }
        dbg("kernel %.60s [%llu, %llu] %.1f us dram %.3g B/s%s%s", p->name, (unsigned long long)p->k.start_ns,
            (unsigned long long)p->k.end_ns, dur / 1e3, p->k.dram_bw,
            fl & MWR_GPU_BW_BOUND ? " FLAGGED" : "", fl & MWR_GPU_BW_VALID ? "" : " (no samples)");
        emit(MWR_GPU_KERNEL, &p->k, sizeof p->k, p->name, p->k.name_len);
    }
    g.npend = keep;
    /* Drop samples older than every pending kernel and the last 2 s. */
    uint64_t oldest = UINT64_MAX;
    for (size_t i = 0; i < g.npend; i++)
        if (g.pend[i].k.start_ns < oldest)
            oldest = g.pend[i].k.start_ns;
    size_t drop = 0;
    while (drop < g.nsmp && g.smp[drop].e < oldest &&
           (g.nsmp - drop > 4096 || final || g.smp[g.nsmp - 1].e - g.smp[drop].e > 2000000000ull))
        drop++;
    if (drop) {
        memmove(g.smp, g.smp + drop, (g.nsmp - drop) * sizeof *g.smp);
        g.nsmp -= drop;
    }
}

/* ------------------------------------------------------------ activity */

static void CUPTIAPI buf_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *size = 1 << 20;
    *buffer = aligned_alloc(8, *size);
    *max_records = 0;
}

static void CUPTIAPI buf_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                  size_t valid)
{
    CUpti_Activity *rec = NULL;
    pthread_mutex_lock(&g.mu);
    while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
            rec->kind != CUPTI_ACTIVITY_KIND_KERNEL)
            continue;
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
        if (g.npend == g.cappend) {
            size_t nc = g.cappend ? 2 * g.cappend : 256;
            pending *np = realloc(g.pend, nc * sizeof *np);
            if (!np) {
                g.dropped++;
                continue;
            }
            g.pend = np;
            g.cappend = nc;
        }
        pending *p = &g.pend[g.npend++];
        memset(&p->k, 0, sizeof p->k);
        p->k.start_ns = k->start;
        p->k.end_ns = k->end;
        p->k.device = k->deviceId;
        p->k.stream = k->streamId;
        p->k.correlation = k->correlationId;
        p->k.grid[0] = k->gridX;
        p->k.grid[1] = k->gridY;
        p->k.grid[2] = k->gridZ;
        p->k.block[0] = k->blockX;
        p->k.block[1] = k->blockY;
        p->k.block[2] = k->blockZ;
        p->k.regs = k->registersPerThread;
        p->k.shmem = (uint32_t)(k->staticSharedMemory + k->dynamicSharedMemory);
        const char *nm = k->name ? k->name : "?";
        size_t nl = strlen(nm);
        if (nl > NAME_MAX_LEN)
            nl = NAME_MAX_LEN;
        memcpy(p->name, nm, nl);
        p->k.name_len = (uint32_t)nl;
    }
    dbg("activity buffer: %zu bytes, %zu kernels pending", valid, g.npend);
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
        g.dropped += dropped;
    pthread_mutex_unlock(&g.mu);
    free(buffer);
    (void)size;
}

/* ------------------------------------------------------------ PM sampling */

static int pm_config(pm_dev *pd, const char *chip, uint8_t **config, size_t *config_size,
                     const pm_set *set, CUptiResult *err)
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
    *config_size = cs.configImageSize;
    *config = calloc(1, *config_size);
    CUpti_Profiler_Host_GetConfigImage_Params ci = {
        CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    ci.pHostObject = pd->host;
    ci.pConfigImage = *config;
    ci.configImageSize = *config_size;
    if (!*config || (*err = cuptiProfilerHostGetConfigImage(&ci)))
        goto fail;
    CUpti_Profiler_Host_GetNumOfPasses_Params np = {
        CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
    np.pConfigImage = *config;
    np.configImageSize = *config_size;
    if ((*err = cuptiProfilerHostGetNumOfPasses(&np)))
        goto fail;
    if (np.numOfPasses != 1) {
        *err = CUPTI_ERROR_NOT_SUPPORTED;
        goto fail;
    }
    pd->set = set;
    return 0;
fail:
    free(*config);
    *config = NULL;
    {
        CUpti_Profiler_Host_Deinitialize_Params d = {
            CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
        d.pHostObject = pd->host;
        cuptiProfilerHostDeinitialize(&d);
        pd->host = NULL;
    }
    return -1;
}

/* Start PM sampling on dev. g.mu held. */
static void pm_start(uint32_t dev)
{
    pm_dev *pd = &g.pm[dev];
    uint8_t *config = NULL;
    size_t config_size = 0;
    CUptiResult r;
    const char *step = "";
    if (pd->active || pd->failed)
        return;
    if (g.pm_off) {
        pd->failed = 1;
        snprintf(pd->why, sizeof pd->why, "turned off by MEMWATCH_GPU_PM=0");
        emit_meta("gpu.sampling=unavailable:%s\n", pd->why);
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
    {
        CUdevice cd;
        int mhz = 0, bw = 0;
        if (cuDeviceGet(&cd, (int)dev) == CUDA_SUCCESS &&
            cuDeviceGetAttribute(&mhz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, cd) == CUDA_SUCCESS &&
            cuDeviceGetAttribute(&bw, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, cd) ==
                CUDA_SUCCESS)
            pd->peak_bw = mhz * 1e3 * 2.0 * bw / 8.0;
        if (g.uncalibrated && !(g.threshold_bw > 0) && pd->peak_bw > 0) {
            g.peak_bw = pd->peak_bw;
            g.threshold_bw = MW_GPU_DEFAULT_THRESHOLD_FRAC * pd->peak_bw;
            emit_meta("gpu.threshold_bw=%.6g\ngpu.peak_bw=%.6g\n", g.threshold_bw, g.peak_bw);
        }
    }
    step = "PM sampling metric configuration";
    r = CUPTI_ERROR_INVALID_METRIC_NAME;
    for (size_t i = 0; i < sizeof pm_sets / sizeof pm_sets[0]; i++)
        if (pm_config(pd, cn.pChipName, &config, &config_size, &pm_sets[i], &r) == 0)
            break;
    if (!config)
        goto fail;
    CUpti_PmSampling_Enable_Params en = {CUpti_PmSampling_Enable_Params_STRUCT_SIZE};
    en.deviceIndex = dev;
    step = "cuptiPmSamplingEnable";
    if ((r = cuptiPmSamplingEnable(&en)))
        goto fail;
    pd->obj = en.pPmSamplingObject;
    CUpti_PmSampling_SetConfig_Params sc = {CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE};
    sc.pPmSamplingObject = pd->obj;
    sc.configSize = config_size;
    sc.pConfig = config;
    sc.hardwareBufferSize = 256u << 20;
    sc.samplingInterval = g.interval_ns;
    sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
    sc.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST;
    step = "cuptiPmSamplingSetConfig";
    if ((r = cuptiPmSamplingSetConfig(&sc)))
        goto fail;
    {
        const char *names[2] = {pd->set->rd, pd->set->wr};
        CUpti_PmSampling_GetCounterDataSize_Params ds = {
            CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE};
        ds.pPmSamplingObject = pd->obj;
        ds.pMetricNames = names;
        ds.numMetrics = 2;
        ds.maxSamples = 8192;
        step = "cuptiPmSamplingGetCounterDataSize";
        if ((r = cuptiPmSamplingGetCounterDataSize(&ds)))
            goto fail;
        pd->data_size = ds.counterDataSize;
        pd->data = calloc(1, pd->data_size);
        CUpti_PmSampling_CounterDataImage_Initialize_Params ci = {
            CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE};
        ci.pPmSamplingObject = pd->obj;
        ci.counterDataSize = pd->data_size;
        ci.pCounterData = pd->data;
        step = "cuptiPmSamplingCounterDataImageInitialize";
        if (!pd->data || (r = cuptiPmSamplingCounterDataImageInitialize(&ci)))
            goto fail;
    }
    CUpti_PmSampling_Start_Params st = {CUpti_PmSampling_Start_Params_STRUCT_SIZE};
    st.pPmSamplingObject = pd->obj;
    step = "cuptiPmSamplingStart";
    if ((r = cuptiPmSamplingStart(&st)))
        goto fail;
    pd->active = 1;
    pd->config = config;
    emit_meta("gpu.sampling=pm:%s,%s:%llu\n", pd->set->rd, pd->set->wr,
              (unsigned long long)g.interval_ns);
    dbg("PM sampling on device %u (%s) with %s every %llu ns", dev, cn.pChipName, pd->set->rd,
        (unsigned long long)g.interval_ns);
    return;
fail:
    free(config);
    pd->failed = 1;
    mw_cupti_explain(step, r, pd->why, sizeof pd->why);
    emit_meta("gpu.sampling=unavailable:%s\n", pd->why);
    dbg("PM sampling unavailable on device %u: %s", dev, pd->why);
    if (pd->obj) {
        CUpti_PmSampling_Disable_Params d = {CUpti_PmSampling_Disable_Params_STRUCT_SIZE};
        d.pPmSamplingObject = pd->obj;
        cuptiPmSamplingDisable(&d);
        pd->obj = NULL;
    }
}

static void push_sample(uint32_t dev, uint64_t s, uint64_t e, double rd, double wr,
                        uint32_t flags)
{
    if (g.nsmp == MAX_SAMPLES) {
        memmove(g.smp, g.smp + MAX_SAMPLES / 4, (MAX_SAMPLES - MAX_SAMPLES / 4) * sizeof *g.smp);
        g.nsmp -= MAX_SAMPLES / 4;
    }
    sample *p = &g.smp[g.nsmp++];
    p->dev = dev;
    p->s = s;
    p->e = e;
    p->rd = rd;
    p->wr = wr;
    p->flags = flags;
    mwr_gpu_sample r;
    memset(&r, 0, sizeof r);
    r.start_ns = s;
    r.end_ns = e;
    r.device = dev;
    r.dram_read_bytes = rd;
    r.dram_write_bytes = wr;
    r.dram_bw = e > s ? (rd + wr) / ((double)(e - s) * 1e-9) : 0;
    r.threshold_bw = g.threshold_bw;
    r.flags = flags | MWR_GPU_BW_VALID | (g.uncalibrated ? MWR_GPU_UNCALIBRATED : 0);
    if (g.threshold_bw > 0 && r.dram_bw > g.threshold_bw)
        r.flags |= MWR_GPU_BW_BOUND;
    g.samples++;
    g.flagged_samples += !!(r.flags & MWR_GPU_BW_BOUND);
    emit(MWR_GPU_SAMPLE, &r, sizeof r, NULL, 0);
}

/* Decode what the hardware buffer holds. g.mu held. */
static void pm_drain(uint32_t dev)
{
    pm_dev *pd = &g.pm[dev];
    if (!pd->active)
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
            dbg("%s", pd->why);
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
                /* The first sample spans the time before sampling began. */
                pd->discarded_first = 1;
                pd->last_end = si.endTimestamp;
                continue;
            }
            double secs = (double)(si.endTimestamp - si.startTimestamp) * 1e-9;
            if (pd->set->pct) {
                v[0] = v[0] / 100 * pd->peak_bw * secs;
                v[1] = v[1] / 100 * pd->peak_bw * secs;
            }
            push_sample(dev, si.startTimestamp, si.endTimestamp, v[0], v[1], of);
            of = 0;
            pd->last_end = si.endTimestamp;
        }
        if (ci.numCompletedSamples)
            dbg("PM decode: %zu samples, last ends at %llu", ci.numCompletedSamples,
                (unsigned long long)pd->last_end);
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

static void *decode_thread(void *arg)
{
    unsigned tick = 0;
    while (!__atomic_load_n(&g.stop, __ATOMIC_ACQUIRE)) {
        struct timespec ts = {0, (long)g.period_ms * 1000000L};
        nanosleep(&ts, NULL);
        if (++tick % 5 == 0)
            cuptiActivityFlushAll(0);
        pthread_mutex_lock(&g.mu);
        for (uint32_t d = 0; d < MAX_DEV; d++) {
            if (g.pm[d].want && !g.pm[d].active && !g.pm[d].failed)
                pm_start(d);
            pm_drain(d);
        }
        match_kernels(0);
        if (g.pc_on && tick % 5 == 0)
            mw_pcs_drain_all();
        pthread_mutex_unlock(&g.mu);
    }
    return arg;
}

static void finish(void);

/* PC-sampling report: functions flagged as bandwidth-bound; without PM
 * sampling (nothing can be flagged) those whose name holds
 * MEMWATCH_GPU_PC_FILTER, or all. g.mu held. */
static int want_func(const char *func, void *user)
{
    for (int i = 0; i < g.nflagged_names; i++)
        if (!strcmp(g.flagged_names[i], func))
            return 1;
    if (g.pm_off) {
        const char *f = getenv("MEMWATCH_GPU_PC_FILTER");
        return !f || strstr(func, f) != NULL;
    }
    (void)user;
    return 0;
}

static void emit_pc(const char *func, const char *file, uint32_t line, uint64_t pc,
                    uint64_t samples, uint64_t stall_mem, void *user)
{
    mwr_gpu_pc r;
    char strs[2048];
    size_t fl = strlen(file), fn = strlen(func);
    if (fl > 1023)
        fl = 1023;
    if (fn > 1023)
        fn = 1023;
    memset(&r, 0, sizeof r);
    r.line = line;
    r.pc_offset = pc;
    r.samples = samples;
    r.stall_memory = stall_mem;
    r.file_len = (uint32_t)fl;
    r.func_len = (uint32_t)fn;
    memcpy(strs, file, fl);
    memcpy(strs + fl, func, fn);
    dbg("line %s:%u in %.60s: %llu samples, %llu memory stalls", file, line, func,
        (unsigned long long)samples, (unsigned long long)stall_mem);
    emit(MWR_GPU_PC, &r, sizeof r, strs, (uint32_t)(fl + fn));
    (void)user;
}

/* Stop, drain and release PM sampling on dev. g.mu held. */
static void pm_stop(uint32_t dev)
{
    pm_dev *pd = &g.pm[dev];
    if (!pd->active)
        return;
    CUpti_PmSampling_Stop_Params st = {CUpti_PmSampling_Stop_Params_STRUCT_SIZE};
    st.pPmSamplingObject = pd->obj;
    cuptiPmSamplingStop(&st);
    pm_drain(dev);
    CUpti_PmSampling_Disable_Params di = {CUpti_PmSampling_Disable_Params_STRUCT_SIZE};
    di.pPmSamplingObject = pd->obj;
    cuptiPmSamplingDisable(&di);
    pd->active = 0;
    pd->obj = NULL;
    free(pd->config);
    pd->config = NULL;
}

static void CUPTIAPI on_callback(void *user, CUpti_CallbackDomain dom, CUpti_CallbackId id,
                                 const void *data)
{
    if (dom != CUPTI_CB_DOMAIN_RESOURCE)
        return;
    if (id == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
        const CUpti_ResourceData *md = data;
        const CUpti_ModuleResourceData *m = md->resourceDescriptor;
        if (g.pc_on && m) {
            pthread_mutex_lock(&g.mu);
            mw_pcs_module_loaded(m->pCubin, m->cubinSize);
            pthread_mutex_unlock(&g.mu);
        }
        return;
    }
    const CUpti_ResourceData *rd = data;
    uint32_t dev = 0;
    if (cuptiGetDeviceId(rd->context, &dev) != CUPTI_SUCCESS || dev >= MAX_DEV)
        return;
    if (id == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
        pthread_mutex_lock(&g.mu);
        g.pm[dev].want = 1;
        pm_start(dev);
        if (g.pc_on && g.pm[dev].active)
            emit_meta("gpu.pc_sampling=unavailable:PM sampling holds the GPU counters "
                      "(CUPTI_ERROR_HARDWARE_BUSY); set MEMWATCH_GPU_PM=0 to sample PCs "
                      "instead\n");
        else if (g.pc_on && mw_pcs_context_created(rd->context, g.pc_period) == 0)
            emit_meta("gpu.pc_sampling=continuous:2^%u cycles\n", g.pc_period);
        else if (g.pc_on && mw_pcs_status())
            emit_meta("gpu.pc_sampling=unavailable:%s\n", mw_pcs_status());
        if (!g.thr_up && pthread_create(&g.thr, NULL, decode_thread, NULL) == 0)
            g.thr_up = 1;
        pthread_mutex_unlock(&g.mu);
        /* CUPTI loaded libnvperf_host just now; its static destructors run at
         * exit in reverse order of registration, so register finish() again
         * after them: it must stop the decode thread while they still stand. */
        if (!g.late_exit) {
            g.late_exit = 1;
            atexit(finish);
        }
    } else if (id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
        /* The last moment the context's records and samples can be read:
         * program teardown may come before our atexit handler. */
        dbg("context of device %u ending", dev);
        cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        pthread_mutex_lock(&g.mu);
        pm_stop(dev);
        if (g.pc_on)
            mw_pcs_context_ending(rd->context);
        g.pm[dev].want = 0;
        match_kernels(0);
        pthread_mutex_unlock(&g.mu);
    }
    (void)user;
}

static void finish(void)
{
    if (!g.on || g.done)
        return;
    g.done = 1;
    dbg("finishing: %zu kernels pending, %zu samples held", g.npend, g.nsmp);
    __atomic_store_n(&g.stop, 1, __ATOMIC_RELEASE);
    if (g.thr_up)
        pthread_join(g.thr, NULL);
    dbg("decode thread joined; flushing activity buffers");
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    dbg("flushed: %zu kernels pending", g.npend);
    pthread_mutex_lock(&g.mu);
    for (uint32_t d = 0; d < MAX_DEV; d++)
        pm_stop(d);
    dbg("PM sampling stopped: %zu samples held", g.nsmp);
    match_kernels(1);
    if (g.pc_on) {
        uint64_t tot = 0, drop = 0;
        mw_pcs_stop_all();
        int n = mw_pcs_report(want_func, emit_pc, NULL, &tot, &drop);
        emit_meta("gpu.pc_summary=%d source lines of %d flagged kernels; %llu PC samples, "
                  "%llu dropped\n",
                  n, g.nflagged_names, (unsigned long long)tot, (unsigned long long)drop);
        dbg("PC sampling: %d lines, %llu samples, %llu dropped%s%s", n, (unsigned long long)tot,
            (unsigned long long)drop, mw_pcs_status() ? "; " : "",
            mw_pcs_status() ? mw_pcs_status() : "");
        if (mw_pcs_status())
            emit_meta("gpu.pc_status=%s\n", mw_pcs_status());
    }
    for (uint32_t d = 0; d < MAX_DEV; d++) {
        pm_dev *pd = &g.pm[d];
        if (pd->overflowed)
            emit_meta("gpu.status=device %u: the PM sampling buffer overflowed %d times; "
                      "samples were lost (raise MEMWATCH_GPU_INTERVAL_US)\n",
                      d, pd->overflowed);
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
    emit_meta("gpu.summary=kernels %llu, flagged %llu, samples %llu, flagged samples %llu, "
              "dropped records %llu\n",
              (unsigned long long)g.kernels, (unsigned long long)g.flagged,
              (unsigned long long)g.samples, (unsigned long long)g.flagged_samples,
              (unsigned long long)g.dropped);
    dbg("%llu kernels (%llu flagged), %llu samples (%llu flagged)",
        (unsigned long long)g.kernels, (unsigned long long)g.flagged,
        (unsigned long long)g.samples, (unsigned long long)g.flagged_samples);
    if (g.fd >= 0) {
        mwr_trailer t;
        memset(&t, 0, sizeof t);
        t.time_ns = mono_ns();
        t.records = g.records;
        t.bytes = g.bytes + sizeof(mwr_file_header);
        t.dropped_records = g.dropped;
        emit(MWR_TRAILER, &t, sizeof t, NULL, 0);
        close(g.fd);
        g.fd = -1;
    }
    pthread_mutex_unlock(&g.mu);
}

MW_API int InitializeInjection(void)
{
    const char *e = getenv("MEMWATCH_GPU");
    if (g.on || (e && !strcmp(e, "0")))
        return 1;
    g.debug = (e = getenv("MEMWATCH_GPU_DEBUG")) && *e == '1';
    if (g.debug)
        signal(SIGSEGV, on_segv);
    g.interval_ns = 50000;
    if ((e = getenv("MEMWATCH_GPU_INTERVAL_US")) && atoi(e) > 0)
        g.interval_ns = (uint64_t)atoi(e) * 1000;
    /* PC sampling is opt-in: in continuous mode it slowed kernels several
     * times on an H200 (docs/gpu.md). */
    g.pc_on = (e = getenv("MEMWATCH_GPU_PC")) && !strcmp(e, "1");
    g.pc_period = 17;
    g.pm_off = (e = getenv("MEMWATCH_GPU_PM")) && !strcmp(e, "0");
    if ((e = getenv("MEMWATCH_GPU_PC_PERIOD")) && atoi(e) >= 5 && atoi(e) <= 31)
        g.pc_period = (unsigned)atoi(e);
    g.period_ms = 20;
    if ((e = getenv("MEMWATCH_GPU_PERIOD_MS")) && atoi(e) > 0)
        g.period_ms = (unsigned)atoi(e);
    g.smp = malloc(MAX_SAMPLES * sizeof *g.smp);
    if (!g.smp)
        return 1;

    g.emit = (emit_fn)dlsym(RTLD_DEFAULT, "mw_preload_emit");
    if (!g.emit)
        open_own_file();

    /* Threshold: the GPU profile's, else half the computed peak (uncalibrated). */
    char path[4096];
    double thr = 0, peak = 0;
    int rc = mw_gpu_profile_path(path, sizeof path);
    if (rc == 0 && (rc = mw_gpu_profile_threshold(path, &thr, &peak)) == 0) {
        g.threshold_bw = thr;
        g.peak_bw = peak;
        snprintf(g.threshold_src, sizeof g.threshold_src, "profile:%s", path);
    } else {
        /* The peak comes from the device once a context exists (pm_start). */
        g.threshold_bw = 0;
        g.uncalibrated = 1;
        snprintf(g.threshold_src, sizeof g.threshold_src,
                 "default (uncalibrated: %s; run 'memwatch calibrate --gpu')",
                 rc == MW_ERR_NODATA ? "no GPU profile" : "GPU profile unreadable");
    }
    dbg("threshold %.1f GB/s from %s", g.threshold_bw / 1e9, g.threshold_src);


    CUptiResult r;
    char why[400];
    if ((r = cuptiActivityRegisterCallbacks(buf_request, buf_complete)) ||
        (r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))) {
        mw_cupti_explain("CUPTI activity", r, why, sizeof why);
        pthread_mutex_lock(&g.mu);
        emit_meta("gpu.status=no kernel records: %s\n", why);
        pthread_mutex_unlock(&g.mu);
        dbg("%s", why);
    }
    if ((r = cuptiSubscribe(&g.sub, on_callback, NULL)) ||
        (r = cuptiEnableCallback(1, g.sub, CUPTI_CB_DOMAIN_RESOURCE,
                                 CUPTI_CBID_RESOURCE_CONTEXT_CREATED)) ||
        (r = cuptiEnableCallback(1, g.sub, CUPTI_CB_DOMAIN_RESOURCE,
                                 CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)) ||
        (r = cuptiEnableCallback(1, g.sub, CUPTI_CB_DOMAIN_RESOURCE,
                                 CUPTI_CBID_RESOURCE_MODULE_LOADED))) {
        mw_cupti_explain("cuptiSubscribe", r, why, sizeof why);
        pthread_mutex_lock(&g.mu);
        emit_meta("gpu.sampling=unavailable:%s\n", why);
        pthread_mutex_unlock(&g.mu);
        dbg("%s", why);
    }
    uint64_t ts = 0;
    cuptiGetTimestamp(&ts);
    pthread_mutex_lock(&g.mu);
    emit_meta("gpu.threshold_bw=%.6g\ngpu.peak_bw=%.6g\ngpu.threshold_source=%s\n"
              "gpu.clock=%llu %llu\n",
              g.threshold_bw, g.peak_bw, g.threshold_src, (unsigned long long)ts,
              (unsigned long long)mono_ns());
    pthread_mutex_unlock(&g.mu);
    g.on = 1;
    atexit(finish);
    return 1;
}
