/*
 * gpu/nvtx.c: NVTX ranges as memwatch regions (docs/regions.md, "NVTX").
 *
 * libmemwatch_cuda.so is also the program's NVTX injection library:
 * libmemwatch.so sets NVTX_INJECTION64_PATH to it (as it sets
 * CUDA_INJECTION64_PATH), and the NVTX library that the program or one of
 * its libraries uses (nvtx3, libnvToolsExt, PyTorch's torch.cuda.nvtx) loads
 * it at the first NVTX call and calls InitializeInjectionNvtx2. That fills in
 * NVTX's core function table: nvtxRangePushA/nvtxRangePushEx/nvtxRangePop
 * become begins and ends of regions named by the range's message, on the
 * calling thread (through libmemwatch.so's memwatch_region_begin/end, found
 * with dlsym; where it is not loaded, nothing is recorded). The report puts
 * in each region the GPU kernels that ran while it was open.
 * Not handled: nvtxRangeStart/End (ranges that may end on another thread),
 * marks, domains (nvtxDomainRangePushEx); they keep NVTX's no-op behaviour.
 * May call: libc, libdl. Threading: NVTX calls these on the program's threads.
 */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "memwatch/memwatch.h"

#define NVTX_DEPTH 64

typedef void (*region_fn)(const char *);
static region_fn nv_begin, nv_end;
static __thread char *nv_stack[NVTX_DEPTH];
static __thread int nv_depth;

static int nv_push(const char *msg)
{
    char *name = strdup(msg && msg[0] ? msg : "(nvtx range)");
    int d = nv_depth++;
    if (d < NVTX_DEPTH)
        nv_stack[d] = name;
    if (name && nv_begin)
        nv_begin(name);
    if (d >= NVTX_DEPTH)
        free(name);
    return d;
}

static int NVTX_API nv_push_a(const char *msg)
{
    return nv_push(msg);
}

static int NVTX_API nv_push_ex(const nvtxEventAttributes_t *a)
{
    if (a && a->messageType == NVTX_MESSAGE_TYPE_ASCII)
        return nv_push(a->message.ascii);
    return nv_push(a && a->messageType == NVTX_MESSAGE_TYPE_UNICODE ? "(nvtx range, wide name)"
                                                                    : "(nvtx range)");
}

static int NVTX_API nv_pop(void)
{
    if (nv_depth <= 0)
        return -1;
    int d = --nv_depth;
    if (d < NVTX_DEPTH) {
        if (nv_stack[d] && nv_end)
            nv_end(nv_stack[d]);
        free(nv_stack[d]);
        nv_stack[d] = NULL;
    }
    return d;
}

MW_API int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    const char *e = getenv("MEMWATCH_GPU");
    if (!get || (e && !strcmp(e, "0")))
        return 0;
    *(void **)&nv_begin = dlsym(RTLD_DEFAULT, "memwatch_region_begin");
    *(void **)&nv_end = dlsym(RTLD_DEFAULT, "memwatch_region_end");
    const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable t = NULL;
    unsigned n = 0;
    if (!cb || !cb->GetModuleFunctionTable ||
        !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) || !t ||
        n <= NVTX_CBID_CORE_RangePop)
        return 0;
    *t[NVTX_CBID_CORE_RangePushA] = (NvtxFunctionPointer)nv_push_a;
    *t[NVTX_CBID_CORE_RangePushEx] = (NvtxFunctionPointer)nv_push_ex;
    *t[NVTX_CBID_CORE_RangePop] = (NvtxFunctionPointer)nv_pop;
    return 1;
}
