/*
 * tests/gpu/compute_app.cu: a compute-bound CUDA program, unaware of memwatch.
 * Each thread runs a long chain of fused multiply-adds on registers and writes
 * one float: about a megabyte of DRAM traffic per launch of about a
 * millisecond. Prints "loop_s=<seconds>". Usage: compute_app [iterations]
 */
#define APP_NAME "compute_app"
#include "app_common.cuh"

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
