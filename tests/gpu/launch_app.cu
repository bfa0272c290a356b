/*
 * tests/gpu/launch_app.cu: streaming kernels of about 0.1, 1 and 10 ms per
 * launch and a compute-bound kernel, unaware of memwatch; the per-launch truth
 * for test_gpu_launches.sh.
 *
 * The streaming kernels read two arrays of doubles (a dot product, one double
 * written per block), so the DRAM bytes of a launch are known exactly:
 * passes x n x 16 (the arrays are far larger than the L2, and reads leave no
 * dirty lines behind to be written back during a later launch). Sizes are set
 * from one timed launch so that each kernel takes its target time on the GPU at
 * hand. Each kernel runs in three patterns: back to back, each launch followed
 * by a synchronisation (the GPU idles between launches), and alternating with
 * the compute kernel (a streaming launch's neighbours move no bytes).
 *
 * Prints "known kernel=<name> bytes=<per launch> launches=<n>" for each kernel
 * and "loop_s=<seconds>" for the whole measured part.
 * Usage: launch_app [device] [repeat-factor]
 */
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>

#define CK(x)                                                                     \
    do {                                                                          \
        cudaError_t e_ = (x);                                                     \
        if (e_ != cudaSuccess) {                                                  \
            fprintf(stderr, "launch_app: %s: %s\n", #x, cudaGetErrorString(e_));  \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

#define BLOCKS 2048
#define THREADS 512

/* The streaming loop: one load of each array per element, grid-stride. */
__device__ __forceinline__ void dot_body(const double *b, const double *c, size_t n, int passes,
                                         double *out)
{
    double s = 0;
    for (int p = 0; p < passes; p++)
        for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
             i += (size_t)gridDim.x * blockDim.x)
            s += b[i] * c[i];
    __shared__ double red[THREADS];
    red[threadIdx.x] = s;
    __syncthreads();
    for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w)
            red[threadIdx.x] += red[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = red[0];
}

__global__ void stream_dot_100us(const double *b, const double *c, size_t n, int passes, double *out)
{
    dot_body(b, c, n, passes, out);
}

__global__ void stream_dot_1ms(const double *b, const double *c, size_t n, int passes, double *out)
{
    dot_body(b, c, n, passes, out);
}

__global__ void stream_dot_10ms(const double *b, const double *c, size_t n, int passes, double *out)
{
    dot_body(b, c, n, passes, out);
}

/* Only to time one pass before the measured part. */
__global__ void size_probe(const double *b, const double *c, size_t n, int passes, double *out)
{
    dot_body(b, c, n, passes, out);
}

/* Compute-bound: a dependent FMA chain per thread on registers only. */
__global__ void compute_fma(double *out, int iters)
{
    double x = threadIdx.x * 1e-3, y = 1.0000001, z = 1e-9;
    for (int i = 0; i < iters; i++) {
        x = fma(x, y, z);
        y = fma(y, 0.9999999, 1e-12);
    }
    if (x == 12345.678)
        out[blockIdx.x] = x + y;
}

__global__ void init(double *p, size_t n, double v)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = v + (double)(i % 7) * 0.125;
}

typedef void (*kfn)(const double *, const double *, size_t, int, double *);

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static float time_launch(kfn f, const double *b, const double *c, size_t n, int passes, double *out)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    float best = 1e30f;
    for (int r = 0; r < 3; r++) {
        CK(cudaEventRecord(e0));
        f<<<BLOCKS, THREADS>>>(b, c, n, passes, out);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (ms < best)
            best = ms;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return best;
}

int main(int argc, char **argv)
{
    int dev = argc > 1 ? atoi(argv[1]) : 0;
    int rf = argc > 2 ? atoi(argv[2]) : 1;
    if (rf < 1)
        rf = 1;
    CK(cudaSetDevice(dev));
    const size_t nmax = (size_t)128 << 20; /* 1 GiB per array */
    double *b, *c, *out;
    CK(cudaMalloc(&b, nmax * 8));
    CK(cudaMalloc(&c, nmax * 8));
    CK(cudaMalloc(&out, BLOCKS * 8));
    init<<<1024, 256>>>(b, nmax, 1);
    init<<<1024, 256>>>(c, nmax, 2);
    CK(cudaDeviceSynchronize());

    /* Bandwidth of one full pass, then sizes for each target. */
    float ms = time_launch(size_probe, b, c, nmax, 1, out);
    double bw = 16.0 * nmax / (ms * 1e-3);
    struct {
        const char *name;
        kfn f;
        double target_s;
        int launches;
        size_t n;
        int passes;
    } ks[3] = {{"stream_dot_100us", stream_dot_100us, 1e-4, 200 * rf, 0, 0},
               {"stream_dot_1ms", stream_dot_1ms, 1e-3, 60 * rf, 0, 0},
               {"stream_dot_10ms", stream_dot_10ms, 1e-2, 10 * rf, 0, 0}};
    for (int k = 0; k < 3; k++) {
        double bytes = bw * ks[k].target_s;
        int passes = (int)(bytes / (16.0 * nmax)) + 1;
        size_t n = (size_t)(bytes / (16.0 * passes));
        n = n / (BLOCKS * THREADS) * (BLOCKS * THREADS);
        ks[k].n = n;
        ks[k].passes = passes;
    }
    /* The compute kernel: about 1 ms. */
    int iters = 1 << 14;
    {
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        CK(cudaEventRecord(e0));
        compute_fma<<<BLOCKS, THREADS>>>(out, iters);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float cm = 0;
        CK(cudaEventElapsedTime(&cm, e0, e1));
        iters = (int)(iters * (1.0 / cm));
        if (iters < 1024)
            iters = 1024;
    }
    CK(cudaDeviceSynchronize());

    int compute_launches = 0;
    double t0 = now();
    for (int k = 0; k < 3; k++) {
        int per = ks[k].launches / 3;
        /* back to back */
        for (int i = 0; i < per; i++)
            ks[k].f<<<BLOCKS, THREADS>>>(b, c, ks[k].n, ks[k].passes, out);
        CK(cudaDeviceSynchronize());
        /* isolated: the GPU idles between launches */
        for (int i = 0; i < per; i++) {
            ks[k].f<<<BLOCKS, THREADS>>>(b, c, ks[k].n, ks[k].passes, out);
            CK(cudaDeviceSynchronize());
        }
        /* alternating with the compute kernel */
        for (int i = 0; i < per; i++) {
            ks[k].f<<<BLOCKS, THREADS>>>(b, c, ks[k].n, ks[k].passes, out);
            compute_fma<<<BLOCKS, THREADS>>>(out, iters);
            compute_launches++;
        }
        CK(cudaDeviceSynchronize());
        ks[k].launches = 3 * per;
    }
    double t1 = now();
    CK(cudaGetLastError());
    /* Check one result so the compiler keeps the loads. */
    double h[BLOCKS], sum = 0;
    CK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < BLOCKS; i++)
        sum += h[i];
    if (!(sum > 0)) {
        fprintf(stderr, "launch_app: wrong result %g\n", sum);
        return 1;
    }
    printf("device=%d pass_GBps=%.1f compute_iters=%d\n", dev, bw / 1e9, iters);
    for (int k = 0; k < 3; k++)
        printf("known kernel=%s bytes=%.0f launches=%d n=%zu passes=%d\n", ks[k].name,
               16.0 * ks[k].n * ks[k].passes, ks[k].launches, ks[k].n, ks[k].passes);
    printf("known kernel=compute_fma bytes=0 launches=%d\n", compute_launches + 1);
    printf("loop_s=%.6f\n", t1 - t0);
    cudaFree(b);
    cudaFree(c);
    cudaFree(out);
    return 0;
}
