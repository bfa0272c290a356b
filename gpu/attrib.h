/*
 * gpu/attrib.h: the arithmetic of per-launch DRAM bytes (gpu/attrib.c), apart
 * from CUPTI so that it can be tested with fixture data anywhere.
 *
 * One mw_ga_dev per CUDA device holds that device's PM-sampling windows in time
 * order and the launches already attributed (their neighbours matter). A batch
 * of launches gets its bytes from the windows that overlap it: each window's
 * bytes are shared among the launches that ran in it in proportion to
 * (launch's byte rate x time it ran in the window), the rates being refined a
 * few times from a first pro-rata estimate. A window that a streaming launch
 * shares with an idle GPU or a compute launch thus gives its bytes to the
 * streaming launch, not pro rata to time. docs/gpu.md describes it.
 * Threading: none; the caller serialises (gpu/inject.c's lock).
 */
#ifndef MW_GPU_ATTRIB_H
#define MW_GPU_ATTRIB_H

#include <stddef.h>
#include <stdint.h>

/* One PM-sampling window: [s, s + len) in the kernels' clock. */
typedef struct mw_ga_sample {
    uint64_t s;
    uint32_t len;
    uint32_t flags;    /* MWR_GPU_OVERFLOW where samples were lost just before it */
    double bytes;      /* DRAM bytes read + written in the window */
} mw_ga_sample;

/* One launch to attribute. In: s, e (ns). Out: bytes, covered, rate, flags. */
typedef struct mw_ga_kernel {
    uint64_t s, e;
    double bytes;      /* DRAM bytes attributed to the launch */
    double covered;    /* ns of the launch that windows covered */
    double rate;       /* bytes/ns: bytes over covered time (0 when none covered) */
    uint32_t flags;    /* MWR_GPU_OVERFLOW seen in a window that covered it */
} mw_ga_kernel;

typedef struct mw_ga_dev {
    mw_ga_sample *smp;
    size_t nsmp, capsmp, maxsmp; /* maxsmp: cap; beyond it the oldest quarter goes */
    uint64_t lost;               /* windows dropped at the cap */
    uint64_t last_end;           /* end of the newest window */
    mw_ga_kernel *done;          /* attributed launches kept as neighbours, by end */
    size_t ndone, capdone;
} mw_ga_dev;

/* Append a window (windows come in time order). 0, or -1 when out of memory. */
int mw_ga_push(mw_ga_dev *d, uint64_t s, uint64_t e, double bytes, uint32_t flags);

/* Attribute bytes to ks[0..n) (any order, one device). Launches already
 * attributed (mw_ga_retire) that share windows with them keep their rates and
 * take their share. */
void mw_ga_attribute(mw_ga_dev *d, mw_ga_kernel *ks, size_t n);

/* Keep attributed launches as neighbours for later batches. */
void mw_ga_retire(mw_ga_dev *d, const mw_ga_kernel *ks, size_t n);

/* Drop windows that end before t_windows and neighbours that end before t_done. */
void mw_ga_trim(mw_ga_dev *d, uint64_t t_windows, uint64_t t_done);

void mw_ga_free(mw_ga_dev *d);

#endif
