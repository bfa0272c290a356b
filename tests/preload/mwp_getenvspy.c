/*
 * tests/preload/mwp_getenvspy.c: a preload library, placed after
 * libmemwatch.so, whose getenv notes every call made on memwatch's interval
 * thread (the thread named "memwatch") on stderr before answering like
 * glibc's. The interval thread must never call getenv: the application may
 * rewrite its environment at any moment (setenv, putenv, libbsd's
 * setproctitle_init), and a getenv racing with that reads freed memory. The
 * first call from any other thread prints one line, which shows that the spy
 * is in place. Used by the preload "envthread" case.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static _Atomic unsigned long spy_other;

__attribute__((visibility("default"))) char *getenv(const char *name)
{
    static char *(*real)(const char *);
    if (!real)
        real = (char *(*)(const char *))dlsym(RTLD_NEXT, "getenv");
    char comm[17] = {0};
    if (prctl(PR_GET_NAME, comm, 0, 0, 0) == 0 && !strcmp(comm, "memwatch")) {
        char line[300];
        int n = snprintf(line, sizeof line, "getenvspy: getenv(%s) on the interval thread\n",
                         name ? name : "(null)");
        if (n > 0)
            (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    } else if (atomic_fetch_add(&spy_other, 1) == 0) {
        static const char first[] = "getenvspy: in place (a getenv on another thread)\n";
        (void)!write(2, first, sizeof first - 1);
    }
    return real ? real(name) : NULL;
}
