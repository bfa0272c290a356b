/*
 * counters/tsc.c: TSC frequency. Sources, best first:
 *   1. the kernel's own conversion published in a perf_event mmap page
 *      (time_mult/time_shift with cap_user_time; absent in many VMs);
 *   2. CPUID leaf 0x15 (crystal clock ratio; Intel) or the hypervisor timing
 *      leaf 0x40000010 (TSC kHz; VMware, some KVM setups);
 *   3. the kernel's TSC calibration as it shows in /proc/cpuinfo: on x86 the
 *      delay loop is calibrated from the TSC, so bogomips = 2 x TSC MHz. Used
 *      only when it agrees with a measurement to 0.2 %;
 *   4. a measurement: from a reading of the TSC and a clock the caller took
 *      earlier (mw_tsc_reference) where one is 10 ms old or more, else
 *      against CLOCK_MONOTONIC_RAW over a 20 ms sleep.
 * On AArch64 the generic timer (CNTVCT_EL0) stands in for the TSC and its
 * rate comes from CNTFRQ_EL0; elsewhere nanoseconds of CLOCK_MONOTONIC_RAW.
 * The result is computed once and cached (thread-safe through pthread_once).
 * Uses no stdio and no malloc (the preload library may call it at start-up).
 */
#include "tsc.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

static double tsc_hz;
static const char *tsc_source; /* NULL: "unknown" (no load-time relocation) */
static pthread_once_t tsc_once = PTHREAD_ONCE_INIT;
static double tsc_seed_hz; /* mw_tsc_seed's, read by tsc_init */
static const char *tsc_seed_src;

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

static double tsc_from_cpuid(const char **src)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    unsigned max = __get_cpuid_max(0, NULL);
    if (max >= 0x15) {
        __cpuid(0x15, a, b, c, d);
        if (a && b && c) {
            *src = "CPUID leaf 0x15 (crystal clock x ratio)";
            return (double)c * (double)b / (double)a;
        }
    }
    __cpuid(1, a, b, c, d);
    if (c & (1u << 31)) { /* running under a hypervisor */
        __cpuid(0x40000000, a, b, c, d);
        if (a >= 0x40000010) {
            __cpuid(0x40000010, a, b, c, d);
            if (a) {
                *src = "hypervisor CPUID leaf 0x40000010 (TSC kHz)";
                return (double)a * 1e3;
            }
        }
    }
#endif
    (void)src;
    return 0;
}

/* bogomips of the first CPU in /proc/cpuinfo, halved; 0 if absent. */
static double tsc_from_bogomips(void)
{
#if defined(__x86_64__) || defined(__i386__)
    char buf[8192];
    int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    const char *p = strstr(buf, "\nbogomips");
    if (!p)
        return 0;
    p = strchr(p, ':');
    if (!p)
        return 0;
    double mips = strtod(p + 1, NULL);
    return mips > 0 ? mips * 1e6 / 2 : 0;
#else
    return 0;
#endif
}

static double tsc_cand_hz; /* mw_tsc_candidate's (0: none) */
static const char *tsc_cand_src;
static uint64_t tsc_ref_tsc, tsc_ref_ns; /* mw_tsc_reference's (0: none) */
static int tsc_ref_clk, tsc_ref_used;

static double tsc_measured(void)
{
    struct timespec a, b;
    if (tsc_ref_ns) {
        clock_gettime(tsc_ref_clk, &a);
        uint64_t t = mw_rdtsc();
        uint64_t a_ns = (uint64_t)a.tv_sec * 1000000000ull + (uint64_t)a.tv_nsec;
        if (a_ns > tsc_ref_ns + 10000000ull && t > tsc_ref_tsc) {
            tsc_ref_used = 1;
            return (double)(t - tsc_ref_tsc) * 1e9 / (double)(a_ns - tsc_ref_ns);
        }
    }
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
    if (tsc_seed_hz > 0) {
        tsc_hz = tsc_seed_hz;
        tsc_source = tsc_seed_src;
        return;
    }
#if MW_HAVE_TSC
    tsc_hz = tsc_from_kernel();
    if (tsc_hz > 0) {
        tsc_source = "kernel perf_event time conversion";
        return;
    }
    const char *src = NULL;
    tsc_hz = tsc_from_cpuid(&src);
    if (tsc_hz > 0) {
        tsc_source = src;
        return;
    }
    double bogo = tsc_from_bogomips();
    if (tsc_cand_hz > 0 && bogo > 0.998 * tsc_cand_hz && bogo < 1.002 * tsc_cand_hz) {
        tsc_hz = tsc_cand_hz;
        tsc_source = tsc_cand_src;
        return;
    }
    double measured = tsc_measured();
    if (bogo > 0 && measured > 0 && bogo > 0.998 * measured && bogo < 1.002 * measured) {
        tsc_hz = bogo;
        tsc_source = "kernel TSC calibration (/proc/cpuinfo bogomips / 2)";
        return;
    }
    tsc_hz = measured;
    tsc_source = tsc_ref_used ? "measured against CLOCK_MONOTONIC since the process's start"
                              : "measured against CLOCK_MONOTONIC_RAW";
#elif defined(__aarch64__)
    uint64_t f;
    __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(f));
    tsc_hz = (double)f;
    tsc_source = "Arm generic timer frequency (CNTFRQ_EL0)";
    if (!(tsc_hz > 0)) {
        tsc_hz = tsc_measured();
        tsc_source = "Arm generic timer measured against CLOCK_MONOTONIC_RAW";
    }
#else
    tsc_hz = 1e9;
    tsc_source = "no TSC on this architecture: nanoseconds of CLOCK_MONOTONIC_RAW";
#endif
}

void mw_tsc_reference(uint64_t tsc, uint64_t ns, int clk)
{
    tsc_ref_tsc = tsc;
    tsc_ref_ns = ns;
    tsc_ref_clk = clk;
}

void mw_tsc_candidate(double hz, const char *source)
{
    tsc_cand_hz = hz;
    tsc_cand_src = source;
}

void mw_tsc_seed(double hz, const char *source)
{
    tsc_seed_hz = hz;
    tsc_seed_src = source;
    pthread_once(&tsc_once, tsc_init);
}

double mw_tsc_hz(const char **source)
{
    pthread_once(&tsc_once, tsc_init);
    if (source)
        *source = tsc_source ? tsc_source : "unknown";
    return tsc_hz;
}
