/*
 * bench/sample_alias.c: a loop of two phases of fixed CPU time, phase_a for
 * A ms and phase_b for B ms of the thread's CPU time, N times: the worst case
 * for a sampler whose period is fixed in the same clock (a time-step loop of
 * constant cost). The true shares are A/(A+B) and B/(A+B). Built and run by
 * bench/sample_alias. Usage: sample_alias A_MS B_MS N
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <time.h>

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

volatile double sink;

__attribute__((noinline)) static void phase_a(double ms)
{
    double t0 = cpu_ms(), x = 1;
    while (cpu_ms() - t0 < ms)
        for (int i = 0; i < 200; i++)
            x = x * 1.0000001 + 0.1;
    sink = x;
}

__attribute__((noinline)) static void phase_b(double ms)
{
    double t0 = cpu_ms(), x = 1;
    while (cpu_ms() - t0 < ms)
        for (int i = 0; i < 200; i++)
            x = x * 0.9999999 + 0.2;
    sink = x;
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    double a = atof(argv[1]), b = atof(argv[2]);
    int n = atoi(argv[3]);
    for (int i = 0; i < n; i++) {
        phase_a(a);
        phase_b(b);
    }
    return 0;
}
