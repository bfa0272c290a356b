/*
 * gpu/probes_mem.cu: shared-memory bank conflicts (mw_gpu_probe_banks), outstanding
 * requests after Lashgar et al. (mw_gpu_probe_outstanding) and the triad with known
 * bytes against device-to-device cudaMemcpy (mw_gpu_probe_triad and the pieces
 * memwatch calibrate times itself). Split from gpu/probes.cu.
 * May call: the CUDA runtime only. Prints nothing.
 * Threading: one probe at a time per process.
 */
#include "probes_int.h"

using namespace mw_gpu_probe;

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
    fill_u32(buf, nreg * region / 4, 1);
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

