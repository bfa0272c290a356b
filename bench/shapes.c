/*
 * bench/shapes.c: memory loads of the shapes real programs have, for judging
 * memwatch's bandwidth-bound flag beyond the calibration's own load
 * generator (docs/saturation.md):
 *   read     sum of an array (loads only)
 *   copy     b[i] = a[i]
 *   triad    a[i] = b[i] + s * c[i]
 *   nt       the triad with non-temporal stores
 *   compute  a chain of multiply-adds in registers (no memory traffic)
 * Usage: shapes MODE THREADS SECONDS [PROCESSES [MIB]]
 * Each process runs THREADS threads for SECONDS, each thread over arrays of
 * MIB MiB (default 64) of its own; every process prints one line with the
 * bytes it moved and its GB/s over the timed part (reads plus writes as the
 * loop states them, not counting write-allocate). bench/shape_flags.sh runs
 * them under memwatch record.
 */
#define _GNU_SOURCE
#include <emmintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *mode;
static double seconds;
static size_t n; /* doubles per array */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct worker {
    pthread_t t;
    double bytes, sink, secs; /* secs: from the end of its initialisation */
};

static void *run(void *arg)
{
    struct worker *w = arg;
    double *a = aligned_alloc(64, n * sizeof *a), *b = aligned_alloc(64, n * sizeof *b),
           *c = aligned_alloc(64, n * sizeof *c);
    if (!a || !b || !c) {
        perror("shapes: aligned_alloc");
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        a[i] = 1, b[i] = 2, c[i] = 3;
    double start = now(), end = start + seconds, s = 0, x = 1.0000001, y = 0.9999999;
    while (now() < end) {
        if (!strcmp(mode, "read")) {
            /* four independent vector sums: as fast as the core streams */
            __m128d s0 = _mm_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
            for (size_t i = 0; i < n; i += 8) {
                s0 = _mm_add_pd(s0, _mm_load_pd(a + i));
                s1 = _mm_add_pd(s1, _mm_load_pd(a + i + 2));
                s2 = _mm_add_pd(s2, _mm_load_pd(a + i + 4));
                s3 = _mm_add_pd(s3, _mm_load_pd(a + i + 6));
            }
            double r[2];
            _mm_storeu_pd(r, _mm_add_pd(_mm_add_pd(s0, s1), _mm_add_pd(s2, s3)));
            s += r[0] + r[1];
            w->bytes += (double)n * 8;
        } else if (!strcmp(mode, "copy")) {
            memcpy(b, a, n * sizeof *a);
            w->bytes += (double)n * 16;
        } else if (!strcmp(mode, "triad")) {
            for (size_t i = 0; i < n; i++)
                a[i] = b[i] + 3.0 * c[i];
            w->bytes += (double)n * 24;
        } else if (!strcmp(mode, "nt")) {
            __m128d k = _mm_set1_pd(3.0);
            for (size_t i = 0; i < n; i += 2)
                _mm_stream_pd(a + i, _mm_add_pd(_mm_load_pd(b + i), _mm_mul_pd(k, _mm_load_pd(c + i))));
            _mm_sfence();
            w->bytes += (double)n * 24;
        } else { /* compute */
            for (int i = 0; i < 1000000; i++)
                x = x * y + 1e-9, y = y * x - 1e-9;
            s += x + y;
        }
    }
    w->sink = s + a[n / 2];
    w->secs = now() - start;
    return NULL;
}

static int process(int threads)
{
    struct worker *w = calloc((size_t)threads, sizeof *w);
    for (int i = 0; i < threads; i++)
        if (pthread_create(&w[i].t, NULL, run, &w[i])) {
            perror("shapes: pthread_create");
            return 1;
        }
    double bytes = 0, sink = 0, dt = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(w[i].t, NULL);
        bytes += w[i].bytes;
        sink += w[i].sink;
        dt = w[i].secs > dt ? w[i].secs : dt;
    }
    printf("shapes: %s pid %d threads %d: %.3g bytes in %.2f s, %.1f GB/s%s\n", mode, (int)getpid(),
           threads, bytes, dt, bytes / dt / 1e9, sink == 42 ? " " : "");
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: shapes read|copy|triad|nt|compute THREADS SECONDS [PROCESSES [MIB]]\n");
        return 2;
    }
    mode = argv[1];
    int threads = atoi(argv[2]), procs = argc > 4 ? atoi(argv[4]) : 1;
    seconds = atof(argv[3]);
    n = (size_t)(argc > 5 ? atoi(argv[5]) : 64) << 20 >> 3;
    if (threads < 1 || procs < 1 || !(seconds > 0) || n < 1024 ||
        (strcmp(mode, "read") && strcmp(mode, "copy") && strcmp(mode, "triad") &&
         strcmp(mode, "nt") && strcmp(mode, "compute"))) {
        fprintf(stderr, "shapes: bad arguments\n");
        return 2;
    }
    if (procs == 1)
        return process(threads);
    for (int p = 0; p < procs; p++)
        if (fork() == 0)
            _exit(process(threads));
    int st, rc = 0;
    while (wait(&st) > 0)
        rc |= !WIFEXITED(st) || WEXITSTATUS(st);
    return rc;
}
