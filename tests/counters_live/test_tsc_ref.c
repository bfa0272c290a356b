/*
 * tests/counters_live/test_tsc_ref.c: the TSC rate from an earlier reading
 * (mw_tsc_reference, counters/tsc.c). A process that has to measure the rate
 * (no perf time conversion, no CPUID leaf: this development VM) takes it from
 * a reading of its start instead of sleeping 20 ms, and the rate agrees with
 * an independent measurement. Where the machine gives the rate directly the
 * reference is not needed, and the test says so.
 */
#include "tsc.h"

#include <memwatch/perf.h>

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mw_test.h"

static uint64_t ns_of(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(void)
{
#if !MW_HAVE_TSC
    printf("SKIP: no TSC on this architecture\n");
    return 77;
#else
    /* A perf event held open for the test: the kernel source's own event
     * then opens without the grace period a quiet machine's first per-task
     * event waits for (tens of ms), which is not what is timed here. */
    mw_perf_event ev;
    mw_perf_target self = {.kind = MW_PERF_THREAD, .tid = getpid()};
    mw_perf_group *held = NULL;
    if (mw_perf_event_generic("dummy", &ev) == 0)
        (void)mw_perf_group_open(&ev, 1, &self, MW_PERF_USER_ONLY, &held);
    /* the reading of the start, then 30 ms of work */
    uint64_t n0 = ns_of(CLOCK_MONOTONIC), t0 = mw_rdtsc();
    while (ns_of(CLOCK_MONOTONIC) - n0 < 30000000ull)
        ;
    mw_tsc_reference(t0, n0, CLOCK_MONOTONIC);
    uint64_t c0 = ns_of(CLOCK_MONOTONIC);
    const char *src = NULL;
    double hz = mw_tsc_hz(&src);
    uint64_t took = ns_of(CLOCK_MONOTONIC) - c0;
    /* an independent measurement over 50 ms against the raw clock */
    uint64_t r0 = ns_of(CLOCK_MONOTONIC_RAW), a0 = mw_rdtsc(), r1, a1;
    do {
        r1 = ns_of(CLOCK_MONOTONIC_RAW);
        a1 = mw_rdtsc();
    } while (r1 - r0 < 50000000ull);
    double ref = (double)(a1 - a0) * 1e9 / (double)(r1 - r0);
    printf("rate %.0f Hz (%s) in %.2f ms; independent %.0f Hz, ratio %.5f\n", hz, src,
           (double)took / 1e6, ref, hz / ref);
    MW_CHECK(hz > 0.995 * ref && hz < 1.005 * ref, "rate %.0f against %.0f", hz, ref);
    int measured = strstr(src, "measured") || strstr(src, "bogomips");
    if (measured) {
        MW_CHECK(strstr(src, "since the process's start") || strstr(src, "bogomips"),
                 "the source '%s' is not the reference", src);
        MW_CHECK(took < 15000000ull, "mw_tsc_hz took %.1f ms: it slept instead of using the reference",
                 (double)took / 1e6);
    } else {
        printf("note: this machine gives the rate directly (%s): the reference is not needed\n", src);
    }
    mw_perf_group_close(held);
    return mw_test_done();
#endif
}
