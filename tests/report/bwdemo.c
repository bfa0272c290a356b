/*
 * bwdemo: memwatch's demo program. It alternates a memory-bandwidth-bound
 * phase (a STREAM-style triad over three large malloc'ed arrays, on every
 * core) with a compute-bound phase (arithmetic in registers), so that
 * `memwatch record ./bwdemo && memwatch report` shows which lines and which
 * arrays the bandwidth-bound intervals come from.
 *
 *   usage: bwdemo [seconds per phase (1.0)] [threads (all cores)] [MiB per array (256)]
 *          [rounds (2)]
 *
 * It prints the CLOCK_MONOTONIC start and end of every phase ("phase bw T0 T1",
 * "phase compute T0 T1") so that tests can check what the report says about
 * each phase. The marker comments (ALLOC-LINE, BW-LINE, COMPUTE-LINE) let
 * tests find the source lines.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double *a, *b, *c;
static size_t n_elems;
static int nthreads;
static double phase_seconds;
static pthread_barrier_t bar;
static int phase_cmd; /* 1 bandwidth, 2 compute, -1 stop; published through the barrier */

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The bandwidth-bound phase: 24 bytes of DRAM traffic per 2 flops. */
static __attribute__((noinline)) void triad(size_t lo, size_t hi, double s)
{
    for (size_t i = lo; i < hi; i++)
        a[i] = b[i] + s * c[i]; /* BW-LINE */
}

/* The compute-bound phase: a dependent chain of multiply-adds in registers. */
static __attribute__((noinline)) double compute(uint64_t iters, double x)
{
    double y = 1.0;
    for (uint64_t i = 0; i < iters; i++)
        y = y * x + 1e-9 / (y + 1.0); /* COMPUTE-LINE */
    return y;
}

static void *worker(void *arg)
{
    size_t id = (size_t)(uintptr_t)arg;
    size_t lo = n_elems * id / (size_t)nthreads, hi = n_elems * (id + 1) / (size_t)nthreads;
    uint64_t deadline;
    /* first touch by the thread that will use the pages */
    for (size_t i = lo; i < hi; i++) {
        a[i] = 0.0;
        b[i] = 1.0;
        c[i] = 2.0;
    }
    pthread_barrier_wait(&bar);
    for (;;) {
        pthread_barrier_wait(&bar); /* main announces a phase through the barrier */
        int phase = __atomic_load_n(&phase_cmd, __ATOMIC_RELAXED);
        if (phase < 0)
            break;
        deadline = now_ns() + (uint64_t)(phase_seconds * 1e9);
        if (phase == 1) {
            while (now_ns() < deadline)
                triad(lo, hi, 3.0);
        } else {
            double acc = 0;
            while (now_ns() < deadline)
                acc += compute(2000000, 0.999999);
            if (acc == 42.0)
                printf("unlikely\n");
        }
        pthread_barrier_wait(&bar);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    phase_seconds = argc > 1 ? atof(argv[1]) : 1.0;
    nthreads = argc > 2 ? atoi(argv[2]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    size_t mib = argc > 3 ? (size_t)atol(argv[3]) : 256;
    int rounds = argc > 4 ? atoi(argv[4]) : 2;
    if (phase_seconds <= 0 || nthreads < 1 || mib < 1 || rounds < 1) {
        fprintf(stderr, "usage: bwdemo [seconds per phase] [threads] [MiB per array] [rounds]\n");
        return 2;
    }
    n_elems = mib * (1u << 20) / sizeof(double);
    a = malloc(n_elems * sizeof *a); /* ALLOC-LINE a */
    b = malloc(n_elems * sizeof *b); /* ALLOC-LINE b */
    c = malloc(n_elems * sizeof *c); /* ALLOC-LINE c */
    if (!a || !b || !c) {
        fprintf(stderr, "bwdemo: cannot allocate 3 x %zu MiB\n", mib);
        return 1;
    }
    printf("arrays a=%p b=%p c=%p, %zu MiB each, %d threads\n", (void *)a, (void *)b, (void *)c,
           mib, nthreads);
    pthread_barrier_init(&bar, NULL, (unsigned)nthreads + 1);
    pthread_t *t = calloc((size_t)nthreads, sizeof *t);
    for (int i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
    pthread_barrier_wait(&bar); /* arrays initialized */
    for (int r = 0; r < rounds; r++) {
        for (int phase = 1; phase <= 2; phase++) {
            __atomic_store_n(&phase_cmd, phase, __ATOMIC_RELAXED);
            uint64_t t0 = now_ns();
            pthread_barrier_wait(&bar);
            pthread_barrier_wait(&bar);
            uint64_t t1 = now_ns();
            printf("phase %s %llu %llu\n", phase == 1 ? "bw" : "compute", (unsigned long long)t0,
                   (unsigned long long)t1);
            fflush(stdout);
        }
    }
    __atomic_store_n(&phase_cmd, -1, __ATOMIC_RELAXED);
    pthread_barrier_wait(&bar);
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    double check = a[n_elems / 2] + a[n_elems - 1];
    printf("check %.1f\n", check);
    free(t);
    free(a);
    free(b);
    free(c);
    return 0;
}
