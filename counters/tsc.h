/*
 * Time-stamp counter access for x86-64 (serialized reads after Fang et al.),
 * the Arm generic timer on AArch64, and a clock_gettime fallback elsewhere.
 * Internal to memwatch; the reads are async-signal-safe (no libc).
 *
 *   start: cpuid ; rdtsc        (nothing earlier leaks into the timed region)
 *   end:   rdtscp ; cpuid       (nothing later leaks into it)
 */
#ifndef MW_COUNTERS_TSC_H
#define MW_COUNTERS_TSC_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#define MW_HAVE_TSC 1
static inline uint64_t mw_rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
static inline uint64_t mw_tsc_start(void)
{
    uint32_t lo, hi;
    __asm__ volatile("cpuid\n\trdtsc" : "=a"(lo), "=d"(hi) : "a"(0) : "rbx", "rcx", "memory");
    return ((uint64_t)hi << 32) | lo;
}
static inline uint64_t mw_tsc_end(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtscp\n\tmov %%eax, %0\n\tmov %%edx, %1\n\tcpuid"
                     : "=r"(lo), "=r"(hi)
                     :
                     : "rax", "rbx", "rcx", "rdx", "memory");
    return ((uint64_t)hi << 32) | lo;
}
#elif defined(__aarch64__)
/* The Arm generic timer's virtual counter (constant rate, CNTFRQ_EL0); isb
 * keeps earlier instructions from leaking past the read. MW_HAVE_TSC stays 0
 * (there is no x86 TSC); MW_HAVE_CYCLE_COUNTER says a constant-rate counter
 * exists. */
#define MW_HAVE_TSC 0
#define MW_HAVE_CYCLE_COUNTER 1
static inline uint64_t mw_rdtsc(void)
{
    uint64_t v;
    __asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
    return v;
}
#define mw_tsc_start mw_rdtsc
#define mw_tsc_end mw_rdtsc
#else
#define MW_HAVE_TSC 0
static inline uint64_t mw_rdtsc(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
#define mw_tsc_start mw_rdtsc
#define mw_tsc_end mw_rdtsc
#endif
#ifndef MW_HAVE_CYCLE_COUNTER
#define MW_HAVE_CYCLE_COUNTER MW_HAVE_TSC
#endif

static inline uint64_t mw_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* TSC frequency in Hz: from the kernel's perf_event time conversion when it
 * exposes one (cap_user_time), else measured against CLOCK_MONOTONIC_RAW and
 * cached. *source (may be NULL) says which. Implemented in counters/tsc.c. */
double mw_tsc_hz(const char **source);
/* Give the frequency and its source (a string that outlives every call)
 * instead of determining it, for a process that was handed it (the
 * profiler's MEMWATCH_TSC). Only before the first mw_tsc_hz of the process:
 * after it, the value already known stays. */
void mw_tsc_seed(double hz, const char *source);
/* A reading of the TSC and of clock `clk` (ns) taken together earlier in the
 * process (the profiler's constructor): where the rate has to be measured,
 * it is measured from that reading to now on the same clock instead of over
 * a 20 ms sleep, when at least 10 ms lie between. Only before the first
 * mw_tsc_hz of the process. */
void mw_tsc_reference(uint64_t tsc, uint64_t ns, int clk);
/* A frequency known from before (the machine profile's, measured by memwatch
 * calibrate), with its source: where neither the kernel's perf time
 * conversion nor CPUID gives one, it is taken when the kernel's own TSC
 * calibration (/proc/cpuinfo bogomips / 2) agrees with it within 0.2 %,
 * instead of a 20 ms measurement. Only before the first mw_tsc_hz. */
void mw_tsc_candidate(double hz, const char *source);

#endif
