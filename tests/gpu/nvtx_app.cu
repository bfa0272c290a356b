/*
 * tests/gpu/nvtx_app.cu: a CUDA program with NVTX ranges around a streaming
 * kernel ("stream": a = b + s*c over 768 MiB per launch, bandwidth-bound) and
 * a compute kernel ("compute": dependent FMAs in registers, no memory
 * traffic), each phase about SECONDS long, ROUNDS times. Unaware of memwatch:
 * under memwatch record the ranges become regions (gpu/nvtx.c).
 * Usage: nvtx_app [seconds per phase (0.5)] [rounds (2)]
 */
#include <nvtx3/nvToolsExt.h>

#define APP_NAME "nvtx_app"
#include "app_common.cuh"

__global__ void stream_kernel(double *a, const double *b, const double *c, double s, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        a[i] = b[i] + s * c[i];
}

__global__ void compute_kernel(double *out, int iters)
{
    double x = threadIdx.x * 1e-3, y = 1.0000001;
    for (int i = 0; i < iters; i++)
        x = fma(x, y, 1e-9);
    if (x == 42.0)
        out[0] = x; /* never: keeps the loop */
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 0.5;
    int rounds = argc > 2 ? atoi(argv[2]) : 2;
    size_t n = (size_t)32 << 20;
    double *a, *b, *c;
    if (triad_arrays(n, &a, &b, &c, 1))
        return 1;
    CK(cudaDeviceSynchronize());
    int ns = 0, nc = 0;
    for (int r = 0; r < rounds; r++) {
        nvtxRangePushA("stream");
        for (double end = now() + secs; now() < end; ns++) {
            stream_kernel<<<1024, 256>>>(a, b, c, 1.5, n);
            CK(cudaDeviceSynchronize());
        }
        nvtxRangePop();
        nvtxRangePushA("compute");
        for (double end = now() + secs; now() < end; nc++) {
            compute_kernel<<<1024, 256>>>(a, 200000);
            CK(cudaDeviceSynchronize());
        }
        nvtxRangePop();
    }
    printf("stream launches %d, compute launches %d\n", ns, nc);
    return 0;
}
