/*
 * bench/unwind_cost.c: nanoseconds per recorded allocation: malloc of 96 KiB
 * (above memwatch's default threshold, below glibc's mmap threshold, so the
 * allocator itself is cheap) and free, four calls below main, in a program
 * built without frame pointers. Built and run by bench/unwind_cost.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void uc_leaf(void)
{
    char *p = malloc(96 << 10);
    if (p)
        p[0] = 1;
    sink += (unsigned long)(p != NULL);
    free(p);
}
__attribute__((noinline)) static void uc_mid(void)
{
    uc_leaf();
    sink++;
}
__attribute__((noinline)) static void uc_top(long n)
{
    for (long i = 0; i < n; i++)
        uc_mid();
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    uc_top(n);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n;
    printf("%.1f %lu\n", ns, sink);
    return 0;
}
