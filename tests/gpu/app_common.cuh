/*
 * tests/gpu/app_common.cuh: what the GPU test programs share (each is one
 * file, unaware of memwatch): CK, which reports a failed CUDA call with the
 * program's name (APP_NAME, defined before the include) and returns 1 from
 * the function; now(), CLOCK_MONOTONIC in seconds; the streaming kernel
 * stream_triad (a = b + s*c, bandwidth-bound) and the compute kernel fma_chain
 * (dependent FMAs in registers, one float written per thread); triad_arrays,
 * the three arrays of n doubles the streaming kernel works on.
 */
#pragma once
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>

#ifndef APP_NAME
#error "define APP_NAME before including app_common.cuh"
#endif

#define CK(x)                                                                          \
    do {                                                                               \
        cudaError_t e_ = (x);                                                          \
        if (e_ != cudaSuccess) {                                                       \
            fprintf(stderr, "%s: %s: %s\n", APP_NAME, #x, cudaGetErrorString(e_));     \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

__global__ void stream_triad(double *a, const double *b, const double *c, double s, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        a[i] = b[i] + s * c[i];
}

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

/* The triad's three arrays of n doubles on the current device; b and c zeroed
 * unless zero is 0. 0, or 1 after printing why. */
static inline int triad_arrays(size_t n, double **a, double **b, double **c, int zero)
{
    CK(cudaMalloc(a, n * 8));
    CK(cudaMalloc(b, n * 8));
    CK(cudaMalloc(c, n * 8));
    if (zero) {
        CK(cudaMemset(*b, 0, n * 8));
        CK(cudaMemset(*c, 0, n * 8));
    }
    return 0;
}
