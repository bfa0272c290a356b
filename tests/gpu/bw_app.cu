/*
 * tests/gpu/bw_app.cu: a bandwidth-bound CUDA program, unaware of memwatch.
 * Streams three arrays of 256 MiB (a = b + s*c) ITER times; each launch moves
 * 768 MiB, well over 100 us on any current GPU. Prints "loop_s=<seconds>" for
 * the kernel loop alone (bench/gpu_overhead.sh compares it with and without
 * the injected library). Usage: bw_app [iterations]
 */
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>

#define CK(x)                                                                     \
    do {                                                                          \
        cudaError_t e_ = (x);                                                     \
        if (e_ != cudaSuccess) {                                                  \
            fprintf(stderr, "bw_app: %s: %s\n", #x, cudaGetErrorString(e_));      \
            return 1;                                                             \
        }                                                                         \
    } while (0)

__global__ void stream_triad(double *a, const double *b, const double *c, double s, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        a[i] = b[i] + s * c[i];
}

__global__ void init(double *p, size_t n, double v)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = v + (double)(i % 97);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int iter = argc > 1 ? atoi(argv[1]) : 200;
    size_t n = (size_t)32 << 20;
    double *a, *b, *c;
    CK(cudaMalloc(&a, n * 8));
    CK(cudaMalloc(&b, n * 8));
    CK(cudaMalloc(&c, n * 8));
    init<<<1024, 256>>>(b, n, 1);
    init<<<1024, 256>>>(c, n, 2);
    stream_triad<<<4096, 256>>>(a, b, c, 3.0, n);
    CK(cudaDeviceSynchronize());
    double t0 = now();
    for (int i = 0; i < iter; i++)
        stream_triad<<<4096, 256>>>(a, b, c, 3.0, n);
    CK(cudaDeviceSynchronize());
    double t1 = now();
    CK(cudaGetLastError());
    double h = 0;
    CK(cudaMemcpy(&h, a + 5, 8, cudaMemcpyDeviceToHost));
    if (h != 1.0 + 5 + 3.0 * (2.0 + 5)) {
        fprintf(stderr, "bw_app: wrong result %g\n", h);
        return 1;
    }
    printf("loop_s=%.6f per_kernel_us=%.1f GBps=%.1f\n", t1 - t0, (t1 - t0) / iter * 1e6,
           3.0 * n * 8 * iter / (t1 - t0) / 1e9);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return 0;
}
