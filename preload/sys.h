/*
 * preload/sys.h: raw system calls and string helpers, inline, for the path
 * every process takes (its constructor, the end of a process that never
 * began), where the libc function would be one more lazy binding of the
 * loader (some 700 instructions and a save of the vector registers, once per
 * function and process; docs/overhead.md) for a few bytes of work.
 * Header only: no state. Everything here is [AS-safe].
 */
#ifndef MW_PRELOAD_SYS_H
#define MW_PRELOAD_SYS_H

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The raw system call, inline, for the calls every process makes. As
 * syscall(): -1 with errno set on failure; every argument passed as a long.
 * The calls of a recording process (perf_event_open, its files, the
 * interval thread's writes) keep libc's syscall(), which the test suite's
 * mwp_syscallspy watches. [AS-safe] */
#if defined(__x86_64__)
static inline long mwp_sys6(long n, long a, long b, long c, long d, long e, long f)
{
    long r;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    if ((unsigned long)r > -4096ul) {
        errno = (int)-r;
        return -1;
    }
    return r;
}
#define MWP_SYS_(n, a, b, c, d, e, f, ...)                                                         \
    mwp_sys6((long)(n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))
#define mwp_syscall(...) MWP_SYS_(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0)
#else
#define mwp_syscall syscall
#endif

/* strcmp(a, b) == 0. [AS-safe] */
static inline int mwp_streq(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}
/* s past the prefix p, or NULL where s does not start with p. [AS-safe] */
static inline const char *mwp_after(const char *s, const char *p)
{
    for (; *p; s++, p++)
        if (*s != *p)
            return NULL;
    return s;
}
/* strcpy without its result. [AS-safe] */
static inline void mwp_strcpy(char *d, const char *s)
{
    while ((*d++ = *s++))
        ;
}
/* glibc's internal signals, SIGCANCEL (32) and SIGSETXID (33), as bits of
 * a mask of signals 1..64 */
#define MWP_SIG_GLIBC_INTERNAL ((1ull << 31) | (1ull << 32))
/* sigfillset as glibc 2.34+ fills a set: every signal but its internal
 * ones. [AS-safe] */
static inline void mwp_sigfill(sigset_t *set)
{
    memset(set, 0xff, sizeof *set);
    set->__val[0] &= ~MWP_SIG_GLIBC_INTERNAL;
}
/* The kernel's struct of rt_sigaction (x86-64): memwatch installs its own
 * handlers with the system call, not libc's sigaction (signals.c says why).
 * mask: signals 1..64 as bits 0..63. */
struct mwp_ksig {
    void *handler;
    unsigned long flags;
    void (*restorer)(void);
    uint64_t mask;
};
/* rt_sigaction(sig, act, old), act's restorer set to memwatch's (act may
 * be NULL: read only); libc's sigaction where the architecture's restorer
 * is not written out (signals.c). 0, or -1 with errno set. [AS-safe] */
long mwp_ksig_set(int sig, const struct mwp_ksig *act, struct mwp_ksig *old);
/* The lower-case hex number at *p (before end), *p moved past it: the
 * fields of /proc/self/maps. [AS-safe] */
static inline uint64_t mwp_parse_hex(const char **p, const char *end)
{
    uint64_t v = 0;
    for (; *p < end; (*p)++) {
        char c = **p;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            break;
        v = v << 4 | (uint64_t)d;
    }
    return v;
}
/* 1 where s holds c. [AS-safe] */
static inline int mwp_has_char(const char *s, char c)
{
    for (; *s; s++)
        if (*s == c)
            return 1;
    return 0;
}

#endif
