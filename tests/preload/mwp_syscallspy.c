/*
 * tests/preload/mwp_syscallspy.c: a preload library, placed after
 * libmemwatch.so, whose syscall() notes every perf_event_open on stderr:
 * which thread asked (the process's main thread, memwatch's interval thread
 * "memwatch", another one), for which thread (itself: pid 0 or its own tid;
 * the main thread; another), on which CPU, and the event's type and config.
 * With MWP_SPY_DELAY_MS set it
 * also sleeps that long before each perf_event_open made on the interval
 * thread, as the kernel does for the first per-task event on a quiet machine
 * (scheduler hooks switched on, an RCU grace period waited for). Used by the
 * preload "deferred" case: the program must never wait for those opens.
 * It also notes which thread creates a raw file (openat with O_CREAT of a
 * "memwatch-*.mwr" path) and, with MWP_SPY_CREATE_HOLD_MS, holds the
 * interval thread that long right after such an openat returns (while the
 * new descriptor still has its first, low number: the "closefds" case).
 * And it notes which thread first asks for a descriptor at 64 or above
 * (fcntl F_DUPFD_CLOEXEC): that grows the descriptor table, which with a
 * second thread running waits for an RCU grace period, so memwatch does it
 * on the main thread in the constructor.
 * With MWP_SPY_WRITES set it notes every writev of the interval thread (the
 * "gather" case: one per interval). With MWP_SPY_HOLD_IV=N it holds the
 * interval thread in its Nth reading of the process's CPU clock (in the
 * middle of an interval, after the drain, with the samples gathered) until
 * the main thread is seen waiting (sched_yield, as memwatch's end of process
 * waits for a gathering interval) or 3 s have passed, and says which; and
 * notes the interval thread's first writev after that.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long spy_delay_ms, spy_hold_ms, spy_hold_iv, spy_writes;
static long (*real)(long, ...);
static int (*real_clock_gettime)(clockid_t, struct timespec *);
static volatile int spy_held, spy_main_waited, spy_released;

__attribute__((constructor)) static void spy_init(void)
{
    const char *d = getenv("MWP_SPY_DELAY_MS");
    spy_delay_ms = d ? atol(d) : 0;
    d = getenv("MWP_SPY_CREATE_HOLD_MS");
    spy_hold_ms = d ? atol(d) : 0;
    d = getenv("MWP_SPY_HOLD_IV");
    spy_hold_iv = d ? atol(d) : 0;
    spy_writes = getenv("MWP_SPY_WRITES") != NULL;
    *(void **)&real_clock_gettime = dlsym(RTLD_NEXT, "clock_gettime");
    *(void **)&real = dlsym(RTLD_NEXT, "syscall");
}

static void spy_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}


/* Which thread is calling: the process's main thread, memwatch's interval
 * thread ("memwatch") or another one; its thread and process ids. */
static const char *spy_who(long *tid, long *pid)
{
    char comm[17] = {0};
    *tid = real(SYS_gettid);
    *pid = real(SYS_getpid);
    prctl(PR_GET_NAME, comm, 0, 0, 0);
    return *tid == *pid ? "main" : !strcmp(comm, "memwatch") ? "memwatch" : "other";
}

/* One "syscallspy: ..." line on stderr. */
__attribute__((format(printf, 1, 2))) static void spy_note(const char *fmt, ...)
{
    char line[160];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0)
        (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* libmemwatch.so reads the clocks through this (it precedes libc). */
__attribute__((visibility("default"))) int clock_gettime(clockid_t c, struct timespec *ts)
{
    if (c == CLOCK_PROCESS_CPUTIME_ID && spy_hold_iv > 0 && !spy_held && real) {
        long tid, pid;
        if (!strcmp(spy_who(&tid, &pid), "memwatch") && --spy_hold_iv == 0) {
            spy_held = 1;
            spy_note("syscallspy: interval held\n");
            for (int i = 0; i < 3000 && !spy_main_waited; i++)
                spy_sleep_ms(1);
            spy_note("syscallspy: interval released by %s\n",
                     spy_main_waited ? "the main thread's wait" : "the 3 s timeout");
            spy_released = 1;
        }
    }
    return real_clock_gettime ? real_clock_gettime(c, ts) : -1;
}

__attribute__((visibility("default"))) long syscall(long nr, ...)
{
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "syscall");
    va_list ap;
    va_start(ap, nr);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (nr == SYS_openat && real && (a[2] & O_CREAT) && a[1]) {
        const char *path = (const char *)a[1], *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        size_t n = strlen(base);
        if (!strncmp(base, "memwatch-", 9) && n > 4 && !strcmp(base + n - 4, ".mwr")) {
            long tid, pid;
            const char *who = spy_who(&tid, &pid);
            spy_note("syscallspy: create-file thread=%s\n", who);
            if (spy_hold_ms > 0 && !strcmp(who, "memwatch")) {
                long fd = real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
                spy_sleep_ms(spy_hold_ms);
                return fd;
            }
        }
    }
    if (nr == SYS_fcntl && real && (int)a[1] == F_DUPFD_CLOEXEC && a[2] >= 64) {
        static int noted;
        if (!noted) {
            noted = 1;
            long tid, pid;
            spy_note("syscallspy: first high dupfd by=%s\n", spy_who(&tid, &pid));
        }
    }
    if (nr == SYS_sched_yield && real && spy_held && !spy_released && !spy_main_waited) {
        long tid, pid;
        if (!strcmp(spy_who(&tid, &pid), "main"))
            spy_main_waited = 1;
    }
    if (nr == SYS_writev && real && (spy_writes || spy_released)) {
        long tid, pid;
        const char *who = spy_who(&tid, &pid);
        if (spy_writes && !strcmp(who, "main")) {
            long r = real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
            spy_note("syscallspy: writev thread=main bytes=%ld\n", r);
            return r;
        }
        if (!strcmp(who, "memwatch")) {
            long r = real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
            if (spy_writes)
                spy_note("syscallspy: writev thread=memwatch bytes=%ld\n", r);
            if (spy_released == 1) {
                spy_released = 2;
                spy_note("syscallspy: writev after the hold bytes=%ld\n", r);
            }
            return r;
        }
    }
    if (nr == SYS_perf_event_open && real) {
        long tid, pid;
        const char *who = spy_who(&tid, &pid);
        /* pid_t and int arguments: only the low 32 bits of their registers count */
        long t = (int)a[1];
        const char *target = (t == 0 || t == tid) ? "self" : t == pid ? "main" : "other";
        const struct perf_event_attr *at = (const struct perf_event_attr *)a[0];
        spy_note("syscallspy: perf_event_open thread=%s target=%s cpu=%ld type=%u config=%llu\n",
                 who, target, (long)(int)a[2], at ? at->type : ~0u,
                 at ? (unsigned long long)at->config : 0ull);
        if (!strcmp(who, "memwatch") && spy_delay_ms > 0)
            spy_sleep_ms(spy_delay_ms);
    }
    return real ? real(nr, a[0], a[1], a[2], a[3], a[4], a[5]) : -1;
}
