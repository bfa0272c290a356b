/*
 * gpu/inject.h: state shared by the files of libmemwatch_cuda.so, the CUDA
 * profiling library (gpu/inject.c: start, CUPTI callbacks, decode thread, end;
 * gpu/inject_out.c: raw output and diagnostics; gpu/pmsamp.c: PM sampling per
 * device; gpu/attrib.c: per-launch bytes; gpu/pcsamp.c: PC sampling and source
 * lines). Internal to gpu/; nothing here is exported from the library.
 * Threading: everything in `g` is under g.mu unless a comment says otherwise.
 */
#ifndef MW_GPU_INJECT_H
#define MW_GPU_INJECT_H

#include <pthread.h>
#include <stdint.h>

#include <cuda.h>
#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>

#include "attrib.h"
#include "memwatch/meta_keys.h"
#include "memwatch/mwr_gpu.h"

#define MW_CUDA_MAX_DEV 16
#define MW_CUDA_NAME_MAX 512

typedef int (*mw_emit_fn)(uint32_t type, const void *payload, uint32_t len);

typedef struct mw_pending {
    mwr_gpu_kernel k;
    char name[MW_CUDA_NAME_MAX];
} mw_pending;

/* One metric pair that PM sampling may accept; pct pairs are scaled by the peak. */
typedef struct mw_pm_set {
    const char *rd, *wr;
    int pct;
} mw_pm_set;

/* Everything memwatch keeps per CUDA device. */
typedef struct mw_dev {
    int seen;                  /* a context of this device exists or existed */
    CUcontext ctx;             /* its (last) context */
    /* PM sampling */
    int want, active, failed, discarded_first, overflowed;
    CUpti_PmSampling_Object *obj;
    CUpti_Profiler_Host_Object *host;
    const mw_pm_set *set;
    uint8_t *data;
    size_t data_size;
    uint8_t *config;           /* CUPTI keeps using the config image: freed after Disable */
    size_t config_size;
    char why[400];
    /* threshold in force for this device */
    double peak_bw, threshold_bw;
    int uncalibrated;
    char name[256];
    /* per-launch attribution */
    mw_ga_dev ga;
    uint64_t kernels, flagged, samples, flagged_samples, unmeasured;
} mw_dev;

typedef struct mw_cuda {
    pthread_mutex_t mu;
    int on, done, profiler_up;
    mw_emit_fn emit;
    int fd;
    uint64_t records, bytes, dropped;
    double profile_thr, profile_peak; /* from gpu-profile.json, 0 without one */
    char threshold_src[4200];
    uint64_t interval_ns;
    unsigned period_ms;
    int debug;
    FILE *trace;               /* MEMWATCH_GPU_TRACE: raw windows and launches, text */
    mw_dev dev[MW_CUDA_MAX_DEV];
    mw_pending *pend;
    size_t npend, cappend;
    pthread_t thr;
    int thr_up, stop;
    CUpti_SubscriberHandle sub;
    int late_exit;
    int pc_on;                 /* PC sampling wanted (MEMWATCH_GPU_PC=1) */
    int pm_off;                /* MEMWATCH_GPU_PM=0: no PM sampling (kernels only) */
    unsigned pc_period;        /* log2 cycles between PC samples */
    char *flagged_names[64];   /* kernels flagged at least once: their lines are named */
    int nflagged_names;
} mw_cuda;

extern mw_cuda g;

/* gpu/inject_out.c */
void mw_cuda_dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void mw_cuda_emit(uint32_t type, const void *a, uint32_t alen, const void *b, uint32_t blen);
/* An MWR_GPU_META record of "key=value\n" lines; each key written through
 * its name, "%s=..." with mw_meta_key(MW_META_<ID>) (memwatch/meta_keys.h). */
void mw_cuda_meta(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void mw_cuda_open_own_file(void);
void mw_cuda_close_own_file(void);
void mw_cuda_on_segv(int sig);
uint64_t mw_cuda_mono_ns(void);

/* gpu/pmsamp.c (all with g.mu held) */
void mw_pm_device(uint32_t dev);
void mw_pm_start(uint32_t dev);
void mw_pm_drain(uint32_t dev);
void mw_pm_stop(uint32_t dev);
void mw_pm_release(uint32_t dev);

#endif
