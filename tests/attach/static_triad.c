/*
 * tests/attach/static_triad.c: a triad phase and a compute phase, each a
 * fixed amount of work (no clock decides anything), built twice: statically
 * (mwa_triad_static, recorded by the external sampler) and dynamically
 * (mwa_triad_dyn, recorded through libmemwatch.so). test_attach_static.sh
 * compares the lines each report names.
 *
 * static_triad [REPS [ITERS [THREADS]]]: REPS passes of a[i] = b[i] + 3 c[i]
 * over 3 x 32 MiB, then ITERS steps of a dependent floating-point chain, on
 * THREADS threads (default 1) each with its own arrays. Prints a checksum.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1u << 22)

struct job {
    long reps, iters;
    double sum;
};

__attribute__((noinline)) static void triad(double *a, const double *b, const double *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + 3.0 * c[i];
}

__attribute__((noinline)) static double compute(long iters)
{
    double x = 1.0;
    for (long i = 0; i < iters; i++)
        x = x * 1.0000001 + 1e-9;
    return x;
}

static void *run(void *arg)
{
    struct job *j = arg;
    double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *c = malloc(N * sizeof *c);
    if (!a || !b || !c)
        exit(3);
    for (size_t i = 0; i < N; i++) {
        a[i] = 0;
        b[i] = (double)(i & 1023);
        c[i] = 1;
    }
    for (long r = 0; r < j->reps; r++)
        triad(a, b, c, N);
    j->sum = a[N / 2] + compute(j->iters);
    free(a);
    free(b);
    free(c);
    return NULL;
}

int main(int argc, char **argv)
{
    long reps = argc > 1 ? atol(argv[1]) : 40;
    long iters = argc > 2 ? atol(argv[2]) : 150000000;
    int nt = argc > 3 ? atoi(argv[3]) : 1;
    if (nt < 1 || nt > 256)
        nt = 1;
    struct job *j = calloc((size_t)nt, sizeof *j);
    pthread_t *t = calloc((size_t)nt, sizeof *t);
    if (!j || !t)
        return 3;
    for (int i = 0; i < nt; i++) {
        j[i].reps = reps;
        j[i].iters = iters;
        if (i && pthread_create(&t[i], NULL, run, &j[i]))
            return 3;
    }
    run(&j[0]);
    double s = j[0].sum;
    for (int i = 1; i < nt; i++) {
        pthread_join(t[i], NULL);
        s += j[i].sum;
    }
    printf("checksum %.6f\n", s);
    return 0;
}
