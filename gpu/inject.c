/*
 * gpu/inject.c: libmemwatch_cuda.so, the CUDA profiling library that CUDA
 * loads through CUDA_INJECTION64_PATH (libmemwatch.so sets it for programs it
 * watches, unless MEMWATCH_GPU=0 or another tool set it first).
 *
 * Owns: the start (InitializeInjection), kernel records from the CUPTI
 * Activity API (concurrent-kernel kind), the CUPTI resource callbacks (a
 * context per device: PM sampling, gpu/pmsamp.c; PC sampling, gpu/pcsamp.c),
 * the decode thread, per-launch bytes and flags (gpu/attrib.c) and the end. A launch is flagged when its DRAM bytes over its time
 * exceed its device's threshold (gpu-profile.json from `memwatch calibrate
 * --gpu`; without one, half the computed peak, and every record says
 * "uncalibrated"). Records: gpu/inject_out.c.
 * May call: CUPTI, the CUDA driver, gpu/gpu_profile.c, libc.
 * Threading: CUPTI calls the buffer and resource callbacks from its own and the
 * application's threads; one decode thread of ours drains PM samples and
 * matches kernels every MEMWATCH_GPU_PERIOD_MS; all shared state sits under
 * g.mu. Nothing here runs on a signal path. Prints nothing unless
 * MEMWATCH_GPU_DEBUG=1 (diagnostics to stderr).
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cupti_util.h"
#include "inject.h"
#include "pcsamp.h"
#include "memwatch/gpu.h"
#include "memwatch/memwatch.h"
#include "memwatch/mwr.h"

/* PM windows kept behind the newest one for launches whose records come late
 * (a buffer of activity records is delivered when all of its launches ended). */
#define RETAIN_NS 30000000000ull
/* Attributed launches kept as neighbours of later ones. */
#define NEIGHBOUR_NS 1000000000ull
/* A launch with no later launch known waits this long for one. */
#define WAIT_NEXT_NS 100000000ull
#define MAX_WINDOWS (1u << 21)

mw_cuda g = {.mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

/* ------------------------------------------------------------ activity */

static void CUPTIAPI buf_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *size = 256 << 10;
    *buffer = aligned_alloc(8, *size);
    /* Few records per buffer: a buffer comes back only once all of its
     * launches ended, so a long queue of launches would hold the first ones. */
    *max_records = 64;
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
            mw_pending *np = realloc(g.pend, nc * sizeof *np);
            if (!np) {
                g.dropped++;
                continue;
            }
            g.pend = np;
            g.cappend = nc;
        }
        mw_pending *p = &g.pend[g.npend++];
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
        if (nl > MW_CUDA_NAME_MAX)
            nl = MW_CUDA_NAME_MAX;
        memcpy(p->name, nm, nl);
        p->k.name_len = (uint32_t)nl;
        if (g.trace)
            fprintf(g.trace, "K %u %llu %llu %u %.*s\n", p->k.device,
                    (unsigned long long)p->k.start_ns, (unsigned long long)p->k.end_ns,
                    p->k.correlation, (int)nl, nm);
    }
    mw_cuda_dbg("activity buffer: %zu bytes, %zu kernels pending", valid, g.npend);
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
        g.dropped += dropped;
    pthread_mutex_unlock(&g.mu);
    free(buffer);
    (void)size;
}

/* ------------------------------------------------------------ matching */

static void note_flagged(const mw_pending *p)
{
    if (g.nflagged_names >= 64)
        return;
    for (int f = 0; f < g.nflagged_names; f++)
        if (strlen(g.flagged_names[f]) == p->k.name_len &&
            !memcmp(g.flagged_names[f], p->name, p->k.name_len))
            return;
    if ((g.flagged_names[g.nflagged_names] = strndup(p->name, p->k.name_len)))
        g.nflagged_names++;
}

/* Is pending launch p's attribution final? Its windows must reach past its
 * end by one interval and a later launch of its device must be known (or
 * WAIT_NEXT_NS have passed), so that the window it shares with that launch is
 * split between them. */
static int ready(const mw_pending *p, const uint64_t *next_start, int final)
{
    uint32_t d = p->k.device;
    const mw_dev *pd = &g.dev[d];
    if (final || !pd->active)
        return 1;
    uint64_t end = pd->ga.last_end;
    if (end < p->k.end_ns + g.interval_ns)
        return 0;
    return next_start[d] >= p->k.end_ns || end > p->k.end_ns + WAIT_NEXT_NS;
}

/* Attribute and emit the launches that are ready (all of them when final). */
static void match_kernels(int final)
{
    uint64_t next_start[MW_CUDA_MAX_DEV] = {0};
    for (size_t i = 0; i < g.npend; i++) {
        uint32_t d = g.pend[i].k.device;
        if (d < MW_CUDA_MAX_DEV && g.pend[i].k.start_ns > next_start[d])
            next_start[d] = g.pend[i].k.start_ns;
    }
    mw_ga_kernel *ks = calloc(g.npend ? g.npend : 1, sizeof *ks);
    size_t *idx = calloc(g.npend ? g.npend : 1, sizeof *idx);
    if (!ks || !idx) {
        free(ks);
        free(idx);
        return;
    }
    for (uint32_t d = 0; d < MW_CUDA_MAX_DEV; d++) {
        mw_dev *pd = &g.dev[d];
        /* The ready launches first; the others take part (they share windows
         * with the ready ones) and are attributed again later. */
        size_t n = 0, all = 0;
        for (int pass = 0; pass < 2; pass++)
            for (size_t i = 0; i < g.npend; i++) {
                mw_pending *p = &g.pend[i];
                if (p->k.device >= MW_CUDA_MAX_DEV)
                    p->k.device = 0;
                if (p->k.device != d || ready(p, next_start, final) != !pass)
                    continue;
                ks[all] = (mw_ga_kernel){.s = p->k.start_ns, .e = p->k.end_ns};
                idx[all++] = i;
                n += !pass;
            }
        if (!n)
            continue;
        mw_ga_attribute(&pd->ga, ks, all);
        for (size_t j = 0; j < n; j++) {
            mw_pending *p = &g.pend[idx[j]];
            double dur = (double)(p->k.end_ns - p->k.start_ns);
            uint32_t fl = ks[j].flags & MWR_GPU_OVERFLOW;
            p->k.threshold_bw = pd->threshold_bw;
            p->k.peak_bw = pd->peak_bw;
            if (ks[j].covered > 0 && dur > 0) {
                fl |= MWR_GPU_BW_VALID;
                if (ks[j].covered < 0.9 * dur)
                    fl |= MWR_GPU_PARTIAL;
                p->k.dram_bytes = ks[j].bytes;
                p->k.dram_bw = ks[j].bytes / (ks[j].covered * 1e-9);
                if (pd->threshold_bw > 0 && p->k.dram_bw > pd->threshold_bw)
                    fl |= MWR_GPU_BW_BOUND;
            } else {
                pd->unmeasured++;
            }
            if (pd->uncalibrated)
                fl |= MWR_GPU_UNCALIBRATED;
            p->k.flags = fl;
            pd->kernels++;
            if (fl & MWR_GPU_BW_BOUND) {
                pd->flagged++;
                note_flagged(p);
            }
            mw_cuda_dbg("kernel %.60s dev %u [%llu, %llu] %.1f us %.4g bytes %.4g B/s%s%s",
                        p->name, d, (unsigned long long)p->k.start_ns,
                        (unsigned long long)p->k.end_ns, dur / 1e3, p->k.dram_bytes,
                        p->k.dram_bw, fl & MWR_GPU_BW_BOUND ? " FLAGGED" : "",
                        fl & MWR_GPU_BW_VALID ? "" : " (no samples)");
            mw_cuda_emit(MWR_GPU_KERNEL, &p->k, sizeof p->k, p->name, p->k.name_len);
            p->k.name_len = UINT32_MAX; /* emitted */
        }
        mw_ga_retire(&pd->ga, ks, n);
    }
    size_t keep = 0;
    uint64_t oldest[MW_CUDA_MAX_DEV];
    for (uint32_t d = 0; d < MW_CUDA_MAX_DEV; d++)
        oldest[d] = UINT64_MAX;
    for (size_t i = 0; i < g.npend; i++) {
        if (g.pend[i].k.name_len == UINT32_MAX)
            continue;
        uint32_t d = g.pend[i].k.device;
        if (g.pend[i].k.start_ns < oldest[d])
            oldest[d] = g.pend[i].k.start_ns;
        g.pend[keep++] = g.pend[i];
    }
    g.npend = keep;
    for (uint32_t d = 0; d < MW_CUDA_MAX_DEV; d++) {
        mw_ga_dev *ga = &g.dev[d].ga;
        if (!ga->nsmp)
            continue;
        uint64_t tw = ga->last_end > RETAIN_NS ? ga->last_end - RETAIN_NS : 0;
        uint64_t tn = ga->last_end > NEIGHBOUR_NS ? ga->last_end - NEIGHBOUR_NS : 0;
        if (oldest[d] < tw)
            tw = oldest[d];
        mw_ga_trim(ga, final ? UINT64_MAX : tw, final ? UINT64_MAX : tn);
    }
    free(ks);
    free(idx);
}

static void *decode_thread(void *arg)
{
    unsigned tick = 0;
    while (!__atomic_load_n(&g.stop, __ATOMIC_ACQUIRE)) {
        struct timespec ts = {0, (long)g.period_ms * 1000000L};
        nanosleep(&ts, NULL);
        tick++;
        cuptiActivityFlushAll(0);
        pthread_mutex_lock(&g.mu);
        if (g.trace) {
            uint64_t ct = 0;
            cuptiGetTimestamp(&ct);
            fprintf(g.trace, "T %llu %llu\n", (unsigned long long)ct,
                    (unsigned long long)mw_cuda_mono_ns());
        }
        for (uint32_t d = 0; d < MW_CUDA_MAX_DEV; d++) {
            mw_dev *pd = &g.dev[d];
            if (pd->want && !pd->active && !pd->failed)
                mw_pm_start(d);
            if (pd->active)
                mw_pm_drain(d);
        }
        match_kernels(0);
        if (g.pc_on && tick % 5 == 0)
            mw_pcs_drain_all();
        pthread_mutex_unlock(&g.mu);
    }
    return arg;
}

/* ------------------------------------------------------------ PC lines */

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
                    uint64_t samples, uint64_t stall_mem, const char *stalls, void *user)
{
    mwr_gpu_pc r;
    char strs[3072];
    size_t fl = strlen(file), fn = strlen(func), sl = strlen(stalls);
    if (fl > 1023)
        fl = 1023;
    if (fn > 1023)
        fn = 1023;
    if (sl > 1000)
        sl = 1000;
    memset(&r, 0, sizeof r);
    r.line = line;
    r.pc_offset = pc;
    r.samples = samples;
    r.stall_memory = stall_mem;
    r.file_len = (uint32_t)fl;
    r.func_len = (uint32_t)fn;
    memcpy(strs, file, fl);
    memcpy(strs + fl, func, fn);
    memcpy(strs + fl + fn, stalls, sl);
    mw_cuda_dbg("line %s:%u in %.60s: %llu samples, %llu on memory (%s)", file, line, func,
                (unsigned long long)samples, (unsigned long long)stall_mem, stalls);
    mw_cuda_emit(MWR_GPU_PC, &r, sizeof r, strs, (uint32_t)(fl + fn + sl));
    (void)user;
}

/* ------------------------------------------------------------ callbacks */

static void finish(void);

static void context_created(CUcontext ctx, uint32_t dev)
{
    mw_dev *pd = &g.dev[dev];
    pd->ctx = ctx;
    mw_pm_device(dev);
    pd->want = 1;
    mw_pm_start(dev);
    if (g.pc_on) {
        if (pd->active) {
            /* PM sampling holds the counters (docs/gpu.md). */
            mw_cuda_meta("%s=unavailable:PM sampling holds the GPU counters on "
                         "device %u (PC sampling cannot start beside it); run again with "
                         "MEMWATCH_GPU_PM=0 MEMWATCH_GPU_PC=1 and MEMWATCH_GPU_PC_FILTER=<a "
                         "flagged kernel> for its source lines\n",
                         mw_meta_key(MW_META_GPU_PC_SAMPLING), dev);
        } else if (mw_pcs_context_created(ctx, g.pc_period, 1) == 0) {
            mw_cuda_meta("%s=continuous:2^%u cycles\n", mw_meta_key(MW_META_GPU_PC_SAMPLING),
                         g.pc_period);
        } else {
            mw_cuda_meta("%s=unavailable:%s\n", mw_meta_key(MW_META_GPU_PC_SAMPLING),
                         mw_pcs_status() ? mw_pcs_status() : "?");
        }
    }
    if (!g.thr_up && pthread_create(&g.thr, NULL, decode_thread, NULL) == 0)
        g.thr_up = 1;
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
    if (cuptiGetDeviceId(rd->context, &dev) != CUPTI_SUCCESS || dev >= MW_CUDA_MAX_DEV)
        return;
    if (id == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
        pthread_mutex_lock(&g.mu);
        context_created(rd->context, dev);
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
        mw_cuda_dbg("context of device %u ending", dev);
        cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        pthread_mutex_lock(&g.mu);
        mw_dev *pd = &g.dev[dev];
        mw_pm_stop(dev);
        if (g.pc_on)
            mw_pcs_context_ending(rd->context);
        pd->want = 0;
        pd->ctx = NULL;
        match_kernels(0);
        pthread_mutex_unlock(&g.mu);
    }
    (void)user;
}

/* ------------------------------------------------------------ end */

static void finish(void)
{
    if (!g.on || g.done)
        return;
    g.done = 1;
    mw_cuda_dbg("finishing: %zu kernels pending", g.npend);
    __atomic_store_n(&g.stop, 1, __ATOMIC_RELEASE);
    if (g.thr_up)
        pthread_join(g.thr, NULL);
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    mw_cuda_dbg("flushed: %zu kernels pending", g.npend);
    pthread_mutex_lock(&g.mu);
    for (uint32_t d = 0; d < MW_CUDA_MAX_DEV; d++) {
        mw_pm_stop(d);
    }
    match_kernels(1);
    if (g.pc_on) {
        uint64_t tot = 0, drop = 0, pcs = 0;
        mw_pcs_stop_all();
        int n = mw_pcs_report(want_func, emit_pc, NULL);
        mw_pcs_counts(&tot, &drop, &pcs);
        mw_cuda_meta("%s=%d source lines; %llu PC samples, %llu dropped, %llu PCs\n",
                     mw_meta_key(MW_META_GPU_PC_SUMMARY), n, (unsigned long long)tot,
                     (unsigned long long)drop, (unsigned long long)pcs);
        mw_cuda_dbg("PC sampling: %d lines, %llu samples, %llu dropped%s%s", n,
                    (unsigned long long)tot, (unsigned long long)drop,
                    mw_pcs_status() ? "; " : "", mw_pcs_status() ? mw_pcs_status() : "");
        if (mw_pcs_status())
            mw_cuda_meta("%s=%s\n", mw_meta_key(MW_META_GPU_PC_STATUS), mw_pcs_status());
    }
    uint64_t k = 0, f = 0, s = 0, fs = 0;
    for (uint32_t d = 0; d < MW_CUDA_MAX_DEV; d++) {
        mw_dev *pd = &g.dev[d];
        if (pd->overflowed)
            mw_cuda_meta("%s=device %u: the PM sampling buffer overflowed %d times; "
                         "samples were lost (raise MEMWATCH_GPU_INTERVAL_US)\n",
                         mw_meta_key(MW_META_GPU_STATUS), d, pd->overflowed);
        if (pd->ga.lost)
            mw_cuda_meta("%s=device %u: %llu PM windows dropped while launch records "
                         "were late\n",
                         mw_meta_key(MW_META_GPU_STATUS), d, (unsigned long long)pd->ga.lost);
        if (pd->seen)
            mw_cuda_meta("%s=device %u: kernels %llu, flagged %llu, "
                         "without PM windows %llu, samples %llu, flagged samples %llu\n",
                         mw_meta_key(MW_META_GPU_DEVICE_SUMMARY), d,
                         (unsigned long long)pd->kernels, (unsigned long long)pd->flagged,
                         (unsigned long long)pd->unmeasured, (unsigned long long)pd->samples,
                         (unsigned long long)pd->flagged_samples);
        k += pd->kernels;
        f += pd->flagged;
        s += pd->samples;
        fs += pd->flagged_samples;
        mw_pm_release(d);
        mw_ga_free(&pd->ga);
    }
    mw_cuda_meta("%s=kernels %llu, flagged %llu, samples %llu, flagged samples %llu, "
                 "dropped records %llu\n",
                 mw_meta_key(MW_META_GPU_SUMMARY), (unsigned long long)k, (unsigned long long)f,
                 (unsigned long long)s, (unsigned long long)fs, (unsigned long long)g.dropped);
    mw_cuda_dbg("%llu kernels (%llu flagged), %llu samples (%llu flagged)",
                (unsigned long long)k, (unsigned long long)f, (unsigned long long)s,
                (unsigned long long)fs);
    if (g.trace) {
        fclose(g.trace);
        g.trace = NULL;
    }
    mw_cuda_close_own_file();
    pthread_mutex_unlock(&g.mu);
}

static unsigned env_uint(const char *name, unsigned dflt, unsigned lo, unsigned hi)
{
    const char *e = getenv(name);
    if (!e || !*e)
        return dflt;
    long v = atol(e);
    return v >= (long)lo && v <= (long)hi ? (unsigned)v : dflt;
}

MW_API int InitializeInjection(void)
{
    const char *e = getenv("MEMWATCH_GPU");
    if (g.on || (e && !strcmp(e, "0")))
        return 1;
    g.debug = (e = getenv("MEMWATCH_GPU_DEBUG")) && *e == '1';
    if (g.debug)
        signal(SIGSEGV, mw_cuda_on_segv);
    g.interval_ns = (uint64_t)env_uint("MEMWATCH_GPU_INTERVAL_US", 50, 1, 1000000) * 1000;
    /* PC sampling is opt-in and needs the counters PM sampling uses: it runs
     * with MEMWATCH_GPU_PM=0 (docs/gpu.md). */
    g.pc_on = (e = getenv("MEMWATCH_GPU_PC")) && !strcmp(e, "1");
    g.pm_off = (e = getenv("MEMWATCH_GPU_PM")) && !strcmp(e, "0");
    g.pc_period = env_uint("MEMWATCH_GPU_PC_PERIOD", 17, 5, 31);
    g.period_ms = env_uint("MEMWATCH_GPU_PERIOD_MS", 20, 1, 10000);
    if ((e = getenv("MEMWATCH_GPU_TRACE")) && *e)
        g.trace = fopen(e, "w");
    for (int d = 0; d < MW_CUDA_MAX_DEV; d++)
        g.dev[d].ga.maxsmp = MAX_WINDOWS;

    g.emit = (mw_emit_fn)dlsym(RTLD_DEFAULT, "mw_preload_emit");
    if (!g.emit)
        mw_cuda_open_own_file();

    /* Threshold: the GPU profile's, else half each device's peak (uncalibrated). */
    char path[4096];
    double thr = 0, peak = 0;
    int rc = mw_gpu_profile_path(path, sizeof path);
    if (rc == 0 && (rc = mw_gpu_profile_threshold(path, &thr, &peak)) == 0) {
        g.profile_thr = thr;
        g.profile_peak = peak;
        snprintf(g.threshold_src, sizeof g.threshold_src, "profile:%s", path);
    } else {
        snprintf(g.threshold_src, sizeof g.threshold_src,
                 "default (uncalibrated: %s; run 'memwatch calibrate --gpu')",
                 rc == MW_ERR_NODATA ? "no GPU profile" : "GPU profile unreadable");
    }
    mw_cuda_dbg("threshold %.1f GB/s from %s", g.profile_thr / 1e9, g.threshold_src);

    CUptiResult r;
    char why[400];
    if ((r = cuptiActivityRegisterCallbacks(buf_request, buf_complete)) ||
        (r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))) {
        mw_cupti_explain("CUPTI activity", r, why, sizeof why);
        pthread_mutex_lock(&g.mu);
        mw_cuda_meta("%s=no kernel records: %s\n", mw_meta_key(MW_META_GPU_STATUS), why);
        pthread_mutex_unlock(&g.mu);
        mw_cuda_dbg("%s", why);
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
        mw_cuda_meta("%s=unavailable:%s\n", mw_meta_key(MW_META_GPU_SAMPLING), why);
        pthread_mutex_unlock(&g.mu);
        mw_cuda_dbg("%s", why);
    }
    uint64_t ts = 0;
    cuptiGetTimestamp(&ts);
    pthread_mutex_lock(&g.mu);
    if (g.profile_thr > 0)
        mw_cuda_meta("%s=%.6g\n%s=%.6g\n", mw_meta_key(MW_META_GPU_THRESHOLD_BW), g.profile_thr,
                     mw_meta_key(MW_META_GPU_PEAK_BW), g.profile_peak);
    mw_cuda_meta("%s=%s\n%s=%llu %llu\n", mw_meta_key(MW_META_GPU_THRESHOLD_SOURCE),
                 g.threshold_src, mw_meta_key(MW_META_GPU_CLOCK), (unsigned long long)ts,
                 (unsigned long long)mw_cuda_mono_ns());
    pthread_mutex_unlock(&g.mu);
    g.on = 1;
    atexit(finish);
    return 1;
}
