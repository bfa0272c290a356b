/*
 * tests/gpu/multi_app.cu: one process driving two GPUs at the same time,
 * unaware of memwatch. A host thread per device: device S (default 0)
 * streams three arrays of 256 MiB (stream_triad, bandwidth-bound), device C
 * (default 1) runs an FMA chain on registers (fma_chain, compute-bound), both
 * for about SECONDS seconds, started together behind a barrier. Prints each
 * device's launches and loop time. Usage: multi_app [seconds] [S C]
 * Exits 77 (skip) where fewer than two devices are visible.
 */
#include <pthread.h>

#define APP_NAME "multi_app"
#include "app_common.cuh"

static pthread_barrier_t start_line;
static double seconds = 2.0;

struct job {
    int dev, launches, rc;
    double loop_s;
};

static int run_stream(struct job *j)
{
    CK(cudaSetDevice(j->dev));
    size_t n = (size_t)32 << 20;
    double *a, *b, *c;
    if (triad_arrays(n, &a, &b, &c, 1))
        return 1;
    stream_triad<<<4096, 256>>>(a, b, c, 3.0, n);
    CK(cudaDeviceSynchronize());
    pthread_barrier_wait(&start_line);
    double t0 = now();
    while (now() - t0 < seconds) {
        for (int i = 0; i < 20; i++)
            stream_triad<<<4096, 256>>>(a, b, c, 3.0, n);
        j->launches += 20;
        CK(cudaDeviceSynchronize());
    }
    j->loop_s = now() - t0;
    CK(cudaGetLastError());
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return 0;
}

static int run_compute(struct job *j)
{
    CK(cudaSetDevice(j->dev));
    float *out;
    int blocks = 1056, threads = 256;
    CK(cudaMalloc(&out, (size_t)blocks * threads * 4));
    fma_chain<<<blocks, threads>>>(out, 20000);
    CK(cudaDeviceSynchronize());
    pthread_barrier_wait(&start_line);
    double t0 = now();
    while (now() - t0 < seconds) {
        for (int i = 0; i < 5; i++)
            fma_chain<<<blocks, threads>>>(out, 20000);
        j->launches += 5;
        CK(cudaDeviceSynchronize());
    }
    j->loop_s = now() - t0;
    CK(cudaGetLastError());
    cudaFree(out);
    return 0;
}

static void *stream_thread(void *arg)
{
    struct job *j = (struct job *)arg;
    j->rc = run_stream(j);
    return NULL;
}

static void *compute_thread(void *arg)
{
    struct job *j = (struct job *)arg;
    j->rc = run_compute(j);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        seconds = atof(argv[1]);
    struct job js = {argc > 3 ? atoi(argv[2]) : 0, 0, 0, 0};
    struct job jc = {argc > 3 ? atoi(argv[3]) : 1, 0, 0, 0};
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 2 || js.dev >= ndev || jc.dev >= ndev ||
        js.dev == jc.dev) {
        printf("SKIP: multi_app needs two CUDA devices (%d visible, asked for %d and %d)\n", ndev,
               js.dev, jc.dev);
        return 77;
    }
    pthread_barrier_init(&start_line, NULL, 2);
    pthread_t ts, tc;
    pthread_create(&ts, NULL, stream_thread, &js);
    pthread_create(&tc, NULL, compute_thread, &jc);
    pthread_join(ts, NULL);
    pthread_join(tc, NULL);
    printf("stream device=%d launches=%d loop_s=%.3f\ncompute device=%d launches=%d loop_s=%.3f\n",
           js.dev, js.launches, js.loop_s, jc.dev, jc.launches, jc.loop_s);
    return js.rc || jc.rc;
}
