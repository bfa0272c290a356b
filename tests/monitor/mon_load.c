/*
 * tests/monitor/mon_load.c: the loads of memwatch monitor's tests and of
 * bench/monitor_loads.sh.
 *
 *   mon_load stream SECONDS THREADS [MIB_PER_THREAD]
 *       each thread copies between two arrays of MIB_PER_THREAD (default
 *       64) MiB, far larger than any cache: memory bandwidth;
 *   mon_load compute SECONDS THREADS
 *       each thread runs a dependent chain of integer multiply-adds in
 *       registers: CPU time without memory traffic.
 *
 * Prints "mon_load: PID" at start (the pid the tests look for), and at the
 * end what it did (GB moved, or iterations). Exits 2 on bad arguments.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int stream_mode;
static double seconds;
static size_t words;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void *run(void *arg)
{
    double *bytes = arg, end = now_s() + seconds;
    if (stream_mode) {
        uint64_t *a = malloc(words * 8), *b = malloc(words * 8);
        if (!a || !b)
            return NULL;
        memset(a, 1, words * 8);
        memset(b, 2, words * 8);
        while (now_s() < end) {
            for (size_t i = 0; i < words; i++)
                b[i] = a[i] + 1;
            uint64_t *t = a;
            a = b;
            b = t;
            *bytes += 2.0 * words * 8;
        }
        free(a);
        free(b);
    } else {
        volatile uint64_t sink;
        uint64_t x = 1;
        while (now_s() < end) {
            for (int i = 0; i < 1000000; i++)
                x = x * 6364136223846793005ull + 1442695040888963407ull;
            *bytes += 1e6;
        }
        sink = x;
        (void)sink;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4 || (strcmp(argv[1], "stream") && strcmp(argv[1], "compute"))) {
        fprintf(stderr, "usage: mon_load stream|compute SECONDS THREADS [MIB_PER_THREAD]\n");
        return 2;
    }
    stream_mode = !strcmp(argv[1], "stream");
    seconds = atof(argv[2]);
    int n = atoi(argv[3]);
    words = (size_t)(argc > 4 ? atof(argv[4]) : 64) * 1024 * 1024 / 8;
    if (seconds <= 0 || n < 1 || n > 1024 || words < 1024) {
        fprintf(stderr, "mon_load: bad arguments\n");
        return 2;
    }
    printf("mon_load: %d\n", (int)getpid());
    fflush(stdout);
    pthread_t th[1024];
    double done[1024] = {0};
    for (int i = 0; i < n; i++)
        pthread_create(&th[i], NULL, run, &done[i]);
    double sum = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        sum += done[i];
    }
    if (stream_mode)
        printf("mon_load: stream moved %.1f GB in %.1f s (%.1f GB/s)\n", sum / 1e9, seconds,
               sum / 1e9 / seconds);
    else
        printf("mon_load: compute ran %.0f M iterations\n", sum / 1e6);
    return 0;
}
