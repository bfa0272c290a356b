/*
 * tests/export/utf8_app.c: a program whose names are not UTF-8, for
 * test_utf8_names.sh. Its code says it comes from a file named
 * "/src/utf8\xff\xfe/app\xc3(.c" (the #line below: the debug information's
 * file names), its hot loops are the functions "stream\xff\xfe" and
 * "sum\xe2\x82" (their symbols), it opens a region "phase\xff\xc3(" around them
 * and names its worker thread "w\xfe\xff". The test copies it to a file named
 * with such bytes and gives it such arguments. Source text: ASCII only.
 *
 * utf8_app SECONDS: streams over 64 MiB for SECONDS (0.3 when not given).
 */
#include <memwatch/region.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

#line 1 "/src/utf8\xff\xfe/app\xc3(.c"
static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

#define N (8u << 20) /* doubles: 64 MiB */

__attribute__((noinline)) double stream_bad(double *a, const double *b,
                                            double s) __asm__("stream\xff\xfe");
__attribute__((noinline)) double stream_bad(double *a, const double *b, double s)
{
    for (size_t i = 0; i < N; i++)
        a[i] = b[i] * s + a[i];
    return a[N / 2];
}

__attribute__((noinline)) double sum_bad(const double *a) __asm__("sum\xe2\x82");
__attribute__((noinline)) double sum_bad(const double *a)
{
    double t = 0;
    for (size_t i = 0; i < N; i += 8)
        t += a[i];
    return t;
}

static double secs = 0.3;
static volatile double sink;

static void *worker(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "w\xfe\xff", 0, 0, 0);
    double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    if (!a || !b)
        return NULL;
    for (size_t i = 0; i < N; i++) {
        a[i] = 1;
        b[i] = (double)i;
    }
    mw_region_begin("phase\xff\xc3(");
    double t0 = now_s();
    while (now_s() - t0 < secs) {
        sink += stream_bad(a, b, 0.5);
        sink += sum_bad(a);
    }
    mw_region_end("phase\xff\xc3(");
    free(a);
    free(b);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        secs = atof(argv[1]);
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL))
        return 1;
    pthread_join(t, NULL);
    printf("done %d\n", sink != 0);
    return 0;
}
