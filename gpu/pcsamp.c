/*
 * gpu/pcsamp.c: source lines of bandwidth-bound kernels for libmemwatch_cuda.so.
 *
 * Owns: CUPTI PC sampling in continuous mode (MEMWATCH_GPU_PC_MODE=serialized:
 * kernel-serialized) on each context, a sample every 2^MEMWATCH_GPU_PC_PERIOD
 * cycles per SM (default 2^17), when PM sampling is off (the two need the same
 * counters: docs/gpu.md); the cubins of the modules loaded (kept by CRC); per-PC sample counts per stall reason; and at
 * the end the source lines of the functions the caller names
 * (cuptiGetSassToSourceCorrelation; code built with -lineinfo), aggregated by
 * gpu/pclines.c. Emits nothing itself: mw_pcs_report() hands lines to a callback.
 * May call: CUPTI, libc. Threading: every function is called with the
 * injected library's lock held (gpu/inject.c's g.mu); CUPTI calls none of them.
 */
#include "pcsamp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti_pcsampling.h>

#include "cupti_util.h"
#include "inject.h"
#include "pclines.h"
#include "memwatch/mwr.h"

#define MAX_CTX 16
#define COLLECT_PCS 4096

typedef struct cubin {
    uint64_t crc;
    size_t size;
    void *data;
} cubin;

typedef struct pcent {
    uint64_t crc, pc;
    char *func;
    uint64_t *stall;           /* s.nstall counts */
} pcent;

typedef struct pctx {
    CUcontext ctx;
    int started, start_stop;
    CUpti_PCSamplingData cfg;  /* CUPTI fills it at Disable */
} pctx;

static struct {
    int failed;
    char why[400];
    pctx ctx[MAX_CTX];
    int nctx;
    size_t nstall;
    uint32_t *stall_idx;
    char **stall_names;
    unsigned char *stall_is_mem; /* by position in stall_idx */
    CUpti_PCSamplingData buf;
    cubin *cubins;
    size_t ncubins;
    pcent *pcs;
    size_t npcs, cappcs;
    uint64_t total, dropped, getdata_calls, getdata_pcs;
} s;

const char *mw_pcs_status(void)
{
    return s.failed || s.why[0] ? s.why : NULL;
}

void mw_pcs_module_loaded(const void *image, size_t size)
{
    if (!image || !size)
        return;
    CUpti_GetCubinCrcParams p = {CUpti_GetCubinCrcParamsSize};
    p.cubin = image;
    p.cubinSize = size;
    if (cuptiGetCubinCrc(&p) != CUPTI_SUCCESS)
        return;
    for (size_t i = 0; i < s.ncubins; i++)
        if (s.cubins[i].crc == p.cubinCrc)
            return;
    cubin *n = realloc(s.cubins, (s.ncubins + 1) * sizeof *n);
    if (!n)
        return;
    s.cubins = n;
    void *copy = malloc(size);
    if (!copy)
        return;
    memcpy(copy, image, size);
    s.cubins[s.ncubins++] = (cubin){p.cubinCrc, size, copy};
}

static int alloc_data(CUpti_PCSamplingData *d)
{
    memset(d, 0, sizeof *d);
    d->size = sizeof *d;
    d->collectNumPcs = COLLECT_PCS;
    d->pPcData = calloc(COLLECT_PCS, sizeof *d->pPcData);
    if (!d->pPcData)
        return -1;
    for (size_t i = 0; i < COLLECT_PCS; i++) {
        d->pPcData[i].size = sizeof d->pPcData[i];
        d->pPcData[i].stallReason = calloc(s.nstall, sizeof(CUpti_PCSamplingStallReason));
        if (!d->pPcData[i].stallReason)
            return -1;
    }
    return 0;
}

static int setup_reasons(CUcontext ctx)
{
    size_t n = 0;
    CUpti_PCSamplingGetNumStallReasonsParams np = {CUpti_PCSamplingGetNumStallReasonsParamsSize};
    np.ctx = ctx;
    np.numStallReasons = &n;
    CUptiResult r = cuptiPCSamplingGetNumStallReasons(&np);
    if (r) {
        mw_cupti_explain("cuptiPCSamplingGetNumStallReasons", r, s.why, sizeof s.why);
        return -1;
    }
    s.nstall = n;
    s.stall_idx = calloc(n, sizeof *s.stall_idx);
    s.stall_names = calloc(n, sizeof *s.stall_names);
    s.stall_is_mem = calloc(n, 1);
    if (!s.stall_idx || !s.stall_names || !s.stall_is_mem)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!(s.stall_names[i] = calloc(1, CUPTI_STALL_REASON_STRING_SIZE)))
            return -1;
    CUpti_PCSamplingGetStallReasonsParams sp = {CUpti_PCSamplingGetStallReasonsParamsSize};
    sp.ctx = ctx;
    sp.numStallReasons = n;
    sp.stallReasonIndex = s.stall_idx;
    sp.stallReasons = s.stall_names;
    if ((r = cuptiPCSamplingGetStallReasons(&sp))) {
        mw_cupti_explain("cuptiPCSamplingGetStallReasons", r, s.why, sizeof s.why);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        s.stall_is_mem[i] = (unsigned char)mw_pcl_is_mem_stall(s.stall_names[i]);
    mw_cuda_dbg("PC sampling: %zu stall reasons", n);
    return alloc_data(&s.buf);
}

static void fail_ctx(CUcontext ctx, const char *step, CUptiResult r)
{
    mw_cupti_explain(step, r, s.why, sizeof s.why);
    mw_cuda_dbg("PC sampling: %s", s.why);
    s.failed = 1;
    CUpti_PCSamplingDisableParams dp = {CUpti_PCSamplingDisableParamsSize};
    dp.ctx = ctx;
    cuptiPCSamplingDisable(&dp);
}

int mw_pcs_context_created(CUcontext ctx, unsigned period_log2, int start_now)
{
    if (s.failed)
        return -1;
    int room = s.nctx < MAX_CTX;
    for (int i = 0; i < s.nctx && !room; i++)
        room = s.ctx[i].ctx == ctx || !s.ctx[i].ctx;
    if (!room)
        return -1;
    CUpti_PCSamplingEnableParams ep = {CUpti_PCSamplingEnableParamsSize};
    ep.ctx = ctx;
    CUptiResult r = cuptiPCSamplingEnable(&ep);
    mw_cuda_dbg("PC sampling: enable -> %d", (int)r);
    if (r) {
        mw_cupti_explain("cuptiPCSamplingEnable", r, s.why, sizeof s.why);
        s.failed = 1;
        return -1;
    }
    if (!s.buf.pPcData && setup_reasons(ctx)) {
        fail_ctx(ctx, "PC sampling buffers", CUPTI_ERROR_OUT_OF_MEMORY);
        return -1;
    }
    /* A context sampled again (windows) keeps its slot and buffer. */
    pctx *c = NULL;
    for (int i = 0; i < s.nctx && !c; i++)
        if (s.ctx[i].ctx == ctx || !s.ctx[i].ctx)
            c = &s.ctx[i];
    int fresh = !c;
    if (fresh) {
        c = &s.ctx[s.nctx];
        memset(c, 0, sizeof *c);
    }
    c->started = 0;
    if (!c->cfg.pPcData && alloc_data(&c->cfg)) {
        fail_ctx(ctx, "PC sampling buffers", CUPTI_ERROR_OUT_OF_MEMORY);
        return -1;
    }
    const char *mode = getenv("MEMWATCH_GPU_PC_MODE");
    int serialized = mode && !strcmp(mode, "serialized");
    CUpti_PCSamplingConfigurationInfo a[8];
    memset(a, 0, sizeof a);
    a[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
    a[0].attributeData.samplingPeriodData.samplingPeriod = period_log2;
    a[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
    a[1].attributeData.collectionModeData.collectionMode =
        serialized ? CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED
                   : CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
    a[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
    a[2].attributeData.samplingDataBufferData.samplingDataBuffer = &c->cfg;
    a[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
    a[3].attributeData.outputDataFormatData.outputDataFormat = CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
    a[4].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE;
    a[4].attributeData.hardwareBufferSizeData.hardwareBufferSize = 64u << 20;
    a[5].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
    a[5].attributeData.enableStartStopControlData.enableStartStopControl = 1;
    a[6].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
    a[6].attributeData.stallReasonData.stallReasonCount = s.nstall;
    a[6].attributeData.stallReasonData.pStallReasonIndex = s.stall_idx;
    a[7].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
    a[7].attributeData.scratchBufferSizeData.scratchBufferSize = 4u << 20;
    CUpti_PCSamplingConfigurationInfoParams cp = {CUpti_PCSamplingConfigurationInfoParamsSize};
    cp.ctx = ctx;
    cp.numAttributes = 8;
    cp.pPCSamplingConfigurationInfo = a;
    if ((r = cuptiPCSamplingSetConfigurationAttribute(&cp))) {
        for (int i = 0; i < 8; i++)
            mw_cuda_dbg("PC sampling: attribute %d -> %d", (int)a[i].attributeType,
                        (int)a[i].attributeStatus);
        fail_ctx(ctx, "cuptiPCSamplingSetConfigurationAttribute", r);
        return -1;
    }
    c->ctx = ctx;
    c->start_stop = 1;
    s.nctx += fresh;
    if (start_now && mw_pcs_start(ctx)) {
        fail_ctx(ctx, "cuptiPCSamplingStart", CUPTI_ERROR_UNKNOWN);
        c->ctx = NULL;
        return -1;
    }
    return 0;
}

static pctx *find(CUcontext ctx)
{
    for (int i = 0; i < s.nctx; i++)
        if (s.ctx[i].ctx == ctx)
            return &s.ctx[i];
    return NULL;
}

int mw_pcs_start(CUcontext ctx)
{
    pctx *c = find(ctx);
    if (!c || s.failed)
        return -1;
    if (c->started)
        return 0;
    CUpti_PCSamplingStartParams st = {CUpti_PCSamplingStartParamsSize};
    st.ctx = ctx;
    CUptiResult r = cuptiPCSamplingStart(&st);
    mw_cuda_dbg("PC sampling: start -> %d", (int)r);
    if (r) {
        mw_cupti_explain("cuptiPCSamplingStart", r, s.why, sizeof s.why);
        return (int)r;
    }
    s.why[0] = 0;
    c->started = 1;
    return 0;
}

static void add_pc(const CUpti_PCSamplingPCData *d)
{
    const char *fn = d->functionName ? d->functionName : "?";
    pcent *e = NULL;
    for (size_t i = 0; i < s.npcs && !e; i++)
        if (s.pcs[i].crc == d->cubinCrc && s.pcs[i].pc == d->pcOffset &&
            !strcmp(s.pcs[i].func, fn))
            e = &s.pcs[i];
    if (!e) {
        if (s.npcs == s.cappcs) {
            size_t nc = s.cappcs ? 2 * s.cappcs : 1024;
            pcent *np = realloc(s.pcs, nc * sizeof *np);
            if (!np)
                return;
            s.pcs = np;
            s.cappcs = nc;
        }
        char *f = strdup(fn);
        uint64_t *st = calloc(s.nstall ? s.nstall : 1, sizeof *st);
        if (!f || !st) {
            free(f);
            free(st);
            return;
        }
        e = &s.pcs[s.npcs++];
        *e = (pcent){d->cubinCrc, d->pcOffset, f, st};
    }
    for (size_t k = 0; k < d->stallReasonCount && d->stallReason; k++)
        for (size_t j = 0; j < s.nstall; j++)
            if (s.stall_idx[j] == d->stallReason[k].pcSamplingStallReasonIndex) {
                e->stall[j] += d->stallReason[k].samples;
                break;
            }
}

static void take(CUpti_PCSamplingData *d, const char *from)
{
    for (size_t i = 0; i < d->totalNumPcs && i < d->collectNumPcs; i++)
        add_pc(&d->pPcData[i]);
    s.total += d->totalSamples;
    s.dropped += d->droppedSamples;
    if (d->totalNumPcs || d->totalSamples)
        mw_cuda_dbg("PC sampling %s: %zu PCs, %llu samples, %llu dropped, %zu remaining, "
                    "%llu in other kernels%s",
                    from, d->totalNumPcs, (unsigned long long)d->totalSamples,
                    (unsigned long long)d->droppedSamples, d->remainingNumPcs,
                    (unsigned long long)d->nonUsrKernelsTotalSamples,
                    d->hardwareBufferFull ? ", hardware buffer full" : "");
    d->totalNumPcs = 0;
    d->totalSamples = 0;
    d->droppedSamples = 0;
}

void mw_pcs_drain(CUcontext ctx)
{
    if (!s.buf.pPcData || !find(ctx))
        return;
    for (int round = 0; round < 256; round++) {
        CUpti_PCSamplingGetDataParams gp = {CUpti_PCSamplingGetDataParamsSize};
        gp.ctx = ctx;
        gp.pcSamplingData = &s.buf;
        s.buf.totalNumPcs = 0;
        CUptiResult r = cuptiPCSamplingGetData(&gp);
        s.getdata_calls++;
        if (r != CUPTI_SUCCESS) {
            mw_cuda_dbg("PC sampling: get data -> %d", (int)r);
            if (!s.why[0])
                mw_cupti_explain("cuptiPCSamplingGetData", r, s.why, sizeof s.why);
            return;
        }
        s.getdata_pcs += s.buf.totalNumPcs;
        int more = s.buf.remainingNumPcs != 0;
        take(&s.buf, "get data");
        if (!more)
            return;
    }
}

void mw_pcs_drain_all(void)
{
    for (int i = 0; i < s.nctx; i++)
        if (s.ctx[i].ctx && s.ctx[i].started)
            mw_pcs_drain(s.ctx[i].ctx);
}

int mw_pcs_stop(CUcontext ctx)
{
    pctx *c = find(ctx);
    if (!c || !c->started)
        return -1;
    CUpti_PCSamplingStopParams sp = {CUpti_PCSamplingStopParamsSize};
    sp.ctx = ctx;
    CUptiResult r = cuptiPCSamplingStop(&sp);
    mw_cuda_dbg("PC sampling: stop -> %d", (int)r);
    if (r && !s.why[0])
        mw_cupti_explain("cuptiPCSamplingStop", r, s.why, sizeof s.why);
    c->started = 0;
    mw_pcs_drain(ctx);
    return r ? -1 : 0;
}

void mw_pcs_stop_all(void)
{
    for (int i = 0; i < s.nctx; i++)
        if (s.ctx[i].ctx)
            mw_pcs_context_ending(s.ctx[i].ctx);
}

void mw_pcs_context_ending(CUcontext ctx)
{
    pctx *c = find(ctx);
    if (!c)
        return;
    if (c->started)
        mw_pcs_stop(ctx);
    mw_pcs_drain(ctx);
    c->cfg.totalNumPcs = 0;
    CUpti_PCSamplingDisableParams dp = {CUpti_PCSamplingDisableParamsSize};
    dp.ctx = ctx;
    CUptiResult r = cuptiPCSamplingDisable(&dp);
    mw_cuda_dbg("PC sampling: disable -> %d", (int)r);
    /* Disable leaves what was still unread in the configured buffer. */
    take(&c->cfg, "disable");
    c->ctx = NULL;
}

void mw_pcs_counts(uint64_t *total, uint64_t *dropped, uint64_t *pcs)
{
    *total = s.total;
    *dropped = s.dropped;
    *pcs = s.npcs;
}

static int lookup(uint64_t crc, const char *func, uint64_t pc, char *file, size_t filesz,
                  uint32_t *line, void *user)
{
    const cubin *cb = NULL;
    for (size_t k = 0; k < s.ncubins && !cb; k++)
        if (s.cubins[k].crc == crc)
            cb = &s.cubins[k];
    (void)user;
    if (!cb)
        return -1;
    CUpti_GetSassToSourceCorrelationParams sc = {CUpti_GetSassToSourceCorrelationParamsSize};
    sc.cubin = cb->data;
    sc.cubinSize = cb->size;
    sc.functionName = func;
    sc.pcOffset = pc;
    if (cuptiGetSassToSourceCorrelation(&sc) != CUPTI_SUCCESS)
        return -1;
    *line = sc.lineNumber;
    snprintf(file, filesz, "%s%s%s", sc.dirName ? sc.dirName : "",
             sc.dirName && *sc.dirName ? "/" : "", sc.fileName ? sc.fileName : "?");
    free(sc.fileName);
    free(sc.dirName);
    return 0;
}

int mw_pcs_report(int (*want)(const char *func, void *user), mw_pcs_line_fn out, void *user)
{
    size_t nh = 0;
    mw_pcl_hit *h = calloc(s.npcs ? s.npcs : 1, sizeof *h);
    if (!h)
        return -1;
    for (size_t i = 0; i < s.npcs; i++)
        if (want(s.pcs[i].func, user))
            h[nh++] = (mw_pcl_hit){s.pcs[i].crc, s.pcs[i].pc, s.pcs[i].func, s.pcs[i].stall};
    mw_pcl_line *lines = NULL;
    long n = mw_pcl_aggregate(h, nh, s.nstall, s.stall_is_mem, lookup, NULL, &lines);
    free(h);
    for (long j = 0; j < n; j++) {
        char st[512];
        mw_pcl_stall_text(&lines[j], s.nstall, s.stall_names, 4, st, sizeof st);
        out(lines[j].func, lines[j].file, lines[j].line, lines[j].pc, lines[j].samples,
            lines[j].stall_mem, st, user);
    }
    if (n > 0)
        mw_pcl_free(lines, n, s.nstall);
    return (int)n;
}
