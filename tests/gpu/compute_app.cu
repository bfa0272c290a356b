/*
 * tests/gpu/compute_app.cu: a compute-bound CUDA program, unaware of memwatch.
 * Each thread runs a long chain of fused multiply-adds on registers and writes
 * one float: about a megabyte of DRAM traffic per launch of about a
 * millisecond. Prints "loop_s=<seconds>". Usage: compute_app [iterations]
 */
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>

__global__ void fma_chain(float *out, int steps)
{
    float x = threadIdx.x * 1e-3f, y = blockIdx.x * 1e-3f, z = 1.0001f;
    for (int k = 0; k < steps; k++) {
        x = fmaf(x, z, y);
        y = fmaf(y, z, x);
        z = fmaf(z, 0.9999f, 1e-6f);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x + y;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int iter = argc > 1 ? atoi(argv[1]) : 100;
    float *out;
    int blocks = 1056, threads = 256;
    if (cudaMalloc(&out, (size_t)blocks * threads * 4) != cudaSuccess) {
        fprintf(stderr, "compute_app: cudaMalloc failed\n");
        return 1;
    }
    fma_chain<<<blocks, threads>>>(out, 20000);
    cudaDeviceSynchronize();
    double t0 = now();
    for (int i = 0; i < iter; i++)
        fma_chain<<<blocks, threads>>>(out, 20000);
    cudaError_t e = cudaDeviceSynchronize();
    double t1 = now();
    if (e != cudaSuccess) {
        fprintf(stderr, "compute_app: %s\n", cudaGetErrorString(e));
        return 1;
    }
    printf("loop_s=%.6f per_kernel_us=%.1f\n", t1 - t0, (t1 - t0) / iter * 1e6);
    cudaFree(out);
    return 0;
}
