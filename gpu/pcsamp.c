/*
 * gpu/pcsamp.c: source lines of bandwidth-bound kernels for libmemwatch_cuda.so.
 *
 * Owns: CUPTI PC sampling in continuous mode (MEMWATCH_GPU_PC_MODE=serialized:
 * kernel-serialized; MEMWATCH_GPU_PC_SS=0: no explicit start) on each context (a sample every
 * 2^MEMWATCH_GPU_PC_PERIOD cycles per SM, default 2^17), the cubins of the
 * modules loaded (kept by CRC), the per-PC sample counts (with how many were
 * stalled waiting on memory: stall reasons whose name says "long_scoreboard",
 * "lg_throttle", "mio_throttle" or "drain"), and at the end the source lines of
 * the functions the caller names (cuptiGetSassToSourceCorrelation; needs code
 * built with -lineinfo). Emits nothing itself: mw_pcs_report() hands lines to
 * a callback.
 * May call: CUPTI, libc. Threading: every function is called with the
 * injected library's lock held (gpu/inject.c's g.mu); CUPTI calls none of them.
 */
#include "pcsamp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti_pcsampling.h>

#include "cupti_util.h"

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
    uint64_t samples, stall_mem;
} pcent;

static struct {
    int failed;
    char why[400];
    CUcontext ctx[MAX_CTX];
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
    uint64_t total, dropped;
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

static int is_mem_stall(const char *name)
{
    return strstr(name, "long_scoreboard") || strstr(name, "lg_throttle") ||
           strstr(name, "mio_throttle") || strstr(name, "drain");
}

static int setup_buffer(CUcontext ctx)
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
    for (size_t i = 0; s.stall_names && i < n; i++)
        s.stall_names[i] = calloc(1, CUPTI_STALL_REASON_STRING_SIZE);
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
        s.stall_is_mem[i] = (unsigned char)is_mem_stall(s.stall_names[i]);
    s.buf.size = sizeof s.buf;
    s.buf.collectNumPcs = COLLECT_PCS;
    s.buf.pPcData = calloc(COLLECT_PCS, sizeof *s.buf.pPcData);
    if (!s.buf.pPcData)
        return -1;
    for (size_t i = 0; i < COLLECT_PCS; i++) {
        s.buf.pPcData[i].size = sizeof s.buf.pPcData[i];
        s.buf.pPcData[i].stallReason = calloc(n, sizeof(CUpti_PCSamplingStallReason));
        if (!s.buf.pPcData[i].stallReason)
            return -1;
    }
    return 0;
}

int mw_pcs_context_created(CUcontext ctx, unsigned period_log2)
{
    if (s.failed || s.nctx == MAX_CTX)
        return -1;
    CUpti_PCSamplingEnableParams ep = {CUpti_PCSamplingEnableParamsSize};
    ep.ctx = ctx;
    CUptiResult r = cuptiPCSamplingEnable(&ep);
    if (r) {
        mw_cupti_explain("cuptiPCSamplingEnable", r, s.why, sizeof s.why);
        s.failed = 1;
        return -1;
    }
    if (!s.buf.pPcData && setup_buffer(ctx)) {
        s.failed = 1;
        CUpti_PCSamplingDisableParams dp = {CUpti_PCSamplingDisableParamsSize};
        dp.ctx = ctx;
        cuptiPCSamplingDisable(&dp);
        return -1;
    }
    CUpti_PCSamplingConfigurationInfo a[6];
    memset(a, 0, sizeof a);
    a[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
    a[0].attributeData.samplingPeriodData.samplingPeriod = period_log2;
    a[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
    const char *mode = getenv("MEMWATCH_GPU_PC_MODE");
    int serialized = mode && !strcmp(mode, "serialized");
    const char *ssc = getenv("MEMWATCH_GPU_PC_SS");
    int start_stop = !(ssc && !strcmp(ssc, "0"));
    a[1].attributeData.collectionModeData.collectionMode =
        serialized ? CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED
                   : CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
    a[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
    a[2].attributeData.samplingDataBufferData.samplingDataBuffer = &s.buf;
    a[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
    a[3].attributeData.outputDataFormatData.outputDataFormat = CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
    a[4].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE;
    a[4].attributeData.hardwareBufferSizeData.hardwareBufferSize = 64u << 20;
    a[5].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
    a[5].attributeData.enableStartStopControlData.enableStartStopControl = (uint32_t)start_stop;
    CUpti_PCSamplingConfigurationInfoParams cp = {CUpti_PCSamplingConfigurationInfoParamsSize};
    cp.ctx = ctx;
    cp.numAttributes = 6;
    cp.pPCSamplingConfigurationInfo = a;
    if ((r = cuptiPCSamplingSetConfigurationAttribute(&cp))) {
        mw_cupti_explain("cuptiPCSamplingSetConfigurationAttribute", r, s.why, sizeof s.why);
        s.failed = 1;
        CUpti_PCSamplingDisableParams dp = {CUpti_PCSamplingDisableParamsSize};
        dp.ctx = ctx;
        cuptiPCSamplingDisable(&dp);
        return -1;
    }
    CUpti_PCSamplingStartParams st = {CUpti_PCSamplingStartParamsSize};
    st.ctx = ctx;
    if (start_stop && (r = cuptiPCSamplingStart(&st))) {
        mw_cupti_explain("cuptiPCSamplingStart", r, s.why, sizeof s.why);
        s.failed = 1;
        CUpti_PCSamplingDisableParams dp = {CUpti_PCSamplingDisableParamsSize};
        dp.ctx = ctx;
        cuptiPCSamplingDisable(&dp);
        return -1;
    }
    s.ctx[s.nctx++] = ctx;
    return 0;
}

static void add_pc(const CUpti_PCSamplingPCData *d)
{
    uint64_t n = 0, mem = 0;
    for (size_t k = 0; k < d->stallReasonCount && d->stallReason; k++) {
        n += d->stallReason[k].samples;
        for (size_t j = 0; j < s.nstall; j++)
            if (s.stall_idx[j] == d->stallReason[k].pcSamplingStallReasonIndex) {
                if (s.stall_is_mem[j])
                    mem += d->stallReason[k].samples;
                break;
            }
    }
    const char *fn = d->functionName ? d->functionName : "?";
    for (size_t i = 0; i < s.npcs; i++)
        if (s.pcs[i].crc == d->cubinCrc && s.pcs[i].pc == d->pcOffset &&
            !strcmp(s.pcs[i].func, fn)) {
            s.pcs[i].samples += n;
            s.pcs[i].stall_mem += mem;
            return;
        }
    if (s.npcs == s.cappcs) {
        size_t nc = s.cappcs ? 2 * s.cappcs : 1024;
        pcent *np = realloc(s.pcs, nc * sizeof *np);
        if (!np)
            return;
        s.pcs = np;
        s.cappcs = nc;
    }
    char *f = strdup(fn);
    if (!f)
        return;
    s.pcs[s.npcs++] = (pcent){d->cubinCrc, d->pcOffset, f, n, mem};
}

void mw_pcs_drain(CUcontext ctx)
{
    if (s.failed || !s.buf.pPcData)
        return;
    for (int round = 0; round < 256; round++) {
        CUpti_PCSamplingGetDataParams gp = {CUpti_PCSamplingGetDataParamsSize};
        gp.ctx = ctx;
        gp.pcSamplingData = &s.buf;
        CUptiResult r = cuptiPCSamplingGetData(&gp);
        if (r != CUPTI_SUCCESS) {
            if (!s.why[0])
                mw_cupti_explain("cuptiPCSamplingGetData", r, s.why, sizeof s.why);
            return;
        }
        for (size_t i = 0; i < s.buf.totalNumPcs; i++)
            add_pc(&s.buf.pPcData[i]);
        s.total += s.buf.totalSamples;
        s.dropped += s.buf.droppedSamples;
        if (!s.buf.remainingNumPcs)
            return;
    }
}

void mw_pcs_drain_all(void)
{
    for (int i = 0; i < s.nctx; i++)
        if (s.ctx[i])
            mw_pcs_drain(s.ctx[i]);
}

void mw_pcs_stop_all(void)
{
    for (int i = 0; i < s.nctx; i++)
        if (s.ctx[i]) {
            CUpti_PCSamplingStopParams sp = {CUpti_PCSamplingStopParamsSize};
            sp.ctx = s.ctx[i];
            CUptiResult r = cuptiPCSamplingStop(&sp);
            if (r && !s.why[0])
                mw_cupti_explain("cuptiPCSamplingStop", r, s.why, sizeof s.why);
            mw_pcs_drain(s.ctx[i]);
        }
}

void mw_pcs_context_ending(CUcontext ctx)
{
    for (int i = 0; i < s.nctx; i++)
        if (s.ctx[i] == ctx) {
            CUpti_PCSamplingStopParams sp = {CUpti_PCSamplingStopParamsSize};
            sp.ctx = ctx;
            cuptiPCSamplingStop(&sp);
            mw_pcs_drain(ctx);
            CUpti_PCSamplingDisableParams dp = {CUpti_PCSamplingDisableParamsSize};
            dp.ctx = ctx;
            cuptiPCSamplingDisable(&dp);
            mw_pcs_drain(ctx);
            s.ctx[i] = NULL;
        }
}

typedef struct line_agg {
    char *func, *file;
    uint32_t line;
    uint64_t pc, samples, stall_mem;
} line_agg;

int mw_pcs_report(int (*want)(const char *func, void *user), mw_pcs_line_fn out, void *user,
                  uint64_t *total, uint64_t *dropped)
{
    line_agg *agg = NULL;
    size_t nagg = 0, cap = 0;
    int lines = 0;
    for (size_t i = 0; i < s.npcs; i++) {
        const pcent *p = &s.pcs[i];
        if (!p->samples || !want(p->func, user))
            continue;
        const cubin *cb = NULL;
        for (size_t k = 0; k < s.ncubins; k++)
            if (s.cubins[k].crc == p->crc)
                cb = &s.cubins[k];
        char file[512] = "?";
        uint32_t line = 0;
        if (cb) {
            CUpti_GetSassToSourceCorrelationParams sc = {CUpti_GetSassToSourceCorrelationParamsSize};
            sc.cubin = cb->data;
            sc.cubinSize = cb->size;
            sc.functionName = p->func;
            sc.pcOffset = p->pc;
            if (cuptiGetSassToSourceCorrelation(&sc) == CUPTI_SUCCESS) {
                line = sc.lineNumber;
                snprintf(file, sizeof file, "%s%s%s", sc.dirName ? sc.dirName : "",
                         sc.dirName && *sc.dirName ? "/" : "", sc.fileName ? sc.fileName : "?");
                free(sc.fileName);
                free(sc.dirName);
            }
        }
        size_t j = 0;
        for (; j < nagg; j++)
            if (agg[j].line == line && !strcmp(agg[j].file, file) && !strcmp(agg[j].func, p->func))
                break;
        if (j == nagg) {
            if (nagg == cap) {
                size_t nc = cap ? 2 * cap : 64;
                line_agg *na = realloc(agg, nc * sizeof *na);
                if (!na)
                    break;
                agg = na;
                cap = nc;
            }
            agg[nagg++] = (line_agg){p->func, strdup(file), line, p->pc, 0, 0};
        }
        agg[j].samples += p->samples;
        agg[j].stall_mem += p->stall_mem;
    }
    for (size_t j = 0; j < nagg; j++) {
        if (agg[j].file)
            out(agg[j].func, agg[j].file, agg[j].line, agg[j].pc, agg[j].samples,
                agg[j].stall_mem, user);
        lines++;
        free(agg[j].file);
    }
    free(agg);
    if (total)
        *total = s.total;
    if (dropped)
        *dropped = s.dropped;
    return lines;
}
