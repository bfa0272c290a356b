/*
 * counters/tsc.c: TSC frequency. Preferred source is the kernel's own
 * conversion published in a perf_event mmap page (time_mult/time_shift with
 * cap_user_time); the fallback measures the TSC against CLOCK_MONOTONIC_RAW.
 * The result is computed once and cached (thread-safe through pthread_once).
 */
#include "tsc.h"

#include <linux/perf_event.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static double tsc_hz;
static const char *tsc_source = "unknown";
static pthread_once_t tsc_once = PTHREAD_ONCE_INIT;

static double tsc_from_kernel(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_DUMMY;
    a.exclude_kernel = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return 0;
    long pg = sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, (size_t)pg, PROT_READ, MAP_SHARED, fd, 0);
    double hz = 0;
    if (p != MAP_FAILED) {
        const struct perf_event_mmap_page *mp = p;
        if (mp->cap_user_time && mp->time_mult)
            hz = 1e9 * (double)(1ull << mp->time_shift) / (double)mp->time_mult;
        munmap(p, (size_t)pg);
    }
    close(fd);
    return hz;
}

static double tsc_measured(void)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC_RAW, &a);
    uint64_t t0 = mw_rdtsc();
    struct timespec req = {0, 20 * 1000 * 1000};
    nanosleep(&req, NULL);
    clock_gettime(CLOCK_MONOTONIC_RAW, &b);
    uint64_t t1 = mw_rdtsc();
    double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
    return ns > 0 ? (double)(t1 - t0) * 1e9 / ns : 0;
}

static void tsc_init(void)
{
#if MW_HAVE_TSC
    tsc_hz = tsc_from_kernel();
    if (tsc_hz > 0) {
        tsc_source = "kernel perf_event time conversion";
        return;
    }
    tsc_hz = tsc_measured();
    tsc_source = "measured against CLOCK_MONOTONIC_RAW";
#else
    tsc_hz = 1e9;
    tsc_source = "no TSC on this architecture: nanoseconds of CLOCK_MONOTONIC_RAW";
#endif
}

double mw_tsc_hz(const char **source)
{
    pthread_once(&tsc_once, tsc_init);
    if (source)
        *source = tsc_source;
    return tsc_hz;
}
