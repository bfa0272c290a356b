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
#include "probes_int.h"

using namespace mw_gpu_probe;

/* ---------------------------------------------------------------- device */

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

__global__ void k_fill_u32(uint32_t *p, size_t n, uint32_t v)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = v + (uint32_t)i;
}

namespace mw_gpu_probe {

/* ------------------------------------------------------------------ host */

/* Report (and clear) an error a part of a probe left behind. */
void note_err(const char *where)
{
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        fprintf(stderr, "memwatch-gpu: %s: %s\n", where, cudaGetErrorString(e));
}

/* Select the device and clear any error an earlier call left behind, so
 * that each probe reports only its own. */
int set_dev(int dev)
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

void progress(mw_gpu_progress_fn pf, void *user, const char *fmt, ...)
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

__global__ void k_ring(uint32_t *A, size_t n, size_t stride_e)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        A[i] = (uint32_t)((i + stride_e) % n);
}

int chase_alloc(chase *c, size_t bytes)
{
    c->cap = bytes / 4;
    if (cudaMalloc(&c->A, bytes) != cudaSuccess || cudaMalloc(&c->idx, REC * 4) != cudaSuccess ||
        cudaMalloc(&c->lat, REC * 4) != cudaSuccess || cudaMalloc(&c->sum, 3 * 8) != cudaSuccess)
        return MW_ERR_GPU;
    c->h_idx.resize(REC);
    c->h_lat.resize(REC);
    return 0;
}

void chase_free(chase *c)
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
int chase_run(chase *c, size_t n_bytes, size_t stride, int cg, long warm, long cnt,
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

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double median_u32(const std::vector<uint32_t> &v, size_t from)
{
    std::vector<double> d(v.begin() + (long)from, v.end());
    return median(d);
}

/* Split latencies into two modes (1-D two-means); returns the split value. */
double two_means(const std::vector<double> &v, double *lo, double *hi, double *frac_hi)
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
int flush_l2(void *buf, size_t bytes)
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
int plain(chase *c, size_t n_bytes, size_t stride, int cg, long warm, long iters,
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

void curve_add(mw_gpu_curve *c, double x, double y)
{
    if (c->n < MW_GPU_MAX_POINTS) {
        c->p[c->n].x = x;
        c->p[c->n].y = y;
        c->n++;
    }
}

void fill_u32(uint32_t *p, size_t n, uint32_t v)
{
    k_fill_u32<<<1024, 256>>>(p, n, v);
}

} // namespace mw_gpu_probe
