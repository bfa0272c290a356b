/*
 * bench/dataaddr_mt.c: a multithreaded program for bench/dataaddr_flags.sh:
 * T threads stream a triad (a = b + s * c, each thread its slice of three
 * 256 MiB arrays) while C threads compute on registers beside them, for S
 * seconds; then all T + C threads compute for S seconds. The flagged
 * intervals should name a, b and c, and the compute code none.
 * usage: dataaddr_mt T C S
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N (32u << 20) /* doubles per array: 256 MiB */

static double *a, *b, *c;
static unsigned nthr;
static double phase_end, all_end;
volatile double sink;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void triad_slice(size_t lo, size_t hi)
{
    for (size_t i = lo; i < hi; i++)
        a[i] = b[i] + 3.0 * c[i];
}

__attribute__((noinline)) static double compute_regs(long iters)
{
    double x = 1.0, y = 0.5, z = 0.25;
    for (long i = 0; i < iters; i++) {
        x = x * 1.0000001 + y;
        y = y * 0.9999999 + z;
        z = z * 1.0000002 - x * 1e-9;
    }
    return x + y + z;
}

static void *streamer(void *arg)
{
    size_t k = (size_t)arg, lo = N / nthr * k, hi = lo + N / nthr;
    while (now() < phase_end)
        triad_slice(lo, hi);
    double s = 0;
    while (now() < all_end)
        s += compute_regs(100000);
    sink = s;
    return NULL;
}

static void *computer(void *arg)
{
    (void)arg;
    double s = 0;
    while (now() < all_end)
        s += compute_regs(100000);
    sink = s;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: dataaddr_mt T C S\n");
        return 2;
    }
    nthr = (unsigned)atoi(argv[1]);
    unsigned ncomp = (unsigned)atoi(argv[2]);
    double secs = atof(argv[3]);
    a = malloc(N * sizeof *a);
    b = malloc(N * sizeof *b);
    c = malloc(N * sizeof *c);
    if (!a || !b || !c || !nthr)
        return 1;
    for (size_t i = 0; i < N; i++) {
        a[i] = 0;
        b[i] = 1;
        c[i] = 2;
    }
    phase_end = now() + secs;
    all_end = phase_end + secs;
    pthread_t t[256];
    unsigned n = 0;
    for (unsigned k = 0; k < nthr && n < 256; k++)
        pthread_create(&t[n++], NULL, streamer, (void *)(size_t)k);
    for (unsigned k = 0; k < ncomp && n < 256; k++)
        pthread_create(&t[n++], NULL, computer, NULL);
    for (unsigned k = 0; k < n; k++)
        pthread_join(t[k], NULL);
    printf("dataaddr_mt: %u streaming + %u computing threads, %.1f s each phase\n", nthr, ncomp,
           secs);
    return 0;
}
