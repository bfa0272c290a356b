/*
 * gpu/probes.cu: probes of the GPU memory hierarchy whose truth is known.
 *
 * Owns: the fine-grained P-chase of Mei & Chu (one thread, j = A[j], every
 * access's latency and index recorded in shared memory) for L1/L2/DRAM latency,
 * L1 geometry, L2 size and near/far modes, TLB reach; shared-memory bank
 * conflicts; outstanding requests after Lashgar et al.; the triad with known
 * bytes against device-to-device cudaMemcpy.
 * May call: the CUDA runtime only. Prints nothing.
 * Threading: one probe at a time per process; each function synchronizes the
 * device before it returns and frees what it allocated.
 */
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

/* SM clock against the global timer: spin ~20 ms, compare the two. */
__global__ void k_clock(unsigned long long *out)
{
    uint64_t g0 = gtimer();
    long long c0 = clock64();
    uint64_t g1;
    do {
        g1 = gtimer();
    } while (g1 - g0 < 20000000ull);
    long long c1 = clock64();
    out[0] = (unsigned long long)(c1 - c0);
    out[1] = g1 - g0;
}

/* The fine-grained P-chase. warm accesses unrecorded, then REC recorded ones
 * (index and latency into shared memory), then cnt counted ones: their summed
 * latency and how many exceeded thr. */
template <int CG>
__global__ void k_pchase(const uint32_t *A, uint32_t start, long warm, long cnt, uint32_t thr,
                         uint32_t *o_idx, uint32_t *o_lat, unsigned long long *o_sum)
{
    __shared__ uint32_t s_idx[REC];
    __shared__ uint32_t s_lat[REC];
    uint32_t j = start;
    for (long k = 0; k < warm; k++)
        j = ld<CG>(A + j);
    for (int k = 0; k < REC; k++) {
        uint32_t t0 = clk();
        j = ld<CG>(A + j);
        s_idx[k] = j;
        uint32_t t1 = clk();
        s_lat[k] = t1 - t0;
    }
    unsigned long long sum = 0, miss = 0;
    for (long k = 0; k < cnt; k++) {
        uint32_t t0 = clk();
        j = ld<CG>(A + j);
        s_idx[0] = j;
        uint32_t t1 = clk();
        uint32_t d = t1 - t0;
        sum += d;
        miss += d > thr;
    }
    for (int k = 0; k < REC; k++) {
        o_idx[k] = s_idx[k];
        o_lat[k] = s_lat[k];
    }
    o_sum[0] = sum;
    o_sum[1] = miss;
    o_sum[2] = j;
}

/* Plain chase, no per-access bookkeeping: the classic average latency. Only
 * the block that lands on SM `sm` works (sm < 0: block 0), so that one SM can
 * warm lines that another then reads. */
__device__ __forceinline__ uint32_t smid(void)
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}

template <int CG>
__global__ void k_chase_plain(const uint32_t *A, long warm, long iters, int sm, int *claim,
                              unsigned long long *o)
{
    if (sm >= 0) {
        if (smid() != (uint32_t)sm || atomicCAS(claim, 0, 1) != 0)
            return;
    } else if (blockIdx.x != 0) {
        return;
    }
    uint32_t j = 0;
    for (long k = 0; k < warm; k++)
        j = ld<CG>(A + j);
    long long t0 = clock64();
    for (long k = 0; k < iters; k++)
        j = ld<CG>(A + j);
    long long t1 = clock64();
    o[0] = (unsigned long long)(t1 - t0);
    o[1] = j;
}

/* Fine-grained chase pinned to SM `sm`: latencies of the first REC accesses. */
__global__ void k_pchase_sm(const uint32_t *A, int sm, int *claim, uint32_t *o_lat)
{
    if (smid() != (uint32_t)sm || atomicCAS(claim, 0, 1) != 0)
        return;
    __shared__ uint32_t s_idx[REC], s_lat[REC];
    uint32_t j = 0;
    for (int k = 0; k < REC; k++) {
        uint32_t t0 = clk();
        j = ld<1>(A + j);
        s_idx[k] = j;
        uint32_t t1 = clk();
        s_lat[k] = t1 - t0;
    }
    for (int k = 0; k < REC; k++)
        o_lat[k] = s_lat[k] + (s_idx[k] == 0xffffffffu);
}

/* TLB: 64-bit pointers one stride apart (any footprint), mean cycles. */
__global__ void k_ptr_ring(char *base, size_t pages, size_t stride)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < pages;
         i += (size_t)gridDim.x * blockDim.x)
        *(char **)(base + i * stride) = base + ((i + 1) % pages) * stride;
}

template <int CG>
__global__ void k_ptr_chase(char *base, long warm, long iters, unsigned long long *o)
{
    char *p = base;
    for (long k = 0; k < warm; k++) {
        if (CG)
            asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p)::"memory");
        else
            asm volatile("ld.global.ca.u64 %0, [%0];" : "+l"(p)::"memory");
    }
    long long t0 = clock64();
    for (long k = 0; k < iters; k++) {
        if (CG)
            asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p)::"memory");
        else
            asm volatile("ld.global.ca.u64 %0, [%0];" : "+l"(p)::"memory");
    }
    long long t1 = clock64();
    o[0] = (unsigned long long)(t1 - t0);
    o[1] = (unsigned long long)p;
}

/* Fine-grained chase of 64-bit pointers: warm unrecorded loads, then cnt
 * timed ones: their summed latency and how many exceeded thr. */
template <int CG>
__global__ void k_ptr_pchase(char *p, long warm, long cnt, uint32_t thr, unsigned long long *o)
{
    __shared__ char *s_p[2];
    for (long k = 0; k < warm; k++) {
        if (CG)
            asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p)::"memory");
        else
            asm volatile("ld.global.ca.u64 %0, [%0];" : "+l"(p)::"memory");
    }
    unsigned long long sum = 0, miss = 0;
    for (long k = 0; k < cnt; k++) {
        uint32_t t0 = clk();
        if (CG)
            asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p)::"memory");
        else
            asm volatile("ld.global.ca.u64 %0, [%0];" : "+l"(p)::"memory");
        s_p[k & 1] = p;
        uint32_t d = clk() - t0;
        sum += d;
        miss += d > thr;
    }
    o[0] = sum;
    o[1] = miss;
    o[2] = (unsigned long long)s_p[0];
}

/* The first REC loads of a pointer chase, each timed (L1 bypassed). */
__global__ void k_ptr_rec(char *p, uint32_t *o_lat)
{
    __shared__ uint32_t s_lat[REC];
    __shared__ char *s_p[2];
    for (int k = 0; k < REC; k++) {
        uint32_t t0 = clk();
        asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p)::"memory");
        s_p[k & 1] = p;
        s_lat[k] = clk() - t0;
    }
    for (int k = 0; k < REC; k++)
        o_lat[k] = s_lat[k] + (s_p[k & 1] == nullptr);
}

/* n pointers `span` bytes apart in one cycle; pointer i sits (i mod spread)
 * lines into its span, so that many spans do not pile onto one cache set. */
__global__ void k_span_ring(char *base, size_t n, size_t span, size_t spread)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        size_t j = (i + 1) % n;
        *(char **)(base + i * span + (i % spread) * 128) = base + j * span + (j % spread) * 128;
    }
}

/* One load per `step` bytes over a region, from every SM: touches its pages. */
__global__ void k_touch(const char *base, size_t bytes, size_t step, unsigned *sink)
{
    unsigned x = 0;
    for (size_t i = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) * step; i < bytes;
         i += (size_t)gridDim.x * blockDim.x * step)
        x += (unsigned char)base[i];
    if (x == 0x9e3779b9u)
        sink[0] = x;
}

/* L2 capacity seen by the whole chip: block b reads its own slice of the
 * array `passes` times (16-byte loads, L1 bypassed). */
__global__ void k_l2_slices(const uint4 *a, size_t per_block, int passes, unsigned *sink)
{
    const uint4 *s = a + blockIdx.x * per_block;
    unsigned x = 0;
    size_t step = 4 * (size_t)blockDim.x;
    for (int p = 0; p < passes; p++)
        for (size_t i = threadIdx.x; i + 3 * blockDim.x < per_block; i += step) {
            uint4 v0 = __ldcg(s + i), v1 = __ldcg(s + i + blockDim.x);
            uint4 v2 = __ldcg(s + i + 2 * blockDim.x), v3 = __ldcg(s + i + 3 * blockDim.x);
            x ^= v0.x ^ v1.y ^ v2.z ^ v3.w;
        }
    if (x == 0x9e3779b9u)
        sink[0] = x;
}

/* Shared-memory chase by one thread. */
__global__ void k_smem_chase(uint32_t *o)
{
    __shared__ uint32_t s[1024];
    for (int i = 0; i < 1024; i++)
        s[i] = (i + 33) & 1023;
    uint32_t j = 0, t0 = clk();
    for (int k = 0; k < 4096; k++)
        j = s[j];
    s[0] = j;
    uint32_t t1 = clk();
    o[0] = t1 - t0;
    o[1] = j;
}

/* Bank conflicts: 32 threads, thread t chases its own slot t*stride (a
 * self-loop), so each of the K steps is one warp-wide access with the
 * conflict pattern of the stride. */
template <typename T>
__global__ void k_banks(int stride, int K, uint32_t *o)
{
    __shared__ T s[32 * 65 + 2];
    int t = threadIdx.x;
    uint32_t i = (uint32_t)(t * stride);
    s[i] = (T)i;
    __syncwarp();
    T j = (T)i;
    __syncwarp();
    uint32_t t0 = clk();
    for (int k = 0; k < K; k++)
        j = s[(uint32_t)j];
    s[(uint32_t)j + 1] = j;
    uint32_t t1 = clk();
    if (t == 0)
        o[0] = t1 - t0;
}

/* Outstanding requests: each thread issues L independent loads to distinct
 * 128-byte lines, waits for all, and records its own latency. */
template <int L>
__global__ void k_outstanding(const uint32_t *base, uint32_t *o_lat, uint32_t *o_sink)
{
    int t = threadIdx.x;
    const uint32_t *p = base + (size_t)t * L * 32;
    uint32_t v[L];
    __syncthreads();
    uint32_t t0 = clk();
#pragma unroll
    for (int k = 0; k < L; k++)
        v[k] = ld<1>(p + k * 32);
    uint32_t s = 0;
#pragma unroll
    for (int k = 0; k < L; k++)
        s += v[k];
    o_sink[t] = s;
    uint32_t t1 = clk();
    o_lat[t] = t1 - t0;
}

__global__ void k_fill_u32(uint32_t *p, size_t n, uint32_t v)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = v + (uint32_t)i;
}

__global__ void k_init_d(double *p, size_t n, double v)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = v + (double)(i & 1023) * 1e-3;
}

/* Triad a = b + s*c on 16-byte vectors, one vector per thread, plain loads
 * and stores, in 1024-thread blocks (on the H200 the streaming ld/st.cs forms
 * ran 5 % slower, 256-thread blocks 0.2 %: bench/gpu_triad_compare). */
__global__ void k_triad(double2 *__restrict__ a, const double2 *__restrict__ b,
                        const double2 *__restrict__ c, double s, size_t n2)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n2) {
        double2 x = b[i], y = c[i];
        double2 r;
        r.x = x.x + s * y.x;
        r.y = x.y + s * y.y;
        a[i] = r;
    }
}

/* Triad variant 1: four vectors per thread, all loads before the stores. */
__global__ void k_triad4(double2 *__restrict__ a, const double2 *__restrict__ b,
                         const double2 *__restrict__ c, double s, size_t n2)
{
    size_t i = blockIdx.x * (size_t)blockDim.x * 4 + threadIdx.x;
    double2 x[4], y[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
        size_t j = i + (size_t)k * blockDim.x;
        if (j < n2) {
            x[k] = b[j];
            y[k] = c[j];
        }
    }
#pragma unroll
    for (int k = 0; k < 4; k++) {
        size_t j = i + (size_t)k * blockDim.x;
        if (j < n2) {
            double2 r;
            r.x = x[k].x + s * y[k].x;
            r.y = x[k].y + s * y[k].y;
            a[j] = r;
        }
    }
}

/* Triad variant 2: plain scalar doubles, one per thread (BabelStream's shape). */
__global__ void k_triad1(double *__restrict__ a, const double *__restrict__ b,
                         const double *__restrict__ c, double s, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = b[i] + s * c[i];
}

/* ------------------------------------------------------------------ host */

/* Report (and clear) an error a part of a probe left behind. */
static void note_err(const char *where)
{
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        fprintf(stderr, "memwatch-gpu: %s: %s\n", where, cudaGetErrorString(e));
}

/* Select the device and clear any error an earlier call left behind, so
 * that each probe reports only its own. */
static int set_dev(int dev)
{
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        fprintf(stderr, "memwatch-gpu: an earlier CUDA call failed: %s\n", cudaGetErrorString(e));
    return cudaSetDevice(dev) == cudaSuccess ? 0 : MW_ERR_GPU;
}

extern "C" int mw_gpu_count(char *reason, size_t n)
{
    int c = 0;
    cudaError_t e = cudaGetDeviceCount(&c);
    if (e != cudaSuccess) {
        if (reason && n)
            snprintf(reason, n, "%s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
        return MW_ERR_GPU;
    }
    if (c == 0 && reason && n)
        snprintf(reason, n, "cudaGetDeviceCount found no device");
    return c;
}

extern "C" int mw_gpu_device_get(int ordinal, mw_gpu_device *d, char *reason, size_t n)
{
    memset(d, 0, sizeof *d);
    cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, ordinal);
    if (e != cudaSuccess) {
        if (reason && n)
            snprintf(reason, n, "%s", cudaGetErrorString(e));
        return MW_ERR_GPU;
    }
    int v = 0;
    d->ordinal = ordinal;
    memcpy(d->name, p.name, sizeof d->name - 1);
    d->name[sizeof d->name - 1] = 0;
    d->cc_major = p.major;
    d->cc_minor = p.minor;
    d->sms = p.multiProcessorCount;
    d->global_bytes = p.totalGlobalMem;
    const struct {
        cudaDeviceAttr a;
        double scale;
        double *dd;
        int *di;
        size_t *dz;
    } attrs[] = {
        {cudaDevAttrClockRate, 1e3, &d->sm_clock_attr_hz, nullptr, nullptr},
        {cudaDevAttrMemoryClockRate, 1e3, &d->mem_clock_hz, nullptr, nullptr},
        {cudaDevAttrGlobalMemoryBusWidth, 1, nullptr, &d->bus_width_bits, nullptr},
        {cudaDevAttrL2CacheSize, 1, nullptr, nullptr, &d->l2_bytes},
        {cudaDevAttrMaxSharedMemoryPerMultiprocessor, 1, nullptr, nullptr, &d->smem_per_sm},
    };
    for (const auto &at : attrs) {
        v = 0;
        if (cudaDeviceGetAttribute(&v, at.a, ordinal) != cudaSuccess) {
            cudaGetLastError();
            v = 0;
        }
        if (at.dd)
            *at.dd = v * at.scale;
        if (at.di)
            *at.di = v;
        if (at.dz)
            *at.dz = (size_t)v;
    }
    d->peak_bw = d->mem_clock_hz * 2.0 * d->bus_width_bits / 8.0;
    return 0;
}

static void progress(mw_gpu_progress_fn pf, void *user, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void progress(mw_gpu_progress_fn pf, void *user, const char *fmt, ...)
{
    if (!pf)
        return;
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    pf(buf, user);
}

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

__global__ void k_ring(uint32_t *A, size_t n, size_t stride_e)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        A[i] = (uint32_t)((i + stride_e) % n);
}

static int chase_alloc(chase *c, size_t bytes)
{
    c->cap = bytes / 4;
    if (cudaMalloc(&c->A, bytes) != cudaSuccess || cudaMalloc(&c->idx, REC * 4) != cudaSuccess ||
        cudaMalloc(&c->lat, REC * 4) != cudaSuccess || cudaMalloc(&c->sum, 3 * 8) != cudaSuccess)
        return MW_ERR_GPU;
    c->h_idx.resize(REC);
    c->h_lat.resize(REC);
    return 0;
}

static void chase_free(chase *c)
{
    cudaFree(c->A);
    cudaFree(c->idx);
    cudaFree(c->lat);
    cudaFree(c->sum);
    c->A = nullptr;
    c->idx = c->lat = nullptr;
    c->sum = nullptr;
}

/* Build a ring over n_bytes with stride bytes, run one chase. */
static int chase_run(chase *c, size_t n_bytes, size_t stride, int cg, long warm, long cnt,
                     uint32_t thr)
{
    size_t n = n_bytes / 4, se = stride / 4;
    if (n > c->cap || se == 0)
        return MW_ERR_TOOBIG;
    k_ring<<<1024, 256>>>(c->A, n, se);
    if (cg) {
        cudaFuncSetAttribute(k_pchase<1>, cudaFuncAttributePreferredSharedMemoryCarveout, 0);
        k_pchase<1><<<1, 1>>>(c->A, 0, warm, cnt, thr, c->idx, c->lat, c->sum);
    } else {
        cudaFuncSetAttribute(k_pchase<0>, cudaFuncAttributePreferredSharedMemoryCarveout, 0);
        k_pchase<0><<<1, 1>>>(c->A, 0, warm, cnt, thr, c->idx, c->lat, c->sum);
    }
    if (cudaDeviceSynchronize() != cudaSuccess)
        return MW_ERR_GPU;
    cudaMemcpy(c->h_idx.data(), c->idx, REC * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(c->h_lat.data(), c->lat, REC * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(c->h_sum, c->sum, 3 * 8, cudaMemcpyDeviceToHost);
    return cudaGetLastError() == cudaSuccess ? 0 : MW_ERR_GPU;
}

static double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

static double median_u32(const std::vector<uint32_t> &v, size_t from = 0)
{
    std::vector<double> d(v.begin() + (long)from, v.end());
    return median(d);
}

/* Split latencies into two modes (1-D two-means); returns the split value. */
static double two_means(const std::vector<double> &v, double *lo, double *hi, double *frac_hi)
{
    std::vector<double> s(v);
    std::sort(s.begin(), s.end());
    double a = s[s.size() / 10], b = s[s.size() * 9 / 10];
    double cut = (a + b) / 2;
    for (int it = 0; it < 50; it++) {
        std::vector<double> L, H;
        for (double x : s)
            (x <= cut ? L : H).push_back(x);
        if (L.empty() || H.empty())
            break;
        a = median(L);
        b = median(H);
        cut = (a + b) / 2;
    }
    size_t nh = 0;
    for (double x : s)
        nh += x > cut;
    *lo = a;
    *hi = b;
    *frac_hi = (double)nh / s.size();
    return cut;
}

/* Flush the L2: write a buffer of 2x its size. */
static int flush_l2(void *buf, size_t bytes)
{
    k_fill_u32<<<1024, 512>>>((uint32_t *)buf, bytes / 4, 7);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : MW_ERR_GPU;
}

static double measure_clock(void)
{
    unsigned long long *d = nullptr, h[2] = {0, 0};
    if (cudaMalloc(&d, 16) != cudaSuccess)
        return 0;
    k_clock<<<1, 1>>>(d);
    cudaMemcpy(h, d, 16, cudaMemcpyDeviceToHost);
    cudaFree(d);
    return h[1] ? (double)h[0] / (double)h[1] * 1e9 : 0;
}

/* Plain chase of 64-bit pointers one stride apart over n_bytes (no index
 * arithmetic in the dependent chain): the classic average latency. */
static int plain(chase *c, size_t n_bytes, size_t stride, int cg, long warm, long iters,
                 double *cyc)
{
    if (n_bytes / 4 > c->cap || stride < 8)
        return MW_ERR_TOOBIG;
    k_ptr_ring<<<1024, 256>>>((char *)c->A, n_bytes / stride, stride);
    if (cg)
        k_ptr_chase<1><<<1, 1>>>((char *)c->A, warm, iters, c->sum);
    else
        k_ptr_chase<0><<<1, 1>>>((char *)c->A, warm, iters, c->sum);
    if (cudaDeviceSynchronize() != cudaSuccess ||
        cudaMemcpy(c->h_sum, c->sum, 16, cudaMemcpyDeviceToHost) != cudaSuccess)
        return MW_ERR_GPU;
    *cyc = (double)c->h_sum[0] / (double)iters;
    return 0;
}

static void curve_add(mw_gpu_curve *c, double x, double y);

extern "C" int mw_gpu_probe_latency(int dev, mw_gpu_latency *o, mw_gpu_progress_fn pf, void *user)
{
    int rc = 0;
    chase c;
    void *fl = nullptr;
    int *claim = nullptr;
    mw_gpu_device d;
    uint32_t *so = nullptr, hs[2];
    size_t ring = 4u << 20, n4 = ring / 128;
    std::vector<double> best_far;
    double best_med = 0;
    memset(o, 0, sizeof *o);
    if (set_dev(dev) || mw_gpu_device_get(dev, &d, nullptr, 0))
        return MW_ERR_GPU;
    progress(pf, user, "SM clock against the global timer");
    o->sm_hz = measure_clock();
    CK(cudaMalloc(&fl, 2 * d.l2_bytes));
    CK(cudaMalloc(&claim, sizeof(int)));
    if ((rc = chase_alloc(&c, std::max((size_t)64 << 20, 4 * d.l2_bytes))))
        goto out;

    progress(pf, user, "L1 hit latency: 8 KiB ring, stride 128 B, cached loads");
    if ((rc = plain(&c, 8 << 10, 128, 0, 256, 8192, &o->l1_cyc)) ||
        (rc = chase_run(&c, 8 << 10, 128, 0, 256, 0, 0)))
        goto out;
    o->l1_fg_cyc = median_u32(c.h_lat);

    progress(pf, user, "L2 hit latency: 4 MiB ring, stride 128 B, L1 bypassed");
    if ((rc = plain(&c, ring, 128, 1, (long)n4, (long)n4, &o->l2_cyc)) ||
        (rc = chase_run(&c, ring, 128, 1, (long)n4, 0, 0)))
        goto out;
    o->l2_fg_cyc = median_u32(c.h_lat);

    progress(pf, user, "DRAM latency: L2 flushed, %zu MiB ring, stride 4 KiB, first touch",
             (4 * d.l2_bytes) >> 20);
    {
        size_t big = 4 * d.l2_bytes, n = big / 4;
        k_ptr_ring<<<1024, 256>>>((char *)c.A, big / 4096, 4096);
        if ((rc = flush_l2(fl, 2 * d.l2_bytes)))
            goto out;
        k_ptr_chase<1><<<1, 1>>>((char *)c.A, 0, (long)(big / 4096), c.sum);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(c.h_sum, c.sum, 16, cudaMemcpyDeviceToHost));
        o->dram_cyc = (double)c.h_sum[0] / (double)(big / 4096);
        k_ring<<<1024, 256>>>(c.A, n, 1024);
        if ((rc = flush_l2(fl, 2 * d.l2_bytes)))
            goto out;
        k_pchase<1><<<1, 1>>>(c.A, 0, 0, 0, 0, c.idx, c.lat, c.sum);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(c.h_lat.data(), c.lat, REC * 4, cudaMemcpyDeviceToHost));
        o->dram_fg_cyc = median_u32(c.h_lat, 1);
    }

    /* Near and far L2: SM X brings a flushed 4 MiB ring into the L2, then SM 0
     * reads it once, every access timed. Lines homed in X's partition and not
     * yet near SM 0 show the far latency. */
    progress(pf, user, "L2 near/far partitions: ring warmed by one SM, read by SM 0");
    snprintf(o->far_by_sm.name, sizeof o->far_by_sm.name, "median cycles from SM 0");
    snprintf(o->l2_hist.name, sizeof o->l2_hist.name, "L2 hits from SM 0");
    {
        std::vector<double> nearv;
        for (int x = 1; x < d.sms; x += (d.sms > 64 ? 3 : 1)) {
            k_ring<<<1024, 256>>>(c.A, ring / 4, 32);
            if ((rc = flush_l2(fl, 2 * d.l2_bytes)))
                goto out;
            CK(cudaMemset(claim, 0, sizeof(int)));
            k_chase_plain<1><<<4 * d.sms, 1>>>(c.A, (long)n4, 0, x, claim, c.sum);
            CK(cudaMemset(claim, 0, sizeof(int)));
            CK(cudaMemset(c.lat, 0, REC * 4));
            k_pchase_sm<<<4 * d.sms, 1>>>(c.A, 0, claim, c.lat);
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(c.h_lat.data(), c.lat, REC * 4, cudaMemcpyDeviceToHost));
            if (c.h_lat[0] == 0)
                continue; /* no block landed on one of the two SMs */
            std::vector<double> v(c.h_lat.begin(), c.h_lat.end());
            std::sort(v.begin(), v.end());
            double med = v[v.size() / 2];
            curve_add(&o->far_by_sm, x, med);
            if (med > best_med) {
                best_med = med;
                best_far = v;
                o->far_sm = x;
            }
            nearv.insert(nearv.end(), v.begin(), v.begin() + (long)v.size() / 4);
        }
        if (!best_far.empty()) {
            double lo = 0, hi = 0;
            two_means(best_far, &lo, &hi, &o->far_fraction);
            o->l2_near_cyc = lo;
            o->l2_far_cyc = hi;
            int hist[80] = {0};
            for (double x : best_far) {
                int bin = (int)(x / 20);
                hist[bin < 79 ? bin : 79]++;
            }
            for (int k = 0; k < 80; k++)
                if (hist[k])
                    curve_add(&o->l2_hist, k * 20 + 10, hist[k]);
        }
    }

    progress(pf, user, "shared-memory latency");
    CK(cudaMalloc(&so, 8));
    k_smem_chase<<<1, 1>>>(so);
    CK(cudaMemcpy(hs, so, 8, cudaMemcpyDeviceToHost));
    o->smem_cyc = hs[0] / 4096.0;
out:
    chase_free(&c);
    cudaFree(fl);
    cudaFree(so);
    cudaFree(claim);
    return rc;
}

/* Miss share of the counted pass over a ring of size bytes. */
static int miss_share(chase *c, size_t bytes, size_t stride, int cg, uint32_t thr, double *share,
                      double *mean)
{
    long n = (long)(bytes / stride);
    long cnt = std::max(n, 4096L);
    int rc = chase_run(c, bytes, stride, cg, n, cnt, thr);
    if (rc)
        return rc;
    *share = (double)c->h_sum[1] / cnt;
    if (mean)
        *mean = (double)c->h_sum[0] / cnt;
    return 0;
}

static void curve_add(mw_gpu_curve *c, double x, double y)
{
    if (c->n < MW_GPU_MAX_POINTS) {
        c->p[c->n].x = x;
        c->p[c->n].y = y;
        c->n++;
    }
}

/* n pointers `span` apart (spread as k_span_ring), chased round and round:
 * mean cycles and the share above thr of cnt timed loads. */
static int span_chase(char *buf, size_t n, size_t span, size_t spread, int cg, uint32_t thr,
                      unsigned long long *od, double *mean, double *share)
{
    long cnt = (long)std::max(n * 4, (size_t)2048);
    unsigned long long h[3];
    k_span_ring<<<256, 256>>>(buf, n, span, spread);
    if (cg)
        k_ptr_pchase<1><<<1, 1>>>(buf, (long)(2 * n), cnt, thr, od);
    else
        k_ptr_pchase<0><<<1, 1>>>(buf, (long)(2 * n), cnt, thr, od);
    if (cudaDeviceSynchronize() != cudaSuccess ||
        cudaMemcpy(h, od, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess)
        return MW_ERR_GPU;
    *mean = (double)h[0] / cnt;
    *share = (double)h[1] / cnt;
    return 0;
}

/* Conflict scan: for each stride, the fewest lines (up to nmax) whose
 * steady-state chase misses in more than 2 % of its loads. */
static int conflict_scan(char *buf, size_t bytes, int cg, uint32_t thr, size_t s_lo, size_t s_hi,
                         int nmax, unsigned long long *od, mw_gpu_curve *out)
{
    for (size_t st = s_lo; st <= s_hi; st *= 4) {
        int first = 0;
        for (int n = 1; n <= nmax; n += n < 64 ? 1 : 4) {
            double mean = 0, share = 0;
            if ((size_t)n * st > bytes)
                break;
            int rc = span_chase(buf, (size_t)n, st, 1, cg, thr, od, &mean, &share);
            if (rc)
                return rc;
            if (share > 0.02) {
                first = n;
                break;
            }
        }
        curve_add(out, st / 1024.0, first);
    }
    return 0;
}

/* L1/L2 conflict scans, TLB span curves and the eviction test, in one
 * buffer of most of the free memory (run after the triad: memory allocated
 * after this buffer is freed streamed 10 % slower on the H200). */
extern "C" int mw_gpu_probe_structure(int dev, const mw_gpu_latency *lat, mw_gpu_geometry *o,
                                      mw_gpu_progress_fn pf, void *user)
{
    int rc = 0;
    mw_gpu_device d;
    if (set_dev(dev) || mw_gpu_device_get(dev, &d, nullptr, 0))
        return MW_ERR_GPU;
    char *big = nullptr;
    unsigned long long *od = nullptr;
    uint32_t *ol = nullptr;
    unsigned *sink = nullptr;
    size_t fr = 0, tot = 0, bigsz;
    std::vector<uint32_t> h(REC);
    cudaFuncSetAttribute(k_ptr_pchase<0>, cudaFuncAttributePreferredSharedMemoryCarveout, 0);
    CK(cudaMemGetInfo(&fr, &tot));
    bigsz = (size_t)((double)fr * 0.85) & ~(((size_t)1 << 30) - 1);
    if (bigsz < ((size_t)2 << 30)) {
        snprintf(o->tlb_note, sizeof o->tlb_note, "not measured: %zu MiB free", fr >> 20);
        return 0;
    }
    CK(cudaMalloc(&big, bigsz));
    CK(cudaMalloc(&od, 32));
    CK(cudaMalloc(&ol, REC * 4));
    CK(cudaMalloc(&sink, 4));
    CK(cudaMemset(big, 0, (size_t)1 << 30));
    {
        uint32_t thr1 = (uint32_t)((lat->l1_fg_cyc + lat->l2_fg_cyc) / 2);
        /* an L2 hit homed in the far partition (about 470 cycles on the H200)
         * is still a hit: halfway from it to DRAM */
        double l2hit = std::max(lat->l2_fg_cyc, lat->l2_far_cyc);
        uint32_t thr2 = (uint32_t)((l2hit + std::max(lat->dram_fg_cyc, l2hit)) / 2);
        o->l1_scan_max = 160;
        o->l2_scan_max = 384;
        snprintf(o->l1_conflict.name, sizeof o->l1_conflict.name, "L1: lines that miss vs stride KiB");
        snprintf(o->l2_conflict.name, sizeof o->l2_conflict.name, "L2: lines that miss vs stride KiB");
        progress(pf, user, "L1 sets: n lines 1 KiB..1 MiB apart, n up to %d, cached loads", o->l1_scan_max);
        if ((rc = conflict_scan(big, bigsz, 0, thr1, 1024, (size_t)1 << 20, o->l1_scan_max, od,
                                &o->l1_conflict)))
            goto out;
        mw_gpu_conflict_analyse(&o->l1_conflict, o->l1_line_bytes, o->l1_scan_max, o->l1_bytes,
                                &o->l1_assoc,
                                &o->l1_sets, o->l1_sets_note, sizeof o->l1_sets_note);
        progress(pf, user, "L2 sets: n lines 1..64 MiB apart, n up to %d, L1 bypassed", o->l2_scan_max);
        if ((rc = conflict_scan(big, bigsz, 1, thr2, (size_t)1 << 20, (size_t)64 << 20,
                                o->l2_scan_max, od, &o->l2_conflict)))
            goto out;
        mw_gpu_conflict_analyse(&o->l2_conflict, 128, o->l2_scan_max,
                                o->l2_bytes ? o->l2_bytes : d.l2_bytes, &o->l2_assoc, &o->l2_sets,
                                o->l2_sets_note, sizeof o->l2_sets_note);
    }
    note_err("conflict scans");
    {
        static const size_t spans[MW_GPU_TLB_SPANS] = {(size_t)2 << 20, (size_t)32 << 20,
                                                       (size_t)512 << 20};
        progress(pf, user, "TLB: pointers 2, 32 and 512 MiB apart over up to %zu GiB, L1 bypassed",
                 bigsz >> 30);
        for (int k = 0; k < MW_GPU_TLB_SPANS; k++) {
            size_t sp = spans[k];
            mw_gpu_curve *cv = &o->tlb_span[k];
            o->tlb_span_bytes[k] = sp;
            snprintf(cv->name, sizeof cv->name, "pointers %zu MiB apart", sp >> 20);
            for (size_t n = 4; n * sp <= bigsz && n <= 65536; n = n < 16 ? n + 4 : n * 5 / 4) {
                double mean = 0, share = 0;
                if ((rc = span_chase(big, n, sp, 1024, 1, 0, od, &mean, &share)))
                    goto out;
                curve_add(cv, (double)(n * sp) / (1u << 30), mean);
                if (k == 0)
                    curve_add(&o->tlb_curve, (double)n, mean);
            }
            double hgt = 0, at = mw_gpu_curve_step(cv, 0.10, &hgt);
            o->tlb_span_step[k] = (size_t)(at * (1u << 30));
            o->tlb_span_penalty[k] = hgt;
            if (o->tlb_span_step[k] && (!o->tlb1_reach || o->tlb_span_step[k] < o->tlb1_reach)) {
                o->tlb1_reach = o->tlb_span_step[k];
                o->tlb1_penalty_cyc = hgt;
            }
        }
    }
    note_err("TLB spans");
    {
        /* a 1 GiB ring (512 pointers 2 MiB apart) in the first GiB, read once
         * after x GiB from the third GiB on were touched */
        size_t room = bigsz - ((size_t)2 << 30), n = 512, sp = (size_t)2 << 20;
        snprintf(o->tlb_evict.name, sizeof o->tlb_evict.name, "1 GiB ring: first pass after x GiB");
        progress(pf, user, "TLB eviction: a 1 GiB ring read once after touching 0..%zu GiB elsewhere",
                 std::min(room >> 30, (size_t)96));
        for (size_t gx : {0, 1, 4, 8, 16, 32, 48, 64, 96}) {
            size_t x = gx << 30;
            if (x > room)
                break;
            k_span_ring<<<256, 256>>>(big, n, sp, 1024);
            k_ptr_rec<<<1, 1>>>(big, ol); /* warm: the ring's lines in the L2 */
            if (x)
                k_touch<<<1024, 256>>>(big + ((size_t)2 << 30), x, 65536, sink);
            k_ptr_rec<<<1, 1>>>(big, ol);
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(h.data(), ol, REC * 4, cudaMemcpyDeviceToHost));
            std::vector<uint32_t> first(h.begin(), h.begin() + n);
            curve_add(&o->tlb_evict, (double)(x >> 30), median_u32(first));
        }
        double lo = 0, hi = 0;
        mw_gpu_evict_bounds(&o->tlb_evict, 0.25, &lo, &hi);
        o->tlb_evict_lo = (size_t)lo << 30;
        o->tlb_evict_hi = (size_t)hi << 30;
        o->tlb_evict_base = o->tlb_evict.n ? o->tlb_evict.p[0].y : 0;
        o->tlb_evict_cyc = o->tlb_evict.n ? o->tlb_evict.p[o->tlb_evict.n - 1].y : 0;
        if (hi > 0)
            snprintf(o->tlb_note, sizeof o->tlb_note,
                     "a 1 GiB ring keeps its translations while %.0f GiB elsewhere are touched and "
                     "loses them after %.0f GiB (%.0f -> %.0f cycles): the last TLB level reaches "
                     "between the two",
                     lo, hi, o->tlb_evict_base, o->tlb_evict_cyc);
        else
            snprintf(o->tlb_note, sizeof o->tlb_note,
                     "a 1 GiB ring keeps its translations after %.0f GiB elsewhere were touched: "
                     "the last TLB level reaches beyond that",
                     o->tlb_evict.n ? o->tlb_evict.p[o->tlb_evict.n - 1].x : 0.0);
    }
    note_err("TLB eviction");
out:
    cudaFree(big);
    cudaFree(od);
    cudaFree(ol);
    cudaFree(sink);
    return rc;
}

extern "C" int mw_gpu_probe_geometry(int dev, const mw_gpu_latency *lat, mw_gpu_geometry *o,
                                     mw_gpu_progress_fn pf, void *user)
{
    int rc = 0;
    chase c;
    mw_gpu_device d;
    memset(o, 0, sizeof *o);
    if (set_dev(dev) || mw_gpu_device_get(dev, &d, nullptr, 0))
        return MW_ERR_GPU;
    o->l2_attr_bytes = d.l2_bytes;
    o->l1_line_bytes = 128;
    snprintf(o->l1_curve.name, sizeof o->l1_curve.name, "L1 miss share vs KiB");
    snprintf(o->l2_curve.name, sizeof o->l2_curve.name, "mean cycles vs MiB");
    snprintf(o->tlb_curve.name, sizeof o->tlb_curve.name, "cycles vs pointers 2 MiB apart");
    size_t l2max = 3 * d.l2_bytes;
    if ((rc = chase_alloc(&c, std::max(l2max, (size_t)64 << 20))))
        goto out;
    {
        /* L1 size: cached loads, stride 128 B, 8 KiB steps. */
        uint32_t thr1 = (uint32_t)((lat->l1_fg_cyc + lat->l2_fg_cyc) / 2);
        progress(pf, user, "L1 size: rings of 8..320 KiB, cached loads (threshold %u cycles)", thr1);
        size_t last_clean = 0;
        for (size_t kb = 8; kb <= 320; kb += 8) {
            double sh = 0;
            if ((rc = miss_share(&c, kb << 10, 128, 0, thr1, &sh, nullptr)))
                goto out;
            curve_add(&o->l1_curve, (double)kb, sh);
            if (sh < 0.02 && last_clean == kb - 8)
                last_clean = kb;
        }
        o->l1_bytes = last_clean << 10;
        /* Refine at 1 KiB around the edge. */
        for (size_t b = o->l1_bytes + 1024; b < o->l1_bytes + 8192 && o->l1_bytes; b += 1024) {
            double sh = 0;
            if ((rc = miss_share(&c, b, 128, 0, thr1, &sh, nullptr)))
                goto out;
            if (sh < 0.02)
                o->l1_bytes = b;
            else
                break;
        }
        /* Fill granularity: cold pass, 4-byte stride; distance between misses. */
        progress(pf, user, "L1 fill granularity: cold walk, 4-byte stride");
        if ((rc = chase_run(&c, 64 << 10, 4, 0, 0, 0, 0)))
            goto out;
        {
            std::vector<int> miss_at;
            for (int k = 1; k < REC; k++)
                if (c.h_lat[k] > thr1)
                    miss_at.push_back(k);
            std::vector<double> gaps;
            for (size_t k = 1; k < miss_at.size(); k++)
                gaps.push_back(miss_at[k] - miss_at[k - 1]);
            o->l1_fill_bytes = (size_t)(median(gaps) * 4);
        }
        /* One line past capacity: LRU with a sets leaves a+1 misses per pass in one set. */
        if (o->l1_bytes) {
            size_t S = o->l1_bytes + 128;
            long n = (long)(S / 128);
            if ((rc = chase_run(&c, S, 128, 0, 3 * n, n, thr1)))
                goto out;
            long m = (long)c.h_sum[1];
            /* LRU with a ways leaves a + 1 misses per pass, all in one set;
             * a power-of-two set count is what such a cache would have. */
            long a = m - 1, sets = a > 0 ? (long)(o->l1_bytes / 128) / a : 0;
            if (m > 1 && a <= 64 && sets > 0 && (sets & (sets - 1)) == 0 &&
                sets * a * 128 == (long)o->l1_bytes) {
                o->l1_assoc = (int)a;
                o->l1_sets = (int)sets;
                snprintf(o->l1_policy, sizeof o->l1_policy,
                         "LRU-consistent: %ld misses per pass one line past capacity", m);
            } else {
                snprintf(o->l1_policy, sizeof o->l1_policy,
                         "not plain LRU: %ld of %ld accesses miss one line past capacity", m, n);
            }
        }
    }
    note_err("L1 geometry");
    {
        /* L2 size: plain chase, L1 bypassed, one access per 128-byte line (a
         * wider stride measures tags, not bytes), mean latency against size.
         * One SM sees two steps: past its near partition lines come from the
         * far one, past the whole L2 from DRAM. Each size is where the latency
         * crosses halfway between the levels (near hit, far hit, DRAM). */
        progress(pf, user, "L2 size: rings of %zu..%zu MiB, 128-byte stride, L1 bypassed",
                 (d.l2_bytes / 4) >> 20, (7 * d.l2_bytes / 4) >> 20);
        size_t step = d.l2_bytes / 16;
        double mid_near = (lat->l2_cyc + lat->l2_far_cyc) / 2;
        double mid_far = (lat->l2_far_cyc + lat->dram_cyc) / 2;
        for (size_t b = step * 4; b <= 7 * d.l2_bytes / 4; b += step) {
            double cyc = 0;
            long n = (long)(b / 128);
            if ((rc = plain(&c, b, 128, 1, n, n, &cyc)))
                goto out;
            curve_add(&o->l2_curve, b / 1048576.0, cyc);
        }
        for (unsigned i = 1; i < o->l2_curve.n; i++) {
            const mw_gpu_point *a = &o->l2_curve.p[i - 1], *q = &o->l2_curve.p[i];
            if (!o->l2_near_bytes && a->y < mid_near && q->y >= mid_near)
                o->l2_near_bytes = (size_t)((a->x + (mid_near - a->y) / (q->y - a->y) *
                                                        (q->x - a->x)) * 1048576.0);
            if (!o->l2_bytes && a->y < mid_far && q->y >= mid_far)
                o->l2_bytes = (size_t)((a->x + (mid_far - a->y) / (q->y - a->y) *
                                                   (q->x - a->x)) * 1048576.0);
        }
    }
    note_err("L2 size sweep");
    chase_free(&c);
    {
        /* The L2 as the whole chip sees it: each block (two per SM) reads its
         * own slice eight times; bandwidth against footprint. */
        progress(pf, user, "L2 size, chip-wide: all SMs, own slices, bandwidth vs footprint");
        snprintf(o->l2_chip_curve.name, sizeof o->l2_chip_curve.name, "GB/s vs MiB, all SMs");
        uint4 *arr = nullptr;
        unsigned *sink = nullptr;
        cudaEvent_t e0 = nullptr, e1 = nullptr;
        size_t maxb = 3 * d.l2_bytes;
        int blocks = 2 * d.sms, passes;
        CK(cudaMalloc(&arr, maxb));
        CK(cudaMalloc(&sink, 4));
        CK(cudaMemset(arr, 1, maxb));
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        for (size_t b = d.l2_bytes / 8; b <= maxb; b += d.l2_bytes / 16) {
            size_t per = b / 16 / (size_t)blocks / 2048 * 2048;
            double foot = (double)per * 16 * blocks;
            if (!per || (o->l2_chip_curve.n &&
                         o->l2_chip_curve.p[o->l2_chip_curve.n - 1].x >= foot / 1048576.0))
                continue;
            float ms = 0;
            passes = (int)std::max(8.0, 4e9 / foot);
            k_l2_slices<<<blocks, 512>>>(arr, per, 1, sink);
            cudaEventRecord(e0);
            k_l2_slices<<<blocks, 512>>>(arr, per, passes, sink);
            cudaEventRecord(e1);
            if (cudaEventSynchronize(e1) != cudaSuccess)
                break;
            cudaEventElapsedTime(&ms, e0, e1);
            double bw = foot * passes / (ms * 1e-3);
            curve_add(&o->l2_chip_curve, foot / 1048576.0, bw / 1e9);
        }
        /* Halfway between the first (L2) and the last (DRAM) bandwidth. */
        if (o->l2_chip_curve.n > 2) {
            double hi = o->l2_chip_curve.p[0].y, lo = o->l2_chip_curve.p[o->l2_chip_curve.n - 1].y;
            double mid = (hi + lo) / 2;
            for (unsigned i = 1; i < o->l2_chip_curve.n; i++) {
                const mw_gpu_point *a = &o->l2_chip_curve.p[i - 1], *q = &o->l2_chip_curve.p[i];
                if (a->y > mid && q->y <= mid) {
                    double f = (a->y - mid) / std::max(a->y - q->y, 1e-9);
                    o->l2_chip_bytes = (size_t)((a->x + f * (q->x - a->x)) * 1048576.0);
                    break;
                }
            }
        }
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
        cudaFree(arr);
        cudaFree(sink);
    }
    note_err("chip-wide L2 sweep");
out:
    chase_free(&c);
    return rc;
}

/* Conflict degree of one warp access: the most distinct 4-byte words that
 * fall into one of the 32 banks (a repeated address is a broadcast). */
static int conflict_degree(int stride, int wordsize)
{
    std::vector<std::vector<long>> bank(32);
    for (int t = 0; t < 32; t++) {
        long byte = (long)t * stride * wordsize;
        for (int w = 0; w < wordsize / 4; w++) {
            long word = byte / 4 + w;
            auto &b = bank[word % 32];
            if (std::find(b.begin(), b.end(), word) == b.end())
                b.push_back(word);
        }
    }
    size_t m = 0;
    for (auto &b : bank)
        m = std::max(m, b.size());
    return (int)m;
}

static double spearman(const std::vector<double> &x, const std::vector<double> &y)
{
    auto rank = [](const std::vector<double> &v) {
        std::vector<size_t> id(v.size());
        for (size_t i = 0; i < v.size(); i++)
            id[i] = i;
        std::sort(id.begin(), id.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
        std::vector<double> r(v.size());
        for (size_t i = 0; i < id.size();) {
            size_t j = i;
            while (j + 1 < id.size() && v[id[j + 1]] == v[id[i]])
                j++;
            for (size_t k = i; k <= j; k++)
                r[id[k]] = (i + j) / 2.0;
            i = j + 1;
        }
        return r;
    };
    std::vector<double> rx = rank(x), ry = rank(y);
    double mx = 0, my = 0;
    for (size_t i = 0; i < x.size(); i++) {
        mx += rx[i];
        my += ry[i];
    }
    mx /= x.size();
    my /= y.size();
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < x.size(); i++) {
        sxy += (rx[i] - mx) * (ry[i] - my);
        sxx += (rx[i] - mx) * (rx[i] - mx);
        syy += (ry[i] - my) * (ry[i] - my);
    }
    return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : 0;
}

extern "C" int mw_gpu_probe_banks(int dev, mw_gpu_banks *o)
{
    int rc = 0;
    uint32_t *d = nullptr, h = 0;
    const int K = 1024;
    std::vector<double> dg4, l4, dg8, l8;
    memset(o, 0, sizeof *o);
    if (set_dev(dev))
        return MW_ERR_GPU;
    snprintf(o->lat4.name, sizeof o->lat4.name, "4-byte words: cycles vs stride");
    snprintf(o->lat8.name, sizeof o->lat8.name, "8-byte words: cycles vs stride");
    CK(cudaMalloc(&d, 4));
    for (int s = 0; s <= 64; s++) {
        k_banks<uint32_t><<<1, 32>>>(s, K, d);
        CK(cudaGetLastError());
        CK(cudaMemcpy(&h, d, 4, cudaMemcpyDeviceToHost));
        curve_add(&o->lat4, s, (double)h / K);
        o->degree4[s] = conflict_degree(s, 4);
        dg4.push_back(o->degree4[s]);
        l4.push_back((double)h / K);
        k_banks<unsigned long long><<<1, 32>>>(s, K, d);
        CK(cudaGetLastError());
        CK(cudaMemcpy(&h, d, 4, cudaMemcpyDeviceToHost));
        curve_add(&o->lat8, s, (double)h / K);
        o->degree8[s] = conflict_degree(s, 8);
        dg8.push_back(o->degree8[s]);
        l8.push_back((double)h / K);
    }
    o->corr4 = spearman(dg4, l4);
    o->corr8 = spearman(dg8, l8);
out:
    cudaFree(d);
    return rc;
}

extern "C" int mw_gpu_probe_outstanding(int dev, mw_gpu_outstanding *o, mw_gpu_progress_fn pf,
                                        void *user)
{
    int rc = 0;
    uint32_t *buf = nullptr, *lat = nullptr, *sink = nullptr;
    void *fl = nullptr;
    mw_gpu_device d;
    std::vector<uint32_t> h(1024);
    std::vector<int> threads;
    memset(o, 0, sizeof *o);
    if (set_dev(dev) || mw_gpu_device_get(dev, &d, nullptr, 0))
        return MW_ERR_GPU;
    for (int t = 2; t < 32; t *= 2)
        threads.push_back(t);
    for (int t = 32; t <= 1024; t += 32)
        threads.push_back(t);
    /* Every launch gets lines nobody touched since the flush; each point is
     * the median of REP cold launches. */
    const int REP = 5;
    o->repeats = REP;
    size_t region = 1024 * 4 * 128, nreg = threads.size() * 4 * REP + 1;
    CK(cudaMalloc(&buf, nreg * region));
    CK(cudaMalloc(&lat, 4096));
    CK(cudaMalloc(&sink, 4096));
    CK(cudaMalloc(&fl, 2 * d.l2_bytes));
    k_fill_u32<<<1024, 256>>>(buf, nreg * region / 4, 1);
    if ((rc = flush_l2(fl, 2 * d.l2_bytes)))
        goto out;
    progress(pf, user, "outstanding requests: 1 block, 2..1024 threads, 1..4 loads each");
    {
        size_t r = 0;
        for (int L = 1; L <= 4; L++) {
            snprintf(o->lat[L - 1].name, sizeof o->lat[L - 1].name, "%d load%s per thread", L,
                     L > 1 ? "s" : "");
            for (int t : threads) {
                std::vector<double> reps;
                for (int rep = 0; rep < REP; rep++) {
                    const uint32_t *p = buf + r++ * region / 4;
                    switch (L) {
                    case 1: k_outstanding<1><<<1, t>>>(p, lat, sink); break;
                    case 2: k_outstanding<2><<<1, t>>>(p, lat, sink); break;
                    case 3: k_outstanding<3><<<1, t>>>(p, lat, sink); break;
                    default: k_outstanding<4><<<1, t>>>(p, lat, sink); break;
                    }
                    CK(cudaMemcpy(h.data(), lat, 4 * t, cudaMemcpyDeviceToHost));
                    double m = 0;
                    for (int i = 0; i < t; i++)
                        m += h[i];
                    reps.push_back(m / t);
                }
                curve_add(&o->lat[L - 1], t, median(reps));
            }
        }
    }
    /* Lashgar et al.: the spike of the 3-point variance of latency along the
     * thread axis marks the limit (from one full warp on: below that the
     * warp's own issue order dominates). */
    for (int L = 1; L <= 4; L++) {
        const mw_gpu_curve *c = &o->lat[L - 1];
        for (unsigned i = 1; i + 1 < c->n; i++) {
            if (c->p[i - 1].x < 32)
                continue;
            double a = c->p[i - 1].y, b = c->p[i].y, e = c->p[i + 1].y, m = (a + b + e) / 3;
            double v = ((a - m) * (a - m) + (b - m) * (b - m) + (e - m) * (e - m)) / 3;
            if (v > o->spike_var) {
                o->spike_var = v;
                unsigned at = (e - b > b - a) ? i : i - 1;
                o->spike_requests = (int)c->p[at].x * L;
            }
        }
    }
    /* The knee of latency against requests in flight (all loads-per-thread
     * curves together): the split that best fits a flat segment followed by
     * a rising line. Past it requests queue: the SM's miss-handling capacity,
     * or its path to the L2, is full. */
    {
        std::vector<std::pair<double, double>> pts;
        for (int L = 1; L <= 4; L++)
            for (unsigned i = 0; i < o->lat[L - 1].n; i++)
                pts.push_back({o->lat[L - 1].p[i].x * L, o->lat[L - 1].p[i].y});
        std::sort(pts.begin(), pts.end());
        snprintf(o->combined.name, sizeof o->combined.name, "all loads: cycles vs requests");
        for (auto &q : pts)
            curve_add(&o->combined, q.first, q.second);
        double best = 1e300;
        for (size_t k = 3; k + 3 < pts.size(); k++) {
            double mean = 0;
            for (size_t i = 0; i <= k; i++)
                mean += pts[i].second;
            mean /= (double)(k + 1);
            double err = 0;
            for (size_t i = 0; i <= k; i++)
                err += (pts[i].second - mean) * (pts[i].second - mean);
            /* Rising line anchored at (x_k, mean): least-squares slope. */
            double sxy = 0, sxx = 0;
            for (size_t i = k + 1; i < pts.size(); i++) {
                double dx = pts[i].first - pts[k].first, dy = pts[i].second - mean;
                sxy += dx * dy;
                sxx += dx * dx;
            }
            double slope = sxx > 0 ? std::max(0.0, sxy / sxx) : 0;
            for (size_t i = k + 1; i < pts.size(); i++) {
                double r = pts[i].second - mean - slope * (pts[i].first - pts[k].first);
                err += r * r;
            }
            if (err < best) {
                best = err;
                o->limit_requests = (int)pts[k].first;
                o->base_cyc = mean;
                o->slope_cyc = slope;
            }
        }
        o->limit_loads = 4;
        o->limit_threads = o->limit_requests / 4;
    }
out:
    cudaFree(buf);
    cudaFree(lat);
    cudaFree(sink);
    cudaFree(fl);
    return rc;
}

extern "C" int mw_gpu_triad_alloc(int dev, size_t n, mw_gpu_triad_bufs *t)
{
    int rc = 0;
    mw_gpu_device d;
    memset(t, 0, sizeof *t);
    if (set_dev(dev) || mw_gpu_device_get(dev, &d, nullptr, 0))
        return MW_ERR_GPU;
    t->n = n & ~(size_t)1;
    t->flush_bytes = 2 * d.l2_bytes;
    CK(cudaMalloc(&t->a, t->n * 8));
    CK(cudaMalloc(&t->b, t->n * 8));
    CK(cudaMalloc(&t->c, t->n * 8));
    CK(cudaMalloc(&t->flush, t->flush_bytes));
    k_init_d<<<2048, 256>>>(t->a, t->n, 0.0);
    k_init_d<<<2048, 256>>>(t->b, t->n, 1.0);
    k_init_d<<<2048, 256>>>(t->c, t->n, 2.0);
    CK(cudaDeviceSynchronize());
    return 0;
out:
    mw_gpu_triad_free(t);
    return rc;
}

extern "C" int mw_gpu_triad_flush_l2(mw_gpu_triad_bufs *t)
{
    return flush_l2(t->flush, t->flush_bytes);
}

extern "C" int mw_gpu_triad_launch(mw_gpu_triad_bufs *t, double *seconds)
{
    int rc = 0;
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    size_t n2 = t->n / 2;
    float ms = 0;
    int reps = t->reps > 1 ? t->reps : 1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0));
    for (int k = 0; k < reps; k++) {
        if (t->variant == 1)
            k_triad4<<<(unsigned)((n2 + 1023) / 1024), 256>>>(
                (double2 *)t->a, (const double2 *)t->b, (const double2 *)t->c, 3.0, n2);
        else if (t->variant == 2)
            k_triad1<<<(unsigned)((t->n + 255) / 256), 256>>>(t->a, t->b, t->c, 3.0, t->n);
        else
            k_triad<<<(unsigned)((n2 + 1023) / 1024), 1024>>>(
                (double2 *)t->a, (const double2 *)t->b, (const double2 *)t->c, 3.0, n2);
    }
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaGetLastError());
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (seconds)
        *seconds = ms / 1e3 / reps;
out:
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    return rc;
}

extern "C" void mw_gpu_triad_free(mw_gpu_triad_bufs *t)
{
    cudaFree(t->a);
    cudaFree(t->b);
    cudaFree(t->c);
    cudaFree(t->flush);
    t->a = t->b = t->c = nullptr;
    t->flush = nullptr;
}

extern "C" int mw_gpu_probe_triad(int dev, int runs, mw_gpu_triad *o)
{
    int rc = 0;
    mw_gpu_device d;
    mw_gpu_triad_bufs t;
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    memset(o, 0, sizeof *o);
    memset(&t, 0, sizeof t);
    if (set_dev(dev) || mw_gpu_device_get(dev, &d, nullptr, 0))
        return MW_ERR_GPU;
    /* Each array at least 8x the L2 and at least 2^28 doubles (2 GiB) when the
     * card has room, so that dirty lines left in the L2 are a small share. */
    size_t n = std::max((size_t)1 << 26, 8 * d.l2_bytes / 8);
    if (d.global_bytes > 16ull << 30)
        n = std::max(n, (size_t)1 << 28);
    o->n = n;
    o->bytes = 3.0 * n * 8;
    o->peak_bw = d.peak_bw;
    o->runs = runs;
    /* Each timed run launches the kernel (or the copy) 4 times back to back:
     * the gap between the start event and the first kernel, a few
     * microseconds of the 1.5 ms a triad of 2^28 doubles takes on an H200, is
     * then paid once per 4 (bench/gpu_triad_compare measures it). */
    o->reps = 4;
    if ((rc = mw_gpu_triad_alloc(dev, n, &t)))
        return rc;
    t.reps = o->reps;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    o->triad_s = o->memcpy_s = 1e30;
    {
        static const char *const names[3] = {"vec2x1", "vec2x4", "scalar"};
        double vs[3] = {1e30, 1e30, 1e30};
        /* Interleave the triad shapes and the copy so that clock and thermal
         * drift hit them alike. */
        for (int r = 0; r < runs + 2; r++) {
            for (int v = 0; v < 3; v++) {
                double s = 0;
                t.variant = v;
                if ((rc = mw_gpu_triad_launch(&t, &s)))
                    goto out;
                if (r >= 2)
                    vs[v] = std::min(vs[v], s);
            }
            float ms = 0;
            CK(cudaEventRecord(e0));
            for (int k = 0; k < o->reps; k++)
                CK(cudaMemcpyAsync(t.a, t.b, n * 8, cudaMemcpyDeviceToDevice));
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (r >= 2)
                o->memcpy_s = std::min(o->memcpy_s, ms / 1e3 / o->reps);
        }
        int best = 0;
        for (int v = 0; v < 3; v++) {
            o->variant_bw[v] = o->bytes / vs[v];
            if (vs[v] < vs[best])
                best = v;
        }
        o->triad_s = vs[best];
        snprintf(o->variant, sizeof o->variant, "%s", names[best]);
    }
    o->triad_bw = o->bytes / o->triad_s;
    o->memcpy_bw = 2.0 * n * 8 / o->memcpy_s;
out:
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    mw_gpu_triad_free(&t);
    return rc;
}
