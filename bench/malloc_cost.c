/*
 * bench/malloc_cost.c: nanoseconds per malloc/free pair in a single-threaded
 * loop (64 live blocks of 16..215 bytes, the sizes where glibc's thread cache
 * and fast bins do the work). Built and run by bench/malloc_cost.
 * With -DMW_HELPER_THREAD it is instead a preload library whose constructor
 * starts one thread that only sleeps: what any second thread costs.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#ifdef MW_HELPER_THREAD
static void *helper(void *arg)
{
    for (;;)
        pause();
    return arg;
}

__attribute__((constructor)) static void start_helper(void)
{
    pthread_t t;
    pthread_create(&t, NULL, helper, NULL);
}
#else
int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    void *p[64] = {0};
    unsigned long s = 0;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) {
        int k = (int)(i & 63);
        free(p[k]);
        p[k] = malloc(16 + (size_t)(i % 200));
        s += (unsigned long)(*(volatile char *)p[k] = 1);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    for (int k = 0; k < 64; k++)
        free(p[k]);
    double ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n;
    printf("%.2f %lu\n", ns, s);
    return 0;
}
#endif
