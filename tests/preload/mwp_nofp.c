/*
 * tests/preload/mwp_nofp.c: a program built without frame pointers (as
 * distribution binaries are), for the "unwind" case: CPU time in a known
 * call chain (main -> nf_outer -> nf_middle -> nf_leaf), large allocations
 * two calls below main (nf_alloc_outer -> nf_alloc_inner -> malloc), a deep
 * recursion (deeper than the stack copy and the frame limits) and work inside
 * a signal handler (a signal frame on the stack).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

static double clock_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* seconds of this thread's CPU time (a loaded machine gives each phase its
 * samples all the same); the monotonic clock read beside it is the vDSO's
 * fast path, where some samples land (the case's vDSO check) */
__attribute__((noinline)) static void nf_leaf(double seconds)
{
    double end = clock_s(CLOCK_THREAD_CPUTIME_ID) + seconds;
    while (clock_s(CLOCK_THREAD_CPUTIME_ID) < end) {
        sink += (unsigned long)clock_s(CLOCK_MONOTONIC);
        for (unsigned long i = 0; i < 20000; i++)
            sink += i * i ^ (sink >> 3);
    }
}

__attribute__((noinline)) static void nf_middle(double s)
{
    nf_leaf(s);
    sink++;
}

__attribute__((noinline)) static void nf_outer(double s)
{
    nf_middle(s);
    sink++;
}

__attribute__((noinline)) static void *nf_alloc_inner(size_t n)
{
    char *p = malloc(n);
    if (p)
        memset(p, 1, n);
    return p;
}

__attribute__((noinline)) static void *nf_alloc_outer(size_t n)
{
    void *p = nf_alloc_inner(n);
    sink++;
    return p;
}

__attribute__((noinline)) static long nf_rec(int depth, double s)
{
    if (depth == 0) {
        nf_leaf(s);
        return 0;
    }
    long r = nf_rec(depth - 1, s);
    sink += (unsigned long)r;
    return r + 1;
}

static void nf_handler(int sig)
{
    (void)sig;
    nf_leaf(0.002);
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    nf_outer(0.4 * scale);
    void *keep[16];
    for (int i = 0; i < 16; i++)
        keep[i] = nf_alloc_outer((size_t)(1 << 20) + 4096 * (size_t)i);
    nf_rec(300, 0.1 * scale);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = nf_handler;
    sigaction(SIGURG, &sa, NULL);
    for (int i = 0; i < (int)(50 * scale) + 1; i++)
        raise(SIGURG);
    for (int i = 0; i < 16; i++)
        free(keep[i]);
    printf("nofp done\n");
    return 0;
}
