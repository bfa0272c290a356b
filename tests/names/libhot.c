/*
 * tests/names/libhot.c: a shared library whose hot loop is a static function
 * (no dynamic symbol of its own). Built stripped (only .dynsym), and stripped
 * with MiniDebugInfo (.gnu_debugdata), by tests/names/CMakeLists.txt.
 * -fno-toplevel-reorder keeps hot_before (exported) just before hot_loop.
 */
#include <stddef.h>

#define HOT_API __attribute__((visibility("default")))
HOT_API double hot_before(double x);
HOT_API double hot_run(double *a, size_t n, double seconds);

double hot_before(double x)
{
    return x * 2;
}

__attribute__((noinline)) static double hot_loop(double *a, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        a[i] = a[i] * 1.0000001 + 1e-9;
        s += a[i];
        if (a[i] > 1e300)
            a[i] = 0;
        s *= 0.5;
    }
    return s;
}

#include <time.h>
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

double hot_run(double *a, size_t n, double seconds)
{
    double end = now() + seconds, s = 0;
    while (now() < end)
        s += hot_loop(a, n);
    return s;
}
