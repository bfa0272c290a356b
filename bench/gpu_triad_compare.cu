/*
 * bench/gpu_triad_compare.cu: memwatch's GPU triad (mw_gpu_probe_triad, the
 * figure `memwatch-gpu calibrate` reports) against a BabelStream-style CUDA
 * stream triad written here, side by side: the same array size, the two
 * interleaved round by round, each the best of its runs; the comparator is the
 * best of several kernel shapes (BabelStream's one double per thread in
 * 1024-thread blocks, a grid-stride loop, 16-byte vectors with plain or
 * streaming loads in 256- or 1024-thread blocks, two vectors per thread), each
 * timed per launch as stream benchmarks do, so it stands for the fastest stream
 * triad we can build. memwatch times 4 launches back to back (the gap between
 * the start event and the kernel paid once per 4); the comparator's 1024-thread
 * vector shape timed that way too is printed beside it (the same kernel and
 * timing: a tie is expected). Bytes: 3 x n x 8 per triad for both (STREAM's
 * count, no write-allocate read on the GPU).
 * Both allocate their arrays afresh each round.
 * Prints each round and the ratio memwatch / comparator (best over rounds,
 * and the median of the rounds' ratios); goal >= 1.00.
 * Build: nvcc -O3 -arch=sm_90 -Iinclude bench/gpu_triad_compare.cu BUILD/gpu/libmw_gpu_probes.a
 * Usage: gpu_triad_compare [rounds] [runs per shape]   (bench/gpu_triad_compare.sh builds and runs it)
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#include "memwatch/gpu.h"

#define CKX(call)                                                                   \
    do {                                                                            \
        cudaError_t e_ = (call);                                                    \
        if (e_ != cudaSuccess) {                                                    \
            fprintf(stderr, "gpu_triad_compare: %s: %s\n", #call, cudaGetErrorString(e_)); \
            exit(1);                                                                \
        }                                                                           \
    } while (0)

static const double SCALAR = 0.4;

__global__ void c_init(double *p, size_t n, double v)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = v;
}

/* BabelStream's shape: one element per thread, 1024-thread blocks. */
__global__ void c_babel(double *__restrict__ a, const double *__restrict__ b, const double *__restrict__ c, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = b[i] + SCALAR * c[i];
}

/* Grid-stride loop over the whole array. */
__global__ void c_stride(double *__restrict__ a, const double *__restrict__ b, const double *__restrict__ c, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        a[i] = b[i] + SCALAR * c[i];
}

/* 16-byte vectors, one per thread; STREAMING selects ld/st.cs. */
template <int STREAMING>
__global__ void c_vec2(double2 *__restrict__ a, const double2 *__restrict__ b, const double2 *__restrict__ c, size_t n2)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n2) {
        double2 x = STREAMING ? __ldcs(b + i) : b[i], y = STREAMING ? __ldcs(c + i) : c[i], r;
        r.x = x.x + SCALAR * y.x;
        r.y = x.y + SCALAR * y.y;
        if (STREAMING)
            __stcs(a + i, r);
        else
            a[i] = r;
    }
}

/* Two 16-byte vectors per thread, a block's width apart. */
__global__ void c_vec2x2(double2 *__restrict__ a, const double2 *__restrict__ b, const double2 *__restrict__ c, size_t n2)
{
    size_t i = blockIdx.x * (size_t)blockDim.x * 2 + threadIdx.x, j = i + blockDim.x;
    double2 x0 = b[i], y0 = c[i], x1, y1;
    if (j < n2) {
        x1 = b[j];
        y1 = c[j];
    }
    double2 r;
    r.x = x0.x + SCALAR * y0.x;
    r.y = x0.y + SCALAR * y0.y;
    a[i] = r;
    if (j < n2) {
        r.x = x1.x + SCALAR * y1.x;
        r.y = x1.y + SCALAR * y1.y;
        a[j] = r;
    }
}

/* The shapes timed per launch, then the 1024-thread vector shape timed over
 * BATCH launches back to back (as memwatch times its triad). */
enum { SHAPES = 8, PER_LAUNCH = 7, BATCH = 4 };
static const char *const shape_name[SHAPES] = {"babel1024", "babel256", "stride",    "vec2",
                                               "vec2cs",    "vec2x2",   "vec2/1024", "vec2/1024x4"};

static void launch(int s, double *a, double *b, double *c, size_t n, int sms)
{
    size_t n2 = n / 2;
    switch (s) {
    case 6:
    case 7: c_vec2<0><<<(unsigned)((n2 + 1023) / 1024), 1024>>>((double2 *)a, (double2 *)b, (double2 *)c, n2); break;
    case 0: c_babel<<<(unsigned)((n + 1023) / 1024), 1024>>>(a, b, c, n); break;
    case 1: c_babel<<<(unsigned)((n + 255) / 256), 256>>>(a, b, c, n); break;
    case 2: c_stride<<<(unsigned)(sms * 4), 512>>>(a, b, c, n); break;
    case 3: c_vec2<0><<<(unsigned)((n2 + 255) / 256), 256>>>((double2 *)a, (double2 *)b, (double2 *)c, n2); break;
    case 4: c_vec2<1><<<(unsigned)((n2 + 255) / 256), 256>>>((double2 *)a, (double2 *)b, (double2 *)c, n2); break;
    default: c_vec2x2<<<(unsigned)((n2 + 511) / 512), 256>>>((double2 *)a, (double2 *)b, (double2 *)c, n2); break;
    }
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 5, runs = argc > 2 ? atoi(argv[2]) : 20;
    if (rounds < 1 || runs < 1) {
        fprintf(stderr, "usage: gpu_triad_compare [rounds >= 1] [runs >= 1]\n");
        return 2;
    }
    mw_gpu_triad mw;
    if (mw_gpu_probe_triad(0, runs, &mw)) {
        fprintf(stderr, "gpu_triad_compare: memwatch's triad failed\n");
        return 1;
    }
    size_t n = mw.n;
    int sms = 0;
    CKX(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    double *a, *b, *c;
    cudaEvent_t e0, e1;
    CKX(cudaEventCreate(&e0));
    CKX(cudaEventCreate(&e1));
    double bytes = 3.0 * n * 8, best_mw = 0, best_cmp = 0, best_same = 0, shape_best[SHAPES] = {0};
    std::vector<double> ratios, ratios_same;
    printf("array %zu doubles (%.2f GiB each), %d runs per shape, %d rounds, memwatch first in odd rounds\n", n,
           n * 8.0 / (1 << 30), runs, rounds);
    for (int r = 0; r < rounds; r++) {
        double mw_bw = 0, cmp_bw = 0, sb[SHAPES] = {0};
        for (int half = 0; half < 2; half++) {
            if ((half == 0) == (r % 2 == 0)) {
                if (mw_gpu_probe_triad(0, runs, &mw)) {
                    fprintf(stderr, "gpu_triad_compare: memwatch's triad failed\n");
                    return 1;
                }
                mw_bw = mw.triad_bw;
            } else {
                /* fresh arrays each round, as memwatch's probe allocates its own */
                CKX(cudaMalloc(&a, n * 8));
                CKX(cudaMalloc(&b, n * 8));
                CKX(cudaMalloc(&c, n * 8));
                c_init<<<2048, 256>>>(a, n, 0.1);
                c_init<<<2048, 256>>>(b, n, 0.2);
                c_init<<<2048, 256>>>(c, n, 0.0);
                CKX(cudaDeviceSynchronize());
                for (int k = 0; k < runs + 2; k++)
                    for (int s = 0; s < SHAPES; s++) {
                        float ms = 0;
                        int reps = s < PER_LAUNCH ? 1 : BATCH;
                        CKX(cudaEventRecord(e0));
                        for (int q = 0; q < reps; q++)
                            launch(s, a, b, c, n, sms);
                        CKX(cudaEventRecord(e1));
                        CKX(cudaEventSynchronize(e1));
                        CKX(cudaGetLastError());
                        CKX(cudaEventElapsedTime(&ms, e0, e1));
                        if (k >= 2)
                            sb[s] = std::max(sb[s], reps * bytes / (ms * 1e-3));
                    }
                CKX(cudaFree(a));
                CKX(cudaFree(b));
                CKX(cudaFree(c));
                for (int s = 0; s < SHAPES; s++) {
                    if (s < PER_LAUNCH)
                        cmp_bw = std::max(cmp_bw, sb[s]);
                    shape_best[s] = std::max(shape_best[s], sb[s]);
                }
            }
        }
        ratios.push_back(mw_bw / cmp_bw);
        ratios_same.push_back(mw_bw / sb[PER_LAUNCH]);
        best_mw = std::max(best_mw, mw_bw);
        best_cmp = std::max(best_cmp, cmp_bw);
        best_same = std::max(best_same, sb[PER_LAUNCH]);
        printf("round %d: memwatch %.1f GB/s (%s)  comparator %.1f GB/s [", r + 1, mw_bw / 1e9, mw.variant,
               cmp_bw / 1e9);
        for (int s = 0; s < SHAPES; s++)
            printf("%s%s %.1f", s ? ", " : "", shape_name[s], sb[s] / 1e9);
        printf("]  ratio %.4f (same timing %.4f)\n", mw_bw / cmp_bw, mw_bw / sb[PER_LAUNCH]);
    }
    std::sort(ratios.begin(), ratios.end());
    std::sort(ratios_same.begin(), ratios_same.end());
    printf("comparator shapes, best over rounds:");
    for (int s = 0; s < SHAPES; s++)
        printf(" %s %.1f", shape_name[s], shape_best[s] / 1e9);
    printf(" GB/s\n");
    printf("memwatch triad %.1f GB/s, best comparator %.1f GB/s: ratio (best of rounds) %.4f, median of "
           "per-round ratios %.4f (goal >= 1.00)\n",
           best_mw / 1e9, best_cmp / 1e9, best_mw / best_cmp, ratios[ratios.size() / 2]);
    printf("against the comparator's vec2/1024 timed over %d launches like memwatch's (%.1f GB/s): ratio (best "
           "of rounds) %.4f, median of per-round ratios %.4f\n",
           BATCH, best_same / 1e9, best_mw / best_same, ratios_same[ratios_same.size() / 2]);
    return 0;
}
