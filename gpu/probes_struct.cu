/*
 * gpu/probes_struct.cu: the GPU's cache and TLB structure from the fine-grained
 * P-chase (Mei & Chu): L1/L2 conflict scans for sets and ways (then eviction sets,
 * gpu/probes_evset.cu), TLB span curves and
 * the eviction test (mw_gpu_probe_structure); L1 geometry, L2 size and near/far
 * partitions (mw_gpu_probe_geometry). Split from gpu/probes.cu.
 * May call: the CUDA runtime only. Prints nothing.
 * Threading: one probe at a time per process.
 */
#include "probes_int.h"

using namespace mw_gpu_probe;

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
        /* where no stride conflicts (a hashed index): minimal eviction sets */
        int w = 0, s = 0;
        progress(pf, user, "L1 ways: minimal eviction sets of %d lines, group testing",
                 MW_GPU_EVSET_TARGETS);
        if ((rc = evsets(big, bigsz, 1, o->l1_bytes, thr1, o->l1_evset, &o->l1_ev_tests,
                         &o->l1_ev_ms, &o->l1_mates, &w, &s, o->l1_ev_note,
                         sizeof o->l1_ev_note)))
            goto out;
        if (w) {
            o->l1_assoc = w;
            o->l1_sets = s;
        }
        progress(pf, user, "L2 ways: minimal eviction sets of %d lines, group testing",
                 MW_GPU_EVSET_TARGETS);
        w = s = 0;
        if ((rc = evsets(big, bigsz, 2, o->l2_bytes ? o->l2_bytes : d.l2_bytes, thr2,
                         o->l2_evset, &o->l2_ev_tests, &o->l2_ev_ms, &o->l2_mates, &w, &s,
                         o->l2_ev_note, sizeof o->l2_ev_note)))
            goto out;
        if (w) {
            o->l2_assoc = w;
            o->l2_sets = s;
        }
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

/* The L2 as the whole chip sees it: each block (two per SM) reads its own
 * slice eight times; bandwidth against footprint into o->l2_chip_curve, and
 * o->l2_chip_bytes halfway between the first (L2) and the last (DRAM)
 * bandwidth. 0, or MW_ERR_GPU where a CUDA call failed. */
static int geom_l2_chip(const mw_gpu_device *d, mw_gpu_geometry *o)
{
    int rc = 0;
    snprintf(o->l2_chip_curve.name, sizeof o->l2_chip_curve.name, "GB/s vs MiB, all SMs");
    uint4 *arr = nullptr;
    unsigned *sink = nullptr;
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    size_t maxb = 3 * d->l2_bytes;
    int blocks = 2 * d->sms, passes;
    CK(cudaMalloc(&arr, maxb));
    CK(cudaMalloc(&sink, 4));
    CK(cudaMemset(arr, 1, maxb));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (size_t b = d->l2_bytes / 8; b <= maxb; b += d->l2_bytes / 16) {
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
out:
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    cudaFree(arr);
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
    progress(pf, user, "L2 size, chip-wide: all SMs, own slices, bandwidth vs footprint");
    if ((rc = geom_l2_chip(&d, o)))
        goto out;
    note_err("chip-wide L2 sweep");
out:
    chase_free(&c);
    return rc;
}

