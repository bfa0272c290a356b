/*
 * gpu/probes_int.h: what the three files of the GPU probes share (gpu/probes.cu:
 * device queries, the latency probe and the chase machinery; gpu/probes_struct.cu:
 * cache and TLB structure; gpu/probes_evset.cu: eviction sets for ways and sets;
 * gpu/probes_mem.cu: shared-memory banks, outstanding
 * requests, the triad). Device helpers are inline here (no relocatable device
 * code); host helpers live in gpu/probes.cu, in namespace mw_gpu_probe.
 * May call: the CUDA runtime only.
 */
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#include "memwatch/gpu.h"
#include "memwatch/memwatch.h"

#define CK(call)                                                                 \
    do {                                                                         \
        cudaError_t e_ = (call);                                                 \
        if (e_ != cudaSuccess) {                                                 \
            fprintf(stderr, "memwatch-gpu: %s:%d: %s: %s\n", __FILE__, __LINE__, \
                    #call, cudaGetErrorString(e_));                              \
            rc = MW_ERR_GPU;                                                     \
            goto out;                                                            \
        }                                                                        \
    } while (0)

/* Records per fine-grained chase: 2 x 4 bytes each in shared memory. */
#define REC 1024

/* ---------------------------------------------------------------- device */

__device__ __forceinline__ uint32_t clk(void)
{
    uint32_t t;
    asm volatile("mov.u32 %0, %%clock;" : "=r"(t)::"memory");
    return t;
}

__device__ __forceinline__ uint64_t gtimer(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
    return t;
}

template <int CG>
__device__ __forceinline__ uint32_t ld(const uint32_t *p)
{
    uint32_t v;
    if (CG)
        asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    else
        asm volatile("ld.global.ca.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ uint32_t smid(void)
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}

namespace mw_gpu_probe {

/* Device buffer holding a chase ring: element i points stride_e elements on,
 * wrapping within n elements. */
struct chase {
    uint32_t *A = nullptr;
    size_t cap = 0;
    uint32_t *idx = nullptr, *lat = nullptr;
    unsigned long long *sum = nullptr;
    std::vector<uint32_t> h_idx, h_lat;
    unsigned long long h_sum[3];
};

/* Report (and clear) an error a part of a probe left behind. */
void note_err(const char *where);
/* Select the device and clear any error an earlier call left behind. */
int set_dev(int dev);
void progress(mw_gpu_progress_fn pf, void *user, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int chase_alloc(chase *c, size_t bytes);
void chase_free(chase *c);
/* Build a ring over n_bytes with stride bytes, run one chase. */
int chase_run(chase *c, size_t n_bytes, size_t stride, int cg, long warm, long cnt, uint32_t thr);
double median(std::vector<double> v);
double median_u32(const std::vector<uint32_t> &v, size_t from = 0);
double two_means(const std::vector<double> &v, double *lo, double *hi, double *frac_hi);
/* Evict the L2 by writing a buffer of twice its size. */
int flush_l2(void *buf, size_t bytes);
/* p[0..n) = v on the device (1024 blocks of 256 threads), not waited for. */
void fill_u32(uint32_t *p, size_t n, uint32_t v);
/* The plain (average) pointer chase over n_bytes at stride: mean cycles. */
int plain(chase *c, size_t n_bytes, size_t stride, int cg, long warm, long iters, double *cyc);
void curve_add(mw_gpu_curve *c, double x, double y);
/* Minimal eviction sets of the L1 (level 1) or L2 (level 2) of `capacity`
 * bytes for MW_GPU_EVSET_TARGETS targets, over a pool of twice the capacity
 * at the start of big, a miss being a reload slower than thr cycles; the
 * set-mates curve, ways and sets, and the reasoning in note
 * (gpu/probes_evset.cu). */
int evsets(char *big, size_t bigsz, int level, size_t capacity, uint32_t thr,
           int *sizes, int *tests, double *ms, mw_gpu_curve *mates, int *ways, int *sets,
           char *note, size_t noten);

} // namespace mw_gpu_probe
