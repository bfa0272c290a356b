/*
 * bench/hiccup.c: how much time interrupts take from a running thread, the
 * way that costs a profiled program: a thread reads the TSC in a tight loop
 * for a while and adds up every gap longer than ~0.3 µs (an interrupt, a
 * trap to the hypervisor, a preemption). Run alone, with a cpu-clock sampler
 * of its own (the kernel's cost of a timer sample, nothing else), or under
 * libmemwatch.so (memwatch's whole cost to a compute loop), the difference of
 * the stolen shares is the cost, independent of how fast the machine is.
 *
 * usage: hiccup SECONDS [sampler RATE]      prints one line:
 *        stolen=PERCENT gaps=N per_gap_us=X samples_per_s=R
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: hiccup SECONDS [sampler RATE]\n");
        return 2;
    }
    double secs = atof(argv[1]);
    long rate = argc > 3 && !strcmp(argv[2], "sampler") ? atol(argv[3]) : 0;
    if (rate > 0) { /* what memwatch's per-thread cpu-clock sampler asks for */
        struct perf_event_attr a;
        memset(&a, 0, sizeof a);
        a.size = sizeof a;
        a.type = PERF_TYPE_SOFTWARE;
        a.config = PERF_COUNT_SW_CPU_CLOCK;
        a.sample_period = (uint64_t)(1e9 / (double)rate);
        a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                        PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_PERIOD;
        a.exclude_kernel = 1;
        a.exclude_hv = 1;
        a.exclude_callchain_kernel = 1;
        a.use_clockid = 1;
        a.clockid = CLOCK_MONOTONIC;
        a.watermark = 1;
        a.wakeup_watermark = 1 << 20;
        int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
        if (fd < 0) {
            perror("hiccup: perf_event_open(cpu-clock)");
            return 1;
        }
        if (mmap(NULL, 65 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED) {
            perror("hiccup: mmap");
            return 1;
        }
    }
    /* the TSC rate, from the loop itself */
    double t0 = now_s();
    uint64_t start = __rdtsc(), prev = start, gap = 0, n = 0, thr = 0;
    {
        double t = now_s();
        uint64_t c = __rdtsc();
        while (now_s() - t < 0.01)
            ;
        thr = (uint64_t)((double)(__rdtsc() - c) / (now_s() - t) * 0.3e-6); /* 0.3 µs */
        start = prev = __rdtsc();
        t0 = now_s();
    }
    for (uint64_t i = 0;; i++) {
        uint64_t t = __rdtsc();
        if (t - prev > thr) {
            gap += t - prev;
            n++;
        }
        prev = t;
        if ((i & 0xfffff) == 0 && now_s() - t0 > secs)
            break;
    }
    double el = now_s() - t0, hz = (double)(prev - start) / el;
    printf("stolen=%.3f gaps=%llu per_gap_us=%.2f samples_per_s=%ld\n",
           100.0 * (double)gap / (double)(prev - start), (unsigned long long)n,
           n ? (double)gap / hz / (double)n * 1e6 : 0.0, rate);
    return 0;
}
