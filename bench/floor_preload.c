/*
 * bench/floor_preload.c: the least any recorder that follows every process
 * of a tree through LD_PRELOAD must do in a process that ends at once, built
 * by bench/short_procs as its "floor" configuration. It is not memwatch; it
 * measures what the goals for short processes (docs/overhead.md) leave for
 * memwatch once this much is paid:
 *   - start: arm a timer on the process's CPU time for one interval (10 ms),
 *     the trigger for recording a process that lives longer (rt_sigaction,
 *     timer_create, timer_settime: what lazy start needs and nothing else);
 *   - end: append one record of what the process was (pid, parent, CPU
 *     time) to one shared file (open with O_APPEND, one write, close), what
 *     the report needs of a process that ended early.
 * System calls are made inline and nothing of libc is called, so that no
 * lazy binding is paid either. No allocation, fork or exec hooks, no signal
 * protection, no configuration, no command line: a real recorder pays those
 * on top. The file is named by MW_FLOOR_FILE (default /dev/null).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>

#if !defined(__x86_64__)
#error "bench/floor_preload.c makes its system calls inline for x86-64"
#endif

static long sc(long n, long a, long b, long c, long d)
{
    long r;
    register long r10 __asm__("r10") = d;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
    return r;
}

static const char *floor_file = "/dev/null";

struct k_sigaction { /* the kernel's layout of rt_sigaction's argument */
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    uint64_t mask;
};

static void floor_tick(int sig)
{
    (void)sig; /* where a recorder would begin: never reached by /bin/true */
}

__attribute__((naked)) static void floor_restorer(void)
{
    __asm__ volatile("mov $15, %eax\n\tsyscall"); /* rt_sigreturn */
}

__attribute__((constructor)) static void floor_init(int argc, char **argv, char **envp)
{
    (void)argc;
    (void)argv;
    for (char **e = envp; e && *e; e++)
        if (!strncmp(*e, "MW_FLOOR_FILE=", 14) && (*e)[14])
            floor_file = *e + 14;
    int sig = 64 - 3; /* SIGRTMAX - 3 */
    struct k_sigaction sa = {floor_tick, 0x04000000 /* SA_RESTORER */ | SA_RESTART, floor_restorer, 0};
    sc(SYS_rt_sigaction, sig, (long)&sa, 0, 8);
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = sig;
    int t = -1;
    if (sc(SYS_timer_create, CLOCK_PROCESS_CPUTIME_ID, (long)&ev, (long)&t, 0) == 0) {
        struct itimerspec its = {{0, 0}, {0, 10000000}};
        sc(SYS_timer_settime, t, 0, (long)&its, 0);
    }
}

static char *put_u(char *p, uint64_t v)
{
    char d[24];
    int n = 0;
    do
        d[n++] = (char)('0' + v % 10);
    while (v /= 10);
    while (n)
        *p++ = d[--n];
    *p++ = ' ';
    return p;
}

__attribute__((destructor)) static void floor_fini(void)
{
    struct rusage ru;
    sc(SYS_getrusage, RUSAGE_SELF, (long)&ru, 0, 0);
    char b[128], *p = b;
    p = put_u(p, (uint64_t)sc(SYS_getpid, 0, 0, 0, 0));
    p = put_u(p, (uint64_t)sc(SYS_getppid, 0, 0, 0, 0));
    p = put_u(p, (uint64_t)ru.ru_utime.tv_sec * 1000000 + (uint64_t)ru.ru_utime.tv_usec);
    p = put_u(p, (uint64_t)ru.ru_stime.tv_sec * 1000000 + (uint64_t)ru.ru_stime.tv_usec);
    p[-1] = '\n';
    long fd = sc(SYS_open, (long)floor_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600, 0);
    if (fd >= 0) {
        sc(SYS_write, fd, (long)b, p - b, 0);
        sc(SYS_close, fd, 0, 0, 0);
    }
}
