/*
 * tests/report/mwr_loops.c: one loop of a given direction for memwatch
 * report's threshold class (test_writes_class.sh): read (a sum), copy
 * (b[i] = a[i]), triad (a[i] = b[i] + s c[i]), nt (the triad with
 * non-temporal stores) or compute (multiply-adds in registers), over arrays
 * of 8 MiB, for MS milliseconds of wall time. Prints its checksum.
 * Usage: mwr_loops MODE MS
 */
#include <emmintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N (1u << 20) /* doubles per array */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) static double pass(const char *m, double *a, double *b, double *c)
{
    double s = 0;
    if (!strcmp(m, "read")) {
        for (size_t i = 0; i < N; i++)
            s += a[i];
    } else if (!strcmp(m, "copy")) {
        for (size_t i = 0; i < N; i++)
            b[i] = a[i];
        s = b[N / 2];
    } else if (!strcmp(m, "triad")) {
        for (size_t i = 0; i < N; i++)
            a[i] = b[i] + 3.0 * c[i];
        s = a[N / 3];
    } else if (!strcmp(m, "nt")) {
        for (size_t i = 0; i < N; i += 2)
            _mm_stream_pd(a + i, _mm_add_pd(_mm_load_pd(b + i),
                                            _mm_mul_pd(_mm_set1_pd(3.0), _mm_load_pd(c + i))));
        _mm_sfence();
        s = a[N / 3];
    } else {
        double x = 1.0, y = 0.5;
        for (size_t i = 0; i < N; i++) {
            x = x * 1.0000001 + y;
            y = y * 0.9999999 + 1e-9;
        }
        s = x + y;
    }
    return s;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: mwr_loops read|copy|triad|nt|compute MS\n");
        return 2;
    }
    double *a = aligned_alloc(64, N * sizeof(double)), *b = aligned_alloc(64, N * sizeof(double)),
           *c = aligned_alloc(64, N * sizeof(double));
    if (!a || !b || !c)
        return 1;
    for (size_t i = 0; i < N; i++)
        a[i] = 1, b[i] = 2, c[i] = 3;
    double end = now() + atof(argv[2]) / 1e3, s = 0;
    while (now() < end)
        s += pass(argv[1], a, b, c);
    printf("mwr_loops %s: %g\n", argv[1], s);
    return 0;
}
