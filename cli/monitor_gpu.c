/*
 * cli/monitor_gpu.c: the GPUs' load as memwatch monitor serves it
 * (docs/monitor.md, "GPUs"): for each NVIDIA GPU, the share of the last
 * sample period in which its device memory was read or written and in which
 * a kernel ran (NVML's utilization rates), and the device memory in use.
 * NVML (libnvidia-ml.so.1, the driver's own library) is opened at run time:
 * the agent builds and runs without it, and says why where it is missing.
 *
 * The few NVML declarations below follow the library's C interface (its
 * header is not in every toolkit): opaque device handles, int return
 * codes, 0 success.
 *
 * Threading: mon_gpu_open and mon_gpu_read on the agent's loop thread; the
 * mon_gpu they fill is copied into mon_state under its lock.
 */
#include "monitor.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct nvml_dev *nvml_device;
typedef struct {
    unsigned int gpu, memory; /* percent of the last sample period */
} nvml_utilization;
typedef struct {
    unsigned long long total, free, used; /* bytes */
} nvml_memory;

static struct {
    void *lib;
    int (*init)(void);
    int (*shutdown)(void);
    const char *(*error_string)(int);
    int (*count)(unsigned int *);
    int (*handle)(unsigned int, nvml_device *);
    int (*name)(nvml_device, char *, unsigned int);
    int (*uuid)(nvml_device, char *, unsigned int);
    int (*util)(nvml_device, nvml_utilization *);
    int (*mem)(nvml_device, nvml_memory *);
    nvml_device dev[MON_GPUS_MAX];
} nv;

static const char *nv_err(int rc)
{
    const char *e = nv.error_string ? nv.error_string(rc) : NULL;
    return e && *e ? e : "unknown NVML error";
}

/* Opens NVML and lists the GPUs; 0, or -1 with g->why saying what is
 * missing. MEMWATCH_NVML_LIB names another library file (a driver
 * installed elsewhere). */
int mon_gpu_open(mon_gpu *g)
{
    memset(g, 0, sizeof *g);
    const char *path = getenv("MEMWATCH_NVML_LIB");
    if (!path || !*path)
        path = "libnvidia-ml.so.1";
    nv.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!nv.lib) {
        const char *e = dlerror();
        snprintf(g->why, sizeof g->why, "NVML (the NVIDIA driver's %s) cannot be loaded: %s", path,
                 e ? e : "dlopen failed");
        return -1;
    }
    struct {
        void **fn;
        const char *sym;
    } syms[] = {
        {(void **)&nv.init, "nvmlInit_v2"},
        {(void **)&nv.shutdown, "nvmlShutdown"},
        {(void **)&nv.error_string, "nvmlErrorString"},
        {(void **)&nv.count, "nvmlDeviceGetCount_v2"},
        {(void **)&nv.handle, "nvmlDeviceGetHandleByIndex_v2"},
        {(void **)&nv.name, "nvmlDeviceGetName"},
        {(void **)&nv.uuid, "nvmlDeviceGetUUID"},
        {(void **)&nv.util, "nvmlDeviceGetUtilizationRates"},
        {(void **)&nv.mem, "nvmlDeviceGetMemoryInfo"},
    };
    for (size_t i = 0; i < sizeof syms / sizeof *syms; i++) {
        *syms[i].fn = dlsym(nv.lib, syms[i].sym);
        if (!*syms[i].fn) {
            snprintf(g->why, sizeof g->why, "%s has no %s (a driver too old)", path, syms[i].sym);
            mon_gpu_close(g);
            return -1;
        }
    }
    int rc = nv.init();
    if (rc) {
        snprintf(g->why, sizeof g->why, "nvmlInit failed: %s", nv_err(rc));
        nv.shutdown = NULL; /* nothing to shut down */
        mon_gpu_close(g);
        return -1;
    }
    unsigned int n = 0;
    if ((rc = nv.count(&n)) != 0 || n == 0) {
        snprintf(g->why, sizeof g->why, "%s", rc ? nv_err(rc) : "NVML lists no GPU");
        mon_gpu_close(g);
        return -1;
    }
    if (n > MON_GPUS_MAX)
        n = MON_GPUS_MAX; /* the rest not served; docs/monitor.md says how many */
    for (unsigned int i = 0; i < n; i++) {
        mon_gpu_dev *d = &g->dev[g->n];
        if (nv.handle(i, &nv.dev[g->n]) != 0)
            continue;
        d->index = (int)i;
        if (nv.name(nv.dev[g->n], d->name, sizeof d->name) != 0)
            snprintf(d->name, sizeof d->name, "unknown");
        if (nv.uuid(nv.dev[g->n], d->uuid, sizeof d->uuid) != 0)
            d->uuid[0] = 0;
        g->n++;
    }
    if (!g->n) {
        snprintf(g->why, sizeof g->why, "NVML gave no handle for any of its %u GPUs", n);
        mon_gpu_close(g);
        return -1;
    }
    g->available = 1;
    return 0;
}

/* Reads each GPU's utilization and memory in use; a GPU whose reading fails
 * keeps ok 0 for this read (served as missing, not as 0). */
void mon_gpu_read(mon_gpu *g)
{
    if (!g->available)
        return;
    for (int i = 0; i < g->n; i++) {
        mon_gpu_dev *d = &g->dev[i];
        nvml_utilization u;
        nvml_memory m;
        d->ok = nv.util(nv.dev[i], &u) == 0;
        if (d->ok) {
            d->busy = u.gpu / 100.0;
            d->mem_busy = u.memory / 100.0;
        }
        d->mem_ok = nv.mem(nv.dev[i], &m) == 0;
        if (d->mem_ok) {
            d->mem_used = (double)m.used;
            d->mem_total = (double)m.total;
        }
    }
    g->reads++;
}

void mon_gpu_close(mon_gpu *g)
{
    if (nv.shutdown && g->available)
        nv.shutdown();
    if (nv.lib)
        dlclose(nv.lib);
    memset(&nv, 0, sizeof nv);
    g->available = 0;
}
