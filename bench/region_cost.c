/*
 * bench/region_cost.c: N begin/end pairs of one region (and, with a second
 * argument, N pairs of an outer region with an inner one inside: two pairs
 * per iteration), timed by the thread's CPU time. Prints "ns_per_pair N".
 * Built by bench/region_cost with and without -DMW_REGIONS_OFF.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <memwatch/region.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    const char *mode = argc > 2 ? argv[2] : "";
    volatile long sink = 0;
    double t0 = cpu_ns();
    if (!strcmp(mode, "alternate")) {
        for (long i = 0; i < n / 2; i++) {
            mw_region_begin("a");
            sink += i;
            mw_region_end("a");
            mw_region_begin("b");
            sink += i;
            mw_region_end("b");
        }
    } else if (strcmp(mode, "nested")) {
        for (long i = 0; i < n; i++) {
            mw_region_begin("step");
            sink += i;
            mw_region_end("step");
        }
    } else {
        for (long i = 0; i < n / 2; i++) {
            mw_region_begin("outer");
            mw_region_begin("inner");
            sink += i;
            mw_region_end("inner");
            mw_region_end("outer");
        }
    }
    double t1 = cpu_ns();
    printf("%.2f %ld\n", (t1 - t0) / (double)n, n);
    return 0;
}
