/*
 * gpu/probes_evset.cu: L1 and L2 ways and sets where the set index is hashed
 * (no power-of-two stride conflicts, gpu/probes_struct.cu's scans): minimal
 * eviction sets found by group testing (gpu/gpu_struct.c reduces, the kernels
 * here test), then the target's miss share against the number of its
 * set-mates traversed, the replacement policy's evidence (docs/gpu.md).
 * May call: the CUDA runtime only. Prints nothing.
 * Threading: one probe at a time per process.
 */
#include <numeric>
#include <stdlib.h>
#include <time.h>

#include "probes_int.h"

using namespace mw_gpu_probe;

/* A load of p that waits for dep (the value of an earlier load): the same
 * line touched again once the first load has completed. */
template <int CG>
__device__ __forceinline__ uint32_t ld_after(const uint32_t *p, uint32_t dep)
{
    uint32_t z;
    asm volatile("and.b32 %0, %1, 0;" : "=r"(z) : "r"(dep));
    return ld<CG>(p + z);
}

/* One block, so one SM (the L1 is the SM's own; for the L2 the same SM
 * loads the target and walks, so the path to the target's partition stays
 * the same): reps x (load the target, walk the set twice, `lanes` threads of
 * each warp (1: every load a single line, as a chase's), each line touched
 * twice, the second touch after the first completed, so that a policy that
 * protects lines that were hit protects the set-mates as well; reload the
 * target timed); o[0] = the reloads slower than thr. CG 0: L1 (cached
 * loads, the set's indexes read with the L1 bypassed); 1: L2 (L1 bypassed,
 * the indexes read as streaming, evict-first). */
template <int CG>
__global__ void k_ev(const char *pool, const uint32_t *set, uint32_t n, const uint32_t *target,
                     int reps, uint32_t thr, uint32_t lanes, const char *flush, uint32_t fn,
                     unsigned *o)
{
    __shared__ uint32_t s_v;
    uint32_t acc = 0;
    unsigned miss = 0;
    uint32_t lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    for (int r = 0; r < reps; r++) {
        /* the target out first, so that it is loaded once and never hit, as
         * in the first repetition (the L1 keeps a line that was hit) */
        for (uint32_t i = w * lanes + lane; lane < lanes && i < fn; i += nw * lanes)
            acc += ld<CG>((const uint32_t *)(flush + (size_t)i * 128));
        __syncthreads();
        if (threadIdx.x == 0)
            acc += ld<CG>(target);
        __syncthreads();
        for (int p = 0; p < 2 && lane < lanes; p++)
            for (uint32_t i = w * lanes + lane; i < n; i += nw * lanes) {
                uint32_t li;
                if (CG)
                    asm volatile("ld.global.cs.u32 %0, [%1];" : "=r"(li) : "l"(set + i) : "memory");
                else
                    li = ld<1>(set + i);
                const uint32_t *a = (const uint32_t *)(pool + (size_t)li * 128);
                uint32_t v = ld<CG>(a);
                acc += ld_after<CG>(a, v);
            }
        __syncthreads();
        if (threadIdx.x == 0) {
            uint32_t t0 = clk();
            uint32_t v = ld<CG>(target);
            s_v = v;
            miss += clk() - t0 > thr;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        o[0] = miss;
        o[1] = acc + s_v;
    }
}

namespace {

struct evctx {
    int level, reps;
    uint32_t lanes, fn;
    const char *flush; /* fn lines walked before each repetition (L1) */
    const char *pool;
    const uint32_t *target;
    uint32_t thr, *d_set;
    size_t cap;
    unsigned *d_o;
};

/* mw_gpu_evtest_fn: how many of reps reloads of the target missed */
int ev_test(void *u, const uint32_t *set, size_t n)
{
    evctx *c = (evctx *)u;
    unsigned h[2] = {0, 0};
    if (n > c->cap || cudaMemcpy(c->d_set, set, n * 4, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemset(c->d_o, 0, 16) != cudaSuccess)
        return -1;
    if (c->level == 1)
        k_ev<0><<<1, 1024>>>(c->pool, c->d_set, (uint32_t)n, c->target, c->reps, c->thr,
                             c->lanes, c->flush, c->fn, c->d_o);
    else
        k_ev<1><<<1, 1024>>>(c->pool, c->d_set, (uint32_t)n, c->target, c->reps, c->thr,
                             c->lanes, c->flush, c->fn, c->d_o);
    if (cudaMemcpy(h, c->d_o, 8, cudaMemcpyDeviceToHost) != cudaSuccess)
        return -1;
    return (int)h[0];
}

/* The pool's line indexes 0..n-1, shuffled with seed (0: in order). */
void pool_fill(std::vector<uint32_t> &v, uint32_t seed)
{
    std::iota(v.begin(), v.end(), 0u);
    for (size_t i = v.size(); seed && i > 1; i--) {
        seed = seed * 1664525u + 1013904223u;
        std::swap(v[i - 1], v[(seed >> 8) % i]);
    }
}

/* target t: past the pool, in different pages and lines */
const uint32_t *target_at(char *big, size_t pn, int t)
{
    return (const uint32_t *)(big + pn * 128 + (size_t)t * (65536 + 4096 + 128));
}

double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

} // namespace

namespace mw_gpu_probe {

int evsets(char *big, size_t bigsz, int level, size_t capacity, uint32_t thr,
           int *sizes, int *tests, double *ms, mw_gpu_curve *mates, int *ways, int *sets,
           char *note, size_t noten)
{
    int rc = 0;
    double t0 = now_ms();
    size_t pn = 2 * capacity / 128;
    *tests = 0;
    for (int t = 0; t < MW_GPU_EVSET_TARGETS; t++)
        sizes[t] = 0;
    if (!capacity || 2 * pn * 128 + ((size_t)2 << 20) > bigsz) {
        snprintf(note, noten, "not measured: %s", capacity ? "too little memory" : "no size");
        return 0;
    }
    evctx c = {};
    c.level = level;
    /* the L1 kept its target while whole warps walked twice its size (each
     * load 32 lines): single-line loads, as the chase that sized it */
    c.lanes = level == 1 ? 1 : 32;
    if (const char *e = getenv("MEMWATCH_GPU_EV_LANES")) /* a diagnostic: docs/gpu.md */
        c.lanes = (uint32_t)std::min(32, std::max(1, atoi(e)));
    if (level == 1) {
        /* past the pool and the targets: twice the capacity again */
        c.flush = big + pn * 128 + ((size_t)1 << 20);
        c.fn = (uint32_t)pn;
    }
    c.reps = 5;
    c.pool = big;
    c.thr = thr;
    c.cap = pn + 64;
    std::vector<uint32_t> pool(pn), scratch(pn), keep, extra(8);
    int kt = 0;
    if (cudaMalloc(&c.d_set, c.cap * 4) != cudaSuccess || cudaMalloc(&c.d_o, 16) != cudaSuccess) {
        snprintf(note, noten, "not measured: no device memory for the test's set");
        rc = MW_ERR_GPU;
        goto out;
    }
    cudaFuncSetAttribute(k_ev<0>, cudaFuncAttributePreferredSharedMemoryCarveout, 0);
    for (int t = 0; t < MW_GPU_EVSET_TARGETS; t++) {
        /* targets past the pool, in different pages and lines */
        c.target = target_at(big, pn, t);
        for (int attempt = 0; attempt < 2 && !sizes[t]; attempt++) {
            pool_fill(pool, 7919u * (uint32_t)(t + 1) + 104729u * (uint32_t)attempt);
            size_t n = pn;
            int r = mw_gpu_evset_reduce(pool.data(), &n, scratch.data(), c.reps, ev_test, &c,
                                        tests);
            if (r < 0)
                goto failed;
            if (r == 0)
                sizes[t] = (int)n;
            if (r == 1)
                break; /* the whole pool does not evict: no retry helps */
            if (r == 0 && keep.empty()) {
                keep.assign(pool.begin(), pool.begin() + (long)n);
                kt = t;
            }
        }
    }
    if (!keep.empty()) {
        /* the set-mates of the first target with a set: it, then more */
        c.target = target_at(big, pn, kt);
        pool_fill(pool, 31337u);
        int k = mw_gpu_evset_mates(keep.data(), keep.size(), pool.data(), pn, extra.data(), 8,
                                   scratch.data(), c.reps, ev_test, &c, tests);
        if (k < 0)
            goto failed;
        std::vector<uint32_t> all(keep);
        all.insert(all.end(), extra.begin(), extra.begin() + k);
        c.reps = 32;
        snprintf(mates->name, sizeof mates->name, "L%d: miss share vs set-mates", level);
        for (size_t i = 0; i <= all.size() && mates->n < MW_GPU_MAX_POINTS; i++) {
            int m = ev_test(&c, all.data(), i);
            (*tests)++;
            if (m < 0)
                goto failed;
            curve_add(mates, (double)i, m / 32.0);
        }
    }
    if (mw_gpu_evset_geometry(sizes, MW_GPU_EVSET_TARGETS, capacity, 128, mates, ways, sets,
                              note, noten)) {
        /* what the whole pool does to the first target, as evidence */
        c.target = target_at(big, pn, 0);
        c.reps = 32;
        pool_fill(pool, 0);
        int m = ev_test(&c, pool.data(), pn);
        (*tests)++;
        size_t l = strlen(note);
        if (m >= 0)
            snprintf(note + l, noten - l, "; the whole pool (%zu lines, twice the size) evicts the "
                     "first target in %d of 32 reloads", pn, m);
    }
    goto out;
failed:
    note_err("eviction test");
    rc = MW_ERR_GPU;
out:
    *ms = now_ms() - t0;
    cudaFree(c.d_set);
    cudaFree(c.d_o);
    return rc;
}

} // namespace mw_gpu_probe
