/*
 * tests/gpu/bw_app.cu: a bandwidth-bound CUDA program, unaware of memwatch.
 * Streams three arrays of 256 MiB (a = b + s*c) ITER times; each launch moves
 * 768 MiB, well over 100 us on any current GPU. Prints "loop_s=<seconds>" for
 * the kernel loop alone (bench/gpu_overhead.sh compares it with and without
 * the injected library). Usage: bw_app [iterations]
 */
#define APP_NAME "bw_app"
#include "app_common.cuh"

__global__ void init(double *p, size_t n, double v)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = v + (double)(i % 97);
}

int main(int argc, char **argv)
{
    int iter = argc > 1 ? atoi(argv[1]) : 200;
    size_t n = (size_t)32 << 20;
    double *a, *b, *c;
    if (triad_arrays(n, &a, &b, &c, 0))
        return 1;
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
